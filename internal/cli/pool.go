package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// gateFlags are the flags of the commands that gate tasks.
type gateFlags struct {
	seed         uint64
	maxRevisions int
	noLessons    bool
	levels       string
	models       []string
	harnesses    string
	judgeModel   string
}

func (g *gateFlags) register(c *cobra.Command) {
	c.Flags().Uint64Var(&g.seed, "ensemble-seed", 1, "with --ensemble-model, where each task's rollouts start in the model x harness rotation (the default shortcut ensemble is deterministic: the seed changes nothing)")
	c.Flags().IntVar(&g.maxRevisions, "max-revisions", gate.DefaultMaxRevisions, "fix iterations after a failed gate (0: none)")
	c.Flags().BoolVar(&g.noLessons, "no-lessons", false, "do not apply the skill file's lessons (DIR/"+pool.SkillFile+") before the first evaluation")
	c.Flags().StringArrayVar(&g.models, "ensemble-model", nil, "a model for the ensemble, URL#MODEL (repeat for several); the rollouts are drawn from models x --ensemble-harness (default the scripted ensemble, never a model)")
	c.Flags().StringVar(&g.harnesses, "ensemble-harness", agent.HarnessName, "with --ensemble-model, the harnesses, comma-separated: "+agent.HarnessName+" (the wildawm tool loop), "+external.HarnessName+" (the opencode CLI)")
	c.Flags().StringVar(&g.judgeModel, "judge-model", "", "a model for the judges, URL#MODEL: the LLM judge and the agent judge replace the offline replay judge and observer (default the offline judges)")
	c.Flags().StringVar(&g.levels, "levels", "", "difficulty levels as NAME=MIN..MAX,... over the hint-free successes (default hard=0..1,medium=2..2)")
}

func (g *gateFlags) config() (gate.Config, error) {
	cfg := gate.Config{}
	if g.levels != "" {
		for _, part := range strings.Split(g.levels, ",") {
			name, rng, ok := strings.Cut(strings.TrimSpace(part), "=")
			lo, hi, ok2 := strings.Cut(rng, "..")
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if !ok || !ok2 || err1 != nil || err2 != nil {
				return cfg, fmt.Errorf("--levels %q: give NAME=MIN..MAX pairs, e.g. hard=0..1,medium=2..2", g.levels)
			}
			cfg.Levels = append(cfg.Levels, gate.DifficultyLevel{Name: name, Min: a, Max: b})
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("--levels: %w", err)
	}
	return cfg, nil
}

// gater builds the gate stage over a run's rollout environments.
func (e *env) gater(envs *rolloutEnvs, f *taskFlags, g *gateFlags) (*pool.Gater, error) {
	cfg, err := g.config()
	if err != nil {
		return nil, err
	}
	gt := &pool.Gater{Gates: cfg, MaxRevisions: g.maxRevisions, Progress: e.progress, Env: envs.forTask("gate")}
	if g.maxRevisions == 0 {
		gt.MaxRevisions = -1
	}
	if g.judgeModel != "" {
		_, client, err := e.modelClient("--judge-model", g.judgeModel)
		if err != nil {
			return nil, err
		}
		gt.Models = &pool.ModelJudges{LLM: &judge.LLMJudge{Model: client}, Agent: &judge.AgentJudge{Model: client}}
	}
	if len(g.models) > 0 {
		combos, err := e.ensembleCombos(g.models, g.harnesses, filepath.Join(f.dir, "ensemble-work"))
		if err != nil {
			return nil, err
		}
		if gt.Ensemble, err = pool.ModelEnsemble(combos); err != nil {
			return nil, err
		}
	}
	pool.Defaults(gt)
	if !g.noLessons {
		s, err := pool.LoadSkills(filepath.Join(f.dir, pool.SkillFile))
		if err != nil {
			return nil, err
		}
		gt.Lessons = s
	}
	return gt, nil
}

func (e *env) gateCmd() *cobra.Command {
	var f taskFlags
	var g gateFlags
	var taskDir string
	c := &cobra.Command{
		Use:   "gate --task DIR",
		Short: "Put one synthesized task through the five gates and the checks beyond them",
		Long: `Gate a task that passed its self-check (wildawm syn tasks --check): the six
rollouts of the shortcut ensemble (three scripted shortcut agents without the hint,
the same three with it; --ensemble-model for models) in fresh instances, V and
the two offline judges on each, the counterfactual probe, the paper's five gates,
and beyond them the oracle, the answer-only shortcut and the mutation check; then
up to --max-revisions fixes of the verifier from the evidence. Writes
DIR/gate/outcome.json, gate/report.json and gate/rollouts/; prints the report.
Exits non-zero when the task is rejected.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if taskDir == "" {
				return fmt.Errorf("--task is required: a task directory written by wildawm syn tasks --check")
			}
			// Bad input is refused before any environment is built.
			if fi, err := os.Stat(taskDir); err != nil || !fi.IsDir() {
				return fmt.Errorf("--task %s: not a task directory: give one written by wildawm syn tasks --check", taskDir)
			}
			if _, err := g.config(); err != nil {
				return err
			}
			src, closeSrc, err := e.openSource(cmd.Context(), f.dir)
			if err != nil {
				return err
			}
			defer closeSrc()
			envs, closeEnvs, err := e.rolloutEnvs(cmd.Context(), src, f.dir, filepath.Join(f.dir, "check-work"), f.fakeBrowser)
			if err != nil {
				return err
			}
			defer closeEnvs()
			gt, err := e.gater(envs, &f, &g)
			if err != nil {
				return err
			}
			o, err := gt.Do(cmd.Context(), pool.Job{TaskDir: taskDir, Seed: g.seed})
			if err != nil {
				return err
			}
			b, err := o.Report.Encode()
			if err != nil {
				return err
			}
			e.stdout.Write(b)
			e.finished(filepath.Join(taskDir, pool.OutcomeFile)+" and "+filepath.Join(taskDir, pool.ReportFile)+" (the trajectories in "+filepath.Join(taskDir, pool.GateDir, "rollouts")+")",
				"wildawm pool split --dir "+f.dir+"   # index the accepted tasks into the pool")
			if !o.Accepted {
				return fmt.Errorf("task %s rejected by %s", o.TaskID, strings.Join(o.Report.FailedGates(), ", "))
			}
			return nil
		},
	}
	c.Flags().StringVar(&taskDir, "task", "", "the task's directory")
	c.Flags().StringVar(&f.dir, "dir", defaultRunDir, "the world-synthesis run the task was synthesized from")
	c.Flags().BoolVar(&f.fakeBrowser, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium) instead of Chromium")
	g.register(c)
	return c
}

func (e *env) poolCmd() *cobra.Command {
	c := &cobra.Command{Use: "pool", Short: "Build, split, list and export the pool of gated tasks"}
	c.AddCommand(e.poolRunCmd(), e.poolSplitCmd(), e.poolListCmd(), e.poolExportCmd(), e.poolRateCmd())
	return c
}

func (e *env) poolRunCmd() *cobra.Command {
	var f taskFlags
	var g gateFlags
	var days, props string
	var count, last int
	c := &cobra.Command{
		Use:   "run [--dir WORLDS] [--days A..B] [--count K] [--parallel P]",
		Short: "Synthesize tasks, self-check and gate each as it is written, then split the pool",
		Long: `The whole task pipeline on a world-synthesis run: every family on every state of
--days (or each persona's --last N days, default 3), the diversity gate across workers, the
self-check, then the gates (see wildawm gate) as soon as a task is written, --parallel
workers per stage. Stops after --count accepted tasks (0: every job). Then splits the
accepted tasks (DIR/` + pool.File + `), merges what the revisions taught into the skill
file (DIR/` + pool.SkillFile + `) and prints the statistics (wildawm stats tasks). A
rerun resumes: written tasks are kept, gated ones read back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			proportions, err := parseProportions(props)
			if err != nil {
				return err
			}
			f.check = true
			fams, err := f.familyList()
			if err != nil {
				return err
			}
			keep, err := dayFilter(days, last)
			if err != nil {
				return err
			}
			if _, err := g.config(); err != nil { // before any environment is built
				return err
			}
			s, envs, closeSrc, err := e.openTaskSynth(cmd, &f)
			if err != nil {
				return err
			}
			defer closeSrc()
			gt, err := e.gater(envs, &f, &g)
			if err != nil {
				return err
			}
			if s.AuthorBackend != nil {
				// A failure the verifier's reviser cannot fix goes back to
				// the llm author, with the gates' feedback.
				gt.Reauthor = &pool.Reauthor{Author: s.AuthorBackend, Source: s.Source}
			}
			jobs := s.Jobs(fams, keep, f.seed)
			start := time.Now()
			gated, accepted := 0, 0
			eta := world.NewETA(e.clock, 0)
			r := &pool.Runner{Synth: s, Gater: gt, Parallel: f.parallel, Count: count, Seed: g.seed,
				SynthProgress: func(done int, res *taskgen.Result) {
					for _, p := range res.Rejected {
						why := p.Problem
						if p.Check != nil {
							why = "self-check: " + p.Check.Problem
						}
						e.progress("rejected %s: %s", p.ID, why)
					}
					if done%25 == 0 || done == len(jobs) {
						e.progress("synthesis: %d/%d jobs (%s), %s", done, len(jobs), time.Since(start).Round(time.Second), eta.String(done, len(jobs)))
					}
				},
				Gated: func(o *pool.Outcome) {
					gated++
					if o.Accepted {
						accepted++
					}
					if gated%10 == 0 {
						e.progress("gates: %d gated, %d accepted, %.0f accepted/h (%s)", gated, accepted, float64(accepted)/time.Since(start).Hours(), time.Since(start).Round(time.Second))
					}
				}}
			outs, err := r.Run(cmd.Context(), jobs)
			if err != nil {
				return err
			}
			wall := time.Since(start)
			skills := gt.Lessons
			if skills == nil {
				skills = &pool.Skills{}
			}
			for _, o := range outs {
				skills.Merge(o.Lessons)
			}
			if err := skills.Save(filepath.Join(f.dir, pool.SkillFile)); err != nil {
				return err
			}
			p, err := pool.Build(s.Out, proportions)
			if err != nil {
				return err
			}
			if err := p.Save(filepath.Join(f.dir, pool.File)); err != nil {
				return err
			}
			all, _, err := pool.Outcomes(s.Out)
			if err != nil {
				return err
			}
			st := pool.Compute(all, familyCovers)
			st.AddRatings(p) // the agents that re-rated tasks (pool rate), kept through the rebuild
			st.Table(e.stdout)
			e.progress("pool: %d accepted of %d gated in %s (this run gated %d); splits %v", len(p.Tasks), p.Gated, wall.Round(time.Second), len(outs), p.Counts)
			e.finished(fmt.Sprintf("%s (the pool's index; each task's gate evidence in %s/ID/gate/), Table 4 above", filepath.Join(f.dir, pool.File), s.Out),
				"wildawm pool list --dir "+f.dir+" --split val   # the tasks",
				"wildawm eval --dir "+f.dir+" --fake-browser   # evaluate an agent on the val split (--agent URL#MODEL for yours)")
			return nil
		},
	}
	f.register(c)
	g.register(c)
	c.Flags().StringVar(&days, "days", "", "the days whose states tasks start from, N or MIN..MAX (default each persona's last three)")
	c.Flags().IntVar(&last, "last", 0, "the states of each persona's last N days (default 3; or --days)")
	c.Flags().IntVar(&count, "count", 0, "stop after this many accepted tasks (0: run every job)")
	c.Flags().StringVar(&props, "proportions", "", "split proportions, sft=N,rl=N,val=N (default the paper's 100/208/33)")
	return c
}

func familyCovers(name string) []string {
	f, err := taskgen.Lookup(name)
	if err != nil {
		return nil
	}
	return f.Covers()
}

func dayFilter(days string, last int) (func(taskgen.State) bool, error) {
	if days != "" && last > 0 {
		return nil, fmt.Errorf("--days and --last: give one (a range of days, or each persona's last N)")
	}
	if last < 0 {
		return nil, fmt.Errorf("--last %d: give a number of days, at least 1", last)
	}
	if days == "" {
		if last == 0 {
			last = 3
		}
		return func(st taskgen.State) bool { return st.Day >= st.Persona.Days-last }, nil
	}
	a, b, found := strings.Cut(days, "..")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return nil, fmt.Errorf("--days %q: give a day or a range MIN..MAX, e.g. 5..9", days)
	}
	return func(st taskgen.State) bool { return st.Day >= lo && st.Day <= hi }, nil
}

func parseProportions(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("--proportions %q: give sft=N,rl=N,val=N, e.g. sft=100,rl=208,val=33", s)
		}
		out[name] = n
	}
	return out, nil
}

func (e *env) poolSplitCmd() *cobra.Command {
	var dir, out, props string
	c := &cobra.Command{
		Use:   "split [--dir WORLDS]",
		Short: "Index the accepted tasks and split them (sft / rl / val)",
		Long: `Read every gated task's outcome under --tasks (default DIR/tasks), index the
accepted ones with their provenance, and deal them into the splits by a hash of
their IDs, in --proportions (default the paper's 100 / 208 / 33). Writes DIR/` + pool.File + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			proportions, err := parseProportions(props)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(dir, "tasks")
			}
			p, err := pool.Build(out, proportions)
			if err != nil {
				return err
			}
			if err := p.Save(filepath.Join(dir, pool.File)); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%d accepted of %d gated: sft %d, rl %d, val %d\n", len(p.Tasks), p.Gated, p.Counts[pool.SplitSFT], p.Counts[pool.SplitRL], p.Counts[pool.SplitVal])
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", defaultRunDir, "the run directory")
	c.Flags().StringVar(&out, "tasks", "", "the tasks' directory (default DIR/tasks)")
	c.Flags().StringVar(&props, "proportions", "", "split proportions, sft=N,rl=N,val=N (default 100/208/33)")
	return c
}

func (e *env) poolListCmd() *cobra.Command {
	var dir, split string
	var asJSON bool
	c := &cobra.Command{
		Use:   "list [--split sft|rl|val]",
		Short: "List the pool's tasks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := pool.LoadPool(filepath.Join(dir, pool.File))
			if err != nil {
				return err
			}
			es := p.Split(split)
			if asJSON {
				for _, en := range es {
					b, _ := json.Marshal(en)
					fmt.Fprintln(e.stdout, string(b))
				}
				return nil
			}
			var b bytes.Buffer
			for _, en := range es {
				level := en.Difficulty
				if en.RatedBy != "" {
					level += " (" + en.RatedBy + ")"
				}
				fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s day %d\n", en.ID, en.Split, level, en.Family, en.Persona, en.Day)
			}
			e.stdout.Write(b.Bytes())
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", defaultRunDir, "the run directory")
	c.Flags().StringVar(&split, "split", "", "only this split")
	c.Flags().BoolVar(&asJSON, "json", false, "one JSON object per task")
	return c
}

func (e *env) poolExportCmd() *cobra.Command {
	var dir, split, out string
	c := &cobra.Command{
		Use:   "export --out DIR [--split sft|rl|val]",
		Short: "Copy the pool's tasks (with their stored trajectories) and an index into a directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out is required: the directory to export into")
			}
			p, err := pool.LoadPool(filepath.Join(dir, pool.File))
			if err != nil {
				return err
			}
			n, err := p.Export(cmd.Context(), split, out)
			if err != nil {
				return err
			}
			e.progress("exported %d tasks to %s (the worlds stay in the store: %s)", n, out, filepath.Join(dir, "store"))
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", defaultRunDir, "the run directory")
	c.Flags().StringVar(&split, "split", "", "only this split")
	c.Flags().StringVar(&out, "out", "", "the directory to export into")
	return c
}

func (e *env) statsTasksCmd() *cobra.Command {
	var dir, tasks string
	c := &cobra.Command{
		Use:   "tasks [--dir WORLDS]",
		Short: "The gated tasks' statistics beside the paper's Table 4",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tasks == "" {
				tasks = filepath.Join(dir, "tasks")
			}
			outs, _, err := pool.Outcomes(tasks)
			if err != nil {
				return err
			}
			if len(outs) == 0 {
				return fmt.Errorf("no gated tasks in %s: run wildawm pool run --dir %s", tasks, dir)
			}
			st := pool.Compute(outs, familyCovers)
			// The figures of the agents that re-rated the pool (pool rate),
			// each under its name.
			if p, err := pool.LoadPool(filepath.Join(dir, pool.File)); err == nil {
				st.AddRatings(p)
			} else if _, serr := os.Stat(filepath.Join(dir, pool.File)); serr == nil {
				return err
			}
			st.Table(e.stdout)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", defaultRunDir, "the run directory")
	c.Flags().StringVar(&tasks, "tasks", "", "the tasks' directory (default DIR/tasks)")
	return c
}

// ensembleCombos are the model x harness combinations of the ensemble.
func (e *env) ensembleCombos(models []string, harnesses, work string) ([]func() rollout.Policy, error) {
	var combos []func() rollout.Policy
	for _, m := range models {
		spec, client, err := e.modelClient("--ensemble-model", m)
		if err != nil {
			return nil, err
		}
		for _, h := range strings.Split(harnesses, ",") {
			switch strings.TrimSpace(h) {
			case agent.HarnessName:
				combos = append(combos, func() rollout.Policy {
					return policy.Model{Harness: &agent.Harness{Model: client, ModelName: spec.Model}}
				})
			case external.HarnessName:
				bin, err := external.FindOpencode()
				if err != nil {
					return nil, fmt.Errorf("--ensemble-harness opencode: %w", err)
				}
				combos = append(combos, func() rollout.Policy {
					return &policy.Opencode{Harness: external.Opencode{Bin: bin}, ModelBaseURL: spec.BaseURL, Model: spec.Model, APIKey: spec.APIKey, WorkDir: work}
				})
			default:
				return nil, fmt.Errorf("--ensemble-harness %q: choose %s or %s", h, agent.HarnessName, external.HarnessName)
			}
		}
	}
	return combos, nil
}
