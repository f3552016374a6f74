// Package pool puts synthesized tasks through the quality gates and keeps
// the accepted ones as a pool with splits.
//
// Gating one task (Gater.Do on a Job) is a unit of work with serialisable
// input and output: the ensemble's rollouts in fresh instances, the three
// levels of judgment on each (V, the replay judge, the observer), the
// counterfactual probe, the five gates of the paper, the image-ablation
// check of an image-decisive task, and the checks beyond them (the oracle,
// the answer-only shortcut, the interfaces, the agent judge's false
// checks, the mutation check),
// and up to two revisions of the verifier from the gates' evidence. What
// it produced is gate/outcome.json in the task's directory, with every
// trajectory under gate/rollouts/: a fixed verifier can regrade them
// without new rollouts.
package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Files of the gate stage, in a task's directory.
const (
	GateDir     = "gate"
	OutcomeFile = "gate/outcome.json"
	ReportFile  = "gate/report.json"
)

// OutcomeVersion is the version of outcome.json this build writes.
const OutcomeVersion = 1

// The checks beyond the paper, reported as gates after the paper's.
const (
	GateOracle     = gate.GateOracle
	GateAnswerOnly = gate.GateAnswerOnly
	GateInterfaces = gate.GateInterfaces
	GateMutation   = gate.GateMutation
	GateFalseCheck = gate.GateFalseCheck
	// GateCoverage: every effect of the reference, left out, fails V or
	// changes nothing (gate.CoverageGate).
	GateCoverage = gate.GateCoverage
)

// PaperGates are the gates the paper states (and image ablation, which
// applies to image-decisive tasks).
func PaperGates() []string {
	return append(gate.GateNames(), gate.GateImageAblation)
}

// Job is gating one self-checked task.
type Job struct {
	TaskDir string `json:"task_dir"`
	// Seed is handed to the ensemble: a model ensemble's rotation; the
	// shortcut ensemble ignores it.
	Seed uint64 `json:"seed"`
}

// WorldJudge judges a final world by inspecting it (the offline
// interface-inspection judge); pressure is "" for a blind judgment, else
// the probe's framing.
type WorldJudge interface {
	Judge(ctx context.Context, final world.ID, pressure string) (gate.Verdict, []string, error)
	// ProbeJudge is the judge the counterfactual probe re-judges the
	// rollouts of finals (by rollout ID) with: a blind re-judge that
	// observes again, and gate.Deterministic when pressure cannot move it.
	ProbeJudge(finals map[string]world.ID) gate.ProbeJudge
}

// MutationCheck runs the mutation check of a task whose reference solved
// the world at solved (a read-only directory) from initial.
type MutationCheck func(ctx context.Context, env Worlds, t *task.Task, verifierDir, initial, solved string) (*Mutation, error)

// Mutation is the mutation check's result as the gate reads it.
type Mutation struct {
	Passed      bool     `json:"passed"`
	Evaluations int      `json:"evaluations"`
	Isolated    []string `json:"isolated,omitempty"`
	// Entangled maps a criterion to the others that flipped with it under
	// every mutation that flipped it.
	Entangled map[string][]string `json:"entangled,omitempty"`
	// Untargeted lists the criteria no mutation of the solved state flipped.
	Untargeted []string `json:"untargeted,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
	// Detail is the checker's own result, kept whole.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Gater gates tasks.
type Gater struct {
	// Env is the rollout environment for a task's persona.
	Env func(t *task.Task) (Worlds, error)
	// Gates is the gate configuration, validated by Do.
	Gates gate.Config
	// MaxRevisions bounds the fix iterations (default gate.DefaultMaxRevisions;
	// negative: none).
	MaxRevisions int
	// Observer makes the interface-inspection judge of a task whose
	// reference's final world is ref; verifierCopy is the judge's writable
	// copy of the verifier (the probe digests it).
	Observer func(env Worlds, t *task.Task, ref world.ID, verifierCopy string) WorldJudge
	// Mutate is the mutation check; nil skips it (the gate says not run and
	// fails).
	Mutate MutationCheck
	// Lessons are the task-synthesis skill file's lessons, applied to a
	// task of their family before its first evaluation. Read-only during
	// a run, so that a run's result does not depend on its workers.
	Lessons *Skills
	// Models, when set, are the judges with a model: they replace the
	// offline judges (and the observer under the probe).
	Models *ModelJudges
	// Reauthor, when set, writes a task again with the gates' feedback
	// when the procedural reviser has no fix (the llm author).
	Reauthor *Reauthor
	// Ensemble gives a task's rollouts; nil is the shortcut ensemble
	// (policy.ShortcutEnsemble: deterministic, seed-free). ModelEnsemble draws them from configured
	// model x harness combinations.
	Ensemble func(t *task.Task, seed uint64) []rollout.Spec
	// Ablation is the policy of the image-ablation check of a task that
	// declares an image-decisive sub-task: one that decides by what it
	// sees, run hint-free with the images' information withheld (it must
	// fail V) and, as its control, with them shown (it must pass V). nil
	// is the scripted case-study procedure (policy.Oracle), the one
	// offline policy that looks at images.
	Ablation func(t *task.Task) rollout.Policy
	Progress func(format string, args ...any)
}

func (g *Gater) progress(format string, args ...any) {
	if g.Progress != nil {
		g.Progress(format, args...)
	}
}

// ModelJudges are the judges with a model configured: the LLM judge
// (task, rubric, trajectory, V's evidence) in the V_LLM slot, the agent
// judge (read-only tools over W0 and W, several turns) in the V_agent
// slot; the probe puts the LLM judge under pressure. They read V's
// evidence, so they judge after V, and again after a revision.
type ModelJudges struct {
	LLM   *judge.LLMJudge
	Agent *judge.AgentJudge
}

// RolloutRecord is one stored ensemble rollout: enough to regrade it.
type RolloutRecord struct {
	ID string `json:"id"`
	// Without is set on an indispensability replay: the reference
	// completion without this interface's steps (not one of the ensemble).
	Without string `json:"without,omitempty"`
	// LeftOut is set on a coverage replay: the reference completion
	// without its step LeftOut (1-based; not one of the ensemble).
	LeftOut int `json:"left_out,omitempty"`
	// Ablation is set on the image-ablation check's rollouts (not of the
	// ensemble): AblationWithheld, or AblationShown for its control.
	Ablation string   `json:"ablation,omitempty"`
	Policy   string   `json:"policy"`
	Hint     bool     `json:"hint"`
	Final    world.ID `json:"final,omitzero"`
	Answer   string   `json:"answer,omitempty"`
	// Fault is the trajectory's Fault: the agent made its final world or
	// answer unverifiable, and every regrade scores it V 0.
	Fault      string   `json:"fault,omitempty"`
	Trajectory string   `json:"trajectory"` // relative to the task directory
	Outcome    string   `json:"outcome"`
	Failure    string   `json:"failure,omitempty"`
	Error      string   `json:"error,omitempty"`
	Interfaces []string `json:"interfaces_used"`
	Steps      int      `json:"steps"`
	WallMS     float64  `json:"wall_ms"`
	// The judges' verdicts (they do not depend on the verifier).
	VLLM   gate.Verdict `json:"v_llm,omitempty"`
	VAgent gate.Verdict `json:"v_agent,omitempty"`
	// V is the current verifier's verdict, Passed of Total criteria.
	V      int `json:"v"`
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// JudgeEvidence is the judges' evidence, by judge.
	JudgeEvidence map[string][]string `json:"judge_evidence,omitempty"`
	// FalseCheck: the agent judge (a model, --judge-model) calls V's
	// result for this rollout wrong; FalseCriteria are the criteria it
	// names.
	FalseCheck    bool     `json:"false_check,omitempty"`
	FalseCriteria []string `json:"false_criteria,omitempty"`
	// JudgeError is why a model judge gave no verdict on this rollout (its
	// server failed after every retry, or it never called the verdict
	// tool): the rollout is no evidence for the gates, which reject the
	// task for infrastructure, and the next run gates it again.
	JudgeError string `json:"judge_error,omitempty"`
}

// The image-ablation check's rollouts, by RolloutRecord.Ablation.
const (
	AblationWithheld = "images_withheld"
	AblationShown    = "images_shown"
)

// Rollout IDs of the image-ablation check.
const (
	ablationID        = "ablate-image"
	ablationControlID = "ablate-image-control"
)

// Ensemble reports whether r is one of the ensemble's rollouts (not a
// replay without an interface, not an image-ablation rollout).
func (r RolloutRecord) Ensemble() bool { return r.Without == "" && r.Ablation == "" && r.LeftOut == 0 }

// Fix is one change the reviser made to a task.
type Fix struct {
	Kind      string `json:"kind"` // tighten, relax, drop-untargeted, drop-entangled
	Criterion string `json:"criterion"`
	// Target is what a tighten fix checks: "db.table" or a home path.
	Target string `json:"target,omitempty"`
	Why    string `json:"why"`
	// Lesson is set when the fix came from the skill file, not this task's
	// evidence.
	Lesson bool `json:"lesson,omitempty"`
}

// Revision is one trip back to the author.
type Revision struct {
	Iteration   int      `json:"iteration"`
	FailedGates []string `json:"failed_gates"`
	Feedback    string   `json:"feedback"`
	Fixes       []Fix    `json:"fixes,omitempty"`
	// NoFix says the author had no fix for the evidence.
	NoFix string `json:"no_fix,omitempty"`
}

// Outcome is what gating a task produced.
type Outcome struct {
	Version int    `json:"version"`
	TaskID  string `json:"task_id"`
	Family  string `json:"family"`
	Persona string `json:"persona"`
	Day     int    `json:"day"`
	// Accepted: every gate passed, the paper's and the checks beyond it.
	Accepted bool `json:"accepted"`
	// PaperAccepted: the paper's gates passed (whatever the checks beyond).
	PaperAccepted bool `json:"paper_accepted"`
	// Direct: accepted at the first evaluation, without feedback.
	Direct     bool            `json:"direct"`
	Difficulty string          `json:"difficulty"`
	Report     *gate.Report    `json:"report"`
	Mutation   *Mutation       `json:"mutation,omitempty"`
	Rollouts   []RolloutRecord `json:"rollouts"`
	Revisions  []Revision      `json:"revisions,omitempty"`
	// LessonFixes are the skill file's fixes applied before the first
	// evaluation.
	LessonFixes []Fix `json:"lesson_fixes,omitempty"`
	// Lessons are what this task taught (fixes that led to acceptance, or
	// evidence no fix answered), for the skill file.
	Lessons  []Lesson `json:"lessons,omitempty"`
	Subtasks int      `json:"subtasks"`
	Switches int      `json:"interface_switches"`
	Revisits bool     `json:"revisits_interface"`
	// RefSwitches and RefRevisits are the same along the reference
	// completion's steps.
	RefSwitches int     `json:"reference_interface_switches"`
	RefRevisits bool    `json:"reference_revisits_interface"`
	Timings     Timings `json:"timings"`
}

// Timings is the wall time of each part of gating a task.
type Timings struct {
	RolloutsMS float64 `json:"rollouts_ms"`
	VerifyMS   float64 `json:"verify_ms"`
	JudgesMS   float64 `json:"judges_ms"`
	ProbeMS    float64 `json:"probe_ms"`
	MutationMS float64 `json:"mutation_ms"`
	TotalMS    float64 `json:"total_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Switches counts the interface switches along a task's ordered
// essential sub-tasks (Support ones, such as finding a login, left out),
// and whether an interface comes back after another.
func Switches(t *task.Task) (int, bool) {
	var ifs []string
	for _, s := range t.Subtasks {
		if !s.Support {
			ifs = append(ifs, s.Interface)
		}
	}
	return switches(ifs)
}

// ReferenceSwitches is Switches along the reference completion's steps.
func ReferenceSwitches(t *task.Task) (int, bool) {
	var ifs []string
	for _, s := range t.Reference {
		ifs = append(ifs, s.Interface)
	}
	return switches(ifs)
}

func switches(ifs []string) (int, bool) {
	n, revisit := 0, false
	var seen []string
	last := ""
	for _, in := range ifs {
		if in == last {
			continue
		}
		if last != "" {
			n++
		}
		if slices.Contains(seen, in) {
			revisit = true
		}
		seen = append(seen, in)
		last = in
	}
	return n, revisit
}

// LoadOutcome reads a task directory's outcome.
func LoadOutcome(dir string) (*Outcome, error) {
	b, err := os.ReadFile(filepath.Join(dir, OutcomeFile))
	if err != nil {
		return nil, err
	}
	var o Outcome
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("pool: %s: %w", filepath.Join(dir, OutcomeFile), err)
	}
	if o.Version != OutcomeVersion {
		return nil, fmt.Errorf("pool: %s: version %d, this build reads %d", filepath.Join(dir, OutcomeFile), o.Version, OutcomeVersion)
	}
	return &o, nil
}

func saveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return world.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// gating is one task's state while it goes through the gates.
type gating struct {
	g       *Gater
	env     Worlds
	dir     string
	t       *task.Task
	check   *taskgen.Check
	w0, ref string // materialised W0 and the reference's final world
	rj      *judge.ReplayJudge
	obs     WorldJudge
	copyDir string // the observer's verifier copy
	recs    []RolloutRecord
	tim     Timings
	// verdicts are V's results by rollout, for the model judges.
	verdicts map[string]*verify.Result
	// seed is the ensemble's, for a task written again.
	seed uint64
}

// modelJudge records the model judges' verdicts of r, which V judged vr.
func (st *gating) modelJudge(ctx context.Context, r *RolloutRecord, vr *verify.Result) error {
	t0 := time.Now()
	defer func() { st.tim.JudgesMS += ms(time.Since(t0)) }()
	r.JudgeError = ""
	tr, err := agent.LoadTrajectory(filepath.Join(st.dir, r.Trajectory))
	if err != nil {
		return err
	}
	// A judge's failure (its server down after every retry, no verdict)
	// is this rollout's missing evidence, not the run's end: finished work
	// stays, and the task is rejected for infrastructure until a rerun.
	judgeFailed := func(which string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, agent.ErrServerConfig) {
			// Not an outage: no verdict comes until the server is
			// restarted for tool calls; the run stops, naming the flag.
			return fmt.Errorf("the %s judge: %w", which, err)
		}
		r.VLLM, r.VAgent = "", ""
		r.JudgeError = fmt.Sprintf("the %s judge gave no verdict: %v", which, err)
		return nil
	}
	v1, ev1, err := st.g.Models.LLM.Judge(ctx, st.t, tr, vr)
	if err != nil {
		return judgeFailed("LLM", err)
	}
	final, err := st.env.Lower(ctx, r.Final)
	if err != nil {
		return err
	}
	av, err := st.g.Models.Agent.Judge(ctx, st.t, st.w0, final, r.Answer, vr, "")
	if err != nil {
		return judgeFailed("agent", err)
	}
	r.VLLM, r.VAgent = v1, av.Verdict
	r.FalseCheck, r.FalseCriteria = av.FalseCheck, av.FalseCriteria
	r.JudgeEvidence["llm"] = ev1
	r.JudgeEvidence["agent"] = av.Evidence
	return nil
}

// Do gates the task at j.TaskDir and writes gate/outcome.json and
// gate/report.json: the three stages (Rollout, Judge, Evaluate) in one
// go, sharing the judges' observations of W0 and W_ref. A task already
// gated (an outcome for the same task ID) is read back, not gated again. A
// task the self-check has not passed is an error: gate only what
// `syn tasks --check` kept.
func (g *Gater) Do(ctx context.Context, j Job) (*Outcome, error) {
	start := time.Now()
	if o, err := g.done(j.TaskDir); o != nil || err != nil {
		return o, err
	}
	if err := keepEarlierGate(j.TaskDir); err != nil {
		return nil, err
	}
	st, err := g.open(ctx, j.TaskDir)
	if err != nil {
		return nil, err
	}
	defer st.close()
	st.seed = j.Seed
	t0 := time.Now()
	specs := st.specs(j.Seed)
	for i := range specs {
		r, err := st.rollout(ctx, specs[i])
		if err != nil {
			return nil, err
		}
		st.recs = append(st.recs, *r)
	}
	st.tim.RolloutsMS = ms(time.Since(t0))
	for i := range st.recs {
		if err := st.judgeOne(ctx, &st.recs[i]); err != nil {
			return nil, err
		}
	}
	return st.finish(ctx, start)
}

// RolloutJob is the rollout stage's unit of work: one rollout of a task,
// Index of the ensemble's (0..5), then the indispensability replays' (one
// per declared interface), then the coverage replays' (one per effect
// step), then, for an image-decisive task, the image-ablation check's two.
type RolloutJob struct {
	TaskDir string `json:"task_dir"`
	Seed    uint64 `json:"seed"`
	Index   int    `json:"index"`
}

// Rollout runs one ensemble rollout in a fresh instance and stores its
// trajectory under gate/rollouts/.
func (g *Gater) Rollout(ctx context.Context, j RolloutJob) (*RolloutRecord, error) {
	st, err := g.open(ctx, j.TaskDir)
	if err != nil {
		return nil, err
	}
	defer st.close()
	specs := st.specs(j.Seed)
	if j.Index < 0 || j.Index >= len(specs) {
		return nil, fmt.Errorf("pool: rollout index %d: the task has %d rollouts (0..%d: the ensemble, then one replay without each declared interface, then the image-ablation check's two for an image-decisive task)", j.Index, len(specs), len(specs)-1)
	}
	return st.rollout(ctx, specs[j.Index])
}

// JudgeJob is the judgment stage's unit of work: the two offline judges'
// verdicts on one stored rollout (V depends on the verifier, which a
// revision changes: the evaluation stage computes it).
type JudgeJob struct {
	TaskDir string        `json:"task_dir"`
	Rollout RolloutRecord `json:"rollout"`
}

// Judge judges one stored rollout.
func (g *Gater) Judge(ctx context.Context, j JudgeJob) (*RolloutRecord, error) {
	st, err := g.open(ctx, j.TaskDir)
	if err != nil {
		return nil, err
	}
	defer st.close()
	r := j.Rollout
	if err := st.judgeOne(ctx, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// EvaluateJob is the gate-evaluation stage's unit of work: a task's judged
// rollouts through the lessons, V, the probe, the gates and the checks
// beyond them, and the revisions.
type EvaluateJob struct {
	TaskDir  string          `json:"task_dir"`
	Rollouts []RolloutRecord `json:"rollouts"`
	// Seed is the ensemble's, should the author write the task again.
	Seed uint64 `json:"seed"`
}

// Evaluate gates a task on its judged rollouts and writes its outcome.
func (g *Gater) Evaluate(ctx context.Context, j EvaluateJob) (*Outcome, error) {
	start := time.Now()
	st, err := g.open(ctx, j.TaskDir)
	if err != nil {
		return nil, err
	}
	defer st.close()
	st.recs, st.seed = slices.Clone(j.Rollouts), j.Seed
	return st.finish(ctx, start)
}

// specs are a task's rollouts: the ensemble, then the reference replayed
// without each declared interface, then, for a task that declares an
// image-decisive sub-task, the image-ablation check's two (the images
// withheld, and its control with them shown).
func (st *gating) specs(seed uint64) []rollout.Spec {
	specs := st.g.ensemble(st.t, seed)
	for _, in := range st.t.Interfaces {
		specs = append(specs, rollout.Spec{ID: "without-" + in, Policy: policy.ReplayWithout(st.t, in)})
	}
	for _, i := range policy.EffectSteps(st.t) {
		specs = append(specs, rollout.Spec{ID: fmt.Sprintf("%s%d", leftOutPrefix, i+1), Policy: policy.ReplayWithoutStep(st.t, i)})
	}
	if _, ok := st.t.DecisiveSubtask(task.DecisiveImage); ok {
		pol := st.g.ablation
		specs = append(specs, rollout.Spec{ID: ablationID, Policy: pol(st.t), AblateImages: true},
			rollout.Spec{ID: ablationControlID, Policy: pol(st.t)})
	}
	return specs
}

func (g *Gater) ablation(t *task.Task) rollout.Policy {
	if g.Ablation != nil {
		return g.Ablation(t)
	}
	return policy.Oracle()
}

func (g *Gater) ensemble(t *task.Task, seed uint64) []rollout.Spec {
	if g.Ensemble != nil {
		return g.Ensemble(t, seed)
	}
	return policy.ShortcutEnsemble(t, seed)
}

// done reads back the outcome of a task already gated.
func (g *Gater) done(dir string) (*Outcome, error) {
	t, err := task.Load(dir)
	if err != nil {
		return nil, err
	}
	if o, err := LoadOutcome(dir); err == nil && o.TaskID == t.ID && len(o.InfraRejected()) == 0 {
		return o, nil
	}
	return nil, nil
}

// InfraRejected are the gates that rejected the task for infrastructure
// (a rollout, a replay or a check that failed in every attempt: an
// outage, not the task). A task so rejected is gated again by the next
// run, its earlier evidence kept as a version: the outage's verdict does
// not outlive it.
func (o *Outcome) InfraRejected() []string {
	if o.Accepted || o.Report == nil {
		return nil
	}
	var out []string
	for _, g := range o.Report.Gates {
		if !g.Passed && g.Verdict == gate.Infrastructure {
			out = append(out, g.Name)
		}
	}
	return out
}

// open reads a task's directory and sets up its judges.
func (g *Gater) open(ctx context.Context, dir string) (*gating, error) {
	if err := g.Gates.Validate(); err != nil {
		return nil, fmt.Errorf("pool: gate configuration: %w", err)
	}
	t, err := task.Load(dir)
	if err != nil {
		return nil, err
	}
	c, err := readCheck(dir)
	if err != nil {
		return nil, err
	}
	env, err := g.Env(t)
	if err != nil {
		return nil, err
	}
	st := &gating{g: g, env: env, dir: dir, t: t, check: c}
	if st.w0, err = env.Lower(ctx, t.Provenance.Snapshot); err != nil {
		return nil, err
	}
	if st.ref, err = env.Lower(ctx, c.Final); err != nil {
		return nil, err
	}
	st.rj = &judge.ReplayJudge{W0: st.w0, Ref: st.ref, Task: st.t}
	st.copyDir, err = env.TempDir("observer-verifier-")
	if err != nil {
		return nil, err
	}
	if g.Observer != nil {
		st.obs = g.Observer(env, t, c.Final, filepath.Join(st.copyDir, "verifier"))
	}
	return st, nil
}

func (st *gating) close() { os.RemoveAll(st.copyDir) }

// finish is the evaluation stage on st.recs: the lessons, V, the probe, the
// gates and the revisions; it writes the outcome and the report.
func (st *gating) finish(ctx context.Context, start time.Time) (*Outcome, error) {
	g, t := st.g, st.t
	fam := familyOf(st.dir, t)
	out := &Outcome{Version: OutcomeVersion, TaskID: t.ID, Family: fam, Persona: t.Provenance.Persona, Day: t.Provenance.Day}

	// The skill file's lessons first: the author has learnt them.
	draft, err := loadDraft(st.dir, t)
	if err != nil {
		return nil, err
	}
	if g.Lessons != nil {
		fixes, err := st.applyLessons(ctx, g.Lessons, fam, draft)
		if err != nil {
			return nil, err
		}
		if len(fixes) > 0 {
			out.LessonFixes = fixes
			if err := saveRevised(st.dir, draft); err != nil {
				return nil, err
			}
			st.t = draft.Task
		}
	}
	if err := st.regrade(ctx); err != nil {
		return nil, err
	}

	maxRev := g.MaxRevisions
	if maxRev == 0 {
		maxRev = gate.DefaultMaxRevisions
	}
	if maxRev < 0 {
		maxRev = 0
	}
	var last *gate.Report
	var lastMut *Mutation
	var revisions []Revision
	rep, err := gate.Revise(ctx, maxRev, func(ctx context.Context, iteration int, feedback string) (*gate.Report, error) {
		if iteration > 0 {
			rv := Revision{Iteration: iteration, FailedGates: last.FailedGates(), Feedback: feedback}
			fixes, why, err := st.revise(ctx, draft, last, lastMut)
			if err != nil {
				return nil, err
			}
			rewritten := false
			if len(fixes) == 0 && g.Reauthor != nil {
				// The verifier has no fix: the author writes the task again.
				fix, why2, err := st.reauthor(ctx, draft, feedback, st.seed)
				if err != nil {
					return nil, err
				}
				if fix != nil {
					fixes, rewritten = []Fix{*fix}, true
				} else {
					why += "; " + why2
				}
			}
			rv.Fixes, rv.NoFix = fixes, why
			if len(fixes) > 0 {
				rv.NoFix = ""
			}
			revisions = append(revisions, rv)
			if len(fixes) == 0 {
				return last, nil // nothing to change: the same report again
			}
			if !rewritten {
				if err := saveRevised(st.dir, draft); err != nil {
					return nil, err
				}
				st.t = draft.Task
				if err := st.regrade(ctx); err != nil {
					return nil, err
				}
			}
		}
		r, m, err := st.evaluate(ctx)
		if err != nil {
			return nil, err
		}
		last, lastMut = r, m
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	// A revision without a fix returned the same report: stop there.
	for i, rv := range revisions {
		if len(rv.Fixes) == 0 {
			revisions = revisions[:i+1]
			break
		}
	}
	rep.Revisions = nil
	for _, rv := range revisions {
		rep.Revisions = append(rep.Revisions, gate.Revision{Iteration: rv.Iteration, FailedGates: rv.FailedGates, Feedback: rv.Feedback})
	}
	out.Report, out.Mutation, out.Revisions, out.Rollouts = rep, lastMut, revisions, st.recs
	// The task as it stands (a revision may have written it again).
	out.Subtasks = len(st.t.Subtasks)
	out.Switches, out.Revisits = Switches(st.t)
	out.RefSwitches, out.RefRevisits = ReferenceSwitches(st.t)
	out.Accepted = rep.Passed
	out.PaperAccepted = paperPassed(rep)
	out.Direct = rep.Passed && len(revisions) == 0
	out.Difficulty = rep.Difficulty
	out.Lessons = lessonsOf(fam, out)
	st.tim.TotalMS = ms(time.Since(start))
	out.Timings = st.tim
	if err := saveJSON(filepath.Join(st.dir, ReportFile), rep); err != nil {
		return nil, err
	}
	if err := saveJSON(filepath.Join(st.dir, OutcomeFile), out); err != nil {
		return nil, err
	}
	verdict := "rejected (" + strings.Join(rep.FailedGates(), ", ") + ")"
	if out.Accepted {
		verdict = "accepted, " + out.Difficulty
	}
	g.progress("gated %s: %s, %d revisions, %s", t.ID, verdict, len(revisions), time.Since(start).Round(time.Millisecond))
	return out, nil
}

func paperPassed(rep *gate.Report) bool {
	for _, gr := range rep.Gates {
		if slices.Contains(PaperGates(), gr.Name) && !gr.Passed {
			return false
		}
	}
	return true
}

func readCheck(dir string) (*taskgen.Check, error) {
	b, err := os.ReadFile(filepath.Join(dir, taskgen.CheckFile))
	if err != nil {
		return nil, fmt.Errorf("pool: %s has no self-check (%w): run `wildawm syn tasks --check` first", dir, err)
	}
	var c taskgen.Check
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("pool: %s: %w", filepath.Join(dir, taskgen.CheckFile), err)
	}
	if !c.OK || c.Final.IsZero() {
		return nil, fmt.Errorf("pool: %s did not pass its self-check (%s): it cannot be gated", dir, c.Problem)
	}
	return &c, nil
}

// familyOf is the task's family, from its sketch.
func familyOf(dir string, t *task.Task) string {
	b, err := os.ReadFile(filepath.Join(dir, taskgen.SketchFile))
	if err == nil {
		var p taskgen.Produced
		if json.Unmarshal(b, &p) == nil && p.Sketch.Family != "" {
			return p.Sketch.Family
		}
	}
	return "unknown"
}

// rollout runs one rollout of the ensemble in a fresh instance and
// stores its trajectory.
func (st *gating) rollout(ctx context.Context, spec rollout.Spec) (*RolloutRecord, error) {
	if err := os.MkdirAll(filepath.Join(st.dir, GateDir, "rollouts"), 0o755); err != nil {
		return nil, err
	}
	res, err := st.env.Run(ctx, st.t, spec)
	if err != nil {
		return nil, fmt.Errorf("pool: %s rollout %s: %w", st.t.ID, spec.ID, err)
	}
	rel := filepath.Join(GateDir, "rollouts", spec.ID+".json")
	if err := res.Trajectory.Save(filepath.Join(st.dir, rel)); err != nil {
		return nil, err
	}
	tr := res.Trajectory
	without, _ := strings.CutPrefix(spec.ID, "without-")
	if without == spec.ID {
		without = ""
	}
	leftOut := 0
	if n, ok := strings.CutPrefix(spec.ID, leftOutPrefix); ok {
		leftOut, _ = strconv.Atoi(n)
	}
	ablation := ""
	switch spec.ID {
	case ablationID:
		ablation = AblationWithheld
	case ablationControlID:
		ablation = AblationShown
	}
	return &RolloutRecord{ID: spec.ID, Without: without, LeftOut: leftOut, Ablation: ablation, Policy: spec.Policy.Name(), Hint: spec.Hint, Final: res.Final, Answer: tr.Answer, Fault: tr.Fault,
		Trajectory: rel, Outcome: tr.Outcome, Failure: tr.Failure, Error: tr.Error, Interfaces: tr.InterfacesUsed(), Steps: len(tr.Steps), WallMS: ms(res.Wall)}, nil
}

// infraErr is why a rollout that is no evidence is not ("" when it is).
func (r RolloutRecord) infraErr() string {
	switch {
	case r.countable():
		return ""
	case r.Error != "":
		return r.Error
	}
	return r.Outcome
}

// countable reports whether a rollout is evidence about the task (its
// harness did not fail in every attempt, its world was set up, its calls
// parsed).
func (r RolloutRecord) countable() bool {
	switch agent.FailureOf(r.Outcome) {
	case agent.FailInfra, agent.FailSetup, agent.FailFormat:
		return false
	}
	return !r.Final.IsZero()
}

// judgeOne records the two offline judges' verdicts of a countable
// rollout.
func (st *gating) judgeOne(ctx context.Context, r *RolloutRecord) error {
	if !r.countable() || st.g.Models != nil || !r.Ensemble() {
		return nil // the model judges judge after V (regrade); a replay without an interface and an ablation are V's alone
	}
	t0 := time.Now()
	defer func() { st.tim.JudgesMS += ms(time.Since(t0)) }()
	final, err := st.env.Lower(ctx, r.Final)
	if err != nil {
		return err
	}
	v1, ev1, err := st.rj.Judge(ctx, final)
	if err != nil {
		return err
	}
	r.VLLM = v1
	r.JudgeEvidence = map[string][]string{"replay": ev1}
	if st.obs != nil {
		v2, ev2, err := st.obs.Judge(ctx, r.Final, "")
		if err != nil {
			return err
		}
		r.VAgent = v2
		r.JudgeEvidence["observer"] = ev2
	}
	return nil
}

// regrade computes V of every countable rollout with the task's current
// verifier, and classifies its trajectory.
func (st *gating) regrade(ctx context.Context) error {
	t0 := time.Now()
	vdir := filepath.Join(st.dir, "verifier")
	for i := range st.recs {
		r := &st.recs[i]
		if !r.countable() {
			continue
		}
		vr, err := st.env.Score(ctx, st.t, vdir, r.Final, r.Answer, r.Fault)
		if err != nil {
			return fmt.Errorf("pool: verify %s rollout %s: %w", st.t.ID, r.ID, err)
		}
		r.V, r.Passed, r.Total = vr.V, vr.Passed, vr.Total
		if r.JudgeEvidence == nil {
			r.JudgeEvidence = map[string][]string{}
		}
		r.JudgeEvidence["verifier"] = []string{vr.Summary()}
		if st.verdicts == nil {
			st.verdicts = map[string]*verify.Result{}
		}
		st.verdicts[r.ID] = vr
		if st.g.Models != nil && r.Ensemble() {
			if err := st.modelJudge(ctx, r, vr); err != nil {
				return err
			}
		}
		path := filepath.Join(st.dir, r.Trajectory)
		if tr, err := agent.LoadTrajectory(path); err == nil {
			tr.Classify(vr.V == 1)
			if err := tr.Save(path); err != nil {
				return err
			}
			r.Failure = tr.Failure
		}
	}
	st.tim.VerifyMS += ms(time.Since(t0))
	return nil
}

// candidate is the gate's view of the rollouts.
func (st *gating) candidate() gate.Candidate {
	c := gate.Candidate{TaskID: st.t.ID, Interfaces: st.t.Interfaces}
	for _, r := range st.recs {
		if !r.Ensemble() {
			continue
		}
		gr := gate.Rollout{ID: r.ID, Policy: r.Policy, Hint: r.Hint, V: r.V, VLLM: r.VLLM, VAgent: r.VAgent, InterfacesUsed: r.Interfaces,
			Evidence: map[string]string{"trajectory": r.Trajectory}}
		if !r.countable() {
			gr.Err = r.Error
			if gr.Err == "" {
				gr.Err = r.Outcome
			}
			// Format failures are the agent's, not the harness's: the gate
			// counts them as failures.
			if r.Outcome == agent.OutcomeFormat {
				gr.Err, gr.V, gr.VLLM, gr.VAgent = "", 0, gate.Failed, gate.Failed
			}
		} else if r.JudgeError != "" {
			gr.Err = r.JudgeError
		} else {
			gr.Evidence["final"] = r.Final.String()
			gr.Evidence["verifier"] = strings.Join(r.JudgeEvidence["verifier"], "; ")
			if ev := r.JudgeEvidence["replay"]; gr.VLLM != verdictOf(r.V) {
				gr.Evidence["v_llm"] = strings.Join(ev, "; ")
			}
			if ev := r.JudgeEvidence["observer"]; gr.VAgent != verdictOf(r.V) {
				gr.Evidence["v_agent"] = strings.Join(ev, "; ")
			}
		}
		c.Rollouts = append(c.Rollouts, gr)
	}
	if sub, ok := st.t.DecisiveSubtask(task.DecisiveImage); ok {
		c.ImageDecisive = true
		c.Ablation = st.ablationEvidence(sub.ID)
	}
	return c
}

// ablationEvidence is the image-ablation check's result from its stored
// rollouts (nil when they did not run: the gate then fails as not run).
func (st *gating) ablationEvidence(subtask string) *gate.Ablation {
	var a *gate.Ablation
	var control *gate.AblationControl
	for _, r := range st.recs {
		errOf := func() string {
			if r.countable() {
				return ""
			}
			if r.Error != "" {
				return r.Error
			}
			return r.Outcome
		}
		switch r.Ablation {
		case AblationWithheld:
			a = &gate.Ablation{Subtask: subtask, RolloutID: r.ID, Policy: r.Policy, V: r.V, Err: errOf(),
				Evidence: fmt.Sprintf("verifier: %s; trajectory %s", strings.Join(r.JudgeEvidence["verifier"], "; "), r.Trajectory)}
		case AblationShown:
			control = &gate.AblationControl{RolloutID: r.ID, V: r.V, Err: errOf()}
		}
	}
	if a != nil {
		a.Control = control
	}
	return a
}

func verdictOf(v int) gate.Verdict {
	if v == 1 {
		return gate.Completed
	}
	return gate.Failed
}

// evaluate runs the probe, the five gates and the checks beyond them.
func (st *gating) evaluate(ctx context.Context) (*gate.Report, *Mutation, error) {
	c := st.candidate()
	// V(W0, W0, empty) of the verifier as it is now (a revision changes it).
	v0, err := st.env.Verify(ctx, st.t, filepath.Join(st.dir, "verifier"), st.t.Provenance.Snapshot, "")
	if err != nil {
		return nil, nil, err
	}
	c.InitialV = v0.V
	t0 := time.Now()
	var probeErr error
	if st.g.Models != nil {
		pj := st.g.Models.LLM.ProbeJudge(st.t, func(r gate.Rollout) (*agent.Trajectory, *verify.Result, error) {
			tr, err := agent.LoadTrajectory(filepath.Join(st.dir, r.Evidence["trajectory"]))
			return tr, st.verdicts[r.ID], err
		})
		if slices.ContainsFunc(c.Rollouts, func(r gate.Rollout) bool { return r.Err == "" }) {
			p, err := gate.Probe(ctx, pj, c.Rollouts, gate.DigestFS(os.DirFS(filepath.Join(st.dir, "verifier"))))
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				// The model judge failed under the probe (its server, no
				// verdict): the probe could not decide, an outage's
				// verdict the next run does not keep.
				probeErr = err
			}
			c.Probe = p
		}
	} else if st.obs != nil {
		os.RemoveAll(filepath.Join(st.copyDir, "verifier"))
		if err := verify.CopyDir(ctx, filepath.Join(st.dir, "verifier"), filepath.Join(st.copyDir, "verifier")); err != nil {
			return nil, nil, err
		}
		finals := map[string]world.ID{}
		for _, r := range st.recs {
			finals[r.ID] = r.Final
		}
		pj := st.obs.ProbeJudge(finals)
		if slices.ContainsFunc(c.Rollouts, func(r gate.Rollout) bool { return r.Err == "" }) {
			p, err := gate.Probe(ctx, pj, c.Rollouts, gate.DigestFS(os.DirFS(filepath.Join(st.copyDir, "verifier"))))
			if err != nil {
				return nil, nil, fmt.Errorf("pool: probe %s: %w", st.t.ID, err)
			}
			c.Probe = p
		}
	}
	st.tim.ProbeMS += ms(time.Since(t0))
	rep, err := gate.Evaluate(c, st.g.Gates)
	if err != nil {
		return nil, nil, err
	}
	if probeErr != nil {
		for i := range rep.Gates {
			if g := &rep.Gates[i]; g.Name == gate.GateCounterfactualProbe {
				g.Passed, g.Verdict = false, gate.Infrastructure
				g.Evidence = []string{"the probe's judge failed: " + probeErr.Error()}
			}
		}
		rep.Passed = false
	}
	// Beyond the paper.
	rep.Gates = append(rep.Gates, st.oracleGate(ctx))
	ag, err := st.answerOnlyGate(ctx)
	if err != nil {
		return nil, nil, err
	}
	rep.Gates = append(rep.Gates, ag, st.interfacesGate(), st.coverageGate(), st.falseCheckGate())
	t0 = time.Now()
	var mut *Mutation
	var mr *gate.MutationResult
	if st.g.Mutate != nil {
		mut, err = st.g.Mutate(ctx, st.env, st.t, filepath.Join(st.dir, "verifier"), st.w0, st.ref)
		if err != nil {
			return nil, nil, fmt.Errorf("pool: mutation check %s: %w", st.t.ID, err)
		}
		mr = &gate.MutationResult{Passed: mut.Passed, Untargeted: mut.Untargeted, Evidence: mut.Evidence}
	}
	st.tim.MutationMS += ms(time.Since(t0))
	rep.Gates = append(rep.Gates, gate.MutationGate(mr))
	rep.Passed = len(rep.FailedGates()) == 0
	return rep, mut, nil
}

// oracleGate: the reference completion, replayed, passes V.
func (st *gating) oracleGate(ctx context.Context) gate.GateResult {
	vr, err := st.env.Verify(ctx, st.t, filepath.Join(st.dir, "verifier"), st.check.Final, st.t.Answer)
	if err != nil {
		return gate.OracleGate(st.check.Final.Short(), gate.Verified{Err: err.Error()})
	}
	return gate.OracleGate(st.check.Final.Short(), verified(vr))
}

// verified is V's result as the gate decisions read it.
func verified(vr *verify.Result) gate.Verified {
	return gate.Verified{V: vr.V, Passed: vr.Passed, Total: vr.Total, Summary: vr.Summary()}
}

// leftOutPrefix begins the rollout ID of a coverage replay ("leave-out-7":
// the reference without its seventh step).
const leftOutPrefix = "leave-out-"

// coverageGate: the reference without each of its effects, in turn,
// fails V or changes nothing (gate.CoverageGate).
func (st *gating) coverageGate() gate.GateResult {
	var rs []gate.EffectReplay
	for _, r := range st.recs {
		if r.LeftOut == 0 {
			continue
		}
		i := r.LeftOut - 1
		er := gate.EffectReplay{Step: i, V: r.V, Passed: r.Passed, Total: r.Total, SameWorld: r.Final == st.check.Final}
		if i < len(st.t.Reference) {
			er.Tool, er.Note = st.t.Reference[i].Tool, st.t.Reference[i].Note
		}
		er.Err = r.infraErr()
		rs = append(rs, er)
	}
	if len(rs) == 0 && len(policy.EffectSteps(st.t)) == 0 {
		return gate.GateResult{Name: GateCoverage, Verdict: "no_effects", Evidence: []string{"the reference completion has no step that may change the world: nothing it does can be checked"}}
	}
	return gate.CoverageGate(rs)
}

// interfacesGate: every declared interface is indispensable: the
// reference completion replayed without its steps, and without what those
// steps read, computed or chose (their facts take their wrong values:
// policy.ReplayWithout), fails V.
func (st *gating) interfacesGate() gate.GateResult {
	var rs []gate.InterfaceReplay
	for _, r := range st.recs {
		if r.Without == "" {
			continue
		}
		ir := gate.InterfaceReplay{Interface: r.Without, V: r.V, Passed: r.Passed, Total: r.Total, SameWorld: r.Final == st.check.Final, Trajectory: r.Trajectory}
		ir.Err = r.infraErr()
		rs = append(rs, ir)
	}
	return gate.InterfacesGate(rs)
}

// falseCheckGate: the agent judge's false checks on the ensemble's
// rollouts (gate.FalseCheckGate); without a judge model none are made.
func (st *gating) falseCheckGate() gate.GateResult {
	var calls []gate.FalseCall
	for _, r := range st.recs {
		if r.Ensemble() && r.FalseCheck {
			calls = append(calls, gate.FalseCall{Rollout: r.ID, V: r.V, Criteria: r.FalseCriteria})
		}
	}
	return gate.FalseCheckGate(st.g.Models != nil && st.g.Models.Agent != nil, calls)
}

// answerOnlyGate: the right answer with the world untouched fails V, where
// the task changes the world.
func (st *gating) answerOnlyGate(ctx context.Context) (gate.GateResult, error) {
	if st.check.Final == st.t.Provenance.Snapshot {
		return gate.AnswerOnlyGate(st.t.Answer, false, gate.Verified{}), nil
	}
	vr, err := st.env.Verify(ctx, st.t, filepath.Join(st.dir, "verifier"), st.t.Provenance.Snapshot, st.t.Answer)
	if err != nil {
		return gate.GateResult{Name: GateAnswerOnly}, err
	}
	return gate.AnswerOnlyGate(st.t.Answer, true, verified(vr)), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// errNoDraft is returned when a task directory's scripts cannot be read.
var errNoDraft = errors.New("pool: cannot read the task's verifier scripts")

// loadDraft reads a task directory back as a draft (the task and its
// scripts), for the reviser.
func loadDraft(dir string, t *task.Task) (*taskgen.Draft, error) {
	d := &taskgen.Draft{Task: t, Scripts: map[string]string{}}
	ents, err := os.ReadDir(filepath.Join(dir, "verifier", "scripts"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoDraft, err)
	}
	for _, e := range ents {
		if e.IsDir() || filepath.Base(task.SDKScript) == e.Name() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "verifier", "scripts", e.Name()))
		if err != nil {
			return nil, err
		}
		d.Scripts[e.Name()] = string(b)
	}
	return d, nil
}

// saveRevised writes a revised draft over its task directory, keeping the
// sketch, the self-check and the stored rollouts.
func saveRevised(dir string, d *taskgen.Draft) error {
	if err := d.Task.Validate(); err != nil {
		return fmt.Errorf("pool: the revised task is invalid: %w", err)
	}
	if err := d.Task.Save(dir); err != nil {
		return err
	}
	vdir := filepath.Join(dir, "verifier", "scripts")
	ents, err := os.ReadDir(vdir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, keep := d.Scripts[e.Name()]; !keep && e.Name() != filepath.Base(task.SDKScript) {
			os.Remove(filepath.Join(vdir, e.Name()))
		}
	}
	for name, src := range d.Scripts {
		if err := world.WriteFileAtomic(filepath.Join(vdir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Regraded is a stored rollout's verdict under the task's current verifier.
type Regraded struct {
	ID     string `json:"id"`
	Before int    `json:"v_before"`
	After  int    `json:"v_after"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	// Evidence names the failing criteria.
	Evidence string `json:"evidence"`
}

// Regrade is the result of re-verifying a gated task's stored rollouts.
type Regrade struct {
	TaskID   string     `json:"task_id"`
	Rollouts []Regraded `json:"rollouts"`
	// Report is the paper's gates re-evaluated with the new verdicts, the
	// judges' verdicts and the probe as stored.
	Report *gate.Report `json:"report"`
}

// RegradeTask re-verifies the stored rollouts of the gated task at dir
// with its current verifier: no new rollout runs, only V on the stored
// final worlds. It writes gate/regrade.json.
func RegradeTask(ctx context.Context, env Worlds, dir string, cfg gate.Config) (*Regrade, error) {
	t, err := task.Load(dir)
	if err != nil {
		return nil, err
	}
	o, err := LoadOutcome(dir)
	if err != nil {
		return nil, fmt.Errorf("pool: %s has not been gated (wildawm gate --task %s): %w", dir, dir, err)
	}
	c := gate.Candidate{TaskID: t.ID, Interfaces: t.Interfaces, InitialV: 0}
	v0, err := env.Verify(ctx, t, filepath.Join(dir, "verifier"), t.Provenance.Snapshot, "")
	if err != nil {
		return nil, err
	}
	c.InitialV = v0.V
	rg := &Regrade{TaskID: t.ID}
	for _, r := range o.Rollouts {
		if !r.Ensemble() {
			continue // not one of the ensemble
		}
		gr := gate.Rollout{ID: r.ID, Policy: r.Policy, Hint: r.Hint, VLLM: r.VLLM, VAgent: r.VAgent, InterfacesUsed: r.Interfaces,
			Evidence: map[string]string{"trajectory": r.Trajectory}}
		if !r.countable() {
			gr.Err = r.Error
			if gr.Err == "" {
				gr.Err = r.Outcome
			}
			c.Rollouts = append(c.Rollouts, gr)
			continue
		}
		vr, err := env.Score(ctx, t, filepath.Join(dir, "verifier"), r.Final, r.Answer, r.Fault)
		if err != nil {
			return nil, fmt.Errorf("pool: regrade %s rollout %s: %w", t.ID, r.ID, err)
		}
		gr.V = vr.V
		rg.Rollouts = append(rg.Rollouts, Regraded{ID: r.ID, Before: r.V, After: vr.V, Passed: vr.Passed, Total: vr.Total, Evidence: vr.Summary()})
		c.Rollouts = append(c.Rollouts, gr)
	}
	// The stored probe stands only if no verdict changed: its ensemble
	// verdicts are V's. Otherwise it must be run again (a re-judgment of
	// the stored worlds, no rollout): the gate says not run.
	changed := slices.ContainsFunc(rg.Rollouts, func(r Regraded) bool { return r.Before != r.After })
	if o.Report != nil && !changed {
		c.Probe = o.Report.Probe
	}
	rep, err := gate.Evaluate(c, cfg)
	if err != nil {
		return nil, err
	}
	rg.Report = rep
	return rg, saveJSON(filepath.Join(dir, GateDir, "regrade.json"), rg)
}
