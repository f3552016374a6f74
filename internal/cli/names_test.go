package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestNastyNamesThroughTheCLI: a world whose home holds every
// world.NastyNames file snapshots, checks out with its hash, diffs against
// the world without them with one line per name, and `store check`
// restores and hashes it, clean.
func TestNastyNamesThroughTheCLI(t *testing.T) {
	tmp := t.TempDir()
	st := filepath.Join(tmp, "store")
	mustRun(t, st, "store", "init")
	files := map[string]string{}
	for _, n := range world.NastyNames() {
		files[n] = "x"
	}
	plain := state.MakeTestWorld(t, filepath.Join(tmp, "plain"), state.TestWorld{})
	nasty := state.MakeTestWorld(t, filepath.Join(tmp, "nasty"), state.TestWorld{Files: files})
	id := strings.TrimSpace(mustRun(t, st, "world", "snapshot", nasty))
	co := filepath.Join(tmp, "co")
	mustRun(t, st, "world", "checkout", id, co)
	if h1, h2 := mustRun(t, st, "world", "hash", nasty), mustRun(t, st, "world", "hash", co); h1 != h2 {
		t.Errorf("checkout hashes %s, the world %s", h2, h1)
	}
	ents, err := os.ReadDir(filepath.Join(co, "home"))
	if err != nil || len(ents) != len(files) {
		t.Errorf("checkout's home has %d entries, want %d (%v)", len(ents), len(files), err)
	}

	text := mustRun(t, st, "world", "diff", plain, co)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "file + ") {
			n++
		}
	}
	if n != len(files) || len(lines) != len(files)+1 {
		t.Errorf("diff text: %d file lines in %d lines, want %d and a summary:\n%s", n, len(lines), len(files), text)
	}
	var d struct {
		Files []state.FileChange `json:"files"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, st, "world", "diff", "--json", plain, co)), &d); err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Files {
		delete(files, f.Path)
	}
	if len(files) != 0 {
		t.Errorf("diff --json lacks %q", files)
	}

	out := mustRun(t, st, "store", "check")
	if !strings.Contains(out, "no errors") || !strings.Contains(out, "restored 1 trees, hashed 1") {
		t.Errorf("store check:\n%s", out)
	}
	if out := mustRun(t, st, "store", "check", "--no-restore"); !strings.Contains(out, "restored 0 trees, hashed 0") {
		t.Errorf("store check --no-restore:\n%s", out)
	}
	if _, _, err := run(t, st, "store", "check", "--parallel", "0"); err == nil || !strings.Contains(err.Error(), "--parallel 0") {
		t.Errorf("store check --parallel 0: %v", err)
	}
}
