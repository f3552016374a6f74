package mcpbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun runs every case with a few calls: ours always (stdio through a
// freshly built wildawm binary), the TypeScript reference servers only if
// installed in $WILDAWM_MCPBENCH_TS_DIR or the module's .cache/mcpbench.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wildawm binary and starts servers")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "wildawm")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wildawm")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ts := os.Getenv("WILDAWM_MCPBENCH_TS_DIR")
	if ts == "" {
		ts = filepath.Join(root, ".cache", "mcpbench")
	}
	rep, err := Run(context.Background(), Options{Calls: 20, Warmup: 3, Threads: 10, Messages: 200, Binary: bin, Baseline: bin, EchoArgs: []string{"bench", "mcp-echo-server"}, TSDir: ts, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skipped {
		t.Logf("reference case skipped (install the servers as the package doc says to run it): %s", s)
	}
	ours, floors, plain := 0, 0, 0
	for _, c := range rep.Cases {
		if c.P50 <= 0 || c.P99 < c.P50 {
			t.Errorf("%s %s %s: p50 %v p99 %v", c.Server, c.Transport, c.Tool, c.P50, c.P99)
		}
		if !c.Reference && c.Server == "wildawm messages" {
			ours++
		}
		if c.Server == "go-sdk echo (floor)" {
			floors++
		}
		if c.Server == "net/http echo, no MCP SDK (floor)" && c.Transport == "http" && c.Client == ClientRaw {
			plain++
		}
		if c.Bytes < 100 {
			t.Errorf("%s %s %s: response of %d bytes", c.Server, c.Transport, c.Tool, c.Bytes)
		}
	}
	if !strings.Contains(rep.Markdown(), "Against the baseline build") {
		t.Error("the report has no table against the baseline")
	}

	// Every service, this build against itself as the baseline: both
	// builds must answer every call the same.
	srep, err := RunServices(context.Background(), ServicesOptions{Binary: bin, Baseline: bin, Calls: 5, Warmup: 1, PerService: 3,
		Scripts: filepath.Join(root, "internal", "service", "testdata", "scripts")})
	if err != nil {
		t.Fatal(err)
	}
	if len(srep.Cases) != 3*8 {
		t.Errorf("%d service cases, want 24 (3 for each of 8 services)", len(srep.Cases))
	}
	for _, c := range srep.Cases {
		if !c.Same || c.P50 <= 0 || c.BaseP50 <= 0 {
			t.Errorf("%s %s %s: same %v, p50 %v, baseline %v", c.Service, c.Tool, c.Args, c.Same, c.P50, c.BaseP50)
		}
	}
	if md := srep.Markdown(); !strings.Contains(md, "| all | 24 |") {
		t.Errorf("services report:\n%s", md)
	}

	if ours != 21 {
		t.Errorf("%d of our cases, want 21 (4 calls in process, over stdio and HTTP with each of 2 clients, and the durable write)", ours)
	}
	if plain != 1 {
		t.Errorf("%d cases of net/http's floor, want 1 (http, raw client)", plain)
	}
	if floors != 5 {
		t.Errorf("%d floor cases, want 5 (in-process, stdio and http with each of 2 clients)", floors)
	}
	if !rep.HTTPOwnProcess || !rep.FloorHTTPOwnProcess {
		t.Error("the HTTP servers ran in the benchmark's process although a binary was given")
	}
	md := rep.Markdown()
	for _, client := range []string{ClientSDK, ClientRaw} {
		if row := "| wildawm messages | stdio | " + client + " | send_message | write |"; !strings.Contains(md, row) {
			t.Errorf("markdown lacks the row %q:\n%s", row, md)
		}
	}
	t.Log("\n" + md)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
