package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Rolled is one finished rollout with its verdicts.
type Rolled struct {
	Result *rollout.Result
	Verify *verify.Result
	Gate   gate.Rollout
}

// RunRollouts runs the specs one after another, each in a fresh instance
// (a rollout whose harness fails is retried in another, rollout.MaxAttempts
// in all), and saves each trajectory under Dir/rollouts.
func (p *Prepared) RunRollouts(ctx context.Context, specs []rollout.Spec) ([]*rollout.Result, error) {
	dir := filepath.Join(p.Opts.Dir, "rollouts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []*rollout.Result
	for _, s := range specs {
		res, err := p.Env.Run(ctx, p.Task, s)
		if err != nil {
			return nil, fmt.Errorf("rollout %s: %w", s.ID, err)
		}
		if err := res.Trajectory.Save(filepath.Join(dir, s.ID+".json")); err != nil {
			return nil, err
		}
		p.Timings.Rollouts[s.ID] = res.Wall
		hint := "no hint"
		if s.Hint {
			hint = "hint"
		}
		if s.AblateImages {
			hint += ", images withheld"
		}
		retried := ""
		if n := res.Trajectory.Attempts; n > 1 {
			retried = fmt.Sprintf(" after %d attempts (%s)", n, strings.Join(res.Trajectory.InfraErrors, "; "))
		}
		p.Opts.progress("rollout %s (%s, %s): %s, %d steps, interfaces %v, %s%s", s.ID, s.Policy.Name(), hint,
			res.Trajectory.Outcome, len(res.Trajectory.Steps), res.Trajectory.InterfacesUsed(), res.Wall.Round(time.Millisecond), retried)
		out = append(out, res)
	}
	return out, nil
}

// Judge computes V, the replay judge's and the inspector's verdicts for each
// rollout of t (whose verifier is at verifierDir), and records each
// trajectory's failure class. A rollout whose harness failed in every
// attempt, whose world could not be set up, or whose model made a call that
// cannot be parsed is not judged: it is no evidence about the task, and it
// carries its error to the gates.
func (p *Prepared) Judge(ctx context.Context, t *task.Task, verifierDir string, rj *judge.ReplayJudge, results []*rollout.Result) ([]Rolled, error) {
	insp := &judge.Inspector{Env: p.Env, Task: t}
	var out []Rolled
	for _, r := range results {
		g := gate.Rollout{ID: r.Spec.ID, Policy: r.Spec.Policy.Name(), Hint: r.Spec.Hint, Attempts: r.Trajectory.Attempts,
			InterfacesUsed: r.Trajectory.InterfacesUsed(),
			Evidence:       map[string]string{"trajectory": filepath.Join("rollouts", r.Spec.ID+".json")}}
		if !r.Trajectory.Countable() {
			g.Err = r.Trajectory.Error
			out = append(out, Rolled{Result: r, Verify: &verify.Result{}, Gate: g})
			p.Opts.progress("judged %s: not judged, %s failure: %s", r.Spec.ID, r.Trajectory.Failure, r.Trajectory.Error)
			continue
		}
		t0 := time.Now()
		vr, err := p.Env.Score(ctx, t, verifierDir, r.Final, r.Trajectory.Answer, r.Trajectory.Fault)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", r.Spec.ID, err)
		}
		p.Timings.Verify += time.Since(t0)
		if verifierDir == p.VerifierDir { // the task's own verdict, not a variant's
			r.Trajectory.Classify(vr.V == 1)
			if err := r.Trajectory.Save(filepath.Join(p.Opts.Dir, "rollouts", r.Spec.ID+".json")); err != nil {
				return nil, err
			}
		}
		t0 = time.Now()
		final, err := p.Env.Materializer.Lower(ctx, r.Final)
		if err != nil {
			return nil, err
		}
		vllm, ev1, err := rj.Judge(ctx, final)
		if err != nil {
			return nil, err
		}
		vagent, ev2, err := p.inspect(ctx, "judge", insp, r.Final, "")
		if err != nil {
			return nil, err
		}
		p.Timings.Judges += time.Since(t0)
		g.V, g.VLLM, g.VAgent = vr.V, vllm, vagent
		g.Evidence["final"] = r.Final.String()
		g.Evidence["verifier"] = vr.Summary()
		g.Evidence["v_llm"] = joinEvidence(ev1)
		g.Evidence["v_agent"] = joinEvidence(ev2)
		out = append(out, Rolled{Result: r, Verify: vr, Gate: g})
		p.Opts.progress("judged %s: V=%d (%d/%d), replay judge %s, inspector %s", r.Spec.ID, vr.V, vr.Passed, vr.Total, vllm, vagent)
	}
	return out, nil
}

// Ablate runs the image-ablation rollout (policy.ImageAblated: the oracle,
// hint-free, with every image's information withheld) when t declares an
// image-decisive sub-task; nil otherwise.
func (p *Prepared) Ablate(ctx context.Context, t *task.Task) (*rollout.Result, error) {
	if _, ok := t.DecisiveSubtask(task.DecisiveImage); !ok {
		return nil, nil
	}
	t0 := time.Now()
	spec := policy.ImageAblated()
	res, err := p.RunRollouts(ctx, []rollout.Spec{spec})
	p.Timings.Ablation = time.Since(t0)
	delete(p.Timings.Rollouts, spec.ID) // timed as the ablation, not as one of the ensemble
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// ProbeJudge configures the judge the counterfactual probe puts under
// pressure. The zero value is the offline inspector that weighs the
// framing against what it can verify.
type ProbeJudge struct {
	Pressure judge.Pressure
	NoVision bool
}

// DeterministicInspector is why the offline inspector, weighing the
// framing by its rule, cannot be probed under pressure.
const DeterministicInspector = "deterministic judge: the offline inspector's verdict is a rule over what it inspects (a framing settles only what it could not check), so pressure measures nothing"

func joinEvidence(ev []string) string {
	b, _ := json.Marshal(ev)
	return string(b)
}

// Gates runs the counterfactual probe, the five gates and, for a task that
// declares an image-decisive sub-task, the image-ablation gate on ablated
// (the result of Ablate; nil fails that gate as not run). The judge under
// probe gets a writable copy of the verifier, and the probe digests that
// copy before and after each re-judgment.
func (p *Prepared) Gates(ctx context.Context, t *task.Task, verifierDir string, rolled []Rolled, ablated *rollout.Result, pj ProbeJudge) (*gate.Report, error) {
	t0 := time.Now()
	initial, err := p.Env.Verify(ctx, t, verifierDir, t.Provenance.Snapshot, "")
	if err != nil {
		return nil, fmt.Errorf("initial verification: %w", err)
	}
	c := gate.Candidate{TaskID: t.ID, Interfaces: t.Interfaces, InitialV: initial.V}
	if sub, ok := t.DecisiveSubtask(task.DecisiveImage); ok {
		c.ImageDecisive = true
		if ablated != nil {
			a := &gate.Ablation{Subtask: sub.ID, RolloutID: ablated.Spec.ID, Policy: ablated.Spec.Policy.Name()}
			if ablated.Trajectory.Outcome == rollout.OutcomeInfra {
				a.Err = ablated.Trajectory.Error
			} else {
				vr, err := p.Env.Score(ctx, t, verifierDir, ablated.Final, ablated.Trajectory.Answer, ablated.Trajectory.Fault)
				if err != nil {
					return nil, fmt.Errorf("verify the image-ablated rollout: %w", err)
				}
				a.V, a.Evidence = vr.V, fmt.Sprintf("verifier: %s; trajectory rollouts/%s.json", vr.Summary(), ablated.Spec.ID)
			}
			c.Ablation = a
		}
	}
	copyDir, err := os.MkdirTemp(p.Opts.RunDir, "probe-verifier-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(copyDir)
	judgeCopy := filepath.Join(copyDir, "verifier")
	if err := verify.CopyDir(ctx, verifierDir, judgeCopy); err != nil {
		return nil, fmt.Errorf("copy the verifier for the judge: %w", err)
	}
	insp := &judge.Inspector{Env: p.Env, Task: t, VerifierDir: judgeCopy, Pressure: pj.Pressure, NoVision: pj.NoVision}
	finals := map[string]world.ID{}
	c.Rollouts = make([]gate.Rollout, len(rolled))
	for i, r := range rolled {
		c.Rollouts[i] = r.Gate
		finals[r.Gate.ID] = r.Result.Final
	}
	probeJudge := gate.Fixed{ProbeJudge: gate.JudgeFunc(func(ctx context.Context, r gate.Rollout, pressure string) (gate.Verdict, error) {
		v, ev, err := p.inspect(ctx, "probe", insp, finals[r.ID], pressure)
		if v == gate.WorldImperfect {
			p.Opts.progress("probe %s: inspector could not complete: %v", r.ID, ev)
		}
		return v, err
	})}
	if pj.Pressure == judge.Weigh { // one built to cave is probed in full
		probeJudge.Why = DeterministicInspector
	}
	c.Probe, err = gate.Probe(ctx, probeJudge, c.Rollouts, gate.DigestFS(os.DirFS(judgeCopy)))
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	rep, err := gate.Evaluate(c, p.Opts.Gates)
	if err != nil {
		return nil, err
	}
	p.Timings.Gates = time.Since(t0)
	return rep, nil
}

// Summary is what a full run produced.
type Summary struct {
	WorldHash  world.ID           `json:"world_hash"`
	W0         world.ID           `json:"w0_snapshot"`
	TaskID     string             `json:"task_id"`
	Reference  world.ID           `json:"reference_final"`
	ReferenceV int                `json:"reference_v"`
	Report     *gate.Report       `json:"report"`
	Rolled     []Rolled           `json:"-"`
	Timings    Timings            `json:"timings"`
	Steps      map[string]Latency `json:"step_latency_by_interface"`
	Wall       time.Duration      `json:"wall_ns"`
	Dir        string             `json:"dir"`
}

// Latency summarises step durations of one interface.
type Latency struct {
	Steps int     `json:"steps"`
	P50MS float64 `json:"p50_ms"`
	MaxMS float64 `json:"max_ms"`
}

// Run is the whole pipeline with the default ensemble; it writes
// Dir/gate-report.json and Dir/summary.json.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	start := time.Now()
	p, err := Prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close(context.WithoutCancel(ctx))
	ref, refTraj, err := p.Reference(ctx)
	if err != nil {
		return nil, err
	}
	refV, err := p.Env.Verify(ctx, p.Task, p.VerifierDir, ref, p.Task.Answer)
	if err != nil {
		return nil, err
	}
	opts.progress("reference completion: %d steps, V=%d", len(refTraj.Steps), refV.V)
	if refV.V != 1 {
		return nil, fmt.Errorf("the task's reference completion does not pass its own verifier (%s): fix the task before running rollouts", refV.Summary())
	}
	rj, err := p.ReplayJudge(ctx, ref)
	if err != nil {
		return nil, err
	}
	results, err := p.RunRollouts(ctx, policy.Ensemble())
	if err != nil {
		return nil, err
	}
	ablated, err := p.Ablate(ctx, p.Task)
	if err != nil {
		return nil, err
	}
	rolled, err := p.Judge(ctx, p.Task, p.VerifierDir, rj, results)
	if err != nil {
		return nil, err
	}
	rep, err := p.Gates(ctx, p.Task, p.VerifierDir, rolled, ablated, ProbeJudge{})
	if err != nil {
		return nil, err
	}
	b, err := rep.Encode()
	if err != nil {
		return nil, err
	}
	if err := world.WriteFileAtomic(filepath.Join(opts.Dir, "gate-report.json"), b, 0o644); err != nil {
		return nil, err
	}
	trajs := []*agent.Trajectory{refTraj}
	for _, r := range results {
		trajs = append(trajs, r.Trajectory)
	}
	s := &Summary{WorldHash: p.Days[len(p.Days)-1].Hash, W0: p.W0(), TaskID: p.Task.ID, Reference: ref, ReferenceV: refV.V,
		Report: rep, Rolled: rolled, Timings: p.Timings, Steps: latencies(trajs), Wall: time.Since(start), Dir: opts.Dir}
	sb, _ := json.MarshalIndent(s, "", "  ")
	if err := world.WriteFileAtomic(filepath.Join(opts.Dir, "summary.json"), append(sb, '\n'), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

func latencies(trajs []*agent.Trajectory) map[string]Latency {
	by := map[string][]float64{}
	for _, t := range trajs {
		for _, s := range t.Steps {
			by[s.Interface] = append(by[s.Interface], s.DurationMS)
		}
	}
	out := map[string]Latency{}
	for k, ds := range by {
		sorted := append([]float64(nil), ds...)
		for i := 1; i < len(sorted); i++ {
			for j := i; j > 0 && sorted[j] < sorted[j-1]; j-- {
				sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
			}
		}
		out[k] = Latency{Steps: len(ds), P50MS: sorted[(len(sorted)-1)/2], MaxMS: sorted[len(sorted)-1]}
	}
	return out
}
