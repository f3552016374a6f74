package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/task"
)

// Opencode is the policy of a model acting through the opencode CLI
// (internal/agent/external): the rollout's tools (browser, shell, files,
// vision and every MCP service, SERVICE__TOOL) are served to it as one MCP
// server, the gateway, so each call is the same step of the same
// trajectory as the wildawm harness's; opencode's transcript gives the
// model's turns and the answer.
type Opencode struct {
	// Harness is the CLI; its zero value finds the binary.
	Harness external.Opencode
	// ModelBaseURL, Model and APIKey are the OpenAI-compatible endpoint.
	ModelBaseURL, Model, APIKey string
	// ContextTokens and OutputTokens bound the model (docs/external-harness.md).
	ContextTokens, OutputTokens int
	// WorkDir holds each run's files, in WorkDir/<task>-<n>.
	WorkDir string
	// WallTime bounds a run (default agent.DefaultWallTime); past it, the
	// run is killed and ends as budget.
	WallTime time.Duration
	// MaxTurns bounds the model turns (default agent.DefaultMaxTurns);
	// past it, the run is killed and ends as budget.
	MaxTurns int
	runs     int
}

// Name implements rollout.Policy.
func (o *Opencode) Name() string { return "model:" + o.Model }

// Run implements rollout.Policy.
func (o *Opencode) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	gw, err := agent.NewGateway(ctx, env, true)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("%w: serve the gateway: %v", agent.ErrInfra, err)
	}
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	defer gw.Close() // a call still in flight when opencode is killed ends first
	o.runs++
	dir := filepath.Join(o.WorkDir, fmt.Sprintf("%s-%d", t.ID, o.runs))
	for n := o.runs; ; n++ {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			break
		}
		dir = filepath.Join(o.WorkDir, fmt.Sprintf("%s-%d", t.ID, n+1))
	}
	wall := o.WallTime
	if wall == 0 {
		wall = agent.DefaultWallTime
	}
	prompt := t.Instruction
	if t.Hint != "" {
		prompt += "\n\nHint: " + t.Hint
	}
	sites := ""
	for _, name := range slices.Sorted(maps.Keys(env.Sites)) {
		sites += fmt.Sprintf("\n- %s %s", name, env.Sites[name])
	}
	if sites != "" {
		prompt += "\n\nThe websites of this computer (open them with browser_navigate):" + sites
	}
	res, err := o.Harness.Run(ctx, external.Run{Prompt: prompt, ModelBaseURL: o.ModelBaseURL, Model: o.Model, APIKey: o.APIKey,
		ContextTokens: o.ContextTokens, OutputTokens: o.OutputTokens, MCP: map[string]string{agent.GatewayName: "http://" + ln.Addr().String()},
		WorkDir: dir, Timeout: wall, MaxTurns: cmp.Or(o.MaxTurns, agent.DefaultMaxTurns)})
	// No call acts or records after this.
	gw.Close()
	tr := env.Traj
	tr.Harness, tr.Model = external.HarnessName, o.Model
	if res != nil && res.Trajectory != nil {
		tr.Turns = res.Trajectory.Turns
		tr.Segments = res.Trajectory.Segments
		attribute(tr.Steps, gw.Calls(), res.Trajectory.Steps)
	}
	if ierr := gw.Err(); ierr != nil && ctx.Err() == nil {
		return "", ierr
	}
	if err != nil {
		return "", err
	}
	switch out := res.Trajectory; {
	case out.Outcome == agent.OutcomeBudget:
		return "", fmt.Errorf("%w: %s", agent.ErrBudget, out.Error)
	case out.Outcome == agent.OutcomeInfra:
		return "", fmt.Errorf("%w: opencode: %s", agent.ErrInfra, out.Error)
	case out.Outcome != agent.OutcomeDone:
		return "", fmt.Errorf("opencode ended %s: %s", out.Outcome, out.Error)
	}
	return res.Trajectory.Answer, nil
}

// WallBudget implements rollout.Budgeted.
func (o *Opencode) WallBudget() time.Duration {
	if o.WallTime > 0 {
		return o.WallTime
	}
	return agent.DefaultWallTime
}

// attribute gives the gateway's steps the turn and call id of opencode's
// call that made them: the gateway served the calls one at a time, in the
// order of opencode's transcript. When the two sequences differ (a call
// cut off by a kill), no step is attributed.
func attribute(steps []agent.Step, calls []agent.GatewayCall, ext []agent.Step) {
	if len(calls) != len(ext) {
		return
	}
	for i, c := range calls {
		if c.End > c.First && steps[c.First].Tool != ext[i].Tool {
			return
		}
	}
	for i, c := range calls {
		for j := c.First; j < c.End; j++ {
			steps[j].Turn, steps[j].CallID = ext[i].Turn, ext[i].CallID
		}
	}
}
