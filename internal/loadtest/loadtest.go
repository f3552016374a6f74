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
	"errors"
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

	"github.com/wildawm/wildawm/internal/browser"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
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
	// ShellNice is the shells' CPU priority (runtime.ManagerOptions.ShellNice:
	// 0 is its default, negative the process's own).
	ShellNice int
	// MaxShellSetups caps the shells' sandboxes set up at once
	// (runtime.ManagerOptions.MaxShellSetups: 0 is its default, negative
	// uncapped).
	MaxShellSetups int
	// Profile "rl" replaces the random mix by rollouts: each worker takes
	// a free instance, runs RolloutSteps steps of what a rollout does (a
	// GUI action through the HTTP browser 40%, an MCP call 30%, a shell
	// command 20%, a file read 10%) and resets it, as a finished rollout
	// is; Workers is the rollouts at once. "" is the random mix.
	Profile      string
	RolloutSteps int // default 20
	// Chromium, when set, is the shared browser the rl profile's GUI steps
	// go through: each rollout opens a tab of it (Browser.Tab) allowed
	// only its instance's sites, as the rollout service's sessions do.
	// Nil drives the GUI through the HTTP browser (browser/fake).
	Chromium *browser.Browser
	Progress func(format string, args ...any)
}

// Report holds the figures.
type Report struct {
	Instances       int     `json:"instances"`
	SandboxHost     bool    `json:"sandbox_host"`
	ShellNice       int     `json:"shell_nice"`
	MaxShellSetups  int     `json:"max_shell_setups"`
	CreateP50MS     float64 `json:"create_p50_ms"`
	RSSPerInstKiB   float64 `json:"rss_per_instance_kib"`
	HeapPerInstKiB  float64 `json:"heap_per_instance_kib"`
	InstancesPerGiB float64 `json:"instances_per_gib"`
	Resets          int     `json:"resets"`
	ResetP50MS      float64 `json:"reset_p50_ms"`
	ResetP99MS      float64 `json:"reset_p99_ms"`
	CopyNewP50MS    float64 `json:"copy_new_p50_ms"` // a fresh instance by copying the state
	ToolCalls       int     `json:"tool_calls"`
	ToolP50MS       float64 `json:"tool_p50_ms"`
	ToolP99MS       float64 `json:"tool_p99_ms"`
	ShellCalls      int     `json:"shell_calls"`
	ShellP50MS      float64 `json:"shell_p50_ms"`
	ShellQuietP50MS float64 `json:"shell_quiet_p50_ms"` // one at a time after the load, all instances still mounted
	// MCP tools/call (send_message, go-sdk client through the agent
	// listener) one at a time, before the load: with the first instance
	// alone mounted, and spread over every instance once all are.
	ToolQuiet1P50MS   float64 `json:"tool_quiet_1_p50_ms"`
	ToolQuiet1P99MS   float64 `json:"tool_quiet_1_p99_ms"`
	ToolQuietAllP50MS float64 `json:"tool_quiet_all_p50_ms"`
	ToolQuietAllP99MS float64 `json:"tool_quiet_all_p99_ms"`
	PlainShellP50MS   float64 `json:"plain_shell_p50_ms"`
	// The rl profile's figures: steps of every interface, steps per second
	// for the machine, p50/p99 by interface, rollouts finished.
	Profile      string             `json:"profile,omitempty"`
	Rollouts     int                `json:"rollouts,omitempty"`
	Steps        int                `json:"steps,omitempty"`
	StepsPerSec  float64            `json:"steps_per_sec,omitempty"`
	InterfaceP50 map[string]float64 `json:"interface_p50_ms,omitempty"`
	InterfaceP99 map[string]float64 `json:"interface_p99_ms,omitempty"`
	InterfaceN   map[string]int     `json:"interface_steps,omitempty"`
	GUIBrowser   string             `json:"gui_browser,omitempty"` // chromium or http
	Checked      int                `json:"checked"`
	Lost         int                `json:"lost_or_corrupted"`
	Failures     []string           `json:"failures,omitempty"`

	resets, tools, shells []float64
}

type action struct {
	kind string // "msg" or "sh"
	arg  string
}

type target struct {
	id      string            // control id
	token   string            // agent address
	hosts   map[string]string // site name -> Host on the agent listener
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
	// One uid allocator for the Manager's instances and the baselines'.
	uids := sandbox.NewUIDs(300000, 0)
	m := wrt.NewManager(wrt.ManagerOptions{Store: o.Store, Materializer: mat, CatalogDir: o.CatalogDir, WorkDir: filepath.Join(o.RunDir, "instances"), Self: o.Self, SandboxHost: host, ShellNice: o.ShellNice, MaxShellSetups: o.MaxShellSetups, UIDs: uids})
	defer m.Close(context.WithoutCancel(ctx))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: m.AgentHandler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	setups, nice := wrt.ShellDefaults(o.MaxShellSetups, o.ShellNice)
	rep := &Report{Instances: o.Instances, SandboxHost: o.SandboxHost, ShellNice: nice, MaxShellSetups: setups}

	// Create the instances and measure memory.
	if _, err := mat.Lower(ctx, o.Snapshot); err != nil {
		return nil, err
	}
	runtime.GC()
	rss0, heap0 := rssKiB(), heapKiB()
	var creates []float64
	targets := make([]*target, o.Instances)
	client := mcp.NewClient(&mcp.Implementation{Name: "loadtest", Version: "1"}, nil)
	for i := range targets {
		t0 := time.Now()
		info, err := m.Create(ctx, o.Snapshot)
		if err != nil {
			return nil, fmt.Errorf("create instance %d: %w", i, err)
		}
		creates = append(creates, ms(time.Since(t0)))
		targets[i] = &target{id: info.ID, token: info.Token, hosts: info.SiteHosts}
		if (i+1)%64 == 0 {
			say("created %d instances", i+1)
		}
		if i == 0 {
			// MCP one at a time with this instance alone mounted: the
			// baseline of the same calls spread over all of them below.
			if err := connect(ctx, client, base, targets[0]); err != nil {
				return nil, err
			}
			defer func() { targets[0].session.Close() }()
			d, err := quietCalls(ctx, targets[:1], "quiet1")
			if err != nil {
				return nil, err
			}
			rep.ToolQuiet1P50MS, rep.ToolQuiet1P99MS = pct(d, 0.5), pct(d, 0.99)
			// Memory per idle instance counts the others, not what these
			// calls grew.
			runtime.GC()
			rss0, heap0 = rssKiB(), heapKiB()
		}
	}
	runtime.GC()
	idle := float64(max(o.Instances-1, 1))
	rep.RSSPerInstKiB = (rssKiB() - rss0) / idle
	rep.HeapPerInstKiB = (heapKiB() - heap0) / idle
	rep.InstancesPerGiB = 1 << 20 / max(rep.RSSPerInstKiB, 1)
	rep.CreateP50MS = pct(creates, 0.5)

	// Connect one MCP session per instance through the agent listener.
	for _, t := range targets[1:] {
		if err := connect(ctx, client, base, t); err != nil {
			return nil, err
		}
		defer func() { t.session.Close() }()
	}
	d, err := quietCalls(ctx, targets, "quietall")
	if err != nil {
		return nil, err
	}
	rep.ToolQuietAllP50MS, rep.ToolQuietAllP99MS = pct(d, 0.5), pct(d, 0.99)
	say("load: %d workers for %s over %d instances", o.Workers, o.Duration, o.Instances)

	var (
		mu                    sync.Mutex
		resets, tools, shells []float64
		failures              []string
	)
	deadline := time.Now().Add(o.Duration)
	var wg sync.WaitGroup
	if o.Profile == "rl" {
		if err := rlProfile(ctx, o, m, client, base, targets, rep); err != nil {
			return nil, err
		}
		failures = rep.Failures
	}
	for w := range o.Workers {
		if o.Profile == "rl" {
			break
		}
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
						err = connect(ctx, client, base, t)
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
	if o.Profile == "rl" {
		resets, tools, shells = rep.resets, rep.tools, rep.shells
	}
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
	cs, err := dial(ctx, client, base, check.Token)
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
		if cs, err = dial(ctx, client, base, check.Token); err != nil {
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
		uid, err := uids.Next()
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		in, err := wrt.Start(ctx, wrt.Options{Materializer: copyMat, Snapshot: o.Snapshot, CatalogDir: o.CatalogDir, Dir: dir, Self: o.Self, NoListen: true, SandboxUID: uid, SandboxGID: uid})
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

// dial opens an MCP session with the messages service of the instance
// whose agent token is token, through the agent listener at base.
func dial(ctx context.Context, client *mcp.Client, base, token string) (*mcp.ClientSession, error) {
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/i/" + token + "/mcp/messages", MaxRetries: -1}, nil)
}

// connect opens t's MCP session (dial).
func connect(ctx context.Context, client *mcp.Client, base string, t *target) error {
	cs, err := dial(ctx, client, base, t.token)
	if err != nil {
		return fmt.Errorf("connect %s: %w", t.id, err)
	}
	t.session = cs
	return nil
}

// quietCalls times send_message one call at a time, round robin over
// targets (a warm-up of one call on each and 30 more, then 512 timed), and
// logs each call for the replay check.
func quietCalls(ctx context.Context, targets []*target, tag string) ([]float64, error) {
	var d []float64
	warm := len(targets) + 30
	for n := range warm + 512 {
		t := targets[n%len(targets)]
		body := fmt.Sprintf("%s %d", tag, n)
		t0 := time.Now()
		res, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": body}})
		el := ms(time.Since(t0))
		if err == nil && res.IsError {
			err = errors.New("send_message: tool error")
		}
		if err != nil {
			return nil, fmt.Errorf("mcp one at a time on %s: %w", t.id, err)
		}
		t.log = append(t.log, action{"msg", body})
		if n >= warm {
			d = append(d, el)
		}
	}
	return d, nil
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

// rlProfile runs rollouts on free instances until the deadline (Options.Profile).
func rlProfile(ctx context.Context, o Options, m *wrt.Manager, client *mcp.Client, base string, targets []*target, rep *Report) error {
	if o.Workers > len(targets) {
		return fmt.Errorf("loadtest: %d rollouts at once need as many instances, not %d", o.Workers, len(targets))
	}
	steps := o.RolloutSteps
	if steps == 0 {
		steps = 20
	}
	rep.Profile = "rl"
	rep.GUIBrowser = "http"
	if o.Chromium != nil {
		rep.GUIBrowser = "chromium"
	}
	var (
		mu    sync.Mutex
		busy  = make([]bool, len(targets))
		lat   = map[string][]float64{}
		fails []string
	)
	record := func(kind string, d float64) {
		mu.Lock()
		lat[kind] = append(lat[kind], d)
		mu.Unlock()
	}
	start := time.Now()
	deadline := start.Add(o.Duration)
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(o.Seed, uint64(w)))
			for n := 0; time.Now().Before(deadline); n++ {
				mu.Lock()
				i := r.IntN(len(targets))
				for busy[i] {
					i = (i + 1) % len(targets)
				}
				busy[i] = true
				mu.Unlock()
				t := targets[i]
				err := rollout(ctx, o, m, client, base, t, w, n, steps, r, record)
				mu.Lock()
				busy[i] = false
				if err != nil {
					fails = append(fails, fmt.Sprintf("%s: %v", t.id, err))
				} else {
					rep.Rollouts++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	rep.InterfaceP50, rep.InterfaceP99, rep.InterfaceN = map[string]float64{}, map[string]float64{}, map[string]int{}
	for kind, xs := range lat {
		rep.InterfaceN[kind] = len(xs)
		rep.InterfaceP50[kind], rep.InterfaceP99[kind] = pct(xs, 0.5), pct(xs, 0.99)
		if kind != "reset" {
			rep.Steps += len(xs)
		}
	}
	rep.StepsPerSec = float64(rep.Steps) / wall.Seconds()
	rep.resets, rep.tools, rep.shells = lat["reset"], lat["mcp"], lat["shell"]
	rep.Failures = fails
	return nil
}

// guiBrowser is what a GUI step uses of a browser, Chromium's tab or the
// HTTP browser.
type guiBrowser interface {
	Navigate(ctx context.Context, url string) error
	Snapshot(ctx context.Context) (string, error)
	Close(ctx context.Context) error
}

// rollout is one rollout of the rl profile on t: steps steps, then a reset.
func rollout(ctx context.Context, o Options, m *wrt.Manager, client *mcp.Client, base string, t *target, w, n, steps int, r *rand.Rand, record func(string, float64)) error {
	inst, err := m.Instance(t.id)
	if err != nil {
		return err
	}
	// The sites answer on the agent listener by Host, NAME.TOKEN.localhost,
	// which a browser resolves to the loopback.
	listener := strings.TrimPrefix(base, "http://")
	_, port, _ := net.SplitHostPort(listener)
	var origins []string
	for _, h := range t.hosts {
		origins = append(origins, "http://"+h+":"+port)
	}
	if len(origins) == 0 {
		return errors.New("gui: the instance serves no site")
	}
	slices.Sort(origins)
	var b guiBrowser
	if o.Chromium != nil {
		// Chromium resolves every NAME.TOKEN.localhost to the loopback.
		tab, err := o.Chromium.Tab(ctx, browser.AllowOrigins(origins...))
		if err != nil {
			return fmt.Errorf("gui: %w", err)
		}
		b = tab
	} else {
		var d net.Dialer
		tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, listener)
		}}
		defer tr.CloseIdleConnections()
		fb, err := fakebrowser.New(fakebrowser.Options{AllowOrigins: origins, Transport: tr})
		if err != nil {
			return err
		}
		b = fb
	}
	// Closed even when ctx ends: a tab left open would stay in the shared
	// browser.
	defer b.Close(context.WithoutCancel(ctx))
	home := filepath.Join(inst.Dir(), world.HomeDir)
	for s := range steps {
		k := r.IntN(10)
		t0 := time.Now()
		switch {
		case k < 4:
			if err := b.Navigate(ctx, origins[r.IntN(len(origins))]); err != nil {
				return fmt.Errorf("gui: %w", err)
			}
			if _, err := b.Snapshot(ctx); err != nil {
				return fmt.Errorf("gui: %w", err)
			}
			record("gui", ms(time.Since(t0)))
		case k < 7:
			body := fmt.Sprintf("rl %d-%d-%d", w, n, s)
			res, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": body}})
			if err == nil && res.IsError {
				err = errors.New("send_message: tool error")
			}
			if err != nil {
				return fmt.Errorf("mcp: %w", err)
			}
			record("mcp", ms(time.Since(t0)))
			t.log = append(t.log, action{"msg", body})
		case k < 9:
			line := fmt.Sprintf("w%d n%d s%d", w, n, s)
			if err := shell(ctx, base, t.token, "echo '"+line+"' >> load.log"); err != nil {
				return fmt.Errorf("shell: %w", err)
			}
			record("shell", ms(time.Since(t0)))
			t.log = append(t.log, action{"sh", line})
		default:
			entries, err := os.ReadDir(home)
			if err == nil {
				for _, e := range entries {
					if e.Type().IsRegular() {
						_, err = os.ReadFile(filepath.Join(home, e.Name()))
						break
					}
				}
			}
			if err != nil {
				return fmt.Errorf("file: %w", err)
			}
			record("file", ms(time.Since(t0)))
		}
	}
	// The rollout is done: its instance is reset for the next.
	t0 := time.Now()
	if err := m.Reset(ctx, t.id); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	record("reset", ms(time.Since(t0)))
	t.log = nil
	t.session.Close()
	return connect(ctx, client, base, t)
}
