package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// ResultVersion is the version of the JSON form of Result.
const ResultVersion = 1

// MaxEvidence bounds the evidence and error text kept per criterion.
const MaxEvidence = 2000

// MaxAnswerBytes bounds a final answer: a longer one is the agent's failure
// (CheckAnswer), V 0 without any criterion run, never an infrastructure
// failure (docs/verifier.md). It keeps VERIFY_ANSWER well inside the 128
// KiB the kernel allows one environment string.
const MaxAnswerBytes = 64 << 10

// CheckAnswer returns an error wrapping world.ErrAgentFault when answer is
// longer than MaxAnswerBytes.
func CheckAnswer(answer string) error {
	if len(answer) > MaxAnswerBytes {
		return fmt.Errorf("%w: the final answer is %d bytes, over the %d KiB an answer may hold (verify.MaxAnswerBytes): answer in short and keep long output in a file",
			world.ErrAgentFault, len(answer), MaxAnswerBytes>>10)
	}
	return nil
}

// Runner runs a command in a sandbox. internal/sandbox implements it.
type Runner interface {
	// Run runs command (a shell command line) in a sandbox whose home and
	// working directory is home (a read-write scratch directory), with the
	// extra read-only mounts and the environment env. A non-zero exit or a
	// timeout is reported in RunResult; the error is for failing to run at all.
	Run(ctx context.Context, home string, mounts []Mount, env map[string]string, command string, timeout time.Duration) (RunResult, error)
}

// Mount makes host directory Host visible read-only at Path in the sandbox.
type Mount struct{ Host, Path string }

// RunResult is what a sandboxed command did.
type RunResult struct {
	Stdout, Stderr []byte
	ExitCode       int
	TimedOut       bool
}

// Input is what Verify needs besides the task.
type Input struct {
	// Initial and Final are the world directories W0 and W.
	Initial, Final string
	// Answer is the solver's final answer a (may be empty).
	Answer string
	// Catalog is the path of the catalog database the worlds reference
	// ("" for none): SQL criteria read it as schema "catalog".
	Catalog string
	// VerifierDir is the task's verifier directory; needed by script criteria.
	VerifierDir string
	// Runner runs script criteria; needed by script criteria.
	Runner Runner
	// Scratch is where scratch homes for scripts are made; "" means the
	// system temporary directory.
	Scratch string
	// answerDir is the host side of MountAnswer, made by Verify.
	answerDir string
}

// Result is the verdict of a verifier (JSON: docs/verifier.md).
type Result struct {
	Version int `json:"version"`
	// V is prod_i v_i: 1 when every criterion passed, else 0.
	V int `json:"v"`
	// Passed is sum_i v_i, Total the number of criteria.
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// ScriptErrors counts script criteria that errored.
	ScriptErrors int `json:"script_errors"`
	// Fault, when set, says how the agent made its answer or final world
	// unverifiable (an error wrapping world.ErrAgentFault: an answer over
	// MaxAnswerBytes, a world no snapshot holds faithfully): V is 0, no
	// criterion was run and every one failed (Unverifiable).
	Fault    string            `json:"fault,omitempty"`
	Criteria []CriterionResult `json:"criteria"`
}

// CriterionResult is one v_i with its evidence. Error is set when the check
// could not be carried out (a script error, a query that does not compile, an
// unreadable file); such a criterion never passes.
type CriterionResult struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Pass     bool   `json:"pass"`
	Evidence string `json:"evidence,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ErrNoRunner is returned when a task has script criteria and Input has no
// Runner or no VerifierDir.
var ErrNoRunner = errors.New("the task has script criteria but no runner or verifier directory was given")

// Unverifiable is the verdict on a rollout whose agent made its answer or
// final world unverifiable (cause wraps world.ErrAgentFault): V 0 with the
// cause in Fault, every criterion failed unchecked, so a reward built from
// it is 0 (no partial credit).
func Unverifiable(t *task.Task, cause error) *Result {
	fault := truncate(cause.Error(), MaxEvidence)
	r := &Result{Version: ResultVersion, Total: len(t.Verifier.Criteria), Fault: fault, Criteria: make([]CriterionResult, 0, len(t.Verifier.Criteria))}
	for _, c := range t.Verifier.Criteria {
		r.Criteria = append(r.Criteria, CriterionResult{ID: c.ID, Kind: c.Kind, Error: truncate("not checked: "+fault, MaxEvidence)})
	}
	return r
}

// Verify computes V(W0, W, a) for t. Every criterion is evaluated (no short
// circuit) so the evidence is complete. It returns an error only when the
// harness fails: an invalid verifier, a world that is missing or malformed,
// a runner that cannot run, a cancelled ctx. What the agent did to its
// answer or world is never an error: an answer over MaxAnswerBytes, or a
// criterion that cannot be checked for a cause wrapping world.ErrAgentFault,
// is an Unverifiable result; a file the agent made unreadable (or replaced
// by a directory, a fifo, a link, garbage) fails its criterion.
func Verify(ctx context.Context, t *task.Task, in Input) (*Result, error) {
	if err := t.Verifier.Validate(); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	for _, w := range []string{in.Initial, in.Final} {
		if w == "" {
			return nil, fmt.Errorf("verify: both the initial and the final world directory are needed")
		}
		if _, err := state.ReadLayout(w); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	if len(t.Verifier.Scripts()) > 0 && (in.Runner == nil || in.VerifierDir == "") {
		return nil, fmt.Errorf("verify: %w", ErrNoRunner)
	}
	if err := CheckAnswer(in.Answer); err != nil {
		return Unverifiable(t, err), nil
	}
	if len(t.Verifier.Scripts()) > 0 {
		dir, err := writeAnswer(in.Scratch, in.Answer)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		defer os.RemoveAll(dir)
		in.answerDir = dir
	}
	r := &Result{Version: ResultVersion, Total: len(t.Verifier.Criteria), Criteria: make([]CriterionResult, 0, len(t.Verifier.Criteria))}
	for i := range t.Verifier.Criteria {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		c := &t.Verifier.Criteria[i]
		cr, err := check(ctx, c, in)
		if errors.Is(err, world.ErrAgentFault) && ctx.Err() == nil {
			return Unverifiable(t, fmt.Errorf("criterion %s: %w", c.ID, err)), nil
		}
		if err != nil {
			return nil, fmt.Errorf("verify: criterion %s: %w", c.ID, err)
		}
		cr.ID, cr.Kind = c.ID, c.Kind
		cr.Evidence = truncate(cr.Evidence, MaxEvidence)
		cr.Error = truncate(cr.Error, MaxEvidence)
		if cr.Error != "" {
			cr.Pass = false
			if c.Kind == task.KindScript {
				r.ScriptErrors++
			}
		}
		if cr.Pass {
			r.Passed++
		}
		r.Criteria = append(r.Criteria, cr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if r.Passed == r.Total {
		r.V = 1
	}
	return r, nil
}

// check evaluates one criterion. A criterion that cannot be checked is a
// result with Error set; err is for harness failures only.
func check(ctx context.Context, c *task.Criterion, in Input) (CriterionResult, error) {
	root := in.Final
	if c.WorldOrDefault() == task.Initial {
		root = in.Initial
	}
	switch c.Kind {
	case task.KindSQL:
		return checkSQL(ctx, root, in.Catalog, c), nil
	case task.KindFile:
		return checkFile(root, in.Initial, c), nil
	case task.KindCSV:
		return checkCSV(root, c), nil
	case task.KindAnswer:
		return checkAnswer(in.Answer, c), nil
	case task.KindScript:
		return runScript(ctx, c, in)
	}
	return CriterionResult{}, fmt.Errorf("unknown kind %q", c.Kind)
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(" …")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …"
}

// tail returns the last n bytes of b as text, starting at a line boundary
// when one is near.
func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	for i := 0; i < len(b) && i < 200; i++ {
		if b[i] == '\n' {
			return "… " + string(b[i+1:])
		}
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return "… " + string(b)
}

// Summary is the result in one line: how many criteria passed, then each
// failing criterion with its error or evidence, or the fault that left them
// unchecked.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%d/%d criteria passed", r.Passed, r.Total)
	if r.Fault != "" {
		return s + "; not verified, the agent's own doing: " + r.Fault
	}
	for _, c := range r.Criteria {
		if !c.Pass {
			why := c.Error
			if why == "" {
				why = c.Evidence
			}
			s += fmt.Sprintf("; %s failed: %s", c.ID, why)
		}
	}
	return s
}
