package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
)

func (e *env) benchHarnessCmd() *cobra.Command {
	var dir string
	var steps, rollouts, parallel int
	c := &cobra.Command{
		Use:   "harness",
		Short: "Harness overhead per step by interface, and scripted rollouts per hour",
		Long: `On the case study's world (built under --dir as the demo builds it), in one live
instance with one Chromium tab:

- per interface, the p50 of a tool call through the harness (agent.Env.Call: the
  model's name and JSON arguments checked, the call made, the step recorded)
  beside the same call made directly (the browser's Snapshot, the MCP client's
  CallTool, the instance's sandboxed Shell, the home's file read), side by side,
  interleaved, --steps each;
- a model turn through the harness loop against a local fake OpenAI-compatible
  server, beside the same request sent by the model client alone;
- --rollouts scripted rollouts (the reference completion replayed, verified by
  V) in fresh instances, --parallel at a time: rollouts per hour.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := e.ensureDeps(ctx, true); err != nil {
				return err
			}
			cs, done, err := e.caseStudy(ctx, dir, false)
			if err != nil {
				return err
			}
			defer done()
			if err := e.benchSteps(ctx, cs, steps); err != nil {
				return err
			}
			if err := e.benchTurns(ctx, steps); err != nil {
				return err
			}
			return e.benchRollouts(ctx, cs, rollouts, parallel)
		},
	}
	c.Flags().StringVar(&dir, "dir", "wildawm-demo", "the case study's directory")
	c.Flags().IntVar(&steps, "steps", 200, "calls per interface and path")
	c.Flags().IntVar(&rollouts, "rollouts", 8, "scripted rollouts to time")
	c.Flags().IntVar(&parallel, "parallel", 2, "rollouts at a time")
	return c
}

// pair times a harness call and a direct call, interleaved, n times each.
type pair struct {
	name              string
	harness, direct   func() error
	harnessT, directT []time.Duration
}

func (pr *pair) run(n int) error {
	for i := range n {
		order := []func() error{pr.harness, pr.direct}
		if i%2 == 1 {
			order = []func() error{pr.direct, pr.harness}
		}
		for j, fn := range order {
			start := time.Now()
			if err := fn(); err != nil {
				return fmt.Errorf("%s: %w", pr.name, err)
			}
			d := time.Since(start)
			if (j == 0) == (i%2 == 0) {
				pr.harnessT = append(pr.harnessT, d)
			} else {
				pr.directT = append(pr.directT, d)
			}
		}
	}
	return nil
}

func (e *env) printPair(pr *pair) {
	h, d := p50(pr.harnessT), p50(pr.directT)
	fmt.Fprintf(e.stdout, "%-34s harness p50 %10v   direct p50 %10v   overhead %9v (%.2fx)\n", pr.name, h.Round(time.Microsecond), d.Round(time.Microsecond),
		(h - d).Round(time.Microsecond), float64(h)/float64(d))
}

func (e *env) benchSteps(ctx context.Context, study *caseStudy, n int) error {
	inst, err := study.env.Start(ctx, study.w0(), "bench-harness")
	if err != nil {
		return err
	}
	defer inst.Close(context.WithoutCancel(ctx))
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion}
	sess, err := study.env.Open(ctx, inst, traj)
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	env := sess.Env
	if err := env.Open(ctx, "/"); err != nil {
		return err
	}
	b := sess.Browser()
	cs := env.MCP["messages"]
	files := env.Files
	fmt.Fprintf(e.stdout, "harness overhead per step (%d calls each, interleaved; one instance, one Chromium tab)\n", n)
	pairs := []*pair{
		{name: "gui  browser_read (page snapshot)", harness: func() error { _, err := env.Call(ctx, "browser_read", `{}`); return err },
			direct: func() error { _, err := b.Snapshot(ctx); return err }},
		{name: "mcp  messages__list_threads", harness: func() error { _, err := env.Call(ctx, "messages__list_threads", `{"limit":5}`); return err },
			direct: func() error {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_threads", Arguments: map[string]any{"limit": 5}})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error")
				}
				return err
			}},
		{name: "cli  shell echo", harness: func() error { _, err := env.Call(ctx, "shell", `{"command":"echo hi"}`); return err },
			direct: func() error { _, err := inst.Shell(ctx, "echo hi"); return err }},
		{name: "file read_file notes/logins.md", harness: func() error { _, err := env.Call(ctx, "read_file", `{"path":"notes/logins.md"}`); return err },
			direct: func() error { _, err := files.ReadFile(ctx, "notes/logins.md"); return err }},
	}
	for _, pr := range pairs {
		// Warm up, then measure; keep the trajectory from growing without end.
		if err := pr.run(5); err != nil {
			return err
		}
		pr.harnessT, pr.directT = nil, nil
		if err := pr.run(n); err != nil {
			return err
		}
		traj.Steps = traj.Steps[:0]
		e.printPair(pr)
	}
	return nil
}

// benchTurns times a harness turn against a direct request on a local fake
// server that always asks for one cheap tool call.
func (e *env) benchTurns(ctx context.Context, n int) error {
	srv := fake.NewResponder(nil, func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"x"}`}}, Usage: model.Usage{PromptTokens: 100, CompletionTokens: 10}}
	})
	defer srv.Close()
	client, err := model.New(srv.Spec(), nil)
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "wildawm-bench-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.WriteFile(filepath.Join(home, "x"), []byte("x\n"), 0o644); err != nil {
		return err
	}
	env := &agent.Env{Traj: &agent.Trajectory{}, Files: agent.HomeFiles{Dir: home, UID: os.Getuid(), GID: os.Getgid()}}
	tools := agent.Builtins()
	mt := make([]model.Tool, len(tools))
	for i, t := range tools {
		mt[i] = model.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: agent.SystemPrompt(nil)}, {Role: model.RoleUser, Content: "task"}}
	// A harness run of exactly one turn each: the turn budget ends it.
	h := &agent.Harness{Model: client, MaxTurns: 1}
	pr := &pair{name: "model turn + read_file (fake server)",
		harness: func() error {
			env.Traj = &agent.Trajectory{}
			_, err := h.Run(ctx, env, "task", "")
			if err != nil && !isBudget(err) {
				return err
			}
			return nil
		},
		direct: func() error { _, err := client.Chat(ctx, model.Request{Messages: msgs, Tools: mt}); return err }}
	if err := pr.run(n); err != nil {
		return err
	}
	e.printPair(pr)
	return nil
}

func isBudget(err error) bool { return err != nil && errors.Is(err, agent.ErrBudget) }

func (e *env) benchRollouts(ctx context.Context, cs *caseStudy, n, parallel int) error {
	var mu sync.Mutex
	passed := 0
	var walls []time.Duration
	start := time.Now()
	careful, _ := policy.Variant("careful")
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i := range n {
		g.Go(func() error {
			spec := rollout.Spec{ID: fmt.Sprintf("bench-%d", i), Policy: policy.NewReplay("careful", cs.task, careful, uint64(i))}
			res, err := cs.env.Run(gctx, cs.task, spec)
			if err != nil {
				return err
			}
			v, err := cs.env.Judge(gctx, cs.task, cs.verifierDir(), res)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			walls = append(walls, res.Wall)
			if v.V == 1 {
				passed++
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	wall := time.Since(start)
	fmt.Fprintf(e.stdout, "scripted rollouts (replay-careful of the case study, fresh instance each, verified by V): %d in %v at %d in parallel = %.0f rollouts/hour; rollout p50 %v; %d passed V\n",
		n, wall.Round(time.Millisecond), parallel, float64(n)/wall.Hours(), p50(walls).Round(time.Millisecond), passed)
	return nil
}
