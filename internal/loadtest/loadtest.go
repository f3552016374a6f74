// Package loadtest drives a runtime.Manager hosting many instances with
// concurrent resets, MCP tool calls and shell commands for a bounded time,
// then proves that no state was lost or corrupted: every instance's final
// hash equals a replay of the actions it received since its last reset on a
// fresh instance. It also measures the runtime's figures. It reads the wall
// clock to measure; it is not part of the deterministic core.
package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/reset"
	wrt "github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// Options configure Run.
type Options struct {
	Store      *store.Store
	Snapshot   world.ID
	CatalogDir string
	RunDir     string
	Self       string
	Instances  int           // default 256
	Workers    int           // default 8
	Duration   time.Duration // default 20 s
	Seed       uint64
	// NoShell leaves shell commands out of the load (resets 20%, MCP 80%).
	NoShell bool
	// SandboxHost clones the shells' sandboxes from a sandbox.Host made
	// before the instances (their cost then does not grow with them);
	// without it, from the process's own mount namespace.
	SandboxHost bool
	// ShellNice is the shells' CPU priority (runtime.Options.ShellNice).
	ShellNice int
	Progress  func(format string, args ...any)
}

// Report holds the figures.
type Report struct {
	Instances       int      `json:"instances"`
	SandboxHost     bool     `json:"sandbox_host"`
	ShellNice       int      `json:"shell_nice"`
	CreateP50MS     float64  `json:"create_p50_ms"`
	RSSPerInstKiB   float64  `json:"rss_per_instance_kib"`
	HeapPerInstKiB  float64  `json:"heap_per_instance_kib"`
	InstancesPerGiB float64  `json:"instances_per_gib"`
	Resets          int      `json:"resets"`
	ResetP50MS      float64  `json:"reset_p50_ms"`
	ResetP99MS      float64  `json:"reset_p99_ms"`
	CopyNewP50MS    float64  `json:"copy_new_p50_ms"` // a fresh instance by copying the state
	ToolCalls       int      `json:"tool_calls"`
	ToolP50MS       float64  `json:"tool_p50_ms"`
	ToolP99MS       float64  `json:"tool_p99_ms"`
	ShellCalls      int      `json:"shell_calls"`
	ShellP50MS      float64  `json:"shell_p50_ms"`
	ShellQuietP50MS float64  `json:"shell_quiet_p50_ms"` // one at a time after the load, all instances still mounted
	PlainShellP50MS float64  `json:"plain_shell_p50_ms"`
	Checked         int      `json:"checked"`
	Lost            int      `json:"lost_or_corrupted"`
	Failures        []string `json:"failures,omitempty"`
}

type action struct {
	kind string // "msg" or "sh"
	arg  string
}

type target struct {
	id      string // control id
	token   string // agent address
	mu      sync.Mutex
	log     []action // since the last reset
	session *mcp.ClientSession
}

// Run performs the load test.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Instances == 0 {
		o.Instances = 256
	}
	if o.Workers == 0 {
		o.Workers = 8
	}
	if o.Duration == 0 {
		o.Duration = 20 * time.Second
	}
	say := o.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	mat := &reset.Materializer{Store: o.Store, CacheDir: filepath.Join(o.RunDir, "cache")}
	var host *sandbox.Host
	if o.SandboxHost {
		h, err := sandbox.NewHost(ctx, "")
		if err != nil {
			return nil, err
		}
		defer h.Close()
		host = h
	}
	m := wrt.NewManager(wrt.ManagerOptions{Store: o.Store, Materializer: mat, CatalogDir: o.CatalogDir, WorkDir: filepath.Join(o.RunDir, "instances"), Self: o.Self, SandboxHost: host, ShellNice: o.ShellNice})
	defer m.Close(context.WithoutCancel(ctx))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: m.AgentHandler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	rep := &Report{Instances: o.Instances, SandboxHost: o.SandboxHost, ShellNice: o.ShellNice}

	// Create the instances and measure memory.
	if _, err := mat.Lower(ctx, o.Snapshot); err != nil {
		return nil, err
	}
	runtime.GC()
	rss0, heap0 := rssKiB(), heapKiB()
	var creates []float64
	targets := make([]*target, o.Instances)
	for i := range targets {
		t0 := time.Now()
		info, err := m.Create(ctx, o.Snapshot)
		if err != nil {
			return nil, fmt.Errorf("create instance %d: %w", i, err)
		}
		creates = append(creates, ms(time.Since(t0)))
		targets[i] = &target{id: info.ID, token: info.Token}
		if (i+1)%64 == 0 {
			say("created %d instances", i+1)
		}
	}
	runtime.GC()
	rep.RSSPerInstKiB = (rssKiB() - rss0) / float64(o.Instances)
	rep.HeapPerInstKiB = (heapKiB() - heap0) / float64(o.Instances)
	rep.InstancesPerGiB = 1 << 20 / max(rep.RSSPerInstKiB, 1)
	rep.CreateP50MS = pct(creates, 0.5)

	// Connect one MCP session per instance through the agent listener.
	client := mcp.NewClient(&mcp.Implementation{Name: "loadtest", Version: "1"}, nil)
	for _, t := range targets {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/i/" + t.token + "/mcp/messages", MaxRetries: -1}, nil)
		if err != nil {
			return nil, fmt.Errorf("connect %s: %w", t.id, err)
		}
		t.session = cs
		defer cs.Close()
	}
	say("load: %d workers for %s over %d instances", o.Workers, o.Duration, o.Instances)

	var (
		mu                    sync.Mutex
		resets, tools, shells []float64
		failures              []string
	)
	deadline := time.Now().Add(o.Duration)
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(o.Seed, uint64(w)))
			for n := 0; time.Now().Before(deadline); n++ {
				t := targets[r.IntN(len(targets))]
				t.mu.Lock()
				var err error
				switch k := r.IntN(10); {
				case k < 2:
					t0 := time.Now()
					err = m.Reset(ctx, t.id)
					d := ms(time.Since(t0))
					if err == nil {
						t.log = nil
						// MCP sessions do not survive a reset: reconnect.
						t.session.Close()
						t.session, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/i/" + t.token + "/mcp/messages", MaxRetries: -1}, nil)
					}
					mu.Lock()
					resets = append(resets, d)
					mu.Unlock()
				case k < 7 || o.NoShell:
					body := fmt.Sprintf("load %d-%d", w, n)
					t0 := time.Now()
					var res *mcp.CallToolResult
					res, err = t.session.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": body}})
					d := ms(time.Since(t0))
					if err == nil && res.IsError {
						err = fmt.Errorf("send_message: tool error")
					}
					if err == nil {
						t.log = append(t.log, action{"msg", body})
					}
					mu.Lock()
					tools = append(tools, d)
					mu.Unlock()
				default:
					line := fmt.Sprintf("w%d n%d", w, n)
					t0 := time.Now()
					err = shell(ctx, base, t.token, "echo '"+line+"' >> load.log")
					d := ms(time.Since(t0))
					if err == nil {
						t.log = append(t.log, action{"sh", line})
					}
					mu.Lock()
					shells = append(shells, d)
					mu.Unlock()
				}
				t.mu.Unlock()
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %v", t.id, err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	rep.Resets, rep.ToolCalls, rep.ShellCalls = len(resets), len(tools), len(shells)
	rep.ResetP50MS, rep.ResetP99MS = pct(resets, 0.5), pct(resets, 0.99)
	rep.ToolP50MS, rep.ToolP99MS = pct(tools, 0.5), pct(tools, 0.99)
	rep.ShellP50MS = pct(shells, 0.5)
	rep.Failures = failures

	// Verify: each instance's final hash equals a replay of its log on a
	// fresh instance.
	say("verifying %d instances against replays", len(targets))
	check, err := m.Create(ctx, o.Snapshot)
	if err != nil {
		return nil, err
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/i/" + check.Token + "/mcp/messages", MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		inst, _ := m.Instance(t.id)
		got, err := state.Hash(ctx, inst.Dir())
		if err != nil {
			return nil, err
		}
		if err := m.Reset(ctx, check.ID); err != nil {
			return nil, err
		}
		cs.Close()
		if cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/i/" + check.Token + "/mcp/messages", MaxRetries: -1}, nil); err != nil {
			return nil, err
		}
		for _, a := range t.log {
			if a.kind == "msg" {
				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": a.arg}})
			} else {
				err = shell(ctx, base, check.Token, "echo '"+a.arg+"' >> load.log")
			}
			if err != nil {
				return nil, err
			}
		}
		ci, _ := m.Instance(check.ID)
		want, err := state.Hash(ctx, ci.Dir())
		if err != nil {
			return nil, err
		}
		rep.Checked++
		if got != want {
			rep.Lost++
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s: final %s != replay %s after %d actions", t.id, got.Short(), want.Short(), len(t.log)))
		}
	}
	cs.Close()

	// Baselines: a fresh instance made by copying the state (the same
	// runtime.Start, with the copy strategy instead of overlay); a shell
	// command without the sandbox.
	copyMat := &reset.Materializer{Store: o.Store, CacheDir: mat.CacheDir, Strategy: &reset.Copy{}}
	var copies []float64
	for i := range 20 {
		dir := filepath.Join(o.RunDir, "copy-"+strconv.Itoa(i))
		reset.Remove(dir)
		t0 := time.Now()
		in, err := wrt.Start(ctx, wrt.Options{Materializer: copyMat, Snapshot: o.Snapshot, CatalogDir: o.CatalogDir, Dir: dir, Self: o.Self, NoListen: true, SandboxUID: 299999, SandboxGID: 299999})
		if err != nil {
			return nil, err
		}
		copies = append(copies, ms(time.Since(t0)))
		in.Close(ctx)
	}
	rep.CopyNewP50MS = pct(copies, 0.5)
	var quiet []float64
	for range 30 {
		t0 := time.Now()
		if err := shell(ctx, base, targets[0].token, "echo hi >> /dev/null"); err != nil {
			return nil, err
		}
		quiet = append(quiet, ms(time.Since(t0)))
	}
	rep.ShellQuietP50MS = pct(quiet, 0.5)
	var plain []float64
	for range 50 {
		t0 := time.Now()
		if err := exec.CommandContext(ctx, "/bin/sh", "-c", "echo hi >> /dev/null").Run(); err != nil {
			return nil, err
		}
		plain = append(plain, ms(time.Since(t0)))
	}
	rep.PlainShellP50MS = pct(plain, 0.5)
	return rep, nil
}

func shell(ctx context.Context, base, token, cmd string) error {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/i/"+token+"/shell", strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		ExitCode int    `json:"exit_code"`
		Stderr   string `json:"stderr"`
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("shell: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("shell: exit %d: %s", out.ExitCode, out.Stderr)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, int(q*float64(len(s))+0.5)-1))]
}

func rssKiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

func heapKiB() float64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / 1024
}
