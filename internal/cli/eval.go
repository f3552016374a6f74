package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/eval"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// defaultEvalAgent is the agent `wildawm eval` runs without --agent: a
// scripted replay, never a model.
const defaultEvalAgent = "scripted:replay-careful"

// evalAgentNames are the scripted agents --agent names.
func evalAgentNames() []string {
	var out []string
	for _, v := range policy.ReplayVariants() {
		out = append(out, "scripted:replay-"+v.Name)
	}
	return out
}

func (e *env) evalCmd() *cobra.Command {
	var (
		dir, split, agentSpec, out, budgets string
		harness, visionSpec                 string
		k, parallel                         int
		seed                                uint64
		fake                                bool
		h                                   agent.Harness
	)
	c := &cobra.Command{
		Use:   "eval --dir RUN [--split val] [--agent AGENT] [-k 8]",
		Short: "Evaluate an agent on the pool's val split: pass@k, pass^k, the per-task table and the behaviour measures",
		Long: `Run -k rollouts of every task of the pool's --split (DIR/` + pool.File + `, built by
wildawm pool run or pool split), each in a fresh instance of the task's initial
world, verify each final world with the task's verifier, and print the per-task
table, the unbiased pass@1..pass@k and pass^k, the observed "all rollouts passed",
and the behaviour measures (interfaces per episode, interface-switch rate, share of
GUI actions, long turns, solve rate by step budget). Rollouts that failed on the
infrastructure or the set-up are left out of the rates and counted apart
(docs/eval.md has every formula).

--agent is a scripted agent (` + strings.Join(evalAgentNames(), ", ") + `; the default is
` + defaultEvalAgent + `, never a model), the reference completion replayed with a
seeded error model, a seed per rollout; or a model, URL#MODEL, acting through
--harness (wildawm, or opencode).

Results go to --out (default DIR/eval/SPLIT-AGENT): eval.json, written after every
rollout, and trajectories/TASK/rN.json. A rerun with the same --out resumes: it
keeps the finished rollouts and runs the rest (and any that failed on the
infrastructure).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			bs, err := parseBudgets(budgets)
			if err != nil {
				return err
			}
			if k < 1 {
				return fmt.Errorf("-k %d: give the rollouts per task, 1 or more (the paper uses 8)", k)
			}
			if split != pool.SplitVal && split != pool.SplitRL && split != pool.SplitSFT {
				return fmt.Errorf("--split %q: choose %s (the in-domain evaluation split), %s or %s", split, pool.SplitVal, pool.SplitRL, pool.SplitSFT)
			}
			if parallel < 1 {
				return fmt.Errorf("--parallel %d: give the rollouts at a time, 1 or more", parallel)
			}
			if out == "" {
				out = filepath.Join(dir, "eval", split+"-"+strings.NewReplacer(":", "-", "/", "-", "#", "-").Replace(strings.TrimPrefix(strings.TrimPrefix(agentSpec, "http://"), "https://")))
			}
			ag, err := e.evalAgent(agentSpec, harness, h, seed, filepath.Join(out, "opencode"))
			if err != nil {
				return err
			}
			src, closeSrc, err := e.openSource(ctx, dir)
			if err != nil {
				return fmt.Errorf("--dir %s: %w", dir, err)
			}
			defer closeSrc()
			envs, closeEnv, err := e.rolloutEnvs(ctx, src, dir, filepath.Join(out, "work"), fake)
			if err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			defer closeEnv()
			if visionSpec != "" {
				_, vc, err := e.modelClient("--vision-model", visionSpec)
				if err != nil {
					return err
				}
				envs.setVision(agent.ModelVision(vc))
			}
			envOf := func(t *task.Task) (eval.Rollouts, error) { return envs.task(t, "evaluate") }
			rep, err := eval.Run(ctx, eval.Options{Adapter: &eval.Split{Dir: dir, Split: split, Env: envOf}, Agent: ag, K: k, Parallel: parallel,
				Out: out, Budgets: bs, Progress: e.progress, Clock: e.clock, Browser: browserOf(fake)})
			if err != nil {
				return err
			}
			printReport(e.stdout, rep, dir)
			fmt.Fprintf(e.stdout, "results: %s\n", filepath.Join(out, eval.File))
			if err := incomplete(rep); err != nil {
				e.finished(filepath.Join(out, eval.File)+" (incomplete: the rates leave out what failed on the infrastructure)",
					"the same wildawm eval command again   # it keeps the finished rollouts and runs only those that failed")
				return err
			}
			e.finished(filepath.Join(out, eval.File)+" (the trajectories in "+filepath.Join(out, "trajectories")+")",
				"wildawm eval --dir "+dir+" --agent URL#MODEL   # your model on the same split, to compare",
				"wildawm sft export --dir "+dir+" --out sft.jsonl   # SFT data from the sft split")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&dir, "dir", defaultRunDir, "the world-synthesis run whose pool is evaluated (DIR/"+pool.File+")")
	f.StringVar(&split, "split", pool.SplitVal, "the pool's split to evaluate on (val is the in-domain evaluation split)")
	f.StringVar(&agentSpec, "agent", defaultEvalAgent, "who acts: a scripted agent ("+strings.Join(evalAgentNames(), ", ")+") or a model, URL#MODEL")
	f.IntVarP(&k, "k", "k", 8, "rollouts per task")
	f.IntVar(&parallel, "parallel", 2, "rollouts at a time")
	f.StringVar(&out, "out", "", "the output directory (default DIR/eval/SPLIT-AGENT); a rerun with the same one resumes")
	f.StringVar(&budgets, "budgets", "40,120", "the step budgets of the solve rate by budget, comma-separated")
	f.BoolVar(&fake, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium, no script) instead of Chromium")
	f.Uint64Var(&seed, "seed", 1, "a scripted agent's seed: rollout i of a task replays with seed+i-1")
	f.StringVar(&harness, "harness", agent.HarnessName, "with a model, the harness it acts through: wildawm (the tool loop), or opencode (the CLI, through wildawm's MCP gateway)")
	f.IntVar(&h.MaxTurns, "max-turns", agent.DefaultMaxTurns, "with a model, the turn budget")
	f.DurationVar(&h.WallTime, "wall", agent.DefaultWallTime, "with a model, the wall-time budget of a rollout")
	f.IntVar(&h.ContextTokens, "context-tokens", agent.DefaultContextTokens, "with a model, the context budget: past it, older turns are summarised into a new segment")
	f.IntVar(&h.MaxTokens, "max-tokens", agent.DefaultMaxTokens, "with a model, the completion budget of a turn")
	f.StringVar(&visionSpec, "vision-model", "", "a vision model for describe_image, URL#MODEL (default: the offline analyser of the pixels)")
	return c
}

// parseBudgets reads --budgets.
func parseBudgets(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--budgets %q: give positive step counts, comma-separated, e.g. 40,120", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// incomplete is an error when some rollouts failed on the infrastructure
// or in their set-up: they are left out of the rates, which then stand on
// fewer rollouts than asked for, and a rerun runs them again.
func incomplete(rep *eval.Report) error {
	o := rep.Overall
	if o.Infra+o.Setup == 0 {
		return nil
	}
	first := ""
	for _, r := range rep.Rollouts {
		if !r.Counted() {
			first = fmt.Sprintf(" (the first: task %s rollout %d: %s)", r.Task, r.Index, clipError(r.Error, 300))
			break
		}
	}
	return fmt.Errorf("eval: %d of %d rollouts failed on the infrastructure (%d) or in their set-up (%d)%s: the rates above leave them out; run the same command again to run them", o.Infra+o.Setup, o.Rollouts, o.Infra, o.Setup, first)
}

func clipError(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// evalAgent is the agent --agent names: a scripted replay variant (a seed
// per rollout), or a model through a harness.
func (e *env) evalAgent(spec, harness string, h agent.Harness, seed uint64, opencodeWork string) (eval.Agent, error) {
	a, err := e.evalAgentOf(spec, harness, h, seed, opencodeWork)
	if err == nil {
		a.Config = fmt.Sprintf("agent=%s seed=%d", spec, seed)
		if !a.Scripted() {
			a.Config += fmt.Sprintf(" harness=%s max_turns=%d wall=%s context_tokens=%d max_tokens=%d", harness, h.MaxTurns, h.WallTime, h.ContextTokens, h.MaxTokens)
		}
	}
	return a, err
}

func (e *env) evalAgentOf(spec, harness string, h agent.Harness, seed uint64, opencodeWork string) (eval.Agent, error) {
	if name, ok := strings.CutPrefix(spec, "scripted:"); ok {
		variant, _ := strings.CutPrefix(name, "replay-")
		errs, found := policy.Variant(variant)
		if !found || !strings.HasPrefix(name, "replay-") {
			return eval.Agent{}, fmt.Errorf("--agent %q: no such scripted agent; choose one of %s, or a model, URL#MODEL", spec, strings.Join(evalAgentNames(), ", "))
		}
		return eval.Agent{Name: spec, Policy: func(c eval.Case, index int) (rollout.Policy, error) {
			if len(c.Task.Reference) == 0 {
				return nil, fmt.Errorf("task %s has no reference completion to replay: evaluate a model (--agent URL#MODEL) on it", c.ID)
			}
			return policy.NewReplay(variant, c.Task, errs, seed+uint64(index)-1), nil
		}}, nil
	}
	if !strings.Contains(spec, "#") {
		return eval.Agent{}, fmt.Errorf("--agent %q: give a scripted agent (%s) or a model, URL#MODEL (e.g. http://127.0.0.1:8000/v1#qwen3-8b)", spec, strings.Join(evalAgentNames(), ", "))
	}
	sp, client, err := e.modelClient("--agent", spec)
	if err != nil {
		return eval.Agent{}, err
	}
	h.Model, h.ModelName = client, sp.Model
	switch harness {
	case agent.HarnessName:
		return eval.Agent{Name: "model:" + sp.Model, Policy: func(eval.Case, int) (rollout.Policy, error) {
			hh := h // a harness of its own per rollout
			return policy.Model{Harness: &hh}, nil
		}}, nil
	case external.HarnessName:
		bin, err := external.FindOpencode()
		if err != nil {
			return eval.Agent{}, fmt.Errorf("--harness opencode: %w", err)
		}
		return eval.Agent{Name: "model:" + sp.Model, Policy: func(c eval.Case, index int) (rollout.Policy, error) {
			return &policy.Opencode{Harness: external.Opencode{Bin: bin}, ModelBaseURL: sp.BaseURL, Model: sp.Model, APIKey: sp.APIKey,
				ContextTokens: h.ContextTokens, OutputTokens: h.MaxTokens, WorkDir: filepath.Join(opencodeWork, fmt.Sprintf("r%d", index)), WallTime: h.WallTime, MaxTurns: h.MaxTurns}, nil
		}}, nil
	}
	return eval.Agent{}, fmt.Errorf("--harness %q: choose %s (the wildawm tool loop) or %s (the opencode CLI, docs/external-harness.md)", harness, agent.HarnessName, external.HarnessName)
}

// browserOf names the browser the rollouts drive the websites with, as
// eval.json records it.
func browserOf(fake bool) string {
	if fake {
		return "http"
	}
	return "chromium"
}

func browserName(b string) string {
	switch b {
	case "http":
		return "http (the HTTP browser of internal/browser/fake, --fake-browser)"
	case "":
		return "not recorded"
	}
	return b
}

// printReport prints the per-task table and the overall figures.
func printReport(w io.Writer, r *eval.Report, dir string) {
	who := "a model"
	if r.Scripted {
		who = "a scripted policy, not a model"
	}
	fmt.Fprintf(w, "eval: %s split of %s, %d tasks x %d rollouts; agent %s (%s); browser %s\n\n", r.Benchmark, dir, len(r.Tasks), r.K, r.Agent, who, browserName(r.Browser))
	idw := len("task")
	for _, t := range r.Tasks {
		idw = max(idw, len(t.ID))
	}
	num := func(xs []float64, k int) string {
		if len(xs) < k {
			return "-"
		}
		return fmt.Sprintf("%.3f", xs[k-1])
	}
	fmt.Fprintf(w, "%-*s  %-10s %3s %3s %8s %8s %8s %4s %6s %5s\n", idw, "task", "difficulty", "n", "c",
		"pass@1", fmt.Sprintf("pass@%d", r.K), fmt.Sprintf("pass^%d", r.K), "all", "steps", "excl")
	for _, t := range r.Tasks {
		all := "no"
		if t.AllPassed {
			all = "yes"
		}
		fmt.Fprintf(w, "%-*s  %-10s %3d %3d %8s %8s %8s %4s %6.1f %5d\n", idw, t.ID, t.Difficulty, t.N, t.C,
			num(t.PassAt, 1), num(t.PassAt, r.K), num(t.PassHat, r.K), all, t.MeanSteps, t.Infra+t.Setup)
	}
	o := r.Overall
	fmt.Fprintln(w)
	means := func(label string, ms []eval.Mean) {
		fmt.Fprintf(w, "%-7s", label)
		for _, m := range ms {
			fmt.Fprintf(w, "  k=%d %.3f", m.K, m.Value)
			if m.Tasks != len(r.Tasks) {
				fmt.Fprintf(w, " (%d tasks)", m.Tasks)
			}
		}
		fmt.Fprintln(w)
	}
	means("pass@k", o.PassAt)
	means("pass^k", o.PassHat)
	fmt.Fprintf(w, "pass@k is 1 - C(n-c,k)/C(n,k) per task, pass^k is C(c,k)/C(n,k), averaged over the tasks with n >= k counted rollouts\n")
	fmt.Fprintf(w, "all rollouts passed (observed pass^%d): %.3f (%d tasks)\n", r.K, o.AllPassed, o.AllTasks)
	fmt.Fprintf(w, "rollouts: %d, counted %d; left out: %d infrastructure, %d set-up failures; format failures (counted as failed): %d\n",
		o.Rollouts, o.Counted, o.Infra, o.Setup, o.Format)
	b := o.Behaviour
	fmt.Fprintf(w, "behaviour over %d counted rollouts: interfaces per episode %.2f; interface-switch rate %.3f (%d of %d transitions); GUI share %.3f (%d of %d tool calls)\n",
		b.Episodes, b.InterfacesPerEpisode, b.SwitchRate, b.Switches, b.Transitions, b.GUIShare, b.GUISteps, b.Steps)
	if b.ModelEpisodes == 0 {
		fmt.Fprintf(w, "long turns (>= %d completion tokens): none measured, no model turns\n", eval.LongTurnTokens)
	} else {
		fmt.Fprintf(w, "long turns (>= %d completion tokens): %.3f (%d of %d act turns in %d rollouts)\n", eval.LongTurnTokens, b.LongTurnShare, b.LongTurns, b.ActTurns, b.ModelEpisodes)
	}
	for _, s := range b.Solved {
		fmt.Fprintf(w, "solved within %d steps: %.3f (%d of %d)\n", s.Budget, s.Rate, s.Solved, b.Episodes)
	}
	for _, g := range o.ByDifficulty {
		fmt.Fprintf(w, "difficulty %s: %d tasks, pass@1 %.3f, pass^%d %.3f\n", g.Name, g.Tasks, g.PassAt[0].Value, r.K, g.PassHat[r.K-1].Value)
	}
}
