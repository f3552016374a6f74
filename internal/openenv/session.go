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
	srv *Server
	id  int64
	// key is the session's id on the wire (openenv/session/create).
	key string
	// rpc marks a WebSocket of /mcp: each message a JSON-RPC request.
	rpc      bool
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
			msg := fmt.Sprintf("no message for %v: the session is closed and its instance torn down; connect again and reset", s.opts.IdleTimeout)
			var m any = reply{Type: TypeError, Data: ErrorData{Code: CodeSession, Message: msg}}
			if ss.rpc {
				e := rpcFail(nil, RPCServerError, "%s", msg)
				e.Error.Data = map[string]any{"code": CodeSession}
				m = e
			}
			ss.say(conn, m)
			ss.teardown(ctx)
			conn.Close(websocket.StatusPolicyViolation, "idle timeout")
			return
		case b := <-msgs:
			idle.Stop()
			var r any
			closing := false
			if ss.rpc {
				r = s.rpcMessage(ctx, b, ss)
			} else {
				r, closing = ss.handle(ctx, b)
			}
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

func (ss *session) say(conn *websocket.Conn, r any) error {
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
		if err = decodeReset(m.Data, &d, "data"); err == nil {
			return ss.reset(ctx, d)
		}
	case TypeStep:
		var a Action
		if err = decodeData(m.Data, &a, "step", true); err == nil {
			return ss.action(ctx, a), false
		}
	case TypeMCP:
		return reply{Type: TypeMCP, Data: ss.srv.rpcMessage(ctx, m.Data, ss)}, false
	case TypeState:
		if err = noData(m.Data, TypeState); err == nil {
			return reply{Type: TypeState, Data: ss.state()}, false
		}
	case TypeClose:
		if err = noData(m.Data, TypeClose); err == nil {
			return reply{}, true
		}
	case "":
		err = &protoError{code: CodeValidation, field: "type", msg: "type: missing: give reset, step, state, close or mcp"}
	default:
		err = &protoError{code: CodeUnknownType, field: "type", msg: fmt.Sprintf("type: unknown message type %q: give reset, step, state, close or mcp", m.Type)}
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

// resetKeys are the keys of ResetData.
var resetKeys = []string{"task_id", "seed", "episode_id", "hint"}

// decodeReset decodes a reset's data into d as OpenEnv's server does: the
// keys reset takes are decoded strictly (a mistyped one is an error), and
// every other key is dropped (OpenEnv's _get_valid_kwargs), so that TRL's
// reset(**dataset_columns) reaches the server whatever the dataset's
// columns. The dropped keys go in d.Ignored. field is the data's path.
func decodeReset(raw json.RawMessage, d *ResetData, field string) *protoError {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(t, &all); err != nil {
		return invalid(field, "a reset's data must be a JSON object, e.g. {\"task_id\": \"...\"}")
	}
	known := map[string]json.RawMessage{}
	for k, v := range all {
		if slices.Contains(resetKeys, k) {
			known[k] = v
		} else {
			d.Ignored = append(d.Ignored, k)
		}
	}
	slices.Sort(d.Ignored)
	b, err := json.Marshal(known)
	if err != nil {
		return invalid(field, "%v", err)
	}
	ignored := d.Ignored
	if perr := decodeData(b, d, "reset", false); perr != nil {
		perr.field = strings.Replace(perr.field, "data", field, 1)
		perr.msg = strings.Replace(perr.msg, "data", field, 1)
		return perr
	}
	d.Ignored = ignored
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
	if len(d.Ignored) > 0 {
		s.log.Info("openenv reset: keys dropped", logSession, ss.id, logEpisode, id, logIgnored, d.Ignored)
	}
	obs := Observation{Task: &pub, Tools: ep.tools, Checklist: checklist(t.Task), MaxSteps: s.opts.MaxSteps}
	md := ep.metadata()
	if len(d.Ignored) > 0 {
		md[MetaIgnoredResetKeys] = d.Ignored
	}
	return reply{Type: TypeObservation, Data: Result{Observation: obs, Metadata: md}}, false
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

// action answers a step message: a wildawm action, or OpenEnv's
// list_tools or call_tool.
func (ss *session) action(ctx context.Context, a Action) reply {
	switch a.Type {
	case "":
		switch {
		case a.ToolName != "":
			return errReply(invalid("data.tool_name", "tool_name goes with \"type\": \"call_tool\"; a wildawm action names its tool in tool"))
		case a.Arguments != nil:
			return errReply(invalid("data.arguments", "arguments go with \"type\": \"call_tool\"; a wildawm action takes args"))
		}
		r, perr := ss.step(ctx, a)
		if perr != nil {
			return errReply(perr)
		}
		return reply{Type: TypeObservation, Data: r}
	case ActionListTools:
		if a.Tool != "" || a.Args != nil || a.ToolName != "" || a.Arguments != nil {
			return errReply(invalid("data", "a list_tools action takes no other field: send {\"type\": \"list_tools\"}"))
		}
		tools, perr := ss.listTools()
		if perr != nil {
			return errReply(perr)
		}
		return reply{Type: TypeObservation, Data: listToolsResult{Observation: ListToolsObservation{Tools: tools}, Metadata: ss.ep.metadata()}}
	case ActionCallTool:
		switch {
		case a.Tool != "" || a.Args != nil:
			return errReply(invalid("data.tool", "a call_tool action names its tool in tool_name and its arguments in arguments"))
		case a.ToolName == "":
			return errReply(invalid("data.tool_name", "missing: give a tool of list_tools, or answer"))
		}
		obs, r, perr := ss.callTool(ctx, a.ToolName, a.Arguments)
		if perr != nil {
			return errReply(perr)
		}
		return reply{Type: TypeObservation, Data: callToolResult{Observation: obs, Reward: r.Reward, Done: r.Done, Metadata: r.Metadata}}
	default:
		return errReply(invalid("data.type", "unknown action type %q: give list_tools or call_tool (OpenEnv's MCP actions), or leave it out for a wildawm action {\"tool\", \"args\"}", a.Type))
	}
}

// listToolsResult and callToolResult are the data of the observation
// messages answering list_tools and call_tool, as OpenEnv serializes its
// ListToolsObservation and CallToolObservation.
type listToolsResult struct {
	Observation ListToolsObservation `json:"observation"`
	Reward      *float64             `json:"reward"`
	Done        bool                 `json:"done"`
	Metadata    map[string]any       `json:"metadata,omitempty"`
}

type callToolResult struct {
	Observation CallToolObservation `json:"observation"`
	Reward      *float64            `json:"reward"`
	Done        bool                `json:"done"`
	Metadata    map[string]any      `json:"metadata,omitempty"`
}

// live returns the session's episode, or why there is none to act in.
func (ss *session) live() (*episode, *protoError) {
	ep := ss.ep
	switch {
	case ep == nil:
		return nil, &protoError{code: CodeSession, msg: "no episode: send reset first ({\"type\": \"reset\", \"data\": {}}): the tools depend on the task's world"}
	case ep.done:
		return nil, &protoError{code: CodeSession, msg: fmt.Sprintf("episode %s is done (%s): send reset to start another", ep.id, ep.end)}
	}
	return ep, nil
}

// listTools returns the episode's tools; it is no step.
func (ss *session) listTools() ([]Tool, *protoError) {
	if ss.ep == nil {
		_, perr := ss.live()
		return nil, perr
	}
	return ss.ep.tools, nil
}

// callTool runs a call_tool action: a tool by its model-facing name (or
// answer, or a trajectory name as a step takes it) with its arguments. A tool that is not the episode's, or
// arguments refused before anything ran, are the observation's error
// (OpenEnv's ToolError) and no step; a tool that ran and failed is a
// result with is_error.
func (ss *session) callTool(ctx context.Context, name string, args map[string]any) (CallToolObservation, Result, *protoError) {
	ep, perr := ss.live()
	if perr != nil {
		return CallToolObservation{}, Result{}, perr
	}
	obs := CallToolObservation{ToolName: name, Step: ep.steps, MaxSteps: ss.srv.opts.MaxSteps}
	_, trajectory := stepTools[name]
	if !trajectory && !strings.HasPrefix(name, "mcp.") && !slices.ContainsFunc(ep.tools, func(t Tool) bool { return t.Name == name }) {
		obs.Error = &ToolError{ErrorType: ToolNotFound, Message: ep.unknown(name).msg}
		return obs, Result{Metadata: ep.metadata()}, nil
	}
	r, perr := ss.step(ctx, Action{Tool: name, Args: args})
	if perr != nil {
		if perr.code == CodeValidation {
			kind := ToolInvalidArg
			if perr.field == "data.tool" {
				kind = ToolNotFound
			}
			obs.Error = &ToolError{ErrorType: kind, Message: perr.msg}
			return obs, Result{Metadata: ep.metadata()}, nil
		}
		return CallToolObservation{}, Result{}, perr
	}
	o := r.Observation
	text := o.Output
	if o.Error != "" && text == "" {
		text = o.Error
	}
	obs.Step, obs.Interface, obs.EndReason, obs.Verification = o.Step, o.Interface, o.EndReason, o.Verification
	obs.Result = &CallToolResult{Content: []TextContent{{Type: "text", Text: text}}, Data: text, IsError: o.Error != ""}
	return obs, r, nil
}

// step runs one action.
func (ss *session) step(ctx context.Context, a Action) (Result, *protoError) {
	s := ss.srv
	ep, perr := ss.live()
	if perr != nil {
		return Result{}, perr
	}
	if a.Tool == "" {
		return Result{}, invalid("data.tool", "missing: give a tool of the reset observation's tools, a trajectory tool name (shell.run, browser.open, ...) or answer")
	}
	if a.Args == nil {
		a.Args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.StepTimeout)
	defer cancel()
	if a.Tool == AnswerTool {
		text, ok := a.Args["text"].(string)
		if _, has := a.Args["text"]; has && !ok {
			return Result{}, invalid("data.args.text", "the answer must be a string")
		}
		for k := range a.Args {
			if k != "text" {
				return Result{}, invalid("data.args."+k, "answer takes only text")
			}
		}
		ep.steps++
		obs := Observation{Checklist: checklist(ep.task.Task), Step: ep.steps, MaxSteps: s.opts.MaxSteps, Tool: AnswerTool}
		return ss.finish(ctx, obs, EndAnswer, text)
	}
	run, perr := ep.resolve(a)
	if perr != nil {
		return Result{}, perr
	}
	before := len(ep.traj.Steps)
	out, err := run(ctx)
	if ctx.Err() != nil || errors.Is(err, agent.ErrInfra) {
		why := err
		if ctx.Err() != nil {
			why = ctx.Err()
		}
		ss.teardown(ctx)
		return Result{}, &protoError{code: CodeExecution, msg: fmt.Sprintf("the step failed in the harness (%v): the episode is over unverified; send reset", why)}
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
	return Result{Observation: obs, Reward: &zero, Metadata: ep.metadata()}, nil
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
func (ss *session) finish(ctx context.Context, obs Observation, end, answer string) (Result, *protoError) {
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
		return Result{}, &protoError{code: CodeExecution, msg: fmt.Sprintf("snapshot the final world: %v: the episode is over unverified; send reset", err)}
	}
	vr, err := ep.env.Judge(ctx, ep.task.Task, filepath.Join(ep.task.Dir, "verifier"), res)
	if err != nil {
		ss.ep = nil
		return Result{}, &protoError{code: CodeExecution, msg: fmt.Sprintf("verify the final world: %v: the episode is over unverified; send reset", err)}
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
	return Result{Observation: obs, Reward: &r, Done: true, Metadata: md}, nil
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
