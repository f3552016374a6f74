package mcpbench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
)

// ServicesOptions configures RunServices.
type ServicesOptions struct {
	// Binary and Baseline are two wildawm executables (this build and,
	// e.g., a build of the hand-written services); both are required.
	Binary, Baseline string
	// Calls and Warmup are per case (default 200 and 20).
	Calls, Warmup int
	// Scripts is a directory of NAME.json scripts (the golden transcripts'
	// steps); a service without one uses its definition's example calls.
	Scripts string
	// PerService caps the read calls measured per service (default 12).
	PerService int
	// Only, when set, measures only these services ("calendar") and
	// cases ("calendar/find_free_time"; every call of that tool).
	Only []string
}

// ServiceCase is one read call measured on both builds.
type ServiceCase struct {
	Service, Tool string
	Args          string // the arguments, as JSON
	P50, P99      time.Duration
	BaseP50       time.Duration
	BaseP99       time.Duration
	// CPU and BaseCPU are the median CPU time the server process used
	// per call (all its threads, from /proc; 0 where that is not there).
	// It moves far less between runs than latency does.
	CPU, BaseCPU time.Duration
	// Same is false when the two builds answered differently.
	Same bool
	// Error is true when the call's answer is a tool error (a call the
	// model could fix: a bad argument, an unknown id).
	Error bool
}

// ServicesReport is RunServices' result.
type ServicesReport struct {
	Calls, Warmup int
	Binary        string
	Baseline      string
	Cases         []ServiceCase
	Elapsed       time.Duration
}

// RunServices measures every registered service's read-only calls (from
// its script, else its examples) through `mcp serve` over stdio with the
// raw client, on this build and on the baseline, each over its own copy of
// the service's test world, all cases called in turn (round robin) in one
// run. Only read-only tools are measured, so every call of a case sees the
// same world; the two builds' answers are compared too.
func RunServices(ctx context.Context, o ServicesOptions) (*ServicesReport, error) {
	if o.Binary == "" || o.Baseline == "" {
		return nil, errors.New("mcpbench: give a binary and a baseline")
	}
	o.Calls = cmp.Or(o.Calls, 200)
	o.Warmup = cmp.Or(o.Warmup, 20)
	o.PerService = cmp.Or(o.PerService, 12)
	began := time.Now()
	work, err := os.MkdirTemp("", "wildawm-bench-services-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type side struct {
		rc  rawClient
		pid int
		dur []time.Duration
		cpu []time.Duration
		out []byte
	}
	type bcase struct {
		ServiceCase
		args       map[string]any
		ours, base side
	}
	var cases []*bcase
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for _, spec := range service.All() {
		if !o.measures(spec.Name, "") || spec.Compiled().Def.Test == nil {
			continue
		}
		d := spec.Compiled().Def
		calls, err := readCalls(o.Scripts, spec.Name, d.Test.Calls)
		if err != nil {
			return nil, err
		}
		readOnly := map[string]bool{}
		for _, t := range d.Tools {
			readOnly[t.Name] = t.Annotations.ReadOnly
		}
		chosen := pickReads(calls, readOnly, o.PerService, d.HealthTool)
		start := func(bin, who string) (*rawStdio, error) {
			dir := filepath.Join(work, spec.Name+"-"+who)
			if err := writeServiceWorld(ctx, dir, spec); err != nil {
				return nil, err
			}
			rc, err := startRawStdio(ctx, exec.CommandContext(ctx, bin, "mcp", "serve", "--world", dir, "--service", spec.Name, "--self", d.Test.Self, "--ephemeral"))
			if err != nil {
				return nil, fmt.Errorf("mcpbench: %s mcp serve --service %s: %w", bin, spec.Name, err)
			}
			closers = append(closers, rc.close)
			return rc, nil
		}
		ours, err := start(o.Binary, "ours")
		if err != nil {
			return nil, err
		}
		base, err := start(o.Baseline, "base")
		if err != nil {
			return nil, err
		}
		for _, c := range chosen {
			if !o.measures(spec.Name, c.tool) {
				continue
			}
			a, _ := json.Marshal(c.args)
			cases = append(cases, &bcase{ServiceCase: ServiceCase{Service: spec.Name, Tool: c.tool, Args: string(a)}, args: c.args,
				ours: side{rc: ours, pid: ours.cmd.Process.Pid}, base: side{rc: base, pid: base.cmd.Process.Pid}})
		}
	}
	id := int64(1)
	for i := range o.Warmup + o.Calls {
		for k, c := range cases {
			// Who goes first alternates: the first of two calls in a row
			// is the slower one on this machine (an A/A run, both sides
			// the same executable, measured 1.04x to 1.05x with ours
			// always first), so a fixed order is a bias, not a result.
			order := [2]*side{&c.ours, &c.base}
			if (i+k)%2 == 1 {
				order = [2]*side{&c.base, &c.ours}
			}
			for _, s := range order {
				id++
				cpu0, cpuOK := processCPU(s.pid)
				msg, d, err := s.rc.call(ctx, id, c.Tool, c.args)
				if err != nil {
					return nil, fmt.Errorf("mcpbench: %s %s: %w", c.Service, c.Tool, err)
				}
				if i >= o.Warmup {
					s.dur = append(s.dur, d)
					// The response is written before the call's last
					// bookkeeping ends; what runs after it is counted
					// in the next call of the same process.
					if cpu1, ok := processCPU(s.pid); ok && cpuOK {
						s.cpu = append(s.cpu, cpu1-cpu0)
					}
				}
				if i == 0 {
					s.out = resultOf(msg)
				}
			}
		}
	}
	rep := &ServicesReport{Calls: o.Calls, Warmup: o.Warmup, Binary: o.Binary, Baseline: o.Baseline}
	for _, c := range cases {
		slices.Sort(c.ours.dur)
		slices.Sort(c.base.dur)
		c.P50, c.P99 = quantile(c.ours.dur, 0.5), quantile(c.ours.dur, 0.99)
		c.BaseP50, c.BaseP99 = quantile(c.base.dur, 0.5), quantile(c.base.dur, 0.99)
		if len(c.ours.cpu) > 0 && len(c.base.cpu) > 0 {
			slices.Sort(c.ours.cpu)
			slices.Sort(c.base.cpu)
			c.CPU, c.BaseCPU = quantile(c.ours.cpu, 0.5), quantile(c.base.cpu, 0.5)
		}
		c.Same = sameJSONBytes(c.ours.out, c.base.out)
		var r struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(c.ours.out, &r)
		c.Error = r.IsError
		rep.Cases = append(rep.Cases, c.ServiceCase)
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

// measures reports whether o measures the service's tool ("" for the
// service as a whole).
func (o ServicesOptions) measures(svc, tool string) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, x := range o.Only {
		name, t, _ := strings.Cut(x, "/")
		if name == svc && (t == "" || tool == "" || t == tool) {
			return true
		}
	}
	return false
}

// processCPU is the CPU time the process's threads have run so far (the
// first field of each /proc/PID/task/TID/schedstat, in nanoseconds).
func processCPU(pid int) (time.Duration, bool) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited
		}
		f, _, _ := strings.Cut(string(b), " ")
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, false
		}
		sum += n
	}
	return time.Duration(sum), true
}

type readCall struct {
	tool string
	args map[string]any
}

// readCalls returns the tool calls of dir/NAME.json, else the examples.
func readCalls(dir, name string, examples []engine.Example) ([]readCall, error) {
	var out []readCall
	if dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err == nil {
			var steps []struct {
				Tool string         `json:"tool"`
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal(b, &steps); err != nil {
				return nil, fmt.Errorf("mcpbench: %s script: %w", name, err)
			}
			for _, s := range steps {
				if s.Tool != "" {
					out = append(out, readCall{s.Tool, s.Args})
				}
			}
			return out, nil
		}
	}
	for _, e := range examples {
		if e.Tool != "" {
			out = append(out, readCall{e.Tool, e.Args})
		}
	}
	return out, nil
}

// pickReads chooses up to n distinct calls of read-only tools: one per
// tool first, then more of each in script order.
func pickReads(calls []readCall, readOnly map[string]bool, n int, health string) []readCall {
	var out []readCall
	seen := map[string]bool{}
	key := func(c readCall) string { b, _ := json.Marshal(c.args); return c.tool + string(b) }
	add := func(c readCall) {
		if c.args == nil {
			c.args = map[string]any{}
		}
		if k := key(c); !seen[k] && len(out) < n {
			seen[k] = true
			out = append(out, c)
		}
	}
	add(readCall{tool: health})
	tools := map[string]bool{health: true}
	for _, c := range calls {
		if readOnly[c.tool] && !tools[c.tool] {
			tools[c.tool] = true
			add(c)
		}
	}
	for _, c := range calls {
		if readOnly[c.tool] {
			add(c)
		}
	}
	return out
}

// writeServiceWorld writes spec's test world into dir.
func writeServiceWorld(ctx context.Context, dir string, spec service.Spec) error {
	return engine.WriteTestWorld(ctx, dir, spec.Compiled().Def)
}

// resultOf returns the result member of a JSON-RPC response.
func resultOf(msg []byte) []byte {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil {
		return nil
	}
	return r.Result
}

func sameJSONBytes(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// Markdown renders the report: one row per call, then per service the
// geometric mean of the p50 ratios.
func (r *ServicesReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Services: this build against the baseline\n\n%d timed calls per case after %d warm-up calls, every case on both builds in turn (round robin) in one run; `mcp serve --ephemeral` over stdio, raw client, each build on its own copy of the service's test world. Baseline: `%s`.\n\n",
		r.Calls, r.Warmup, filepath.Base(r.Baseline))
	b.WriteString("| service | tool | arguments | answer | p50 | baseline p50 | ratio | p99 | baseline p99 | server CPU ratio | same answer |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	type agg struct {
		logs []float64
		cpu  []float64
		p99  []float64
		ok   []float64 // the p50 ratios of the calls that succeeded
		bad  []float64 // of the tool errors
	}
	per := map[string]*agg{}
	var order []string
	for _, c := range r.Cases {
		args := c.Args
		if len(args) > 60 {
			args = args[:57] + "..."
		}
		same := "yes"
		if !c.Same {
			same = "**no**"
		}
		ratio := float64(c.P50) / float64(c.BaseP50)
		answer := "result"
		if c.Error {
			answer = "tool error"
		}
		cpu := "—"
		if c.CPU > 0 && c.BaseCPU > 0 {
			cpu = fmt.Sprintf("%.2fx", float64(c.CPU)/float64(c.BaseCPU))
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s | %.2fx | %s | %s | %s | %s |\n", c.Service, c.Tool, strings.ReplaceAll(args, "|", "\\|"), answer, fmtDur(c.P50), fmtDur(c.BaseP50), ratio, fmtDur(c.P99), fmtDur(c.BaseP99), cpu, same)
		a := per[c.Service]
		if a == nil {
			a = &agg{}
			per[c.Service] = a
			order = append(order, c.Service)
		}
		a.logs = append(a.logs, math.Log(ratio))
		if c.CPU > 0 && c.BaseCPU > 0 {
			a.cpu = append(a.cpu, math.Log(float64(c.CPU)/float64(c.BaseCPU)))
		}
		a.p99 = append(a.p99, math.Log(float64(c.P99)/float64(c.BaseP99)))
		if c.Error {
			a.bad = append(a.bad, math.Log(ratio))
		} else {
			a.ok = append(a.ok, math.Log(ratio))
		}
	}
	b.WriteString("\n| service | calls | p50 ratio (geometric mean) | p99 ratio (geometric mean) | p50 ratio, results | p50 ratio, tool errors | server CPU ratio (geometric mean) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	var all, all99, allOK, allBad, allCPU []float64
	for _, s := range order {
		a := per[s]
		fmt.Fprintf(&b, "| %s | %d | **%.2fx** | %.2fx | %s | %s | %s |\n", s, len(a.logs), geo(a.logs), geo(a.p99), geoOr(a.ok), geoOr(a.bad), geoOr(a.cpu))
		all, all99 = append(all, a.logs...), append(all99, a.p99...)
		allOK, allBad = append(allOK, a.ok...), append(allBad, a.bad...)
		allCPU = append(allCPU, a.cpu...)
	}
	fmt.Fprintf(&b, "| all | %d | **%.2fx** | %.2fx | %s | %s | %s |\n\nRatio: this build over the baseline; below 1 is faster. Server CPU: the median CPU time the server process ran per call (its threads' /proc schedstat, read before and after each call). Run took %s.\n", len(all), geo(all), geo(all99), geoOr(allOK), geoOr(allBad), geoOr(allCPU), r.Elapsed.Round(time.Second))
	return b.String()
}

func geo(logs []float64) float64 {
	if len(logs) == 0 {
		return 0
	}
	var s float64
	for _, l := range logs {
		s += l
	}
	return math.Exp(s / float64(len(logs)))
}

func geoOr(logs []float64) string {
	if len(logs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx (%d)", geo(logs), len(logs))
}
