package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// scriptedPolicies are the scripted policies `rollout --policy` names.
func scriptedPolicies() map[string]func(t *task.Task, seed uint64) rollout.Policy {
	out := map[string]func(t *task.Task, seed uint64) rollout.Policy{
		"oracle":        func(*task.Task, uint64) rollout.Policy { return policy.Oracle() },
		"image-blind":   func(*task.Task, uint64) rollout.Policy { return policy.ImageBlind() },
		"shell-only":    func(*task.Task, uint64) rollout.Policy { return policy.ShellOnly() },
		"skip-approval": func(*task.Task, uint64) rollout.Policy { return policy.ApprovalSkipper() },
		"stops-early":   func(*task.Task, uint64) rollout.Policy { return policy.Quitter() },
	}
	for _, v := range policy.ReplayVariants() {
		out["replay-"+v.Name] = func(t *task.Task, seed uint64) rollout.Policy {
			return policy.NewReplay(v.Name, t, v.Errors, seed)
		}
	}
	return out
}

func (e *env) rolloutCmd() *cobra.Command {
	var (
		dir, modelSpec, name, id, weights string
		visionSpec, harness               string
		hint, tokenIDs                    bool
		seed                              uint64
		h                                 agent.Harness
	)
	c := &cobra.Command{
		Use:   "rollout [--model URL#MODEL | --policy NAME]",
		Short: "Run one rollout of the case-study task: a model through the harness, or a scripted policy",
		Long: `Build (or reuse) the case-study world and task under --dir, as the demo does, run
one rollout in a fresh instance, verify it and write its trajectory to
DIR/rollouts/ID.json (screenshots in DIR/rollouts/artifacts/ID/).

With --model, a model served by an OpenAI-compatible endpoint (vLLM, SGLang,
llama.cpp, a hosted API) acts through the wildawm harness: browser, MCP, shell,
file and vision tools, with the turn, time and context budgets below
(docs/harness.md). --model is URL#MODEL, with an optional engine prefix for the
token-id fields: sglang+http://127.0.0.1:30000/v1#qwen3-8b; the API key comes
from WILDAWM_API_KEY or OPENAI_API_KEY.

Without --model, --policy picks a scripted policy (never a model): the case
study's oracle and its variants, or replay-VARIANT, the reference completion
replayed with a seeded error model (` + strings.Join(slices.Sorted(maps.Keys(scriptedPolicies())), ", ") + `).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if id != "" {
				// The id names DIR/rollouts/ID.json and its artifacts.
				if err := world.CheckName("", "--id", id); err != nil {
					return err
				}
			}
			var pol rollout.Policy
			var makePolicy func(*task.Task, uint64) rollout.Policy
			switch {
			case modelSpec != "" && name != "":
				return fmt.Errorf("--model and --policy: give one (a model acts, or a script does)")
			case modelSpec != "":
				spec, client, err := e.modelClient("--model", modelSpec)
				if err != nil {
					return err
				}
				h.Model, h.ModelName, h.TokenIDs, h.WeightVersion = client, spec.Model, tokenIDs, weights
				switch harness {
				case agent.HarnessName:
					pol = policy.Model{Harness: &h}
				case external.HarnessName:
					if tokenIDs {
						// opencode's requests are its own: it asks for no
						// token ids, so none could be recorded.
						return fmt.Errorf("--token-ids with --harness opencode: opencode asks the server for no token ids; record them with --harness %s", agent.HarnessName)
					}
					bin, err := external.FindOpencode()
					if err != nil {
						return fmt.Errorf("--harness opencode: %w", err)
					}
					pol = &policy.Opencode{Harness: external.Opencode{Bin: bin}, ModelBaseURL: spec.BaseURL, Model: spec.Model, APIKey: spec.APIKey,
						ContextTokens: h.ContextTokens, OutputTokens: h.MaxTokens, WorkDir: filepath.Join(dir, "rollouts", "opencode"), WallTime: h.WallTime, MaxTurns: h.MaxTurns}
				default:
					return fmt.Errorf("--harness %q: choose %s (the wildawm tool loop) or %s (the opencode CLI, docs/external-harness.md)", harness, agent.HarnessName, external.HarnessName)
				}
			default:
				if name == "" {
					name = "replay-oracle"
				}
				makePolicy = scriptedPolicies()[name]
				if makePolicy == nil {
					return fmt.Errorf("--policy %q: no such scripted policy; choose one of %s", name, strings.Join(slices.Sorted(maps.Keys(scriptedPolicies())), ", "))
				}
			}
			if err := e.ensureDeps(ctx, true); err != nil {
				return err
			}
			cs, done, err := e.caseStudy(ctx, dir, false)
			if err != nil {
				return err
			}
			defer done()
			if makePolicy != nil {
				pol = makePolicy(cs.task, seed)
			}
			if visionSpec != "" {
				_, vc, err := e.modelClient("--vision-model", visionSpec)
				if err != nil {
					return err
				}
				cs.env.Vision = agent.ModelVision(vc)
			}
			cs.env.Artifacts = filepath.Join(dir, "rollouts", "artifacts")
			if id == "" {
				id = "r-" + strings.NewReplacer(":", "-", "/", "-").Replace(pol.Name())
			}
			e.progress("rollout %s: %s on task %s (hint %t)", id, pol.Name(), cs.task.ID, hint)
			res, err := cs.env.Run(ctx, cs.task, rollout.Spec{ID: id, Policy: pol, Hint: hint})
			if err != nil {
				return err
			}
			tr := res.Trajectory
			passed, score := false, ""
			if tr.Countable() {
				v, err := cs.env.Judge(ctx, cs.task, cs.verifierDir(), res)
				if err != nil {
					return fmt.Errorf("verify: %w", err)
				}
				passed, score = v.V == 1, fmt.Sprintf(" (%d of %d criteria)", v.Passed, v.Total)
			}
			tr.Classify(passed)
			path := filepath.Join(dir, "rollouts", id+".json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := tr.Save(path); err != nil {
				return err
			}
			verdict := "FAILED"
			if passed {
				verdict = "PASSED"
			}
			fmt.Fprintf(e.stdout, "rollout %s: %s, outcome %s, %d steps over %v, %d model turns, %d segments; V %s%s", id, pol.Name(), tr.Outcome,
				len(tr.Steps), tr.InterfacesUsed(), len(tr.Turns), len(tr.Segments), verdict, score)
			if tr.Failure != "" {
				fmt.Fprintf(e.stdout, " (failure: %s)", tr.Failure)
			}
			fmt.Fprintf(e.stdout, "\ntrajectory: %s\n", path)
			if tr.Error != "" {
				fmt.Fprintf(e.stdout, "error: %s\n", tr.Error)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&dir, "dir", "wildawm-demo", "the case study's directory (built on first use, as the demo builds it)")
	f.StringVar(&modelSpec, "model", "", "the model that acts, URL#MODEL (e.g. http://127.0.0.1:8000/v1#qwen3-8b)")
	f.StringVar(&name, "policy", "", "a scripted policy instead of a model (default replay-oracle)")
	f.StringVar(&id, "id", "", "the rollout's id (default from the policy)")
	f.BoolVar(&hint, "hint", false, "show the task's hint")
	f.Uint64Var(&seed, "seed", 1, "the replay's error-model seed")
	f.IntVar(&h.MaxTurns, "max-turns", agent.DefaultMaxTurns, "the turn budget")
	f.DurationVar(&h.WallTime, "wall", agent.DefaultWallTime, "the wall-time budget")
	f.IntVar(&h.ContextTokens, "context-tokens", agent.DefaultContextTokens, "the context budget: past it, older turns are summarised into a new segment")
	f.IntVar(&h.MaxTokens, "max-tokens", agent.DefaultMaxTokens, "the completion budget of a turn")
	f.BoolVar(&tokenIDs, "token-ids", false, "ask the engine for token ids and logprobs (vLLM, SGLang) and record them")
	f.StringVar(&harness, "harness", agent.HarnessName, "with --model, the harness the model acts through: wildawm, or opencode (the CLI, through wildawm's MCP gateway)")
	f.StringVar(&visionSpec, "vision-model", "", "a vision model for describe_image, URL#MODEL (default: the offline analyser of the pixels)")
	f.StringVar(&weights, "weight-version", "", "the policy's weight version to record when the server does not say")
	return c
}

// modelClient is the client of the URL#MODEL a flag gives, with
// --model-timeout (the flag's stage's), --model-retries and
// --model-backoff.
func (e *env) modelClient(flag, spec string) (model.Spec, *model.Client, error) {
	sp, err := model.ParseSpec(spec)
	if err != nil {
		return model.Spec{}, nil, fmt.Errorf("%s: %w", flag, err)
	}
	opts, err := e.models.options(flag)
	if err != nil {
		return model.Spec{}, nil, err
	}
	opts.Stage = flag
	c, err := model.New(sp, opts)
	if err != nil {
		return model.Spec{}, nil, fmt.Errorf("%s: %w", flag, err)
	}
	return sp, c, nil
}
