package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/world"
)

// synOptions are the flags every syn command shares.
type synOptions struct {
	dir      string
	seed     uint64
	noHealth bool
	runDir   string
	backend  string
	model    string
	budget   int
}

func (o *synOptions) flags(c *cobra.Command) {
	c.Flags().StringVar(&o.dir, "dir", defaultRunDir, "the run's directory: personas, plans, deltas, reports, the store, the library and the catalog")
	c.Flags().Uint64Var(&o.seed, "seed", 1, "the seed every procedural stage draws from")
	c.Flags().BoolVar(&o.noHealth, "no-health", false, "skip layer 4 (live health: boot every day as an instance); the reports then say so and the states are not complete")
	c.Flags().StringVar(&o.runDir, "run-dir", "", "where live health boots instances; every directory above it must be searchable by the sandbox uid (default: under the system temporary directory)")
	c.Flags().StringVar(&o.backend, "backend", "procedural", "who runs the persona, plan and implementation stages: procedural (seeded, offline) or llm (an OpenAI-compatible model, --model)")
	c.Flags().StringVar(&o.model, "model", "", "with --backend llm: the endpoint and model, URL#MODEL, e.g. http://127.0.0.1:8000/v1#qwen3-8b (key from WILDAWM_API_KEY or OPENAI_API_KEY; docs/models.md)")
	c.Flags().IntVar(&o.budget, "budget", 0, "with --backend llm: the most model turns one stage may take (0: the default)")
}

// backendOf returns OpenOptions.Backend for the flags: nil for procedural.
func (o *synOptions) backendOf(m *modelFlags) (func(pl *synth.Planner) synth.Backend, error) {
	switch o.backend {
	case "", "procedural":
		if o.model != "" {
			return nil, fmt.Errorf("--model %q is for --backend llm; the procedural backend runs no model", o.model)
		}
		return nil, nil
	case "llm":
		if o.model == "" {
			return nil, fmt.Errorf("--backend llm needs --model URL#MODEL, e.g. http://127.0.0.1:8000/v1#qwen3-8b")
		}
		spec, err := model.ParseSpec(o.model)
		if err != nil {
			return nil, fmt.Errorf("--model: %w", err)
		}
		opts, err := m.options("--model")
		if err != nil {
			return nil, err
		}
		opts.Stage = "--model"
		client, err := model.New(spec, opts)
		if err != nil {
			return nil, err
		}
		catDir := filepath.Join(o.dir, "catalog")
		return func(pl *synth.Planner) synth.Backend {
			return synth.NewLLM(client, pl, synth.LLMOptions{Budget: o.budget, CatalogDir: catDir})
		}, nil
	}
	return nil, fmt.Errorf("--backend %q: use procedural or llm", o.backend)
}

func (e *env) openRun(cmd *cobra.Command, o *synOptions) (*synth.Run, func(), error) {
	runDir := ""
	if !o.noHealth {
		runDir = o.runDir
		if runDir == "" {
			abs, err := filepath.Abs(o.dir)
			if err != nil {
				return nil, nil, err
			}
			runDir = filepath.Join(os.TempDir(), "wildawm-syn-"+world.Hash([]byte(abs)).Short())
		}
	}
	backend, err := o.backendOf(&e.models)
	if err != nil {
		return nil, nil, err
	}
	release := func() {}
	if runDir != "" {
		// Live health's instances go below a root of this process's own:
		// the next start sweeps it if this one is killed.
		if runDir, release, err = e.ownScratch(runDir); err != nil {
			return nil, nil, err
		}
	}
	r, closeRun, err := synth.Open(cmd.Context(), synth.OpenOptions{Dir: o.dir, Seed: o.seed, RunDir: runDir, Backend: backend, Progress: e.progress, UIDs: e.uids})
	if err != nil {
		release()
		return nil, nil, err
	}
	return r, func() { closeRun(); release() }, nil
}

func (e *env) synCmd() *cobra.Command {
	c := &cobra.Command{Use: "syn", Short: "Synthesize personas, day plans, day deltas and whole worlds (procedural by default)"}
	c.AddCommand(e.synPersonaCmd(), e.synDayplanCmd(), e.synDayimplCmd(), e.synWorldCmd(), e.synWorldsCmd(), e.synPrebakeCmd(), e.synTaskCmd(), e.synTasksCmd())
	return c
}

// parseDays reads "8..30" or "12".
func parseDays(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(s, "..")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, fmt.Errorf("--days %q: give a number of days or a range MIN..MAX, e.g. 8..30", s)
	}
	return lo, hi, nil
}

// daysOf spreads persona i's days over lo..hi: an even spread, the same
// for every run.
func daysOf(lo, hi, n int) func(i int) int {
	return func(i int) int {
		if n <= 1 || hi == lo {
			return hi
		}
		return lo + (i*(hi-lo+1)*7/n+i)%(hi-lo+1)
	}
}

func (e *env) synWorldsCmd() *cobra.Command {
	var (
		o        synOptions
		n        int
		days     string
		parallel int
	)
	c := &cobra.Command{
		Use:   "worlds",
		Short: "Grow many personas' worlds: personas through the diversity gate, then every day through the five-layer check",
		Long: `Draw --personas personas (each through the diversity gate, revised at most
twice), give each a number of days from --days, and grow every world day by
day, --parallel personas at a time: plan, implement, and the five-layer
check (lint with the identity check, replay twice, produces, live health,
the reviewer), revising a failed day at most twice. Every artifact is
written under --dir (personas/ID/bible.json, personas/ID/day-NN/{plan,
delta, report, state, done}.json) and every accepted state into the store.
An interrupted run resumes: rerun the same command and finished days are
skipped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lo, hi, err := parseDays(days)
			if err != nil {
				return err
			}
			r, closeRun, err := e.openRun(cmd, &o)
			if err != nil {
				return err
			}
			defer closeRun()
			t0 := time.Now()
			ps, verdicts, err := r.Personas(cmd.Context(), n, daysOf(lo, hi, n), "")
			if err != nil {
				return err
			}
			rejected := 0
			for _, v := range verdicts {
				if !v.OK {
					rejected++
				}
			}
			e.progress("personas: %d accepted, %d drafts rejected by the diversity gate (%s)", len(ps), rejected, time.Since(t0).Round(time.Millisecond))
			r.Progress = e.synProgress()
			if err := r.Worlds(cmd.Context(), ps, parallel); err != nil {
				return err
			}
			if r.Forgotten() > 0 {
				if _, err := r.Store.GC(cmd.Context()); err != nil {
					return err
				}
			}
			e.progress("done in %s", time.Since(t0).Round(time.Second))
			e.finished(fmt.Sprintf("%s (personas/ID/day-NN/ for each day, every state in %s)", o.dir, filepath.Join(o.dir, "store")),
				"wildawm stats worlds --dir "+o.dir+"   # the worlds' statistics",
				"wildawm pool run --dir "+o.dir+" --fake-browser   # tasks, gates and the pool (or syn tasks for the tasks alone)")
			return nil
		},
	}
	o.flags(c)
	c.Flags().IntVar(&n, "personas", 36, "how many personas")
	c.Flags().StringVar(&days, "days", "8..30", "days per persona: N or MIN..MAX")
	c.Flags().IntVar(&parallel, "parallel", 2, "personas grown at once")
	return c
}

func (e *env) synPersonaCmd() *cobra.Command {
	var (
		o    synOptions
		name string
		days int
	)
	c := &cobra.Command{
		Use:   "persona",
		Short: "Draft one more persona through the diversity gate and write its bible",
		Long: `Draft the run's next persona (grounded in the catalog's entities and the
registries' sites and services), judge it with the diversity gate against the
run's accepted personas, revise it at most twice with the gate's reasons, and
write DIR/personas/ID/bible.json. Prints the bible.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.noHealth = true
			r, closeRun, err := e.openRun(cmd, &o)
			if err != nil {
				return err
			}
			defer closeRun()
			p, verdicts, err := r.NextPersona(cmd.Context(), name, days)
			for _, v := range verdicts {
				if !v.OK {
					e.progress("draft %s (revision %d) rejected: %s", v.ID, v.Revision, strings.Join(v.Reasons, "; "))
				}
			}
			if err != nil {
				return err
			}
			e.progress("persona %s accepted: %s", p.ID, filepath.Join(o.dir, "personas", p.ID, "bible.json"))
			return writeJSON(e.stdout, p)
		},
	}
	o.flags(c)
	c.Flags().StringVar(&name, "name", "", "the persona's full name (drawn when empty)")
	c.Flags().IntVar(&days, "days", 12, "how many days the persona's world runs")
	return c
}

func (e *env) synDayCmd(use, short string, run func(cmd *cobra.Command, r *synth.Run, p *persona.Persona, day int) error) *cobra.Command {
	var (
		o   synOptions
		id  string
		day int
	)
	c := &cobra.Command{
		Use:   use + " --persona ID --day N",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if id == "" {
				return fmt.Errorf("%s: give --persona ID (see %s)", use, filepath.Join(o.dir, "personas"))
			}
			r, closeRun, err := e.openRun(cmd, &o)
			if err != nil {
				return err
			}
			defer closeRun()
			p, err := r.LoadPersona(id)
			if err != nil {
				return err
			}
			if day < 0 || day >= p.Days {
				return fmt.Errorf("--day %d: persona %s has days 0 to %d", day, id, p.Days-1)
			}
			return run(cmd, r, p, day)
		},
	}
	o.flags(c)
	c.Flags().StringVar(&id, "persona", "", "the persona id")
	c.Flags().IntVar(&day, "day", 0, "the day")
	return c
}

func (e *env) synDayplanCmd() *cobra.Command {
	c := e.synDayCmd("dayplan", "Plan one day of a persona's world (the day before must be done) and write its plan.json",
		func(cmd *cobra.Command, r *synth.Run, p *persona.Persona, day int) error {
			plan, err := r.PlanDay(cmd.Context(), p, day)
			if err != nil {
				return err
			}
			return writeJSON(e.stdout, plan)
		})
	return c
}

func (e *env) synDayimplCmd() *cobra.Command {
	return e.synDayCmd("dayimpl", "Implement one day's plan (planned first if it has none) as its delta and write delta.json",
		func(cmd *cobra.Command, r *synth.Run, p *persona.Persona, day int) error {
			d, err := r.ImplementDay(cmd.Context(), p, day)
			if err != nil {
				return err
			}
			b, err := d.Encode()
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(b)
			return err
		})
}

func (e *env) worldValidateCmd() *cobra.Command {
	var asJSON bool
	c := e.synDayCmd("validate", "Run the five-layer world check again on a synthesized day (lint, replay, produces, live health, review)",
		func(cmd *cobra.Command, r *synth.Run, p *persona.Persona, day int) error {
			rep, err := r.ValidateDay(cmd.Context(), p, day)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(e.stdout, rep); err != nil {
					return err
				}
			} else {
				for _, l := range rep.Layers {
					verdict := "ok"
					switch {
					case l.Skipped != "":
						verdict = "skipped: " + l.Skipped
					case !l.OK:
						verdict = "FAILED"
					}
					fmt.Fprintf(e.stdout, "%-8s %s (%.2fs)\n", l.Name, verdict, l.Seconds)
					for _, pr := range l.Problems {
						fmt.Fprintf(e.stdout, "  %s\n", pr)
					}
				}
			}
			if !rep.OK {
				return fmt.Errorf("%s day %d fails the world check", p.ID, day)
			}
			if !rep.Complete {
				return fmt.Errorf("%s day %d: not every layer ran", p.ID, day)
			}
			return nil
		})
	addJSONFlag(c, &asJSON)
	return c
}

// openToDay opens the run for growing persona id to day toDay: the
// persona must have that day, and the identity check reserves every
// persona's names.
func (e *env) openToDay(cmd *cobra.Command, o *synOptions, id string, toDay int) (*synth.Run, *persona.Persona, func(), error) {
	r, closeRun, err := e.openRun(cmd, o)
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := r.LoadPersona(id)
	if err == nil && (toDay < 0 || toDay >= p.Days) {
		err = fmt.Errorf("--to-day %d: persona %s has days 0 to %d", toDay, id, p.Days-1)
	}
	var ps []*persona.Persona
	if err == nil {
		ps, err = r.LoadPersonas()
	}
	if err != nil {
		closeRun()
		return nil, nil, nil, err
	}
	r.SetIdentities(ps)
	r.Progress = e.synProgress()
	return r, p, closeRun, nil
}

func (e *env) synWorldCmd() *cobra.Command {
	var (
		o     synOptions
		id    string
		toDay int
	)
	c := &cobra.Command{
		Use:   "world --persona ID --to-day N",
		Short: "Grow one persona's world from day 0 to day N through the five-layer check (resumes after done days)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, p, closeRun, err := e.openToDay(cmd, &o, id, toDay)
			if err != nil {
				return err
			}
			defer closeRun()
			return r.World(cmd.Context(), p, toDay)
		},
	}
	o.flags(c)
	c.Flags().StringVar(&id, "persona", "", "the persona id")
	c.Flags().IntVar(&toDay, "to-day", 0, "the last day")
	return c
}

func (e *env) synPrebakeCmd() *cobra.Command {
	var (
		o      synOptions
		id     string
		toDay  int
		verify bool
	)
	c := &cobra.Command{
		Use:   "prebake --persona ID --to-day N [--verify-rebake]",
		Short: "Store every state of a persona's world up to day N; with --verify-rebake rebuild them from day 0 and compare the hashes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, p, closeRun, err := e.openToDay(cmd, &o, id, toDay)
			if err != nil {
				return err
			}
			defer closeRun()
			rb, err := r.Prebake(cmd.Context(), p, toDay, verify)
			if err != nil {
				return err
			}
			bad := 0
			for _, x := range rb {
				verdict := "equal"
				if !x.Equal {
					verdict, bad = "DIFFERS", bad+1
				}
				fmt.Fprintf(e.stdout, "day %2d: stored %s, rebuilt %s: %s\n", x.Day, x.Stored.Short(), x.Rebuilt.Short(), verdict)
			}
			if bad > 0 {
				return fmt.Errorf("prebake: %d of %d rebuilt states differ from the stored ones", bad, len(rb))
			}
			return nil
		},
	}
	o.flags(c)
	c.Flags().StringVar(&id, "persona", "", "the persona id")
	c.Flags().IntVar(&toDay, "to-day", 0, "the last day")
	c.Flags().BoolVar(&verify, "verify-rebake", false, "rebuild every state from day 0 with the stored deltas and compare its hash with the stored one")
	return c
}

func (e *env) statsCmd() *cobra.Command {
	c := &cobra.Command{Use: "stats", Short: "Statistics of synthesized worlds and gated tasks"}
	var (
		dir    string
		asJSON bool
	)
	w := &cobra.Command{
		Use:   "worlds",
		Short: "Print the worlds' statistics shaped like the paper's Table 2, with the paper's figures beside them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, closeRun, err := e.openRun(cmd, &synOptions{dir: dir, noHealth: true})
			if err != nil {
				return err
			}
			defer closeRun()
			t, err := r.Stats()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, t)
			}
			_, err = fmt.Fprint(e.stdout, t.Markdown())
			return err
		},
	}
	w.Flags().StringVar(&dir, "dir", defaultRunDir, "the run's directory (syn worlds --dir)")
	addJSONFlag(w, &asJSON)
	c.AddCommand(w, e.statsTasksCmd())
	return c
}

// synProgress reports each day of a worlds run, with the time left at
// the rate of the days grown in this run (resumed ones cost nothing).
func (e *env) synProgress() func(p synth.Progress) {
	var eta *world.ETA
	return func(p synth.Progress) {
		if eta == nil {
			eta = world.NewETA(e.clock, 0)
		}
		verdict := "ok"
		switch {
		case p.Resumed:
			verdict = "done before"
			eta.Skip(1)
		case !p.OK:
			verdict = fmt.Sprintf("FAILED after %d attempts", p.Attempts)
		case p.Attempts > 1:
			verdict = fmt.Sprintf("ok after %d attempts", p.Attempts)
		}
		rate := float64(p.States) / max(p.Elapsed.Seconds(), 1e-9)
		e.progress("%s day %d: %s; %d/%d states, %d failed, %.1f states/s, %s", p.Persona, p.Day, verdict, p.States, p.Total, p.Failed, rate,
			eta.String(int(p.States+p.Failed), int(p.Total)))
	}
}
