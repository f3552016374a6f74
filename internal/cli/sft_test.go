package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/sft"
)

// TestSFTExportDefaults: sft export's budgets default to the paper's, the
// sft package's named constants: a 102,400-token context with compaction,
// 256 turns, a 102,400-token segment limit.
func TestSFTExportDefaults(t *testing.T) {
	c := (&env{}).sftExportCmd()
	for flag, want := range map[string]int{"context-tokens": sft.DefaultContextTokens, "max-turns": sft.DefaultMaxTurns, "max-tokens": sft.DefaultMaxTokens} {
		if got := c.Flags().Lookup(flag).DefValue; got != fmt.Sprint(want) {
			t.Errorf("--%s defaults to %s, want %d", flag, got, want)
		}
	}
	if sft.DefaultContextTokens != 102400 || sft.DefaultMaxTurns != 256 || sft.DefaultMaxTokens != 102400 {
		t.Errorf("the paper's budgets are 102,400 tokens and 256 turns: %d, %d, %d", sft.DefaultContextTokens, sft.DefaultMaxTurns, sft.DefaultMaxTokens)
	}
}

// TestSFTExportCommand: bad flags are errors naming the flag and the fix;
// on a run's pool, --from live with the oracle replay writes one record
// per task of the sft split, says the teacher is a script, and prints the
// summary; --from gate on tasks never gated writes nothing and says so.
func TestSFTExportCommand(t *testing.T) {
	st := t.TempDir()
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sft", "export"}, "--out is required"},
		{[]string{"sft", "export", "--out", out, "--from", "disk"}, "--from \"disk\""},
		{[]string{"sft", "export", "--out", out, "--teacher", "scripted:replay-oracle"}, "--teacher is for --from live"},
		{[]string{"sft", "export", "--out", out, "--from", "live"}, "--from live needs --teacher"},
		{[]string{"sft", "export", "--out", out, "--attempts", "0"}, "--attempts 0"},
		{[]string{"sft", "export", "--out", out, "--max-tokens", "0"}, "--max-tokens 0"},
		{[]string{"sft", "export", "--out", out, "--context-tokens", "0"}, "--context-tokens 0"},
		{[]string{"sft", "export", "--out", out, "--max-turns", "0"}, "--max-turns 0"},
		{[]string{"sft", "export", "--out", out, "--context-tokens", "8000"}, "more than twice --completion-tokens 4096"},
		{[]string{"sft", "export", "--out", out, "--dir", filepath.Join(t.TempDir(), "nosuch")}, "wildawm pool split"},
	} {
		if _, _, err := run(t, st, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	f := pooltest.New(t, nil)
	defer f.Close()
	f.WritePool(t, func(fam string) string {
		if fam == "model-pick" {
			return pool.SplitRL
		}
		return pool.SplitSFT
	})
	for _, c := range []struct{ teacher, want string }{
		{"scripted:replay-nosuch", "scripted:replay-careful"},
		{"qwen3-8b", "URL#MODEL"},
	} {
		if _, _, err := run(t, st, "sft", "export", "--dir", f.Dir, "--out", out, "--from", "live", "--teacher", c.teacher, "--fake-browser"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--teacher %s: %v, want an error naming %q", c.teacher, err, c.want)
		}
	}
	stdout, stderr, err := run(t, st, "sft", "export", "--dir", f.Dir, "--out", out, "--from", "live", "--teacher", "scripted:replay-oracle", "--attempts", "1", "--fake-browser")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "sft: 2 tasks, 2 with a teacher trajectory, 0 without a success; 2 segments written, 0 dropped") || !strings.Contains(stdout, "2 segments of 2 tasks") {
		t.Fatalf("stdout %q\nstderr %q", stdout, stderr)
	}
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		var r struct {
			Version int               `json:"version"`
			TaskID  string            `json:"task_id"`
			Teacher string            `json:"teacher"`
			Kind    string            `json:"teacher_kind"`
			Source  string            `json:"source"`
			V       int               `json:"v"`
			Traj    string            `json:"trajectory"`
			Tools   []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Version != sft.Version || r.Teacher != "scripted:replay-oracle" || r.Kind != "scripted" || r.Source != "live" || r.V != 1 || !strings.HasPrefix(r.Traj, filepath.Join(f.Dir, "sft", "rollouts")) {
			t.Fatalf("record %+v", r)
		}
		if len(r.Tools) == 0 || bytes.Contains(sc.Bytes(), []byte(`\"selector\"`)) || bytes.Contains(sc.Bytes(), []byte(`"selector"`)) {
			t.Fatalf("record of %s: %d tools, or a CSS selector in a call: the harness's action space is element numbers", r.TaskID, len(r.Tools))
		}
		seen[r.TaskID] = true
	}
	if len(seen) != 2 || seen[f.Tasks["model-pick"].ID] {
		t.Fatalf("tasks exported: %v", seen)
	}
	// Nothing to export is an error (it once wrote an empty file and
	// exited 0), and the earlier export stays.
	before, _ := os.ReadFile(out)
	_, stderr, err = run(t, st, "sft", "export", "--dir", f.Dir, "--out", out, "--fake-browser")
	if err == nil || !strings.Contains(stderr, "never gated") || !strings.Contains(err.Error(), "no segment to write") {
		t.Fatalf("--from gate on ungated tasks: %v\n%s", err, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) || len(after) == 0 {
		t.Errorf("a failed export changed %s", out)
	}
}
