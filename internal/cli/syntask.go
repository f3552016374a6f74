package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// taskFlags are the flags the task-synthesis commands share.
type taskFlags struct {
	check, fakeBrowser             bool
	dir, out, families, embeddings string
	seed                           uint64
	parallel                       int
	// sketchModel and authorModel select the llm backends (URL#MODEL).
	sketchModel, authorModel string
	sketchTurns, authorTries int
	sketchWall               time.Duration
}

func (f *taskFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.dir, "dir", defaultRunDir, "the world-synthesis run the tasks start from (wildawm syn worlds --dir)")
	c.Flags().StringVar(&f.out, "out", "", "where tasks are written, one directory each (default DIR/tasks)")
	c.Flags().StringVar(&f.families, "families", "", "comma-separated task families (default every family: "+strings.Join(familyNames(), ", ")+")")
	c.Flags().Uint64Var(&f.seed, "seed", 1, "the sketches' seed")
	c.Flags().IntVar(&f.parallel, "parallel", 2, "jobs at a time")
	c.Flags().BoolVar(&f.fakeBrowser, "fake-browser", false, "in the live instances (the self-check), drive the websites with the HTTP browser (no Chromium, no script) instead of Chromium")
	c.Flags().StringVar(&f.embeddings, "embeddings", "", "an OpenAI-compatible embeddings endpoint for the diversity gate, URL#MODEL (default the offline hashed embedding)")
	c.Flags().StringVar(&f.sketchModel, "sketch-model", "", "the llm sketch agent instead of the families' sketches: a model, URL#MODEL, explores a live instance of each state and proposes up to 4 sketches (needs --author-model; the browser as for --check)")
	c.Flags().StringVar(&f.authorModel, "author-model", "", "the llm author instead of the families' Author: a model, URL#MODEL, writes each kept sketch's seven artifacts with submit_task")
	c.Flags().IntVar(&f.sketchTurns, "sketch-turns", 0, "with --sketch-model, a session's model turns (default 40)")
	c.Flags().DurationVar(&f.sketchWall, "sketch-wall", 0, "with --sketch-model, a session's wall time (default 10m)")
	c.Flags().IntVar(&f.authorTries, "author-tries", 0, "with --author-model, the submit_task calls a task may take (default 3)")
}

// registerCheck adds --check, for the commands where the self-check is a
// choice (pool run always runs it).
func (f *taskFlags) registerCheck(c *cobra.Command) {
	c.Flags().BoolVar(&f.check, "check", false, "self-check every task on live instances: V(W0) = 0, the answer alone fails, the reference completion passes V (in Chromium); a task that fails is removed (an earlier run's task, with its evidence, is kept under OUT/"+taskgen.VersionsDir+")")
}

func familyNames() []string {
	var out []string
	for _, f := range taskgen.All() {
		out = append(out, f.Name())
	}
	return out
}

func (f *taskFlags) familyList() ([]taskgen.Family, error) {
	if f.families == "" {
		return taskgen.All(), nil
	}
	if f.sketchModel != "" {
		return nil, fmt.Errorf("--families picks the procedural families' sketches; the llm sketch agent (--sketch-model) is family-free: give one")
	}
	var out []taskgen.Family
	for _, name := range strings.Split(f.families, ",") {
		fam, err := taskgen.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("--families: %w", err)
		}
		out = append(out, fam)
	}
	return out, nil
}

// openTaskSynth opens the source run and a synthesis into the output
// directory, with the tasks of an earlier run counted as accepted; with
// --check (or the sketch agent) also the run's rollout environments, nil
// without.
func (e *env) openTaskSynth(cmd *cobra.Command, f *taskFlags) (*taskgen.Synth, *rolloutEnvs, func(), error) {
	if f.sketchModel != "" && f.authorModel == "" {
		return nil, nil, nil, fmt.Errorf("--sketch-model needs --author-model: the sketch agent's sketches are family-free, and no family authors them")
	}
	if f.out == "" {
		f.out = filepath.Join(f.dir, "tasks")
	}
	src, closeSrc, err := e.openSource(cmd.Context(), f.dir)
	if err != nil {
		return nil, nil, nil, err
	}
	s := &taskgen.Synth{Source: src, Out: f.out, Diversity: &taskgen.Diversity{}}
	if f.embeddings != "" {
		_, c, err := e.modelClient("--embeddings", f.embeddings)
		if err != nil {
			closeSrc()
			return nil, nil, nil, err
		}
		s.Diversity.Embedder = c
	}
	var envs *rolloutEnvs
	if f.check || f.sketchModel != "" {
		var closeLive func()
		envs, closeLive, err = e.rolloutEnvs(cmd.Context(), src, f.dir, filepath.Join(f.dir, "check-work"), f.fakeBrowser)
		if err != nil {
			closeSrc()
			return nil, nil, nil, err
		}
		if f.check {
			s.Check = envs.persona
		}
		if f.sketchModel != "" {
			_, c, err := e.modelClient("--sketch-model", f.sketchModel)
			if err != nil {
				closeLive()
				closeSrc()
				return nil, nil, nil, err
			}
			s.SketchBackend = taskgen.NewLLMSketcher(c, taskgen.LLMSketchOptions{Env: envs.persona, MaxTurns: f.sketchTurns, WallTime: f.sketchWall,
				Dir: filepath.Join(f.dir, "sketch-sessions")})
		}
		closeRun := closeSrc
		closeSrc = func() { closeLive(); closeRun() }
	}
	if f.authorModel != "" {
		_, c, err := e.modelClient("--author-model", f.authorModel)
		if err != nil {
			closeSrc()
			return nil, nil, nil, err
		}
		s.AuthorBackend = taskgen.NewLLMAuthor(c, taskgen.LLMAuthorOptions{Tries: f.authorTries})
	}
	n, err := s.Resume(cmd.Context())
	if err != nil {
		closeSrc()
		return nil, nil, nil, err
	}
	if n > 0 {
		e.progress("resuming: %d tasks already in %s", n, f.out)
	}
	return s, envs, closeSrc, nil
}

// reportTasks prints the tasks written and the summary; its error says how
// many sketches an author's outage left unwritten (a rerun writes them).
func (e *env) reportTasks(rs []*taskgen.Result, start time.Time) error {
	tasks, dropped, sketches, checked, authored, outage, unembedded, unsketched := 0, 0, 0, 0, 0, 0, 0, 0
	for _, r := range rs {
		if r == nil {
			continue
		}
		if r.SketchFailed != "" {
			unsketched++
			e.progress("no sketches of %s day %d: the sketch model failed (a rerun tries again): %s", r.Job.Persona, r.Job.Day, r.SketchFailed)
		}
		sketches += r.Sketches
		tasks += len(r.Tasks)
		dropped += len(r.Dropped)
		for _, p := range r.Rejected {
			if p.Check == nil {
				// The author wrote no valid task for the sketch (or its
				// model failed, which says nothing of the sketch): nothing
				// was self-checked.
				switch {
				case strings.HasPrefix(p.Problem, taskgen.AuthorFailed):
					outage++
				case strings.HasPrefix(p.Problem, taskgen.EmbeddingsFailed):
					unembedded++
				default:
					authored++
				}
				e.progress("rejected before the self-check: %s: %s", p.ID, p.Problem)
				continue
			}
			checked++
			e.progress("rejected by the self-check: %s: %s", p.ID, p.Check.Problem)
		}
		for _, p := range r.Tasks {
			fmt.Fprintf(e.stdout, "%s\t%s\n", p.ID, p.Dir)
		}
	}
	var lost []string
	if outage > 0 {
		lost = append(lost, fmt.Sprintf("%d sketches not written because the author model failed", outage))
	}
	if unsketched > 0 {
		lost = append(lost, fmt.Sprintf("%d sketch sessions lost because the sketch model failed", unsketched))
	}
	if unembedded > 0 {
		lost = append(lost, fmt.Sprintf("%d sketches not gated because the embedding model (--embeddings) failed", unembedded))
	}
	unwritten := ""
	for _, l := range lost {
		unwritten += ", " + l
	}
	e.progress("%d sketches, %d tasks written, %d dropped by the diversity gate, %d without a valid task from the author, %d rejected by the self-check%s, in %v", sketches, tasks, dropped, authored, checked, unwritten, time.Since(start).Round(time.Millisecond))
	if len(lost) > 0 {
		return fmt.Errorf("%s (see above): the %d tasks written are kept; run the same command again to write the rest", strings.Join(lost, " and "), tasks)
	}
	return nil
}

func (e *env) synTaskCmd() *cobra.Command {
	var f taskFlags
	var g gateFlags
	var personaID, difficulty string
	var day int
	c := &cobra.Command{
		Use:   "task --persona ID --day N [--difficulty hard]",
		Short: "Sketch and author the tasks every family finds on one world state",
		Long: `Run each task family (or --families) on one synthesized world state: the family
sketches XAI tasks from the world's own data (GUI, MCP and CLI, a script whose
result decides), each sketch goes through the diversity gate, and each kept one
is authored into a task directory (task.json, verifier/, sketch.json) under
--out. Prints one line per task: ID and directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if personaID == "" {
				return fmt.Errorf("--persona is required: a persona ID of the run (ls %s/personas)", f.dir)
			}
			fams, err := f.familyList()
			if err != nil {
				return err
			}
			if difficulty != "" {
				cfg, err := g.config()
				if err != nil {
					return err
				}
				var names []string
				for _, l := range cfg.WithDefaults().Levels {
					names = append(names, l.Name)
				}
				if !slices.Contains(names, difficulty) {
					return fmt.Errorf("--difficulty %q: the levels are %s (set them with --levels)", difficulty, strings.Join(names, ", "))
				}
				f.check = true
			}
			s, envs, closeSrc, err := e.openTaskSynth(cmd, &f)
			if err != nil {
				return err
			}
			defer closeSrc()
			jobs := s.Jobs(fams, func(st taskgen.State) bool { return st.Persona.ID == personaID && st.Day == day }, f.seed)
			if len(jobs) == 0 {
				return fmt.Errorf("no state %s day %d in %s: the persona's checked days are 0..N-1 (wildawm stats worlds --dir %s)", personaID, day, f.dir, f.dir)
			}
			start := time.Now()
			rs, err := s.Run(cmd.Context(), jobs, f.parallel, nil)
			if err == nil && difficulty != "" {
				err = e.keepDifficulty(cmd, envs, &f, &g, rs, difficulty)
			}
			if rerr := e.reportTasks(rs, start); err == nil {
				err = rerr
			}
			if err == nil {
				e.finished(f.out+" (one directory per task: task.json, verifier/, sketch.json)", "wildawm gate --dir "+f.dir+" --task "+filepath.Join(f.out, "ID")+"   # gate one")
			}
			return err
		},
	}
	f.register(c)
	f.registerCheck(c)
	g.register(c)
	c.Flags().StringVar(&personaID, "persona", "", "the persona's ID")
	c.Flags().IntVar(&day, "day", 0, "the day whose state the tasks start from")
	c.Flags().StringVar(&difficulty, "difficulty", "", "keep only tasks the gates accept at this difficulty level (hard or medium, or a name of --levels): implies --check, and gates every task written (wildawm gate); the others are removed, their gate evidence kept under OUT/"+taskgen.VersionsDir+"")
	return c
}

// keepDifficulty gates every task of rs and keeps those accepted at
// level; the others are removed and reported as rejected.
func (e *env) keepDifficulty(cmd *cobra.Command, envs *rolloutEnvs, f *taskFlags, g *gateFlags, rs []*taskgen.Result, level string) error {
	gt, err := e.gater(envs, f, g)
	if err != nil {
		return err
	}
	for _, r := range rs {
		var keep []taskgen.Produced
		for _, p := range r.Tasks {
			o, err := gt.Do(cmd.Context(), pool.Job{TaskDir: p.Dir, Seed: g.seed})
			if err != nil {
				return err
			}
			if o.Accepted && o.Difficulty == level {
				keep = append(keep, p)
				continue
			}
			why := fmt.Sprintf("gated %s, not accepted at difficulty %s", o.Difficulty, level)
			if !o.Accepted {
				why = fmt.Sprintf("rejected by the gates (%s)", strings.Join(o.Report.FailedGates(), ", "))
			}
			p.Check, p.Problem = nil, why
			// Its gate evidence stays, as a version of the task.
			if _, err := taskgen.KeepVersion(p.Dir, "syn task --difficulty "+level+": "+why); err != nil {
				return err
			}
			if err := os.RemoveAll(p.Dir); err != nil {
				return err
			}
			r.Rejected = append(r.Rejected, p)
		}
		r.Tasks = keep
	}
	return nil
}

func (e *env) synTasksCmd() *cobra.Command {
	var f taskFlags
	var days string
	var count, last int
	c := &cobra.Command{
		Use:   "tasks [--days A..B] [--count K] [--parallel P]",
		Short: "Sketch and author tasks on many world states, many workers at once",
		Long: `Run every task family (or --families) on every synthesized state whose day is in
--days (or each persona's --last N days, default 3), --parallel jobs at a time; one
diversity gate spans all workers, so a duplicate of a task in flight elsewhere is
dropped before anything is written. Stops after --count tasks (0: no limit).
Rerunning resumes: tasks already written count as accepted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fams, err := f.familyList()
			if err != nil {
				return err
			}
			keep, err := dayFilter(days, last)
			if err != nil {
				return err
			}
			s, _, closeSrc, err := e.openTaskSynth(cmd, &f)
			if err != nil {
				return err
			}
			defer closeSrc()
			jobs := s.Jobs(fams, keep, f.seed)
			start := time.Now()
			ctx, cancel := contextWithCancel(cmd)
			defer cancel()
			written := 0
			eta := world.NewETA(e.clock, 0)
			rs, err := s.Run(ctx, jobs, f.parallel, func(done int, r *taskgen.Result) {
				written += len(r.Tasks)
				if done%10 == 0 || done == len(jobs) {
					e.progress("%d/%d jobs, %d tasks, %.1f jobs/s, %s", done, len(jobs), written, float64(done)/time.Since(start).Seconds(), eta.String(done, len(jobs)))
				}
				if count > 0 && written >= count {
					cancel()
				}
			})
			rerr := e.reportTasks(rs, start)
			if count > 0 && written >= count && ctx.Err() != nil {
				err = nil // stopped at --count
			}
			if err == nil {
				err = rerr
			}
			if err == nil {
				e.finished(f.out+" (one directory per task: task.json, verifier/, sketch.json)", "wildawm pool run --dir "+f.dir+" --fake-browser   # self-check and gate them, split the pool")
			}
			return err
		},
	}
	f.register(c)
	f.registerCheck(c)
	c.Flags().StringVar(&days, "days", "", "the days whose states tasks start from, N or MIN..MAX (default each persona's last three)")
	c.Flags().IntVar(&count, "count", 0, "stop after this many tasks (0: no limit)")
	c.Flags().IntVar(&last, "last", 0, "the states of each persona's last N days (default 3; or --days)")
	return c
}

func contextWithCancel(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithCancel(cmd.Context())
}
