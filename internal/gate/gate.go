package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Verdict is a judge's classification of a rollout.
type Verdict string

// The three verdicts a judge may return.
const (
	Completed      Verdict = "completed"
	Failed         Verdict = "failed"
	WorldImperfect Verdict = "world-imperfect"
)

func (v Verdict) valid() bool { return v == Completed || v == Failed || v == WorldImperfect }

// verdictOf maps the verifier's V to the verdict the judges must agree with.
func verdictOf(v int) Verdict {
	if v == 1 {
		return Completed
	}
	return Failed
}

// The interfaces a task may declare and a rollout may use.
const (
	InterfaceGUI = "gui"
	InterfaceMCP = "mcp"
	InterfaceCLI = "cli"
	// InterfaceFile is the harness's file tools (read_file, write_file:
	// home files read or written without a shell). A rollout may use it;
	// no task declares it, and it stands for none of the three: a file
	// written with write_file is not the shell's work.
	InterfaceFile = "file"
)

// usedInterface: s is an interface a rollout may have used.
func usedInterface(s string) bool { return knownInterface(s) || s == InterfaceFile }

func knownInterface(s string) bool {
	return s == InterfaceGUI || s == InterfaceMCP || s == InterfaceCLI
}

// Gate names, in the order they are evaluated and reported.
const (
	GateJudgeConsistency      = "judge_consistency"
	GateInitialUnsatisfaction = "initial_unsatisfaction"
	GateSolvability           = "solvability"
	GateDifficulty            = "difficulty"
	GateCounterfactualProbe   = "counterfactual_probe"
)

// GateImageAblation is the gate beyond the paper's five: for a task that
// declares an image-decisive step, the reference procedure run with the
// image's information removed must fail. It is reported after the five,
// and only for such tasks.
const GateImageAblation = "image_ablation"

// Infrastructure is the verdict (and the difficulty) of a gate that cannot
// decide because a rollout's harness failed in every attempt: the task is
// rejected for infrastructure, never labelled hard or unsolved.
const Infrastructure = "infrastructure"

// GateNames returns the five gate names in order.
func GateNames() []string {
	return []string{GateJudgeConsistency, GateInitialUnsatisfaction, GateSolvability, GateDifficulty, GateCounterfactualProbe}
}

// ReportVersion is the version of the report format this build writes and reads.
const ReportVersion = 1

// Rollout is one ensemble attempt at a task, as judged by the three levels.
type Rollout struct {
	ID             string            `json:"id"`
	Policy         string            `json:"policy"`
	Hint           bool              `json:"hint"`
	V              int               `json:"v"`       // programmatic verifier, 0 or 1
	VLLM           Verdict           `json:"v_llm"`   // the LLM judge's verdict
	VAgent         Verdict           `json:"v_agent"` // the agent judge's verdict
	InterfacesUsed []string          `json:"interfaces_used"`
	Evidence       map[string]string `json:"evidence,omitempty"` // pointers: trajectory file, verifier result file, ...
	// Err is an infrastructure failure that outlived every retry. Such a
	// rollout is not a success, is not required to be judged, and is
	// flagged in the report; the difficulty gate cannot count k with it
	// (verdict infrastructure), and a task with no success beside it is
	// rejected for infrastructure, not as unsolved.
	Err string `json:"error,omitempty"`
	// Attempts is how many fresh instances the rollout took (0: not said).
	Attempts int `json:"attempts,omitempty"`
}

// Ablation is the image-ablation check: the reference procedure run
// hint-free with the decisive image's information removed.
type Ablation struct {
	Subtask   string `json:"subtask"`    // the sub-task that declares the image decisive
	RolloutID string `json:"rollout_id"` // the ablated rollout
	Policy    string `json:"policy"`
	V         int    `json:"v"`               // its verifier result: must be 0
	Err       string `json:"error,omitempty"` // an infrastructure failure: nothing was shown
	Evidence  string `json:"evidence,omitempty"`
	// Control is the same policy run hint-free with the image shown, when
	// it ran: it must pass V, or the ablated rollout's failure says
	// nothing about the image (the policy fails the task either way).
	Control *AblationControl `json:"control,omitempty"`
}

// AblationControl is the image-ablation check's control rollout.
type AblationControl struct {
	RolloutID string `json:"rollout_id"`
	V         int    `json:"v"`
	Err       string `json:"error,omitempty"`
}

// succeeded reports whether r counts as a success: V = 1 and no
// infrastructure error.
func (r Rollout) succeeded() bool { return r.V == 1 && r.Err == "" }

// Candidate is a task under review.
type Candidate struct {
	TaskID     string       `json:"task_id"`
	Interfaces []string     `json:"interfaces"` // declared: each must be indispensable
	InitialV   int          `json:"initial_v"`  // V(W0, W0, empty answer)
	Rollouts   []Rollout    `json:"rollouts"`
	Probe      *ProbeResult `json:"probe,omitempty"` // nil if not run
	// ImageDecisive is set when the task declares an image-decisive
	// sub-task; Ablation is then the image-ablation check's result (nil:
	// not run, and the gate fails).
	ImageDecisive bool      `json:"image_decisive,omitempty"`
	Ablation      *Ablation `json:"ablation,omitempty"`
}

// GateResult is one gate's decision with the evidence behind it.
type GateResult struct {
	Name     string   `json:"name"`
	Passed   bool     `json:"passed"`
	Verdict  string   `json:"verdict"`
	Evidence []string `json:"evidence"`
}

// Revision records one trip back to the generator.
type Revision struct {
	Iteration   int      `json:"iteration"`    // 1 for the first revision
	FailedGates []string `json:"failed_gates"` // the gates that failed before it
	Feedback    string   `json:"feedback"`     // what the generator was told
}

// Report is the gate report for one candidate (docs/gate-report.md).
type Report struct {
	Version     int          `json:"version"`
	TaskID      string       `json:"task_id"`
	Passed      bool         `json:"passed"`
	Difficulty  string       `json:"difficulty"` // a level name, "too_easy" or "infrastructure"
	Gates       []GateResult `json:"gates"`      // all five, in order, then image_ablation for an image-decisive task
	Rollouts    []Rollout    `json:"rollouts"`
	InfraErrors []string     `json:"infra_errors,omitempty"` // IDs of rollouts with an infrastructure error
	Probe       *ProbeResult `json:"probe,omitempty"`
	Config      Config       `json:"config"` // the effective configuration, defaults filled in
	Revisions   []Revision   `json:"revisions,omitempty"`
}

// Gate returns the result of the named gate, or false.
func (r *Report) Gate(name string) (GateResult, bool) {
	for _, g := range r.Gates {
		if g.Name == name {
			return g, true
		}
	}
	return GateResult{}, false
}

// FailedGates returns the names of the gates that failed, in order.
func (r *Report) FailedGates() []string {
	var out []string
	for _, g := range r.Gates {
		if !g.Passed {
			out = append(out, g.Name)
		}
	}
	return out
}

// ErrInvalidCandidate is wrapped by Evaluate's errors about its input.
var ErrInvalidCandidate = errors.New("invalid candidate")

// Evaluate applies the five gates to c under cfg. A rejected task is a report
// with Passed false; the error is only for an invalid configuration
// (ErrInvalidConfig) or malformed input (ErrInvalidCandidate).
func Evaluate(c Candidate, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	cfg = cfg.WithDefaults()
	if err := checkCandidate(c, cfg); err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", c.TaskID, err)
	}

	rollouts := cloneRollouts(c.Rollouts)
	rep := &Report{
		Version:  ReportVersion,
		TaskID:   c.TaskID,
		Rollouts: rollouts,
		Probe:    c.Probe,
		Config:   cfg,
	}
	for _, r := range rollouts {
		if r.Err != "" {
			rep.InfraErrors = append(rep.InfraErrors, r.ID)
		}
	}
	diff, difficulty := difficultyGate(rollouts, cfg)
	rep.Gates = []GateResult{
		judgeConsistencyGate(rollouts),
		initialUnsatisfactionGate(c.InitialV),
		solvabilityGate(rollouts, c.Interfaces),
		diff,
		probeGate(c.Probe),
	}
	if c.ImageDecisive {
		rep.Gates = append(rep.Gates, imageAblationGate(c.Ablation))
	}
	rep.Difficulty = difficulty
	rep.Passed = len(rep.FailedGates()) == 0
	return rep, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidCandidate, fmt.Sprintf(format, args...))
}

func checkCandidate(c Candidate, cfg Config) error {
	if c.TaskID == "" {
		return invalid("empty task_id")
	}
	if len(c.Interfaces) == 0 {
		return invalid("no declared interfaces")
	}
	seen := map[string]bool{}
	for _, in := range c.Interfaces {
		if !knownInterface(in) {
			return invalid("declared interface %q is not one of gui, mcp, cli", in)
		}
		if seen[in] {
			return invalid("declared interface %q listed twice", in)
		}
		seen[in] = true
	}
	if c.InitialV != 0 && c.InitialV != 1 {
		return invalid("initial_v = %d; want 0 or 1", c.InitialV)
	}
	if len(c.Rollouts) != cfg.Rollouts {
		return invalid("%d rollouts; config wants %d (report a failed attempt as a rollout with error set)", len(c.Rollouts), cfg.Rollouts)
	}
	ids := map[string]bool{}
	hintFree := 0
	for i, r := range c.Rollouts {
		if r.ID == "" {
			return invalid("rollouts[%d]: empty id", i)
		}
		if ids[r.ID] {
			return invalid("rollout %q: duplicate id", r.ID)
		}
		ids[r.ID] = true
		if !r.Hint {
			hintFree++
		}
		if r.V != 0 && r.V != 1 {
			return invalid("rollout %q: v = %d; want 0 or 1", r.ID, r.V)
		}
		for _, j := range []struct {
			name string
			v    Verdict
		}{{"v_llm", r.VLLM}, {"v_agent", r.VAgent}} {
			if j.v == "" && r.Err != "" {
				continue // an infrastructure failure need not be judged
			}
			if !j.v.valid() {
				return invalid("rollout %q: %s %q is not completed, failed or world-imperfect", r.ID, j.name, j.v)
			}
		}
		for _, in := range r.InterfacesUsed {
			if !usedInterface(in) {
				return invalid("rollout %q: used interface %q is not one of gui, mcp, cli, file", r.ID, in)
			}
		}
	}
	if hintFree != cfg.HintFree {
		return invalid("%d hint-free rollouts; config wants %d", hintFree, cfg.HintFree)
	}
	if a := c.Ablation; a != nil {
		if !c.ImageDecisive {
			return invalid("an image-ablation result for a task that declares no image-decisive sub-task")
		}
		if a.V != 0 && a.V != 1 {
			return invalid("ablation: v = %d; want 0 or 1", a.V)
		}
		if c := a.Control; c != nil && c.V != 0 && c.V != 1 {
			return invalid("ablation: control: v = %d; want 0 or 1", c.V)
		}
	}
	if p := c.Probe; p != nil {
		if !validOutcome(p.Outcome) {
			return invalid("probe outcome %q is not held, blind_mismatch, caved, cave_files_changed or not_applicable", p.Outcome)
		}
		if p.Passed != (p.Outcome == OutcomeHeld || p.Outcome == OutcomeNotApplicable) {
			return invalid("probe passed = %t contradicts its outcome %q", p.Passed, p.Outcome)
		}
		byID := map[string]Rollout{}
		for _, r := range c.Rollouts {
			byID[r.ID] = r
		}
		for _, pr := range p.PerRollout {
			r, ok := byID[pr.RolloutID]
			if !ok {
				return invalid("probe judged rollout %q, which is not among the candidate's rollouts", pr.RolloutID)
			}
			if pr.Outcome != OutcomeSkipped && pr.Ensemble != verdictOf(r.V) {
				return invalid("probe took rollout %q as %s but its V is %d: the probe is stale", pr.RolloutID, pr.Ensemble, r.V)
			}
		}
	}
	return nil
}

func cloneRollouts(rs []Rollout) []Rollout {
	out := slices.Clone(rs)
	for i := range out {
		out[i].InterfacesUsed = slices.Clone(out[i].InterfacesUsed)
		out[i].Evidence = maps.Clone(out[i].Evidence)
	}
	return out
}

// pointers renders a rollout's evidence pointers in key order.
func pointers(r Rollout) string {
	if len(r.Evidence) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Evidence)) {
		parts = append(parts, k+"="+r.Evidence[k])
	}
	return " [" + strings.Join(parts, ", ") + "]"
}

func infraLine(r Rollout) string {
	return fmt.Sprintf("rollout %s: infrastructure error in every attempt, not a success: %s", r.ID, r.Err)
}

// judgeConsistencyGate: V = V_LLM = V_agent on every judged rollout, with
// V=1 <-> completed and V=0 <-> failed; world-imperfect never agrees.
func judgeConsistencyGate(rs []Rollout) GateResult {
	g := GateResult{Name: GateJudgeConsistency}
	var bad []string
	var agree, disagree, skipped []string
	judged := 0
	for _, r := range rs {
		if r.Err != "" {
			skipped = append(skipped, fmt.Sprintf("rollout %s: not judged, infrastructure error: %s", r.ID, r.Err))
			continue
		}
		judged++
		want := verdictOf(r.V)
		line := fmt.Sprintf("rollout %s: V=%d, V_LLM=%s, V_agent=%s", r.ID, r.V, r.VLLM, r.VAgent)
		if r.VLLM == want && r.VAgent == want {
			agree = append(agree, line+": agree")
			continue
		}
		bad = append(bad, r.ID)
		if r.VLLM == WorldImperfect || r.VAgent == WorldImperfect {
			line += " (a judge blames the world, not the agent)"
		}
		disagree = append(disagree, line+": disagree"+pointers(r))
	}
	if len(bad) > 0 {
		// A failed gate lists only what went wrong: it becomes feedback.
		g.Verdict = "inconsistent"
		g.Evidence = append([]string{fmt.Sprintf("%d of %d judged rollouts disagree: %s", len(bad), judged, strings.Join(bad, ", "))}, disagree...)
		g.Evidence = append(g.Evidence, skipped...)
		return g
	}
	g.Passed, g.Verdict = true, "consistent"
	g.Evidence = append([]string{fmt.Sprintf("all %d judged rollouts agree", judged)}, agree...)
	g.Evidence = append(g.Evidence, skipped...)
	return g
}

// initialUnsatisfactionGate: V(W0, W0, empty answer) = 0.
func initialUnsatisfactionGate(initialV int) GateResult {
	g := GateResult{Name: GateInitialUnsatisfaction}
	if initialV == 0 {
		g.Passed, g.Verdict = true, "unsatisfied"
		g.Evidence = []string{"V(W0, W0, empty answer) = 0"}
		return g
	}
	g.Verdict = "satisfied_at_w0"
	g.Evidence = []string{fmt.Sprintf("V(W0, W0, empty answer) = %d: the verifier accepts the untouched initial world, so the task is already done", initialV)}
	return g
}

// solvabilityGate: at least one success, and every success used every
// declared interface.
func solvabilityGate(rs []Rollout, declared []string) GateResult {
	g := GateResult{Name: GateSolvability}
	var succ, offenders []string
	for _, r := range rs {
		if r.Err != "" {
			g.Evidence = append(g.Evidence, infraLine(r))
			continue
		}
		if !r.succeeded() {
			continue
		}
		succ = append(succ, r.ID)
		var missing []string
		for _, in := range declared {
			if !slices.Contains(r.InterfacesUsed, in) {
				missing = append(missing, in)
			}
		}
		if len(missing) > 0 {
			offenders = append(offenders, r.ID)
			files := ""
			if slices.Contains(missing, InterfaceCLI) && slices.Contains(r.InterfacesUsed, InterfaceFile) {
				files = "; its file tools are not the shell"
			}
			g.Evidence = append(g.Evidence, fmt.Sprintf("rollout %s: V=1 without using %s (used: %s; declared: %s%s)%s",
				r.ID, strings.Join(missing, ", "), orNone(r.InterfacesUsed), strings.Join(declared, ", "), files, pointers(r)))
		} else {
			g.Evidence = append(g.Evidence, fmt.Sprintf("rollout %s: V=1 using every declared interface (%s)", r.ID, strings.Join(r.InterfacesUsed, ", ")))
		}
	}
	head := fmt.Sprintf("%d of %d rollouts succeeded (V=1)", len(succ), len(rs))
	if len(succ) > 0 {
		head += ": " + strings.Join(succ, ", ")
	}
	switch {
	case len(succ) == 0 && slices.ContainsFunc(rs, func(r Rollout) bool { return r.Err != "" }):
		g.Verdict = Infrastructure
		head += "; rollouts whose harness failed in every attempt say nothing about solvability: rejected for infrastructure"
	case len(succ) == 0:
		g.Verdict = "unsolved"
	case len(offenders) > 0:
		g.Verdict = "interface_not_used"
		head += fmt.Sprintf("; %d succeeded without a declared interface: %s", len(offenders), strings.Join(offenders, ", "))
	default:
		g.Passed, g.Verdict = true, "solved"
	}
	g.Evidence = append([]string{head}, g.Evidence...)
	return g
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// difficultyGate: k = successes among hint-free rollouts, mapped to a level;
// above every level is too easy and fails.
func difficultyGate(rs []Rollout, cfg Config) (GateResult, string) {
	g := GateResult{Name: GateDifficulty}
	k, n := 0, 0
	var succ []string
	for _, r := range rs {
		if r.Hint {
			continue
		}
		n++
		if r.succeeded() {
			k++
			succ = append(succ, r.ID)
		}
		if r.Err != "" {
			g.Evidence = append(g.Evidence, infraLine(r))
		}
	}
	head := fmt.Sprintf("k = %d of %d hint-free rollouts succeeded", k, n)
	if k > 0 {
		head += ": " + strings.Join(succ, ", ")
	}
	if len(g.Evidence) > 0 {
		// A hint-free rollout whose harness failed in every attempt would
		// pass for a failure and make the task look harder than it is.
		g.Verdict = Infrastructure
		g.Evidence = append([]string{head, "k is unknown: a hint-free rollout's harness failed in every attempt; the task is rejected for infrastructure, not labelled by difficulty"}, g.Evidence...)
		return g, Infrastructure
	}
	l, ok := cfg.level(k)
	if !ok {
		g.Verdict = TooEasy
		var levels []string
		for _, l := range cfg.Levels {
			levels = append(levels, l.String())
		}
		g.Evidence = append([]string{head, fmt.Sprintf("k = %d is above every level (%s): too easy", k, strings.Join(levels, ", "))}, g.Evidence...)
		return g, TooEasy
	}
	g.Passed, g.Verdict = true, l.Name
	g.Evidence = append([]string{head, "level " + l.String()}, g.Evidence...)
	return g, l.Name
}

// probeGate: the counterfactual probe ran and every rollout held.
func probeGate(p *ProbeResult) GateResult {
	g := GateResult{Name: GateCounterfactualProbe}
	if p == nil {
		g.Verdict = "not_run"
		g.Evidence = []string{"the counterfactual probe was not run"}
		return g
	}
	g.Passed, g.Verdict = p.Passed, p.Outcome
	g.Evidence = p.evidence()
	return g
}

// imageAblationGate: the reference procedure without the decisive image
// must fail (V = 0); otherwise the image does not decide the task.
func imageAblationGate(a *Ablation) GateResult {
	g := GateResult{Name: GateImageAblation}
	switch {
	case a == nil:
		g.Verdict = "not_run"
		g.Evidence = []string{"the task declares an image-decisive sub-task but the image-ablation check was not run"}
	case a.Err != "":
		g.Verdict = Infrastructure
		g.Evidence = []string{fmt.Sprintf("rollout %s (%s, image withheld): infrastructure error in every attempt: %s", a.RolloutID, a.Policy, a.Err)}
	case a.Control != nil && a.Control.Err != "":
		g.Verdict = Infrastructure
		g.Evidence = []string{fmt.Sprintf("control rollout %s (%s, image shown): infrastructure error in every attempt: %s", a.Control.RolloutID, a.Policy, a.Control.Err)}
	case a.Control != nil && a.Control.V != 1:
		g.Verdict = "uninformative"
		g.Evidence = []string{fmt.Sprintf("control rollout %s (%s) with the image of sub-task %s shown: V=0: the policy fails the task with the image too, so its failure without it says nothing about the image: the ablation needs a policy that solves the task when it sees the image", a.Control.RolloutID, a.Policy, a.Subtask)}
	case a.V == 0:
		g.Passed, g.Verdict = true, "image_needed"
		g.Evidence = []string{fmt.Sprintf("rollout %s (%s) with the image of sub-task %s withheld: V=0: without the image the reference procedure fails", a.RolloutID, a.Policy, a.Subtask)}
	default:
		g.Verdict = "image_not_needed"
		g.Evidence = []string{fmt.Sprintf("rollout %s (%s) with the image of sub-task %s withheld: V=1: the task is solved without seeing the image, so the image is not decisive", a.RolloutID, a.Policy, a.Subtask)}
	}
	if a != nil && a.Evidence != "" {
		g.Evidence = append(g.Evidence, a.Evidence)
	}
	return g
}

// Encode returns the report as indented JSON with a trailing newline, the form
// written to disk and kept in golden files.
func (r *Report) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return b.Bytes(), nil
}

// ErrReportVersion is returned by ParseReport for a version this build does
// not read.
var ErrReportVersion = errors.New("unsupported report version")

// ParseReport decodes a report written by Encode. Unknown fields and any
// version other than ReportVersion are errors.
func ParseReport(b []byte) (*Report, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("parse report: %w", err)
	}
	if r.Version != ReportVersion {
		return nil, fmt.Errorf("parse report: %w: %d (this build reads %d)", ErrReportVersion, r.Version, ReportVersion)
	}
	return &r, nil
}
