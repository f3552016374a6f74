package openenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/task"
)

// session is one WebSocket connection and its current episode.
type session struct {
	srv      *Server
	id       int64
	episodes int
	ep       *episode
}

// episode is one task in a live instance.
type episode struct {
	id    string
	task  Task
	env   Episodes
	inst  *runtime.Instance
	sess  *rollout.Session
	traj  *agent.Trajectory
	hint  bool
	tools []Tool
	// mcpTools are the instance's MCP tools, SERVICE__TOOL.
	mcpTools map[string]bool
	steps    int
	done     bool
	end      string
	reward   *float64
}

// serve runs the session until the client closes or disconnects, the
// session idles out or the server closes; its episode is torn down then.
func (ss *session) serve(conn *websocket.Conn) {
	s := ss.srv
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	// Reading goes on while a step runs, so that pings are answered; it
	// has a context of its own so that a closing server can still say
	// goodbye.
	rctx, stopRead := context.WithCancel(context.Background())
	defer stopRead()
	msgs := make(chan []byte)
	go func() {
		defer cancel()
		for {
			_, b, err := conn.Read(rctx)
			if err != nil {
				return
			}
			select {
			case msgs <- b:
			case <-rctx.Done():
				return
			}
		}
	}()
	defer ss.teardown(ctx)
	idle := time.NewTimer(s.opts.IdleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			ss.teardown(ctx)
			if s.ctx.Err() != nil {
				conn.Close(websocket.StatusGoingAway, "the server is shutting down")
			} else {
				conn.CloseNow()
			}
			return
		case <-idle.C:
			ss.say(conn, reply{Type: TypeError, Data: ErrorData{Code: CodeSession,
				Message: fmt.Sprintf("no message for %v: the session is closed and its instance torn down; connect again and reset", s.opts.IdleTimeout)}})
			ss.teardown(ctx)
			conn.Close(websocket.StatusPolicyViolation, "idle timeout")
			return
		case b := <-msgs:
			idle.Stop()
			r, closing := ss.handle(ctx, b)
			if closing {
				ss.teardown(ctx)
				conn.Close(websocket.StatusNormalClosure, "")
				return
			}
			if ctx.Err() != nil {
				continue // disconnected or shutting down mid-message
			}
			if err := ss.say(conn, r); err != nil {
				s.log.Warn("openenv: write", logSession, ss.id, logErr, err)
				conn.CloseNow()
				return
			}
			idle.Reset(s.opts.IdleTimeout)
		}
	}
}

func (ss *session) say(conn *websocket.Conn, r reply) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return writeReply(ctx, conn, r)
}

// handle answers one message; closing is set for a close message.
func (ss *session) handle(ctx context.Context, b []byte) (r reply, closing bool) {
	if !json.Valid(b) {
		return errReply(&protoError{code: CodeInvalidJSON, msg: "the message is not valid JSON: send one object such as {\"type\": \"reset\", \"data\": {}}"}), false
	}
	if e := duplicateKey(b); e != nil {
		return errReply(e), false
	}
	var m message
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			field := typ.Field
			if field == "" {
				field = "message"
			}
			return errReply(invalid(field, "must be %s, not %s: send {\"type\": \"reset\"|\"step\"|\"state\"|\"close\", \"data\": {...}}", typ.Type, typ.Value)), false
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return errReply(invalid(strings.Trim(name, `"`), "a message has only type and data: move it into data")), false
		}
		return errReply(invalid("message", "%v", err)), false
	}
	var err *protoError
	switch m.Type {
	case TypeReset:
		var d ResetData
		if err = decodeData(m.Data, &d, "reset", false); err == nil {
			return ss.reset(ctx, d)
		}
	case TypeStep:
		var a Action
		if err = decodeData(m.Data, &a, "step", true); err == nil {
			return ss.step(ctx, a)
		}
	case TypeState:
		if err = noData(m.Data, TypeState); err == nil {
			return reply{Type: TypeState, Data: ss.state()}, false
		}
	case TypeClose:
		if err = noData(m.Data, TypeClose); err == nil {
			return reply{}, true
		}
	case "":
		err = &protoError{code: CodeValidation, field: "type", msg: "type: missing: give reset, step, state or close"}
	default:
		err = &protoError{code: CodeUnknownType, field: "type", msg: fmt.Sprintf("type: unknown message type %q: give reset, step, state or close", m.Type)}
	}
	return errReply(err), false
}

func errReply(e *protoError) reply {
	return reply{Type: TypeError, Data: ErrorData{Message: e.msg, Code: e.code, Field: e.field}}
}

// decodeData decodes a message's data strictly into v.
func decodeData(raw json.RawMessage, v any, typ string, required bool) *protoError {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		if required {
			return invalid("data", "a %s message needs data: the action, e.g. {\"tool\": \"shell.run\", \"args\": {\"command\": \"ls\"}}", typ)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			f := "data"
			if te.Field != "" {
				f += "." + te.Field
			}
			return invalid(f, "must be %s, not %s (docs/openenv.md, GET /schema)", te.Type, te.Value)
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return invalid("data."+strings.Trim(name, `"`), "a %s message's data takes no such field: see GET /schema and docs/openenv.md", typ)
		}
		return invalid("data", "%v", err)
	}
	return nil
}

func noData(raw json.RawMessage, typ string) *protoError {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" || t == "{}" {
		return nil
	}
	return invalid("data", "a %s message takes no data: send {\"type\": %q}", typ, typ)
}

func episodeIDOK(id string) bool {
	return len(id) >= 1 && len(id) <= 128 && !strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// reset starts a fresh episode, ending the current one unverified.
func (ss *session) reset(ctx context.Context, d ResetData) (reply, bool) {
	s := ss.srv
	if d.EpisodeID != "" && !episodeIDOK(d.EpisodeID) {
		return errReply(invalid("data.episode_id", "give 1 to 128 printable characters, or omit it for a random id")), false
	}
	t, perr := s.pick(d)
	if perr != nil {
		return errReply(perr), false
	}
	env, err := s.opts.Env(t.Task)
	if err != nil {
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("task %s: no environment: %v", t.Task.ID, err)}), false
	}
	ss.teardown(ctx)
	ctx, cancel := context.WithTimeout(ctx, s.opts.StepTimeout)
	defer cancel()
	id := d.EpisodeID
	if id == "" {
		id = randomID()
	}
	ss.episodes++
	name := fmt.Sprintf("openenv-%d-%d-%s", ss.id, ss.episodes, randomID()[:8])
	inst, err := env.Start(ctx, t.Task.Provenance.Snapshot, name)
	if err != nil {
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("task %s: start its initial world: %v; reset again or pick another task", t.Task.ID, err)}), false
	}
	ep := &episode{id: id, task: t, env: env, inst: inst, hint: d.Hint,
		traj: &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.Task.ID, Rollout: id, Policy: "openenv", Hint: d.Hint, Start: t.Task.Provenance.Snapshot}}
	ep.sess, err = env.Open(ctx, inst, ep.traj)
	if err != nil {
		inst.Close(context.WithoutCancel(ctx))
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("task %s: open a session on its world: %v; reset again", t.Task.ID, err)}), false
	}
	ss.ep = ep
	defs, err := ep.sess.Env.Tools(ctx)
	if err != nil {
		ss.teardown(ctx)
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("task %s: list the tools: %v; reset again", t.Task.ID, err)}), false
	}
	ep.tools = toolsOf(defs)
	ep.mcpTools = map[string]bool{}
	for _, def := range defs {
		if def.Interface == agent.MCP {
			ep.mcpTools[def.Name] = true
		}
	}
	pub := t.Task.Public(d.Hint)
	s.log.Info("openenv episode start", logSession, ss.id, logEpisode, id, logTask, t.Task.ID)
	obs := Observation{Task: &pub, Tools: ep.tools, Checklist: checklist(t.Task), MaxSteps: s.opts.MaxSteps}
	return reply{Type: TypeObservation, Data: Result{Observation: obs, Metadata: ep.metadata()}}, false
}

func (ep *episode) metadata() map[string]any {
	return map[string]any{"episode_id": ep.id, "task_id": ep.task.Task.ID}
}

func checklist(t *task.Task) []Check {
	out := make([]Check, len(t.Verifier.Criteria))
	for i, c := range t.Verifier.Criteria {
		out[i] = Check{ID: c.ID, Description: c.Description}
	}
	return out
}

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// step runs one action.
func (ss *session) step(ctx context.Context, a Action) (reply, bool) {
	s := ss.srv
	ep := ss.ep
	switch {
	case ep == nil:
		return errReply(&protoError{code: CodeSession, msg: "no episode: send reset first ({\"type\": \"reset\", \"data\": {}})"}), false
	case ep.done:
		return errReply(&protoError{code: CodeSession, msg: fmt.Sprintf("episode %s is done (%s): send reset to start another", ep.id, ep.end)}), false
	case a.Tool == "":
		return errReply(invalid("data.tool", "missing: give a tool of the reset observation's tools, a trajectory tool name (shell.run, browser.open, ...) or answer")), false
	}
	if a.Args == nil {
		a.Args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.StepTimeout)
	defer cancel()
	if a.Tool == AnswerTool {
		text, ok := a.Args["text"].(string)
		if _, has := a.Args["text"]; has && !ok {
			return errReply(invalid("data.args.text", "the answer must be a string")), false
		}
		for k := range a.Args {
			if k != "text" {
				return errReply(invalid("data.args."+k, "answer takes only text")), false
			}
		}
		ep.steps++
		obs := Observation{Checklist: checklist(ep.task.Task), Step: ep.steps, MaxSteps: s.opts.MaxSteps, Tool: AnswerTool}
		return ss.finish(ctx, obs, EndAnswer, text)
	}
	run, perr := ep.resolve(a)
	if perr != nil {
		return errReply(perr), false
	}
	before := len(ep.traj.Steps)
	out, err := run(ctx)
	if ctx.Err() != nil || errors.Is(err, agent.ErrInfra) {
		why := err
		if ctx.Err() != nil {
			why = ctx.Err()
		}
		ss.teardown(ctx)
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("the step failed in the harness (%v): the episode is over unverified; send reset", why)}), false
	}
	ep.steps++
	obs := Observation{Checklist: checklist(ep.task.Task), Step: ep.steps, MaxSteps: s.opts.MaxSteps, Tool: a.Tool, Output: out}
	if err != nil {
		obs.Error = err.Error()
	}
	if n := len(ep.traj.Steps); n > before {
		st := ep.traj.Steps[n-1]
		obs.Tool, obs.Interface, obs.Output, obs.Error = st.Tool, st.Interface, st.Observation, st.Error
	}
	if ep.steps >= s.opts.MaxSteps {
		return ss.finish(ctx, obs, EndBudget, "")
	}
	zero := 0.0
	return reply{Type: TypeObservation, Data: Result{Observation: obs, Reward: &zero, Metadata: ep.metadata()}}, false
}

// resolve checks an action's tool and arguments and returns what runs it.
func (ep *episode) resolve(a Action) (func(context.Context) (string, error), *protoError) {
	env := ep.sess.Env
	if spec, ok := stepTools[a.Tool]; ok {
		if err := checkStepArgs(a.Tool, spec, a.Args); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) { return "", env.Do(ctx, a.Tool, a.Args) }, nil
	}
	if name, ok := strings.CutPrefix(a.Tool, "mcp."); ok {
		if !ep.mcpTools[name] {
			return nil, ep.unknown(a.Tool)
		}
		return func(ctx context.Context) (string, error) { return "", env.Do(ctx, a.Tool, a.Args) }, nil
	}
	if !slices.ContainsFunc(ep.tools, func(t Tool) bool { return t.Name == a.Tool }) {
		return nil, ep.unknown(a.Tool)
	}
	args, err := json.Marshal(a.Args)
	if err != nil {
		return nil, invalid("data.args", "cannot be encoded: %v", err)
	}
	return func(ctx context.Context) (string, error) { return env.Call(ctx, a.Tool, string(args)) }, nil
}

func (ep *episode) unknown(tool string) *protoError {
	names := make([]string, 0, len(ep.tools))
	for _, t := range ep.tools {
		names = append(names, t.Name)
	}
	if len(names) > 24 {
		names = append(names[:24], "...")
	}
	return invalid("data.tool", "no tool %q: give one of the reset observation's tools (%s), a trajectory name (%s, mcp.SERVICE__TOOL) or %s",
		tool, strings.Join(names, ", "), strings.Join(sortedKeys(stepTools), ", "), AnswerTool)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// finish ends the episode: it snapshots and verifies the final world and
// returns obs with the verification and the reward.
func (ss *session) finish(ctx context.Context, obs Observation, end, answer string) (reply, bool) {
	ep := ss.ep
	ep.traj.Answer = answer
	ep.sess.Close(ctx)
	ep.sess = nil
	// A final world the agent made unsnapshottable, or an answer over the
	// bound, is a result (Trajectory.Fault; Judge scores it V 0), not an
	// episode over unverified.
	res, err := ep.env.SnapshotFinal(ctx, ep.task.Task, ep.inst.Dir(), ep.traj)
	ep.inst.Close(context.WithoutCancel(ctx))
	ep.inst = nil
	if err != nil {
		ss.ep = nil
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("snapshot the final world: %v: the episode is over unverified; send reset", err)}), false
	}
	vr, err := ep.env.Judge(ctx, ep.task.Task, filepath.Join(ep.task.Dir, "verifier"), res)
	if err != nil {
		ss.ep = nil
		return errReply(&protoError{code: CodeExecution, msg: fmt.Sprintf("verify the final world: %v: the episode is over unverified; send reset", err)}), false
	}
	v := &Verification{V: vr.V, Passed: vr.Passed, Total: vr.Total, ScriptErrors: vr.ScriptErrors}
	checks := make([]bool, len(vr.Criteria))
	for i, c := range vr.Criteria {
		v.Criteria = append(v.Criteria, CheckResult{ID: c.ID, Pass: c.Pass, Errored: c.Error != ""})
		checks[i] = c.Pass
	}
	// The server sees parsed actions only: a format failure is the
	// client's to score (docs/openenv.md).
	r := rl.Reward(false, vr.V == 1, checks)
	ep.done, ep.end, ep.reward = true, end, &r
	obs.EndReason, obs.Verification = end, v
	md := ep.metadata()
	if vr.Fault != "" {
		// Why V is 0 whatever the criteria: the agent's own doing.
		md["fault"] = vr.Fault
	}
	ss.srv.log.Info("openenv episode end", logSession, ss.id, logEpisode, ep.id, logTask, ep.task.Task.ID, "reason", end, "v", vr.V, "reward", r)
	return reply{Type: TypeObservation, Data: Result{Observation: obs, Reward: &r, Done: true, Metadata: md}}, false
}

func (ss *session) state() State {
	st := State{Split: ss.srv.opts.Split, MaxSteps: ss.srv.opts.MaxSteps}
	if ep := ss.ep; ep != nil {
		st.EpisodeID = &ep.id
		st.StepCount, st.TaskID, st.Hint, st.Done, st.EndReason, st.Reward = ep.steps, ep.task.Task.ID, ep.hint, ep.done, ep.end, ep.reward
	}
	return st
}

// teardown ends the current episode's session and instance, if live.
func (ss *session) teardown(ctx context.Context) {
	ep := ss.ep
	if ep == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if ep.sess != nil {
		ep.sess.Close(ctx)
	}
	if ep.inst != nil {
		if err := ep.inst.Close(ctx); err != nil {
			ss.srv.log.Warn("openenv: tear the instance down", logSession, ss.id, logEpisode, ep.id, logErr, err)
		}
		ep.inst = nil
	}
	if !ep.done {
		ss.ep = nil
	}
}
