package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/world"
)

// probeDef is a definition with a table of rows rows, a health tool and a
// tool probe whose one step is step (a YAML step) and whose annotations
// are annotations; extra is appended to the test world's SQL, and calls
// says whether the test world calls probe.
func probeDef(step, annotations string, rows int, extra string, calls bool) string {
	call := ""
	if calls {
		call = "\n  calls:\n    - tool: probe"
	}
	return fmt.Sprintf(`
wildawm_service: 1
name: probe
title: Probe
instructions: Numbers.
health_tool: count
tables:
  - name: nums
    columns: [n INTEGER PRIMARY KEY]
    key: [n]
tools:
  - name: count
    description: Counts the numbers.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - result: SELECT json_object('n', count(*)) FROM nums
  - name: probe
    description: Probes.
    annotations: %s
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}}
    steps:
      - %s
      - result: SELECT json_object('n', 1)
test:
  self: Alex
  now: "2026-01-01T00:00:00Z"
  sql:
    - WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) INSERT INTO nums SELECT i FROM c%s%s
`, annotations, step, rows, extra, call)
}

// lintOf parses, compiles and lints src as `service lint` does and returns
// every refusal as one text ("" when the definition passes).
func lintOf(t *testing.T, src string, limit time.Duration) string {
	t.Helper()
	d, err := engine.Parse([]byte(src))
	if err != nil {
		return err.Error()
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		return err.Error()
	}
	done := make(chan struct{})
	var r *engine.LintReport
	go func() {
		defer close(done)
		r, err = engine.LintWith(context.Background(), c, engine.LintOptions{SQLTimeout: limit})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("lint hung for a minute")
	}
	if err != nil {
		return err.Error()
	}
	return strings.Join(r.Problems, "\n")
}

// TestLintRefusesHostileSQL lints definitions whose SQL attaches, vacuums
// into a host file, reads the host through a pragma, runs two statements
// in a step, loads code or never ends: each is refused with its reason,
// lint ends within the bound, and no file appears on the host.
func TestLintRefusesHostileSQL(t *testing.T) {
	host := t.TempDir()
	file := func(name string) string { return filepath.Join(host, name) }
	write := "{readOnlyHint: false}"
	read := "{readOnlyHint: true}"
	cases := []struct {
		name, src, want string
	}{
		{"ATTACH in a step", probeDef("exec: ATTACH '"+file("step.db")+"' AS x", write, 10, "", true), "ATTACH"},
		{"ATTACH in a step with no example call", probeDef("exec: ATTACH '"+file("quiet.db")+"' AS x", write, 10, "", false), "ATTACH"},
		{"ATTACH in the test world", probeDef("check: SELECT NULL", write, 10, "\n    - ATTACH '"+file("world.db")+"' AS w", false), "ATTACH"},
		{"ATTACH in another database", strings.Replace(probeDef("check: SELECT NULL", write, 10, "", false), "  sql:\n", "  other:\n    side:\n      - ATTACH '"+file("other.db")+"' AS o\n  sql:\n", 1), "ATTACH"},
		{"a path as another database", strings.Replace(probeDef("check: SELECT NULL", write, 10, "", false), "  sql:\n", "  other:\n    ../../escape:\n      - CREATE TABLE t (a)\n  sql:\n", 1), "escape"},
		{"VACUUM INTO in a step", probeDef("exec: VACUUM INTO '"+file("vacuum.db")+"'", write, 10, "", false), "VACUUM"},
		{"VACUUM INTO in the test world", probeDef("check: SELECT NULL", write, 10, "\n    - VACUUM INTO '"+file("vacuum-world.db")+"'", false), "VACUUM"},
		{"pragma_database_list", probeDef("check: SELECT (SELECT group_concat(file) FROM pragma_database_list) WHERE 0", read, 10, "", false), "pragma_database_list"},
		{"PRAGMA in a step", probeDef("exec: PRAGMA journal_mode = OFF", write, 10, "", false), "PRAGMA journal_mode"},
		{"two statements in a step", probeDef("exec: DELETE FROM nums WHERE n = 1; DELETE FROM nums", write, 10, "", false), "exactly one SQL statement"},
		{"two statements through a condition", probeDef("{if: \"1) ; DELETE FROM nums; SELECT (1\", check: SELECT NULL}", write, 10, "", false), "exactly one SQL statement"},
		{"load_extension", probeDef("check: SELECT load_extension('/tmp/x.so') WHERE 0", write, 10, "", false), "load_extension"},
		{"BEGIN in a step", probeDef("exec: COMMIT", write, 10, "", false), "the caller owns the transaction"},
		{"a recursive CTE that never ends", probeDef("check: WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT NULL FROM c WHERE i = 0", read, 10, "", true), engine.TimeoutMessage},
		{"a cross join over big tables", probeDef("check: SELECT NULL FROM nums a, nums b, nums c WHERE a.n + b.n = c.n - 100000", read, 3000, "", true), engine.TimeoutMessage},
		{"a recursive test world that never ends", probeDef("check: SELECT NULL", read, 10, "\n    - WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) INSERT INTO nums SELECT i + 100 FROM c WHERE i < 0", false), "did not finish in time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			got := lintOf(t, c.src, 300*time.Millisecond)
			if !strings.Contains(got, c.want) {
				t.Errorf("lint: %q, want a refusal containing %q", got, c.want)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("lint took %s", d)
			}
		})
	}
	ents, err := os.ReadDir(host)
	if err != nil || len(ents) > 0 {
		t.Errorf("lint created files on the host: %v %v", ents, err)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "escape.sqlite")); err == nil {
		t.Errorf("lint wrote %s", filepath.Join(os.TempDir(), "escape.sqlite"))
	}
	// The built-in kind of recursion, bounded by a LIMIT, passes.
	ok := probeDef("check: WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT NULL FROM c WHERE i = 0 LIMIT 1 OFFSET 0", read, 10, "", true)
	ok = strings.Replace(ok, "FROM c WHERE i = 0 LIMIT", "FROM (SELECT i FROM c LIMIT 5) WHERE i = 0 LIMIT", 1)
	if got := lintOf(t, ok, 5*time.Second); got != "" {
		t.Errorf("a bounded recursive CTE: %s", got)
	}
}

// serveProbe serves src's test world with the statement bound limit and
// returns the service and a connected client.
func serveProbe(t *testing.T, src string, limit time.Duration) (*engine.Service, *mcp.ClientSession) {
	t.Helper()
	d, err := engine.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := engine.WriteTestWorld(context.Background(), dir, d); err != nil {
		t.Fatal(err)
	}
	svc, err := engine.New(c, engine.Options{WorldDir: dir, Clock: world.FixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Self: "Alex", SQLTimeout: limit})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := svc.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return svc, cs
}

// callWithin calls tool and fails the test if the call takes longer than d.
func callWithin(t *testing.T, cs *mcp.ClientSession, tool string, d time.Duration) *mcp.CallToolResult {
	t.Helper()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("%s: %v", tool, a.err)
		}
		return a.res
	case <-time.After(d):
		t.Fatalf("%s did not answer in %s", tool, d)
	}
	return nil
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestCallStopsAtTheStatementBound calls a tool whose cross join of big
// tables runs for hours on a live service: the call is a tool error that
// names the tool and the bound, the reset that waited for it is not hung,
// and the service answers afterwards.
func TestCallStopsAtTheStatementBound(t *testing.T) {
	src := probeDef("check: SELECT NULL FROM nums a, nums b, nums c WHERE a.n + b.n = c.n - 100000", "{readOnlyHint: false}", 3000, "", false)
	svc, cs := serveProbe(t, src, 300*time.Millisecond)
	start := time.Now()
	res := callWithin(t, cs, "probe", 30*time.Second)
	if msg := resultText(res); !res.IsError || !strings.Contains(msg, "probe") || !strings.Contains(msg, "300ms") || !strings.Contains(msg, engine.TimeoutMessage) {
		t.Errorf("the call: error %v %q, want a tool error naming probe and 300ms", res.IsError, msg)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the bound of 300ms stopped the call after %s", d)
	}
	// A reset waiting for the call in flight goes on within the bound.
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	time.Sleep(50 * time.Millisecond)
	suspended := make(chan func(), 1)
	go func() { suspended <- svc.Suspend() }()
	select {
	case resume := <-suspended:
		resume()
	case <-time.After(30 * time.Second):
		t.Fatal("the reset waited 30s for the call in flight")
	}
	if res := callWithin(t, cs, "count", 10*time.Second); res.IsError || !strings.Contains(resultText(res), `"n":3000`) {
		t.Errorf("count after the reset: %s", resultText(res))
	}
}

// TestCallRunsUnderTheGuard serves a definition that never went through
// lint: its ATTACH is refused when the tool is called, and creates no
// file.
func TestCallRunsUnderTheGuard(t *testing.T) {
	host := filepath.Join(t.TempDir(), "attached.db")
	_, cs := serveProbe(t, probeDef("exec: ATTACH '"+host+"' AS x", "{readOnlyHint: false}", 10, "", false), time.Second)
	res := callWithin(t, cs, "probe", 30*time.Second)
	if !res.IsError {
		t.Errorf("ATTACH at call time: %s", resultText(res))
	}
	if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call created %s: %v", host, err)
	}
}

// TestCallStopsBetweenRows calls a tool whose rows step finds its first
// row at once and its second after hours: the bound stops it there too.
func TestCallStopsBetweenRows(t *testing.T) {
	step := `{rows: "SELECT json_object('n', a.n) FROM nums a, nums b, nums c WHERE (a.n = 1 AND b.n = 1 AND c.n = 1) OR a.n + b.n = c.n - 100000", as: found}`
	_, cs := serveProbe(t, probeDef(step, "{readOnlyHint: true}", 3000, "", false), 300*time.Millisecond)
	res := callWithin(t, cs, "probe", 30*time.Second)
	if msg := resultText(res); !res.IsError || !strings.Contains(msg, engine.TimeoutMessage) {
		t.Errorf("the call: error %v %q, want a tool error naming the bound", res.IsError, msg)
	}
	if res := callWithin(t, cs, "count", 10*time.Second); res.IsError {
		t.Errorf("count after the call: %s", resultText(res))
	}
}
