package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sft"
	"github.com/wildawm/wildawm/internal/task"
)

func (e *env) sftCmd() *cobra.Command {
	c := &cobra.Command{Use: "sft", Short: "SFT data from the pool's sft split"}
	c.AddCommand(e.sftExportCmd())
	return c
}

// replayTeachers are the scripted teachers --teacher names.
func replayTeachers() []string {
	var out []string
	for _, v := range policy.ReplayVariants() {
		out = append(out, "scripted:replay-"+v.Name)
	}
	return out
}

// sftTeacher is the live teacher a --teacher value names: a replay of the
// reference (scripted:replay-VARIANT, seeded by --seed and the attempt) or
// a model through the wildawm harness (URL#MODEL).
func (e *env) sftTeacher(spec string, seed uint64, h agent.Harness) (sft.Teacher, error) {
	if name, ok := strings.CutPrefix(spec, "scripted:replay-"); ok {
		errs, ok := policy.Variant(name)
		if !ok {
			return nil, fmt.Errorf("--teacher %q: no such replay; choose one of %s, or a model as URL#MODEL", spec, strings.Join(replayTeachers(), ", "))
		}
		return func(t *task.Task, attempt int) (rollout.Policy, error) {
			return policy.NewReplay(name, t, errs, seed+uint64(attempt-1)), nil
		}, nil
	}
	if !strings.Contains(spec, "#") {
		return nil, fmt.Errorf("--teacher %q: give a model as URL#MODEL (e.g. http://127.0.0.1:8000/v1#qwen3-8b) or a script, one of %s", spec, strings.Join(replayTeachers(), ", "))
	}
	sp, client, err := e.modelClient("--teacher", spec)
	if err != nil {
		return nil, err
	}
	h.Model, h.ModelName = client, sp.Model
	return func(*task.Task, int) (rollout.Policy, error) { return policy.Model{Harness: &h}, nil }, nil
}

func (e *env) sftExportCmd() *cobra.Command {
	var (
		dir, out, from, teacher string
		attempts, maxTokens     int
		fakeBrowser, tokenIDs   bool
		seed                    uint64
		h                       agent.Harness
	)
	c := &cobra.Command{
		Use:   "export --dir RUN --out FILE.jsonl [--from gate|live] [--teacher scripted:replay-careful|URL#MODEL]",
		Short: "Write at most one successful teacher trajectory per task of the sft split, as segment samples (JSONL)",
		Long: `Write the SFT data of a pool (DIR/` + pool.File + `): for each task of the sft split at
most one teacher trajectory V passed, cut into segments at compaction, each segment
one JSONL line (docs/sft.md) with the assistant's tokens trainable; a segment longer
than --max-tokens (prompt and response) is dropped.

Every record is what the wildawm harness sends and receives: its system prompt, the
tools it offers (the record's "tools"), the calls in its action space (element
numbers from browser_read, never CSS selectors) and its observations. A model acts
through the harness already; a script's steps are replayed through the harness in a
fresh instance of the task's world (a selector becomes the number browser_read gave
the element) and verified again: only a replay V passes is written.

--from gate (the default) takes the first stored gate rollout V passed
(TASKDIR/gate/outcome.json), a model's before a script's and a hint-free one before a
hinted one. --from live runs --teacher in fresh instances, up to --attempts rollouts
per task until V passes one. A teacher is a model through the wildawm harness
(URL#MODEL; with --token-ids the engine's token ids make exact token samples) or a
script (scripted:replay-VARIANT, the reference completion replayed with that
variant's mistakes), which every record names as a script. The rollouts the export
runs are kept in DIR/sft/rollouts/.

The harness's budgets are the paper's: a 102,400-token context with compaction
(--context-tokens) and 256 turns (--max-turns); give smaller ones by flag.

A summary goes to stderr: tasks, tasks with a teacher trajectory, segments written and
dropped for length, tasks without a success.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch {
			case out == "":
				return fmt.Errorf("--out is required: the JSONL file to write, e.g. --out sft.jsonl")
			case from != sft.SourceGate && from != sft.SourceLive:
				return fmt.Errorf("--from %q: choose %s (the gates' stored rollouts) or %s (new teacher rollouts, with --teacher)", from, sft.SourceGate, sft.SourceLive)
			case from == sft.SourceGate && teacher != "":
				return fmt.Errorf("--teacher is for --from live: with --from gate the stored rollouts name their own teachers; drop --teacher or add --from live")
			case from == sft.SourceLive && teacher == "":
				return fmt.Errorf("--from live needs --teacher: a model as URL#MODEL or a script, one of %s", strings.Join(replayTeachers(), ", "))
			case attempts < 1:
				return fmt.Errorf("--attempts %d: give at least 1 (the live rollouts per task until one passes V)", attempts)
			case maxTokens < 1:
				return fmt.Errorf("--max-tokens %d: give a positive limit (default %d, the paper's context)", maxTokens, sft.DefaultMaxTokens)
			case h.ContextTokens < 1:
				return fmt.Errorf("--context-tokens %d: give a positive budget (default %d, the paper's context)", h.ContextTokens, sft.DefaultContextTokens)
			case h.MaxTurns < 1:
				return fmt.Errorf("--max-turns %d: give a positive budget (default %d, the paper's)", h.MaxTurns, sft.DefaultMaxTurns)
			case h.MaxTokens < 1 || h.ContextTokens <= 2*h.MaxTokens:
				return fmt.Errorf("--context-tokens %d must be more than twice --completion-tokens %d (a positive budget): the context holds the task, some turns and the completion", h.ContextTokens, h.MaxTokens)
			}
			p, err := pool.LoadPool(filepath.Join(dir, pool.File))
			if err != nil {
				return err
			}
			x := &sft.Exporter{Pool: p, Source: from, Attempts: attempts, MaxTokens: maxTokens, ContextTokens: h.ContextTokens, MaxTurns: h.MaxTurns, CompletionTokens: h.MaxTokens,
				TrajectoryDir: filepath.Join(dir, "sft", "rollouts"), Progress: e.progress, Clock: e.clock}
			if from == sft.SourceLive {
				h.TokenIDs = tokenIDs
				if x.Teacher, err = e.sftTeacher(teacher, seed, h); err != nil {
					return err
				}
			}
			// Both sources run rollouts: a live teacher's, and every
			// script's replay through the harness.
			src, closeSrc, err := e.openSource(ctx, dir)
			if err != nil {
				return err
			}
			defer closeSrc()
			envs, closeEnv, err := e.rolloutEnvs(ctx, src, dir, filepath.Join(dir, "check-work"), fakeBrowser)
			if err != nil {
				return err
			}
			defer closeEnv()
			x.Env = func(t *task.Task) (sft.Rollouts, error) { return envs.task(t, "export") }
			start := time.Now()
			sum, err := x.Export(ctx, out)
			if err != nil {
				return err
			}
			e.progress("%s in %v", sum, time.Since(start).Round(time.Millisecond))
			fmt.Fprintf(e.stdout, "wrote %s: %d segments of %d tasks\n", out, sum.Segments, sum.WithTeacher)
			e.finished(out+" (one segment sample a line, docs/sft.md)", "train on it with your SFT trainer; wildawm rl serve --dir "+dir+" serves the rl split to an RL trainer")
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&dir, "dir", defaultRunDir, "the world-synthesis run whose pool is exported (DIR/"+pool.File+")")
	f.StringVar(&out, "out", "", "the JSONL file to write (atomically)")
	f.StringVar(&from, "from", sft.SourceGate, "where the teacher trajectories come from: gate (stored gate rollouts) or live (new rollouts of --teacher)")
	f.StringVar(&teacher, "teacher", "", "with --from live, the teacher: a model URL#MODEL through the wildawm harness, or "+strings.Join(replayTeachers(), ", "))
	f.IntVar(&attempts, "attempts", 3, "with --from live, the rollouts per task until V passes one")
	f.IntVar(&maxTokens, "max-tokens", sft.DefaultMaxTokens, "the segment limit in tokens (prompt and response): longer segments are dropped")
	f.BoolVar(&fakeBrowser, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium)")
	f.Uint64Var(&seed, "seed", 1, "with a scripted teacher, the replay's error-model seed (attempt N uses seed+N-1)")
	f.BoolVar(&tokenIDs, "token-ids", true, "with a model teacher, ask the engine for token ids (vLLM, SGLang) to write exact token samples")
	f.IntVar(&h.MaxTurns, "max-turns", sft.DefaultMaxTurns, "the harness's turn budget (a model teacher's, a script's replay)")
	f.DurationVar(&h.WallTime, "wall", agent.DefaultWallTime, "with a model teacher, the wall-time budget of a rollout")
	f.IntVar(&h.ContextTokens, "context-tokens", sft.DefaultContextTokens, "the harness's context budget (a model teacher's, a script's replay): past it the harness compacts into a new segment")
	f.IntVar(&h.MaxTokens, "completion-tokens", agent.DefaultMaxTokens, "the harness's completion budget of a turn (a model teacher's; a script's replay reserves it before compacting)")
	return c
}
