package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/world"
)

// rateFlags are pool rate's flags.
type rateFlags struct {
	dir, split, levels string
	agents             []string
	k, parallel        int
	fake               bool
	h                  agent.Harness
	models             *modelFlags // the root's --model-timeout, -retries, -backoff
}

// rateAgentSpec is one --agent: URL#MODEL[,HARNESS].
type rateAgentSpec struct {
	raw, harness string
	spec         model.Spec
}

// parseRateAgent reads one --agent.
func parseRateAgent(s string) (rateAgentSpec, error) {
	a := rateAgentSpec{raw: s, harness: agent.HarnessName}
	spec := s
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		spec, a.harness = s[:i], strings.TrimSpace(s[i+1:])
		if a.harness != agent.HarnessName && a.harness != external.HarnessName {
			return a, fmt.Errorf("--agent %q: harness %q: choose %s (the wildawm tool loop) or %s (the opencode CLI), e.g. http://127.0.0.1:8000/v1#qwen3-8b,%s",
				s, a.harness, agent.HarnessName, external.HarnessName, agent.HarnessName)
		}
	}
	if !strings.Contains(spec, "#") {
		return a, fmt.Errorf("--agent %q: give a model as URL#MODEL[,HARNESS], e.g. http://127.0.0.1:8000/v1#qwen3-8b,%s", s, agent.HarnessName)
	}
	sp, err := model.ParseSpec(spec)
	if err != nil {
		return a, fmt.Errorf("--agent %q: %w", s, err)
	}
	a.spec = sp
	return a, nil
}

var slugBad = regexp.MustCompile(`[^a-z0-9._-]+`)

// slug names the agent's directory under each task's gate/rate/: the model
// and the harness, so that a rerun with the same agent (at any URL)
// resumes.
func (a rateAgentSpec) slug() string {
	s := slugBad.ReplaceAllString(strings.ToLower(a.spec.Model), "-")
	s = strings.Trim(strings.ReplaceAll(s, "..", "."), ".-_")
	if s == "" {
		s = "model"
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return s + "." + a.harness
}

// name is what the figures name the agent by.
func (a rateAgentSpec) name() string {
	return fmt.Sprintf("model %s (%s harness)", a.spec.Model, a.harness)
}

// levels are the difficulty levels over -k hint-free rollouts: --levels
// as given (over k), or the gate's default levels scaled to k.
func (f *rateFlags) levelConfig() (gate.Config, error) {
	if f.levels == "" {
		return gate.Config{}.ScaleTo(f.k)
	}
	g := gateFlags{levels: f.levels}
	cfg, err := g.config()
	if err != nil {
		return cfg, err
	}
	cfg.HintFree, cfg.Rollouts = f.k, 2*f.k
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("--levels %q are success counts among the -k %d hint-free rollouts: %w", f.levels, f.k, err)
	}
	return cfg, nil
}

// check refuses bad flags before anything is read or written.
func (f *rateFlags) check() ([]rateAgentSpec, gate.Config, error) {
	if len(f.agents) == 0 {
		return nil, gate.Config{}, fmt.Errorf("--agent is required: the model to rate with, URL#MODEL[,HARNESS], e.g. http://127.0.0.1:8000/v1#qwen3-8b,%s", agent.HarnessName)
	}
	if f.k < 1 {
		return nil, gate.Config{}, fmt.Errorf("-k %d: give the hint-free rollouts per task (as many hinted ones run), 1 or more; the gate uses 3", f.k)
	}
	if f.parallel < 1 {
		return nil, gate.Config{}, fmt.Errorf("--parallel %d: give the rollouts at a time, 1 or more", f.parallel)
	}
	if err := f.models.check(); err != nil {
		return nil, gate.Config{}, err
	}
	if f.split != "" && f.split != pool.SplitSFT && f.split != pool.SplitRL && f.split != pool.SplitVal {
		return nil, gate.Config{}, fmt.Errorf("--split %q: choose %s, %s or %s (or leave it out for every task)", f.split, pool.SplitSFT, pool.SplitRL, pool.SplitVal)
	}
	var out []rateAgentSpec
	seen := map[string]string{}
	for _, s := range f.agents {
		a, err := parseRateAgent(s)
		if err != nil {
			return nil, gate.Config{}, err
		}
		if prev, dup := seen[a.slug()]; dup {
			return nil, gate.Config{}, fmt.Errorf("--agent %q and --agent %q are one agent (%s): give each once", prev, s, a.name())
		}
		seen[a.slug()] = s
		out = append(out, a)
	}
	cfg, err := f.levelConfig()
	if err != nil {
		return nil, gate.Config{}, err
	}
	return out, cfg, nil
}

// rateAgent is the pool.RateAgent of a; work holds opencode's files.
func (f *rateFlags) rateAgent(a rateAgentSpec, work string) (pool.RateAgent, error) {
	opts, err := f.models.options("--agent")
	if err != nil {
		return pool.RateAgent{}, err
	}
	client, err := model.New(a.spec, opts)
	if err != nil {
		return pool.RateAgent{}, fmt.Errorf("--agent %q: %w", a.raw, err)
	}
	h := f.h
	h.Model, h.ModelName = client, a.spec.Model
	ra := pool.RateAgent{Name: a.name(), Slug: a.slug(), Endpoint: a.spec.BaseURL,
		Config: fmt.Sprintf("agent=%s harness=%s max_turns=%d wall=%s context_tokens=%d max_tokens=%d", a.spec, a.harness, h.MaxTurns, h.WallTime, h.ContextTokens, h.MaxTokens)}
	switch a.harness {
	case agent.HarnessName:
		ra.Policy = func() rollout.Policy {
			hh := h // a harness of its own per rollout
			return policy.Model{Harness: &hh}
		}
	case external.HarnessName:
		bin, err := external.FindOpencode()
		if err != nil {
			return pool.RateAgent{}, fmt.Errorf("--agent %q: %w", a.raw, err)
		}
		var n atomic.Int64
		ra.Policy = func() rollout.Policy {
			return &policy.Opencode{Harness: external.Opencode{Bin: bin}, ModelBaseURL: a.spec.BaseURL, Model: a.spec.Model, APIKey: a.spec.APIKey,
				ContextTokens: h.ContextTokens, OutputTokens: h.MaxTokens, WallTime: h.WallTime, MaxTurns: h.MaxTurns,
				WorkDir: filepath.Join(work, ra.Slug, fmt.Sprintf("r%d", n.Add(1)))}
		}
	}
	return ra, nil
}

func (e *env) poolRateCmd() *cobra.Command {
	f := rateFlags{models: &e.models}
	c := &cobra.Command{
		Use:   "rate --agent URL#MODEL[,HARNESS] [-k 3] [--dir WORLDS]",
		Short: "Re-rate the pool's tasks' difficulty with a model of your own, resumably",
		Long: `Rate the difficulty of every accepted task of the pool (DIR/` + pool.File + `, or only
--split) with an agent: -k hint-free and -k hinted rollouts of it per task, each in a
fresh instance of the task's initial world and scored by the task's verifier. The
level is the hint-free successes' in the difficulty levels: --levels NAME=MIN..MAX
over the -k hint-free rollouts, or by default the gate's (hard [0,1], medium [2,2] of
3) scaled to k: a level of H covers the success rates from MIN/H up to (MAX+1)/H, so
over -k 8 hard is 0..5, medium 6..7 and 8 of 8 too easy (docs/pool.md).

--agent is a model, URL#MODEL, acting through a harness: ,wildawm (the tool loop,
the default) or ,opencode. Repeat --agent to rate with several, one after another;
each has its rating.

Each finished rollout is kept at once under the task's gate/rate/MODEL.HARNESS/, so
an interrupted run continues where it stopped and a rerun with the same agent runs
nothing it has. The pool's index records each agent's rating of each task (level,
successes, k, when) in the task's "ratings", beside the gate's own "difficulty";
wildawm stats tasks prints each agent's figures under its name. A model server that
fails (connection refused, HTTP 5xx, time-outs) is retried (--model-retries, then
rollout.MaxAttempts fresh instances); a rollout that failed so in every attempt
counts for nothing: it is recorded in infra.json and the command stops, saying
which server failed and how to fix it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			agents, levels, err := f.check()
			if err != nil {
				return err
			}
			index := filepath.Join(f.dir, pool.File)
			p, err := pool.LoadPool(index)
			if err != nil {
				return fmt.Errorf("--dir %s: %w", f.dir, err)
			}
			if len(p.Split(f.split)) == 0 {
				return fmt.Errorf("--dir %s: the pool has no task to rate (split %q): build it with wildawm pool run --dir %s", f.dir, f.split, f.dir)
			}
			work := filepath.Join(f.dir, "rate-work")
			var ras []pool.RateAgent
			for _, a := range agents {
				ra, err := f.rateAgent(a, filepath.Join(work, "opencode"))
				if err != nil {
					return err
				}
				ras = append(ras, ra)
			}
			if d := (gate.Config{}).Dropped(levels); f.levels == "" && len(d) > 0 {
				e.progress("rate: with -k %d no success count falls in %s: the levels are %s (give more rollouts, or --levels)", f.k, strings.Join(d, ", "), levels.LevelList())
			}
			src, closeSrc, err := e.openSource(ctx, f.dir)
			if err != nil {
				return fmt.Errorf("--dir %s: %w", f.dir, err)
			}
			defer closeSrc()
			envs, closeEnvs, err := e.rolloutEnvs(ctx, src, f.dir, work, f.fake)
			if err != nil {
				return err
			}
			defer closeEnvs()
			for _, ra := range ras {
				var eta *world.ETA
				r := &pool.Rater{Env: envs.forTask("rate"), Agent: ra, K: f.k, Levels: levels, Split: f.split, Parallel: f.parallel, Clock: e.clock,
					Progress: func(ev pool.RateProgress) {
						if eta == nil {
							eta = world.NewETA(e.clock, ev.Kept)
							e.progress("rate %s: %d tasks x %d rollouts (%d hint-free, %d hinted), levels %s: %d to run, %d kept", ra.Name, ev.Total/(2*f.k), 2*f.k, f.k, f.k, levels.LevelList(), ev.Total-ev.Kept, ev.Kept)
						}
						if ev.Rollout != "" {
							e.progress("rate %s: %d/%d rollouts, %s (task %s %s: V=%d)", ra.Name, ev.Done, ev.Total, eta.String(ev.Done, ev.Total), ev.Task, ev.Rollout, ev.V)
						}
						if rt := ev.Rated; rt != nil {
							e.progress("rated %s: %s (hint-free %d/%d, with hint %d/%d)", ev.Task, rt.Level, rt.HintFree, rt.K, rt.WithHint, rt.K)
						}
					}}
				if _, err := r.Rate(ctx, p, index); err != nil {
					return err
				}
			}
			printRatings(e.stdout, p, ras, f.split)
			e.finished(index+" (each task's \"ratings\"; its rollouts under "+filepath.Join(p.TasksDir, "ID", pool.RateDir)+"/)",
				"wildawm stats tasks --dir "+f.dir+"   # Table 4, each agent's figures under its name",
				"wildawm eval --dir "+f.dir+" --agent URL#MODEL   # evaluate on the val split")
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.dir, "dir", defaultRunDir, "the run whose pool is rated (DIR/"+pool.File+")")
	fl.StringArrayVar(&f.agents, "agent", nil, "the agent: a model, URL#MODEL[,HARNESS] (harness "+agent.HarnessName+", the default, or "+external.HarnessName+"); repeat for several")
	fl.IntVarP(&f.k, "k", "k", gate.DefaultHintFree, "hint-free rollouts per task, and as many hinted ones")
	fl.StringVar(&f.levels, "levels", "", "difficulty levels as NAME=MIN..MAX,... over the -k hint-free successes (default the gate's hard=0..1,medium=2..2 of 3, scaled to -k)")
	fl.StringVar(&f.split, "split", "", "rate only this split's tasks (default every task)")
	fl.IntVar(&f.parallel, "parallel", 1, "rollouts at a time")
	fl.BoolVar(&f.fake, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium) instead of Chromium")
	fl.IntVar(&f.h.MaxTurns, "max-turns", agent.DefaultMaxTurns, "the turn budget of a rollout")
	fl.DurationVar(&f.h.WallTime, "wall", agent.DefaultWallTime, "the wall-time budget of a rollout")
	fl.IntVar(&f.h.ContextTokens, "context-tokens", agent.DefaultContextTokens, "the context budget: past it, older turns are summarised into a new segment")
	fl.IntVar(&f.h.MaxTokens, "max-tokens", agent.DefaultMaxTokens, "the completion budget of a turn")
	return c
}

// printRatings prints each rated task's levels: the gate's and each
// agent's, named.
func printRatings(w io.Writer, p *pool.Pool, ras []pool.RateAgent, split string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "task\tgate (offline ensemble)")
	for _, ra := range ras {
		fmt.Fprintf(&b, "\t%s: level, hint-free, with hint", ra.Name)
	}
	b.WriteString("\n")
	st := &pool.Stats{}
	st.AddRatings(p)
	for _, e := range p.Split(split) {
		fmt.Fprintf(&b, "%s\t%s", e.ID, e.Difficulty)
		for _, ra := range ras {
			cell := "not rated"
			for _, rt := range e.Ratings {
				if rt.Slug == ra.Slug {
					cell = fmt.Sprintf("%s, %d/%d, %d/%d", rt.Level, rt.HintFree, rt.K, rt.WithHint, rt.K)
				}
			}
			fmt.Fprintf(&b, "\t%s", cell)
		}
		b.WriteString("\n")
	}
	for _, a := range st.Rerated {
		var levels []string
		for _, name := range slices.Sorted(maps.Keys(a.Levels)) {
			levels = append(levels, fmt.Sprintf("%s %d", name, a.Levels[name]))
		}
		fmt.Fprintf(&b, "\n%s: %d tasks rated: %s; success without hint %.1f%%, with hint %.1f%%\n", a.Agent, a.Tasks, strings.Join(levels, ", "), 100*a.HintFree, 100*a.WithHint)
	}
	w.Write(b.Bytes())
}
