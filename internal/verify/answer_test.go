package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// answerScript passes when the answer reached it whole: the bytes of
// $VERIFY_ANSWER_FILE are those of /verifier/expected.bin, answer() is
// their text, and $VERIFY_ANSWER holds the same bytes unless it holds a NUL.
const answerScript = `import os
from _verify_sdk import answer, result
want = open(os.path.join(os.environ["VERIFY_DIR"], "expected.bin"), "rb").read()
got = open(os.environ["VERIFY_ANSWER_FILE"], "rb").read()
text = want.decode("utf-8", errors="replace")
env = os.environb.get(b"VERIFY_ANSWER")
env_ok = (env is None) if b"\0" in want else (env == want)
result(got == want and answer() == text and env_ok, f"{len(got)} bytes in the file, env {'unset' if env is None else len(env)}")
`

// TestAnswerReachesScripts: every answer within the bound reaches a
// script whole (a NUL byte, 64 KiB of multi-byte text); one over the bound
// is the agent's failure, V 0 with the cause, no script run: not a Go error
// (before the fix, exec refused the environment: "argument list too long"
// over 128 KiB, "invalid argument" for a NUL byte, and Verify failed as if
// the harness had).
func TestAnswerReachesScripts(t *testing.T) {
	py := needPython(t)
	initial, final := testWorlds(t)
	vdir := verifierDir(t, map[string]string{"answer.py": answerScript, "pass.py": "from _verify_sdk import result\nresult(True, 'ran')\n"})
	tk := task.TestTask(t, task.Criterion{ID: "a", Kind: "script", Script: "scripts/answer.py"})
	full := strings.Repeat("é", MaxAnswerBytes/2)
	for name, answer := range map[string]string{
		"plain":   "total 5",
		"empty":   "",
		"nul":     "before\x00after",
		"invalid": "x\xff\xfey",
		"bound":   full,
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(vdir, "expected.bin"), []byte(answer), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Verify(context.Background(), tk, Input{Initial: initial, Final: final, Answer: answer, VerifierDir: vdir, Runner: execRunner{python: py}, Scratch: t.TempDir()})
			if err != nil {
				t.Fatalf("a %d-byte answer: %v", len(answer), err)
			}
			if r.V != 1 || r.Fault != "" {
				t.Fatalf("a %d-byte answer did not reach the script whole: %+v", len(answer), r.Criteria)
			}
		})
	}
	for _, n := range []int{MaxAnswerBytes + 1, 200 << 10} {
		pass := task.TestTask(t, task.Criterion{ID: "p", Kind: "script", Script: "scripts/pass.py"}, task.Criterion{ID: "ans", Kind: "answer", Contains: []string{"x"}})
		r, err := Verify(context.Background(), pass, Input{Initial: initial, Final: final, Answer: strings.Repeat("x", n), VerifierDir: vdir, Runner: execRunner{python: py}, Scratch: t.TempDir()})
		if err != nil {
			t.Fatalf("a %d-byte answer is an error, not the agent's failure: %v", n, err)
		}
		if r.V != 0 || r.Passed != 0 || r.Total != 2 || r.ScriptErrors != 0 || !strings.Contains(r.Fault, "MaxAnswerBytes") || len(r.Criteria) != 2 {
			t.Fatalf("a %d-byte answer: %+v", n, r)
		}
		for _, c := range r.Criteria {
			if c.Pass || !strings.Contains(c.Error, "not checked") {
				t.Errorf("a %d-byte answer: criterion %+v", n, c)
			}
		}
	}
}

func TestCheckAnswer(t *testing.T) {
	if err := CheckAnswer(strings.Repeat("a", MaxAnswerBytes)); err != nil {
		t.Fatalf("an answer at the bound: %v", err)
	}
	err := CheckAnswer(strings.Repeat("a", MaxAnswerBytes+1))
	if !errors.Is(err, world.ErrAgentFault) || !strings.Contains(err.Error(), "65537 bytes") {
		t.Fatalf("an answer over the bound: %v", err)
	}
}

// TestUnverifiable: the verdict on an agent fault fails every criterion,
// so no partial credit is left to earn.
func TestUnverifiable(t *testing.T) {
	tk := task.TestTask(t, task.Criterion{ID: "a", Kind: "answer", Contains: []string{"x"}}, task.Criterion{ID: "f", Kind: "file", Path: "notes.md"})
	r := Unverifiable(tk, errors.New("two home entries share one name"))
	if r.V != 0 || r.Passed != 0 || r.Total != 2 || len(r.Criteria) != 2 || r.Fault != "two home entries share one name" || r.Version != ResultVersion {
		t.Fatalf("%+v", r)
	}
	for _, c := range r.Criteria {
		if c.Pass || c.ID == "" || c.Kind == "" || !strings.Contains(c.Error, "share one name") {
			t.Errorf("criterion %+v", c)
		}
	}
	if !strings.Contains(r.Summary(), "0/2 criteria passed; not verified, the agent's own doing: two home entries") {
		t.Errorf("summary %q", r.Summary())
	}
}
