package sft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
)

// trlRecipe is docs/sft.md's TRL recipe: the python block of "Feeding a
// trainer" that builds an SFTTrainer.
func trlRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sft.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, feeding, ok := strings.Cut(string(b), "## Feeding a trainer")
	if !ok {
		t.Fatal("docs/sft.md has no \"## Feeding a trainer\"")
	}
	m := regexp.MustCompile("(?s)```python\n(.*?)```").FindStringSubmatch(feeding)
	if m == nil || !strings.Contains(m[1], "SFTTrainer(") {
		t.Fatal("docs/sft.md's \"Feeding a trainer\" has no python block with an SFTTrainer")
	}
	return m[1]
}

// runPython runs code in dir with the stand-ins for datasets and trl on
// the path, and returns its output.
func runPython(t *testing.T, dir, code string) (string, error) {
	t.Helper()
	stubs, err := filepath.Abs(filepath.Join("testdata", "trl"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "-c", code)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+stubs, "PYTHONDONTWRITEBYTECODE=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func writeJSONL(t *testing.T, path string, recs []Record) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTRLRecipe: docs/sft.md's TRL recipe, run as it stands, loads an
// export (scripts replayed through the harness, and a model's segments
// with a compaction) and meets TRL's SFT data contract as the stand-ins
// in testdata/trl re-implement it from TRL's source: every record trains,
// with exactly its train: true messages labelled. The version-1 recipe
// (load_dataset("json"): Arrow's nulls in every call's arguments) and
// version-1 records (arguments as JSON text; a CSS selector where the
// tool takes a number) break it.
func TestTRLRecipe(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		// Under CI (WILDAWM_CI set, .ci/run installs python3) a missing
		// python3 fails, as runtime.SkipOutsideCI does.
		if os.Getenv("WILDAWM_CI") != "" {
			t.Fatal("WILDAWM_CI is set but python3 is not installed (apt-get install python3)")
		}
		t.Skip("python3 is not installed (apt-get install python3)")
	}
	f := fixture(t)
	recs := slices2(scriptedRecords(t, f))
	b, err := Build(tokenTrajectory(false), Context{Instruction: "do it", Tools: builtinTools()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, b.Records...)
	trainable := 0
	for _, r := range recs {
		if err := Check(r); err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Messages {
			if m.Train {
				trainable++
			}
		}
	}
	recipe := trlRecipe(t)
	dir := t.TempDir()
	writeJSONL(t, filepath.Join(dir, "sft.jsonl"), recs)
	out, err := runPython(t, dir, recipe)
	if want := fmt.Sprintf("trl contract: %d examples train, %d messages labelled", len(recs), trainable); err != nil || !strings.Contains(out, want) {
		t.Fatalf("the recipe: %v\n%s\nwant %q", err, out, want)
	}
	// With jinja2 (as transformers renders) every example renders through
	// a tool-calling template, each argument of each call in the text.
	if _, err := runPython(t, dir, "import jinja2"); err == nil {
		if want := fmt.Sprintf("rendered with toolcall.jinja: %d examples", len(recs)); !strings.Contains(out, want) {
			t.Fatalf("the recipe rendered: %s\nwant %q", out, want)
		}
	} else {
		t.Log("python3 has no jinja2: the examples were checked, not rendered")
	}

	// The version-1 recipe: Arrow's struct of every row's keys.
	old := `from datasets import load_dataset
from trl import SFTConfig, SFTTrainer
ds = load_dataset("json", data_files="sft.jsonl", split="train")
ds = ds.select_columns(["messages", "tools"])
trainer = SFTTrainer(model="Qwen/Qwen3-8B", train_dataset=ds, args=SFTConfig(assistant_only_loss=True, max_length=102400))
trainer.train()
`
	// Arrow either fills nulls in or refuses a key that is a string in
	// one call and a list in another (pyarrow: "cannot mix list and
	// non-list"): over all the records the latter, over one task's the
	// former.
	if out, err := runPython(t, dir, old); err == nil || !strings.Contains(out, "is not a parameter of the tool") && !strings.Contains(out, "mixed types in a column") {
		t.Fatalf("the version-1 recipe passed: %v\n%s", err, out)
	}
	for _, r := range recs {
		if r.Family == "wishlist-balance" {
			writeJSONL(t, filepath.Join(dir, "sft.jsonl"), []Record{r})
		}
	}
	if out, err := runPython(t, dir, old); err == nil || !strings.Contains(out, "(None) is not a parameter of the tool") {
		t.Fatalf("the version-1 recipe on one record: %v\n%s", err, out)
	}
	// Version-1 records: arguments as a JSON text; a selector.
	for _, c := range []struct {
		name, want string
		change     func(*Function)
	}{
		{"arguments as text", "not a mapping", func(fn *Function) {
			b, _ := json.Marshal(string(fn.Arguments))
			fn.Arguments = b
		}},
		{"a selector", `argument 'selector'`, func(fn *Function) {
			if fn.Name == "browser_type" {
				fn.Arguments = json.RawMessage(`{"selector":"#login-username","text":"marta.costa"}`)
			}
		}},
	} {
		bad := slices2(recs[:1])
		bad[0].Messages = append([]Message(nil), bad[0].Messages...)
		for i, m := range bad[0].Messages {
			if len(m.ToolCalls) > 0 {
				calls := append([]ToolCall(nil), m.ToolCalls...)
				for j := range calls {
					c.change(&calls[j].Function)
				}
				bad[0].Messages[i].ToolCalls = calls
			}
		}
		writeJSONL(t, filepath.Join(dir, "sft.jsonl"), bad)
		if out, err := runPython(t, dir, recipe); err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: %v\n%s\nwant an error naming %q", c.name, err, out, c.want)
		}
	}
}

func slices2(recs []Record) []Record { return append([]Record(nil), recs...) }

func builtinTools() []Tool {
	var out []Tool
	for _, d := range agent.Builtins() {
		out = append(out, toolOf(d.Name, d.Description, d.Parameters))
	}
	return out
}
