package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI in-process with a private store.
func run(t *testing.T, storeDir string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(context.Background(), append([]string{"--store", storeDir}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, storeDir string, args ...string) string {
	t.Helper()
	out, stderr, err := run(t, storeDir, args...)
	if err != nil {
		t.Fatalf("wildawm %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

const testdata = "../delta/testdata/"

func TestWorldAndDeltaCommands(t *testing.T) {
	tmp := t.TempDir()
	st := filepath.Join(tmp, "store")
	day0 := strings.TrimSpace(mustRun(t, st, "delta", "apply", "empty", testdata+"day0.json"))
	if len(day0) != 64 {
		t.Fatalf("apply printed %q, want a snapshot ID", day0)
	}
	mustRun(t, st, "delta", "lint", testdata+"day1.json", "--parent", day0[:8])
	replay := mustRun(t, st, "delta", "replay", day0[:10], testdata+"day1.json")
	if !strings.Contains(replay, "ok: deterministic") {
		t.Errorf("replay: %s", replay)
	}
	w1 := filepath.Join(tmp, "w1")
	day1 := strings.TrimSpace(mustRun(t, st, "delta", "apply", day0, testdata+"day1.json", "--out", w1))

	// Log shows the chain, newest first.
	log := mustRun(t, st, "world", "log", day1[:12])
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], day1[:12]) || !strings.HasPrefix(lines[1], day0[:12]) || !strings.Contains(lines[0], "parent "+day0[:12]) {
		t.Errorf("log:\n%s", log)
	}

	// Checkout equals the --out world; hash is stable; snapshot is idempotent.
	co := filepath.Join(tmp, "co")
	mustRun(t, st, "world", "checkout", day1[:12], co)
	h1, h2 := mustRun(t, st, "world", "hash", w1), mustRun(t, st, "world", "hash", co)
	if h1 != h2 || len(strings.TrimSpace(h1)) != 64 {
		t.Errorf("hashes %q %q", h1, h2)
	}
	if again := strings.TrimSpace(mustRun(t, st, "world", "snapshot", co)); again != day1 {
		t.Errorf("re-snapshot gave %s, want %s", again, day1)
	}

	// Diff in text and JSON.
	text := mustRun(t, st, "world", "diff", day0[:12], w1)
	for _, want := range []string{"shop.orders (by order_no): +1 ~0 -0", "file + notes/day1.txt"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, st, "world", "diff", "--json", day0, day1)), &d); err != nil || d["version"] != float64(1) {
		t.Errorf("diff --json: %v %v", err, d["version"])
	}

	// Store check and gc on a healthy store.
	if out := mustRun(t, st, "store", "check"); !strings.Contains(out, "no errors") {
		t.Errorf("check: %s", out)
	}
	mustRun(t, st, "store", "gc")
	mustRun(t, st, "world", "checkout", day0, filepath.Join(tmp, "co0"))
}

func TestBadInputIsRefused(t *testing.T) {
	tmp := t.TempDir()
	st := filepath.Join(tmp, "store")
	day0 := strings.TrimSpace(mustRun(t, st, "delta", "apply", "empty", testdata+"day0.json"))
	bad := filepath.Join(tmp, "bad.json")
	os.WriteFile(bad, []byte(`{"version":1,"persona":"avtech","day":1,"clock":"2026-03-02T18:00:00Z","ops":[
		{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-100"},"set":{"price":{"sql":"random()"}}}]}`), 0o644)
	before := mustRun(t, st, "world", "log")
	_, _, err := run(t, st, "delta", "apply", day0, bad)
	if err == nil || !strings.Contains(err.Error(), "ops[0].set.price") {
		t.Fatalf("apply of a bad delta: %v", err)
	}
	if after := mustRun(t, st, "world", "log"); after != before {
		t.Errorf("store changed after a refused delta:\n%s\n%s", before, after)
	}
	if _, _, err := run(t, st, "delta", "lint", bad); err == nil || !strings.Contains(err.Error(), "--parent") {
		t.Errorf("lint of day 1 without a parent: %v", err)
	}
	if _, _, err := run(t, st, "world", "checkout", "zzzz", filepath.Join(tmp, "x")); err == nil {
		t.Error("checkout of a bad ID succeeded")
	}
	if _, _, err := run(t, filepath.Join(tmp, "nostore"), "store", "check"); err == nil || !strings.Contains(err.Error(), "store init") {
		t.Errorf("check on a missing store: %v", err)
	}
	if _, _, err := run(t, st, "world", "hash", tmp); err == nil {
		t.Error("hash of a non-world succeeded")
	}
}

func TestBenchWorldSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a benchmark world")
	}
	out := mustRun(t, filepath.Join(t.TempDir(), "unused"), "bench", "world", "--days", "3", "--resets", "5", "--catalog-mib", "2", "--hash-runs", "1")
	for _, want := range []string{"## Store: 3-day chain", "x of unique", "## World hash", "MB/s", "## Reset", "| cp |", "| hardlink |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestCatalogBuild: catalog build writes a catalog the store can hash,
// and refuses a missing --out or a directory that holds something,
// leaving it as it was.
func TestCatalogBuild(t *testing.T) {
	tmp := t.TempDir()
	st := filepath.Join(tmp, "store")
	if _, _, err := run(t, st, "catalog", "build"); err == nil || !strings.Contains(err.Error(), "--out is required") {
		t.Errorf("catalog build without --out: %v", err)
	}
	full := filepath.Join(tmp, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	if _, _, err := run(t, st, "catalog", "build", "--out", full); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("catalog build into a full directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(full, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the refused build touched the directory: %q, %v", b, err)
	}
	out := filepath.Join(tmp, "catalog")
	stdout := mustRun(t, st, "catalog", "build", "--out", out, "--seed", "3")
	if !strings.Contains(stdout, "records in") || !strings.Contains(stdout, "room_rates") {
		t.Errorf("catalog build printed:\n%s", stdout)
	}
	if _, err := os.Stat(out + ".new"); !os.IsNotExist(err) {
		t.Errorf("catalog build left %s.new: %v", out, err)
	}
	if _, _, err := run(t, st, "world", "hash", out); err != nil {
		t.Errorf("world hash of the built catalog: %v", err)
	}
}
