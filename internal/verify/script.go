package verify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/task"
)

// The script protocol (docs/verifier.md).
const (
	// MountInitial, MountFinal and MountVerifier are where a script sees W0,
	// W and the task's verifier directory, all read-only.
	MountInitial  = "/worlds/initial"
	MountFinal    = "/worlds/final"
	MountVerifier = "/verifier"
	// MountAnswer is a read-only directory holding the final answer in
	// AnswerFile, whole, whatever its bytes; VERIFY_ANSWER_FILE names it.
	MountAnswer = "/verify-answer"
	AnswerFile  = MountAnswer + "/answer.txt"
	// ResultPrefix starts the verdict line; the last such line counts.
	ResultPrefix = "RESULT_JSON="
	// DefaultScriptTimeout applies when a criterion sets no timeout_seconds.
	DefaultScriptTimeout = 20 * time.Second
	// TailBytes is how much of stderr a script error keeps.
	TailBytes = 1500
)

// ScriptEnv returns the environment a script runs with. VERIFY_ANSWER holds
// the answer (at most MaxAnswerBytes: Verify never runs a script with a
// longer one), except one holding a NUL byte, which no environment variable
// can: it is then unset. VERIFY_ANSWER_FILE always names the answer's file.
func ScriptEnv(answer string) map[string]string {
	env := map[string]string{
		"VERIFY_ANSWER_FILE":      AnswerFile,
		"VERIFY_INITIAL":          MountInitial,
		"VERIFY_FINAL":            MountFinal,
		"VERIFY_DIR":              MountVerifier,
		"PYTHONDONTWRITEBYTECODE": "1", // never write __pycache__ into /verifier
		"PYTHONIOENCODING":        "utf-8",
		"PYTHONHASHSEED":          "0",
		"LC_ALL":                  "C.UTF-8",
	}
	if !strings.Contains(answer, "\x00") {
		env["VERIFY_ANSWER"] = answer
	}
	return env
}

// writeAnswer writes the answer to a fresh read-only directory under
// scratch (the host side of MountAnswer), readable by a sandbox uid.
func writeAnswer(scratch, answer string) (string, error) {
	dir, err := os.MkdirTemp(scratch, "answer-")
	if err != nil {
		return "", fmt.Errorf("answer file: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", fmt.Errorf("answer file: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(AnswerFile)), []byte(answer), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("answer file: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("answer file: %w", err)
	}
	return dir, nil
}

// ScriptCommand returns the command line that runs script (a validated
// "scripts/NAME.py").
func ScriptCommand(script string) string {
	return "python3 " + MountVerifier + "/" + script
}

func runScript(ctx context.Context, c *task.Criterion, in Input) (CriterionResult, error) {
	vdir, err := filepath.Abs(in.VerifierDir)
	if err != nil {
		return CriterionResult{}, err
	}
	if fi, err := os.Stat(filepath.Join(vdir, filepath.FromSlash(c.Script))); errors.Is(err, fs.ErrNotExist) {
		return CriterionResult{Error: fmt.Sprintf("verifier/%s does not exist", c.Script)}, nil
	} else if err != nil {
		return CriterionResult{}, err
	} else if !fi.Mode().IsRegular() {
		return CriterionResult{Error: fmt.Sprintf("verifier/%s is not a regular file", c.Script)}, nil
	}
	initial, err := filepath.Abs(in.Initial)
	if err != nil {
		return CriterionResult{}, err
	}
	final, err := filepath.Abs(in.Final)
	if err != nil {
		return CriterionResult{}, err
	}
	home, err := os.MkdirTemp(in.Scratch, "verify-home-")
	if err != nil {
		return CriterionResult{}, fmt.Errorf("scratch home: %w", err)
	}
	defer os.RemoveAll(home)
	timeout := DefaultScriptTimeout
	if c.TimeoutSeconds > 0 {
		timeout = time.Duration(c.TimeoutSeconds) * time.Second
	}
	mounts := []Mount{{Host: initial, Path: MountInitial}, {Host: final, Path: MountFinal}, {Host: vdir, Path: MountVerifier}, {Host: in.answerDir, Path: MountAnswer}}
	res, err := in.Runner.Run(ctx, home, mounts, ScriptEnv(in.Answer), ScriptCommand(c.Script), timeout)
	if err != nil {
		if ctx.Err() != nil {
			return CriterionResult{}, ctx.Err()
		}
		return CriterionResult{}, fmt.Errorf("run %s: %w", c.Script, err)
	}
	return ParseScriptResult(res, timeout), nil
}

// ScriptVerdict is the JSON of a RESULT_JSON= line.
type ScriptVerdict struct {
	Pass     *bool  `json:"pass"`
	Evidence string `json:"evidence"`
}

// ParseScriptResult applies the protocol to what a script did: a timeout, a
// non-zero exit, no RESULT_JSON= line, or a last RESULT_JSON= line that is
// not {"pass": bool, "evidence": string} is a script error (Error set, Pass
// false); otherwise the last RESULT_JSON= line is the verdict.
func ParseScriptResult(res RunResult, timeout time.Duration) CriterionResult {
	stderr := strings.TrimSpace(tail(res.Stderr, TailBytes))
	withStderr := func(msg string) CriterionResult {
		if stderr != "" {
			msg += "; stderr: " + stderr
		}
		return CriterionResult{Error: msg}
	}
	switch {
	case res.TimedOut:
		return withStderr(fmt.Sprintf("script error: timed out after %s", timeout))
	case res.ExitCode != 0:
		return withStderr(fmt.Sprintf("script error: exited with status %d", res.ExitCode))
	}
	line, ok := lastResultLine(res.Stdout)
	if !ok {
		msg := "script error: printed no " + ResultPrefix + " line"
		if out := strings.TrimSpace(tail(res.Stdout, 300)); out != "" {
			msg += "; stdout: " + out
		}
		return withStderr(msg)
	}
	var v ScriptVerdict
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return withStderr(fmt.Sprintf("script error: %s is not {\"pass\": bool, \"evidence\": string}: %v (line: %s)", ResultPrefix, err, truncate(line, 300)))
	}
	if v.Pass == nil {
		return withStderr(fmt.Sprintf("script error: %s has no \"pass\" field (line: %s)", ResultPrefix, truncate(line, 300)))
	}
	return CriterionResult{Pass: *v.Pass, Evidence: v.Evidence}
}

// lastResultLine returns the JSON after ResultPrefix on the last stdout line
// that starts with it.
func lastResultLine(stdout []byte) (string, bool) {
	var last string
	found := false
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 64<<10), len(stdout)+1)
	for sc.Scan() {
		l := strings.TrimSuffix(sc.Text(), "\r")
		if rest, ok := strings.CutPrefix(l, ResultPrefix); ok {
			last, found = rest, true
		}
	}
	return last, found
}
