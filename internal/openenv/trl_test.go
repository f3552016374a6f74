package openenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/openenv"
)

// TestTRLEnv generates the TRL environment class for the fixture's pool,
// imports it in python3 and holds it to TRL's environment_factory contract
// (testdata/trl_contract.py: the tools TRL would find, their schemas
// against the server's, reset with a dataset row, tool calls, the answer
// and get_reward) against the live server.
func TestTRLEnv(t *testing.T) {
	py := python(t)
	f := fixture(t)
	srv, url := serve(t, f, openenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tools, err := srv.PoolTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"shell", "browser_navigate", "payments__get_balance", "calendar__create_event", openenv.AnswerTool} {
		if !slices.Contains(names, want) {
			t.Errorf("pool tools %v lack %s", names, want)
		}
	}
	var buf bytes.Buffer
	if err := openenv.WriteTRL(&buf, tools, openenv.TRLOptions{Source: "the test fixture", URL: url}); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "wildawm_env.py")
	if err := os.WriteFile(mod, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tk := f.Tasks["wishlist-balance"]
	out := runPython(t, py, nil, map[string]any{"url": url, "task_id": tk.ID, "instruction": tk.Instruction, "answer": tk.Answer, "reference": tk.Reference, "tools": tools},
		"testdata/trl_contract.py", mod, "WildawmEnv")
	var rep struct {
		Tools                       int
		Ignored                     []string
		Shell, MCP, Missing, Answer string
		After                       string
		Steps                       int
		Reward, Unanswered          float64
		Verification                *openenv.Verification
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	t.Logf("TRL contract report: %s", out)
	if rep.Tools != len(tools) || strings.Join(rep.Ignored, ",") != "ground_truth,prompt" {
		t.Errorf("tools %d (want %d), ignored reset keys %v", rep.Tools, len(tools), rep.Ignored)
	}
	if !strings.Contains(rep.Shell, "42") || !strings.Contains(rep.MCP, "3880.55") || rep.Missing == "" || strings.Contains(rep.Missing, `"error"`) || rep.Steps != 3 {
		t.Errorf("tool calls: shell %q, mcp %q, missing file %q, steps %d", rep.Shell, rep.MCP, rep.Missing, rep.Steps)
	}
	if rep.Reward != 1 || !strings.Contains(rep.After, "episode is over") {
		t.Errorf("the reference episode: reward %v, a call after the end %q", rep.Reward, rep.After)
	}
	if rep.Unanswered >= 1 || rep.Unanswered < 0 || rep.Verification == nil || rep.Verification.V != 0 {
		t.Errorf("an unanswered episode: reward %v, verification %+v", rep.Unanswered, rep.Verification)
	}
}

// TestWriteTRLNames: tool and argument names that are no Python
// identifiers become ones, the call still sends the server's names, and
// names TRL would not take as tools, or that collide, are refused.
func TestWriteTRLNames(t *testing.T) {
	py := python(t)
	schema := json.RawMessage(`{"type":"object","properties":{"from":{"type":"string","description":"start"},"max-n":{"type":"integer"},"kind":{"type":"string","enum":["a","b"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["from"]}`)
	tools := []openenv.Tool{{Name: "svc__list-things", Description: `Lists "things".
Returns: a list \ of them`, InputSchema: schema}}
	var buf bytes.Buffer
	if err := openenv.WriteTRL(&buf, tools, openenv.TRLOptions{Class: "Env"}); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "env.py")
	if err := os.WriteFile(mod, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	check := `
import importlib.util, inspect, json, sys
spec = importlib.util.spec_from_file_location("env", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
e = m.Env()
sent = []
e._call = lambda tool, args: sent.append((tool, args)) or "ok"
f = e.svc__list_things
print(json.dumps({"params": list(inspect.signature(f).parameters), "doc": inspect.getdoc(f),
  "ret": f(from_="x", max_n=2), "sent": sent}))
`
	out := runPython(t, py, nil, nil, "-c", check, mod)
	var rep struct {
		Params []string
		Doc    string
		Ret    string
		Sent   [][]any
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if strings.Join(rep.Params, ",") != "from_,max_n,kind,tags" || rep.Ret != "ok" {
		t.Errorf("signature %v, returned %q", rep.Params, rep.Ret)
	}
	if !strings.Contains(rep.Doc, `(choices: ["a", "b"])`) && !strings.Contains(rep.Doc, `(choices: ["a","b"])`) || strings.Contains(rep.Doc, "Returns: a list") {
		t.Errorf("docstring:\n%s", rep.Doc)
	}
	if b, _ := json.Marshal(rep.Sent); string(b) != `[["svc__list-things",{"from":"x","kind":null,"max-n":2,"tags":null}]]` {
		t.Errorf("sent %s", b)
	}
	for _, bad := range [][]openenv.Tool{
		{{Name: "reset", InputSchema: schema}},
		{{Name: "_hidden", InputSchema: schema}},
		{{Name: "a-b", InputSchema: schema}, {Name: "a_b", InputSchema: schema}},
		{{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a-b":{},"a_b":{}}}`)}},
		{{Name: "x", InputSchema: json.RawMessage(`[]`)}},
		nil,
	} {
		if err := openenv.WriteTRL(&bytes.Buffer{}, bad, openenv.TRLOptions{}); err == nil {
			t.Errorf("WriteTRL took %+v", bad)
		}
	}
	if err := openenv.WriteTRL(&bytes.Buffer{}, tools, openenv.TRLOptions{Class: "class"}); err == nil {
		t.Error("WriteTRL took the class name class")
	}
}
