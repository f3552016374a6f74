package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
)

// verifierDir writes the SDK and the given scripts (name -> source).
func verifierDir(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "verifier")
	if err := WriteSDK(dir); err != nil {
		t.Fatal(err)
	}
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(dir, "scripts", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var protocolScripts = map[string]string{
	"pass.py": `from _verify_sdk import db, read_csv, result, answer, home_path, read_text
rows = read_csv("reports/open-orders.csv")
total = sum(int(r["qty"]) for r in rows)
amount = db("ledger").execute("SELECT amount FROM entries WHERE memo = 'open orders'").fetchone()["amount"]
before = db("ledger", world="initial").execute("SELECT count(*) FROM entries").fetchone()[0]
old = read_text("notes.md", world="initial")
result(total == amount == 5 and before == 0 and "nothing yet" in old and "5" in answer(), f"csv {total}, ledger {amount}, before {before}")
`,
	"fail.py": `from _verify_sdk import result
result(False, "the ledger has no entry")
`,
	"crash.py": `from _verify_sdk import result
print("RESULT_JSON={\"pass\": true, \"evidence\": \"too early\"}")
raise RuntimeError("boom: no such table")
`,
	"exit_nonzero.py": `import sys
from _verify_sdk import result
result(True, "claims success")
sys.exit(3)
`,
	"silent.py": `print("all good, probably")
`,
	"invalid.py": `print("RESULT_JSON={pass: true}")
`,
	"no_pass.py": `print('RESULT_JSON={"passed": true, "evidence": "typo"}')
`,
	"pass_string.py": `print('RESULT_JSON={"pass": "true", "evidence": ""}')
`,
	"loop.py": `while True:
    pass
`,
	"last_wins.py": `from _verify_sdk import result
result(False, "first attempt")
result(True, "second attempt")
print("some trailing log line")
print("  RESULT_JSON={\"pass\": false} is not at the start of the line")
`,
	"last_fails.py": `from _verify_sdk import result
result(True, "first")
print('RESULT_JSON={"pass": false, "evidence": "second"}')
print("done")
`,
	"escape.py": `from _verify_sdk import home_path, result
try:
    home_path("../manifest.json")
    result(True, "escaped")
except ValueError as e:
    result(False, str(e))
`,
	"cwd.py": `import os
from _verify_sdk import result
open("scratch.txt", "w").write("x")
result(not os.getcwd().startswith(os.environ["VERIFY_FINAL"]), os.getcwd())
`,
}

func TestScriptProtocol(t *testing.T) {
	py := needPython(t)
	initial, final := testWorlds(t)
	vdir := verifierDir(t, protocolScripts)
	digest, err := Digest(vdir)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := state.Hash(context.Background(), final)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Initial: initial, Final: final, Answer: "total 5", VerifierDir: vdir, Runner: execRunner{python: py}, Scratch: t.TempDir()}
	tests := []struct {
		script  string
		timeout int
		pass    bool
		err     string
		ev      string
	}{
		{"pass.py", 0, true, "", "csv 5, ledger 5, before 0"},
		{"fail.py", 0, false, "", "the ledger has no entry"},
		{"crash.py", 0, false, "exited with status 1; stderr: Traceback", ""},
		{"exit_nonzero.py", 0, false, "exited with status 3", ""},
		{"silent.py", 0, false, "printed no RESULT_JSON= line; stdout: all good, probably", ""},
		{"invalid.py", 0, false, "is not {\"pass\": bool", ""},
		{"no_pass.py", 0, false, "has no \"pass\" field", ""},
		{"pass_string.py", 0, false, "is not {\"pass\": bool", ""},
		{"loop.py", 1, false, "timed out after 1s", ""},
		{"last_wins.py", 0, true, "", "second attempt"},
		{"last_fails.py", 0, false, "", "second"},
		{"escape.py", 0, false, "", "leaves the home directory"},
		{"cwd.py", 0, true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			c := task.Criterion{ID: "s", Kind: "script", Script: "scripts/" + tc.script, TimeoutSeconds: tc.timeout}
			r, err := Verify(context.Background(), task.TestTask(t, c), in)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Criteria[0]
			if got.Pass != tc.pass || (tc.pass && r.V != 1) {
				t.Errorf("pass = %v, V = %d, want pass %v: %+v", got.Pass, r.V, tc.pass, got)
			}
			if tc.err == "" && got.Error != "" || !strings.Contains(got.Error, tc.err) {
				t.Errorf("error = %q, want %q", got.Error, tc.err)
			}
			if wantErrs := 0; tc.err != "" {
				wantErrs = 1
				if r.ScriptErrors != wantErrs {
					t.Errorf("script_errors = %d, want 1", r.ScriptErrors)
				}
			}
			if !strings.Contains(got.Evidence, tc.ev) {
				t.Errorf("evidence = %q, want %q", got.Evidence, tc.ev)
			}
		})
	}
	if after, _ := Digest(vdir); len(DigestChanges(digest, after)) > 0 {
		t.Errorf("running scripts changed the verifier directory: %v", DigestChanges(digest, after))
	}
	if after, _ := state.Hash(context.Background(), final); after != hash {
		t.Error("running scripts changed the final world")
	}
}

func TestParseScriptResultUnits(t *testing.T) {
	got := ParseScriptResult(RunResult{Stdout: []byte("RESULT_JSON={\"pass\": true, \"evidence\": \"ok\"}\r\n")}, DefaultScriptTimeout)
	if !got.Pass || got.Evidence != "ok" || got.Error != "" {
		t.Fatalf("CRLF line: %+v", got)
	}
	got = ParseScriptResult(RunResult{Stdout: []byte("RESULT_JSON={\"pass\": true} trailing")}, DefaultScriptTimeout)
	if got.Pass || got.Error == "" {
		t.Fatalf("trailing garbage: %+v", got)
	}
	got = ParseScriptResult(RunResult{Stdout: []byte("RESULT_JSON={\"pass\": true}"), TimedOut: true, ExitCode: -1}, DefaultScriptTimeout)
	if got.Pass || !strings.Contains(got.Error, "timed out") {
		t.Fatalf("timed out after a pass line: %+v", got)
	}
}

// TestScriptCannotWriteWorlds runs, in a real bubblewrap sandbox, a script
// that tries to change the final world, the initial world and the verifier.
func TestScriptCannotWriteWorlds(t *testing.T) {
	runner := needBwrap(t)
	initial, final := testWorlds(t)
	vdir := verifierDir(t, map[string]string{"attack.py": attackScript})
	checkReadOnly(t, runner, initial, final, vdir)
}

const attackScript = `import os, sqlite3
from _verify_sdk import result
F, I, V = os.environ["VERIFY_FINAL"], os.environ["VERIFY_INITIAL"], os.environ["VERIFY_DIR"]
wrote = []
def attempt(name, fn):
    try:
        fn()
        wrote.append(name)
    except Exception as e:
        pass
def sql():
    c = sqlite3.connect(F + "/db/ledger.sqlite")
    c.execute("DELETE FROM entries")
    c.commit()
def sql_uri():
    c = sqlite3.connect("file:" + F + "/db/shop.sqlite?mode=rw", uri=True)
    c.execute("UPDATE orders SET qty = 0")
    c.commit()
attempt("final home file", lambda: open(F + "/home/hacked.txt", "w").write("x"))
attempt("final notes", lambda: open(F + "/home/notes.md", "a").write("x"))
attempt("final manifest", lambda: open(F + "/manifest.json", "w").write("{}"))
attempt("final db", sql)
attempt("final db uri", sql_uri)
attempt("final remove", lambda: os.remove(F + "/home/same.txt"))
attempt("initial file", lambda: open(I + "/home/hacked.txt", "w").write("x"))
attempt("verifier", lambda: open(V + "/scripts/fail.py", "w").write("x"))
attempt("chmod", lambda: os.chmod(F + "/home/notes.md", 0o777))
result(not wrote, "wrote: " + ", ".join(wrote) if wrote else "every write failed")
`

func checkReadOnly(t *testing.T, runner Runner, initial, final, vdir string) {
	t.Helper()
	ctx := context.Background()
	h0, _ := state.Hash(ctx, initial)
	h1, _ := state.Hash(ctx, final)
	d0, _ := Digest(vdir)
	c := task.Criterion{ID: "attack", Kind: "script", Script: "scripts/attack.py"}
	r, err := Verify(ctx, task.TestTask(t, c), Input{Initial: initial, Final: final, VerifierDir: vdir, Runner: runner, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Criteria[0]; !got.Pass || got.Error != "" {
		t.Errorf("the sandbox let the script write: %+v", got)
	}
	if h, _ := state.Hash(ctx, initial); h != h0 {
		t.Error("the initial world changed")
	}
	if h, _ := state.Hash(ctx, final); h != h1 {
		t.Error("the final world changed")
	}
	if d, _ := Digest(vdir); len(DigestChanges(d0, d)) > 0 {
		t.Errorf("the verifier directory changed: %v", DigestChanges(d0, d))
	}
}

func taskCriterion(script string, timeout int) task.Criterion {
	return task.Criterion{ID: "s", Kind: "script", Script: script, TimeoutSeconds: timeout}
}

func testTask(t *testing.T, c ...task.Criterion) *task.Task { return task.TestTask(t, c...) }
