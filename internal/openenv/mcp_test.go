package openenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wildawm/wildawm/internal/openenv"
)

// OpenEnv's contract, read at meta-pytorch/OpenEnv 685de411:
//   - src/openenv/core/mcp_client.py, MCPClientBase._step_payload: a
//     ListToolsAction is sent as the step data {"type": "list_tools"}, a
//     CallToolAction as {"type": "call_tool", "tool_name", "arguments"};
//     env_client.py EnvClient.step wraps it as {"type": "step", "data"}.
//   - mcp_client.py MCPClientBase._parse_result: an observation with
//     "tools" is a ListToolsObservation, each tool read as name,
//     description and input_schema (or inputSchema); one with "tool_name"
//     is a CallToolObservation whose "error", when set, is ToolError(**e);
//     MCPToolClient.call_tool returns result["data"].
//   - env_server/mcp_types.py: Tool (name, description, input_schema: a
//     dict), ToolError (extra="forbid": error_type, message, error_type
//     one of ToolErrorType), JsonRpcRequest / JsonRpcResponse.
//   - env_server/http_server.py mcp_handler: openenv/session/create,
//     openenv/session/close, tools/list, tools/call with
//     params.session_id; _get_valid_kwargs drops a reset's unknown keys.

// mcpParsed is what MCPClientBase._parse_result makes of a payload.
type mcpParsed struct {
	kind  string // list_tools, call_tool or generic
	tools []openenv.Tool
	obs   map[string]json.RawMessage
}

// parseLikeMCPClient follows MCPClientBase._parse_result and the models it
// builds, failing t where OpenEnv's client would raise.
func parseLikeMCPClient(t *testing.T, payload json.RawMessage) mcpParsed {
	t.Helper()
	var p struct {
		Observation map[string]json.RawMessage `json:"observation"`
		Reward      *float64                   `json:"reward"`
		Done        *bool                      `json:"done"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Observation == nil || p.Done == nil {
		t.Fatalf("payload %s: not {observation, reward, done}", payload)
	}
	if raw, ok := p.Observation["tools"]; ok {
		var tools []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &tools); err != nil {
			t.Fatalf("tools %s: %v", raw, err)
		}
		out := mcpParsed{kind: openenv.ActionListTools, obs: p.Observation}
		for _, tl := range tools {
			var name, desc string
			var schema map[string]any
			// Tool(name=str, description=str, input_schema=Dict[str, Any]).
			if json.Unmarshal(tl["name"], &name) != nil || json.Unmarshal(tl["description"], &desc) != nil || name == "" {
				t.Errorf("tool %v: name and description must be strings", tl)
			}
			s := tl["input_schema"]
			if s == nil {
				s = tl["inputSchema"]
			}
			if json.Unmarshal(s, &schema) != nil || schema == nil || schema["type"] != "object" {
				t.Errorf("tool %s: input_schema %s is not a JSON Schema object (OpenEnv's Tool.input_schema: Dict[str, Any])", name, s)
			}
			out.tools = append(out.tools, openenv.Tool{Name: name, Description: desc, InputSchema: s})
		}
		return out
	}
	if _, ok := p.Observation["tool_name"]; ok {
		if e := p.Observation["error"]; len(e) > 0 && string(e) != "null" {
			checkToolError(t, e)
		}
		return mcpParsed{kind: openenv.ActionCallTool, obs: p.Observation}
	}
	return mcpParsed{kind: "generic", obs: p.Observation}
}

// checkToolError holds e to OpenEnv's ToolError model (extra="forbid").
func checkToolError(t *testing.T, e json.RawMessage) {
	t.Helper()
	var te map[string]any
	if err := json.Unmarshal(e, &te); err != nil {
		t.Fatalf("error %s: ToolError(**error) needs an object", e)
	}
	types := []string{"execution_error", "invalid_args", "transport_error", "tool_not_found", "timeout"}
	msg, _ := te["message"].(string)
	kind, _ := te["error_type"].(string)
	if len(te) != 2 || msg == "" || !slices.Contains(types, kind) {
		t.Errorf("error %s: ToolError takes exactly error_type (one of %v) and message", e, types)
	}
}

func listTools() map[string]any {
	return map[string]any{"type": "step", "data": map[string]any{"type": "list_tools"}}
}

func callTool(name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"type": "step", "data": map[string]any{"type": "call_tool", "tool_name": name, "arguments": args}}
}

// callData returns a call_tool reply's result.data and the observation.
func callData(t *testing.T, c *client, name string, args map[string]any) (string, openenv.CallToolObservation, *float64, bool) {
	t.Helper()
	m := c.call(callTool(name, args))
	if m.Type != openenv.TypeObservation {
		t.Fatalf("call_tool %s: %s %s", name, m.Type, m.Data)
	}
	if p := parseLikeMCPClient(t, m.Data); p.kind != openenv.ActionCallTool {
		t.Fatalf("call_tool %s: parsed as %s: %s", name, p.kind, m.Data)
	}
	var r struct {
		Observation openenv.CallToolObservation `json:"observation"`
		Reward      *float64                    `json:"reward"`
		Done        bool                        `json:"done"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatal(err)
	}
	data := ""
	if r.Observation.Result != nil {
		data = r.Observation.Result.Data
	}
	return data, r.Observation, r.Reward, r.Done
}

// TestMCPToolClientOverWS sends the exact messages OpenEnv's MCPToolClient
// sends over /ws (list_tools and call_tool steps) and a TRL-style reset
// carrying dataset columns; the replies parse as the client parses them,
// and an episode played to its answer through call_tool is verified with
// reward 1.
func TestMCPToolClientOverWS(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	c := dial(t, url)
	tk := f.Tasks["wishlist-balance"]

	// Before a reset there are no tools: the world is not there yet.
	c.error(listTools(), openenv.CodeSession, "")

	// TRL's reset(**row): the row's columns beside the task's are dropped,
	// and the observation says which.
	r, raw := c.result(reset(map[string]any{"task_id": tk.ID, "prompt": []map[string]string{{"role": "user", "content": "go"}}, "ground_truth": 3}))
	if got := r.Metadata[openenv.MetaIgnoredResetKeys]; fmt.Sprint(got) != "[ground_truth prompt]" {
		t.Errorf("reset metadata %v, want the ignored keys [ground_truth prompt]", r.Metadata)
	}
	// MCPToolClient reads a reset observation with tools as a
	// ListToolsObservation: each tool needs its input_schema.
	if p := parseLikeMCPClient(t, raw); p.kind != openenv.ActionListTools || len(p.tools) != len(r.Observation.Tools) {
		t.Fatalf("reset parsed as %s", p.kind)
	}
	// A mistyped key reset takes is still refused.
	c.error(reset(map[string]any{"task_id": tk.ID, "hint": "yes", "extra": 1}), openenv.CodeValidation, "data.hint")

	m := c.call(listTools())
	p := parseLikeMCPClient(t, m.Data)
	if m.Type != openenv.TypeObservation || p.kind != openenv.ActionListTools {
		t.Fatalf("list_tools: %s %s", m.Type, m.Data)
	}
	names := []string{}
	for _, tl := range p.tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"shell", "browser_navigate", openenv.AnswerTool} {
		if !slices.Contains(names, want) {
			t.Errorf("list_tools: no %s in %v", want, names)
		}
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "__") }) {
		t.Errorf("list_tools: no MCP service tool in %v", names)
	}
	if st := c.state(); st.StepCount != 0 {
		t.Errorf("list_tools counted as a step: %+v", st)
	}

	data, obs, reward, done := callData(t, c, "shell", map[string]any{"command": "echo $((6*7))"})
	if !strings.Contains(data, "42") || obs.Error != nil || obs.Result.IsError || obs.Step != 1 || done || reward == nil || *reward != 0 || obs.ToolName != "shell" {
		t.Errorf("call_tool shell: data %q obs %+v", data, obs)
	}
	// A tool that runs and fails is a result with is_error, and a step.
	data, obs, _, _ = callData(t, c, "read_file", map[string]any{"path": "no/such/file"})
	if obs.Error != nil || obs.Result == nil || !obs.Result.IsError || data == "" || obs.Step != 2 {
		t.Errorf("call_tool of a failing read: data %q obs %+v", data, obs)
	}
	// An unknown tool and refused arguments are the observation's
	// ToolError, and no step.
	_, obs, _, _ = callData(t, c, "teleport", nil)
	if obs.Error == nil || obs.Error.ErrorType != openenv.ToolNotFound || obs.Result != nil || obs.Step != 2 {
		t.Errorf("call_tool teleport: %+v", obs)
	}
	_, obs, _, _ = callData(t, c, "shell.run", map[string]any{"command": 7})
	if obs.Error == nil || obs.Error.ErrorType != openenv.ToolInvalidArg || obs.Step != 2 {
		t.Errorf("call_tool shell.run with a number: %+v", obs)
	}
	c.error(map[string]any{"type": "step", "data": map[string]any{"type": "call_tool", "arguments": map[string]any{}}}, openenv.CodeValidation, "data.tool_name")
	c.error(map[string]any{"type": "step", "data": map[string]any{"type": "call_tool", "tool_name": "shell", "args": map[string]any{}}}, openenv.CodeValidation, "data.tool")
	c.error(map[string]any{"type": "step", "data": map[string]any{"type": "list_tools", "tool": "shell"}}, openenv.CodeValidation, "data")
	c.error(map[string]any{"type": "step", "data": map[string]any{"type": "fly"}}, openenv.CodeValidation, "data.type")

	// The reference, by its trajectory names through call_tool, then the
	// answer: verified, reward 1, done.
	c.result(reset(map[string]any{"task_id": tk.ID}))
	for i, s := range tk.Reference {
		_, obs, _, done := callData(t, c, s.Tool, s.Args)
		if obs.Error != nil || obs.Result == nil || obs.Result.IsError || done || obs.Step != i+1 {
			t.Fatalf("reference step %d (%s): %+v", i, s.Tool, obs)
		}
	}
	_, obs, reward, done = callData(t, c, openenv.AnswerTool, map[string]any{"text": tk.Answer})
	if !done || reward == nil || *reward != 1 || obs.Verification == nil || obs.Verification.V != 1 || obs.EndReason != openenv.EndAnswer {
		t.Fatalf("call_tool answer: done %v reward %v obs %+v", done, reward, obs)
	}
	c.error(callTool("shell", map[string]any{"command": "true"}), openenv.CodeSession, "")
}

// rpc posts one JSON-RPC request to /mcp and returns the response.
func rpc(t *testing.T, url, method string, params map[string]any) openenv.RPCResponse {
	t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "method": method, "id": 7}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return rpcRaw(t, url, string(b))
}

func rpcRaw(t *testing.T, url, body string) openenv.RPCResponse {
	t.Helper()
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /mcp: %s", resp.Status)
	}
	var raw map[string]json.RawMessage
	var buf bytes.Buffer
	if err := json.NewDecoder(&teeReader{resp.Body, &buf}).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	// JsonRpcResponse.model_dump: jsonrpc and id always, then result or
	// error, never both.
	_, res := raw["result"]
	_, e := raw["error"]
	if string(raw["jsonrpc"]) != `"2.0"` || raw["id"] == nil || res == e {
		t.Errorf("POST /mcp %s: response %s is not a JSON-RPC 2.0 response", body, buf.Bytes())
	}
	var r openenv.RPCResponse
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

type teeReader struct {
	r interface{ Read([]byte) (int, error) }
	w *bytes.Buffer
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.Write(p[:n])
	return n, err
}

func rpcResult(t *testing.T, r openenv.RPCResponse, v any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("JSON-RPC error %+v", r.Error)
	}
	b, _ := json.Marshal(r.Result)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("result %s: %v", b, err)
	}
}

func rpcCode(t *testing.T, r openenv.RPCResponse, code int) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code || r.Error.Message == "" {
		t.Errorf("got %+v, want JSON-RPC error %d", r, code)
	}
}

// TestMCPOverHTTP drives POST /mcp with the requests MCPToolClient's
// production mode sends (openenv/session/create, tools/list and tools/call
// with the session_id, openenv/session/close) and wildawm/reset between
// them; an episode played through tools/call is verified with reward 1.
func TestMCPOverHTTP(t *testing.T) {
	f := fixture(t)
	srv, url := serve(t, f, openenv.Options{MaxSessions: 2})
	tk := f.Tasks["wishlist-balance"]

	rpcCode(t, rpcRaw(t, url, `{"jsonrpc": "2.0", "method": `), openenv.RPCParseError)
	rpcCode(t, rpcRaw(t, url, `{"jsonrpc": "1.0", "method": "tools/list", "id": 1}`), openenv.RPCInvalidRequest)
	rpcCode(t, rpcRaw(t, url, `{"jsonrpc": "2.0", "method": "tools/list", "id": 1, "extra": true}`), openenv.RPCInvalidRequest)
	rpcCode(t, rpcRaw(t, url, `{"jsonrpc": "2.0", "method": "tools/list", "params": [1], "id": 1}`), openenv.RPCInvalidParams)
	rpcCode(t, rpc(t, url, "tools/list", nil), openenv.RPCInvalidParams)
	rpcCode(t, rpc(t, url, "tools/list", map[string]any{"session_id": "nope"}), openenv.RPCInvalidParams)
	rpcCode(t, rpc(t, url, "resources/list", nil), openenv.RPCMethodNotFound)

	var sess struct {
		SessionID string `json:"session_id"`
	}
	rpcResult(t, rpc(t, url, openenv.MethodSessionCreate, nil), &sess)
	if sess.SessionID == "" {
		t.Fatal("no session_id")
	}
	sid := map[string]any{"session_id": sess.SessionID}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"session_id": sess.SessionID}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if srv.Metadata().ActiveSessions != 1 {
		t.Errorf("an HTTP session does not count: %+v", srv.Metadata())
	}
	r := rpc(t, url, openenv.MethodToolsList, sid)
	rpcCode(t, r, openenv.RPCServerError)
	if r.Error != nil && r.Error.Data["code"] != openenv.CodeSession {
		t.Errorf("tools/list before reset: %+v", r.Error)
	}

	var res openenv.Result
	rpcResult(t, rpc(t, url, openenv.MethodReset, with("task_id", tk.ID, "prompt", "dataset column")), &res)
	if res.Observation.Task == nil || res.Observation.Task.ID != tk.ID || fmt.Sprint(res.Metadata[openenv.MetaIgnoredResetKeys]) != "[prompt]" {
		t.Fatalf("wildawm/reset: %+v", res)
	}
	rpcCode(t, rpc(t, url, openenv.MethodReset, with("seed", "one")), openenv.RPCInvalidParams)

	var tl struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	rpcResult(t, rpc(t, url, openenv.MethodToolsList, sid), &tl)
	if len(tl.Tools) != len(res.Observation.Tools) {
		t.Fatalf("tools/list: %d tools, the reset %d", len(tl.Tools), len(res.Observation.Tools))
	}
	for _, tool := range tl.Tools {
		// MCPToolClient production list_tools: input_schema or inputSchema.
		var a, b map[string]any
		if json.Unmarshal(tool["inputSchema"], &a) != nil || json.Unmarshal(tool["input_schema"], &b) != nil || a["type"] != "object" || b["type"] != "object" {
			t.Errorf("tools/list tool %s: no input schema", tool["name"])
		}
	}

	call := func(name string, args map[string]any) (openenv.CallToolResult, *openenv.RPCError) {
		t.Helper()
		r := rpc(t, url, openenv.MethodToolsCall, with("name", name, "arguments", args))
		if r.Error != nil {
			return openenv.CallToolResult{}, r.Error
		}
		var out openenv.CallToolResult
		rpcResult(t, r, &out)
		return out, nil
	}
	out, e := call("shell", map[string]any{"command": "echo $((6*7))"})
	if e != nil || !strings.Contains(out.Data, "42") || out.IsError || out.Meta["step"] != 1.0 || out.Meta["done"] != false {
		t.Errorf("tools/call shell: %+v %+v", out, e)
	}
	if _, e := call("teleport", nil); e == nil || e.Code != openenv.RPCInvalidParams || e.Data["error_type"] != openenv.ToolNotFound {
		t.Errorf("tools/call teleport: %+v", e)
	}
	rpcCode(t, rpc(t, url, openenv.MethodToolsCall, sid), openenv.RPCInvalidParams)

	rpcResult(t, rpc(t, url, openenv.MethodReset, with("task_id", tk.ID)), &res)
	for i, s := range tk.Reference {
		if out, e := call(s.Tool, s.Args); e != nil || out.IsError {
			t.Fatalf("reference step %d (%s): %+v %+v", i, s.Tool, out, e)
		}
	}
	out, e = call(openenv.AnswerTool, map[string]any{"text": tk.Answer})
	if e != nil || out.Meta["done"] != true || out.Meta["reward"] != 1.0 || out.Meta["end_reason"] != openenv.EndAnswer {
		t.Fatalf("tools/call answer: %+v %+v", out, e)
	}
	var st openenv.State
	rpcResult(t, rpc(t, url, openenv.MethodState, sid), &st)
	if !st.Done || st.Reward == nil || *st.Reward != 1 || st.StepCount != len(tk.Reference)+1 {
		t.Errorf("wildawm/state: %+v", st)
	}

	// The server's capacity counts HTTP sessions and WebSockets alike.
	var other struct {
		SessionID string `json:"session_id"`
	}
	rpcResult(t, rpc(t, url, openenv.MethodSessionCreate, nil), &other)
	r = rpc(t, url, openenv.MethodSessionCreate, nil)
	rpcCode(t, r, openenv.RPCServerError)
	if r.Error != nil && r.Error.Data["code"] != openenv.CodeCapacityReached {
		t.Errorf("over capacity: %+v", r.Error)
	}
	var closed map[string]any
	rpcResult(t, rpc(t, url, openenv.MethodSessionClose, sid), &closed)
	if closed["closed"] != true {
		t.Errorf("close: %v", closed)
	}
	rpcCode(t, rpc(t, url, openenv.MethodState, sid), openenv.RPCInvalidParams)
	rpcCode(t, rpc(t, url, openenv.MethodSessionClose, sid), openenv.RPCInvalidParams)
}

// TestMCPOverWSMessage sends a JSON-RPC request as OpenEnv's WSMCPMessage
// ({"type": "mcp", "data": request}) on the WebSocket's own session.
func TestMCPOverWSMessage(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	c := dial(t, url)
	tk := f.Tasks["wishlist-balance"]
	c.result(reset(map[string]any{"task_id": tk.ID}))
	m := c.call(map[string]any{"type": "mcp", "data": map[string]any{"jsonrpc": "2.0", "method": "tools/call", "params": map[string]any{"name": "shell", "arguments": map[string]any{"command": "echo hi"}}, "id": "a"}})
	var r openenv.RPCResponse
	if m.Type != openenv.TypeMCP || json.Unmarshal(m.Data, &r) != nil || r.Error != nil || string(r.ID) != `"a"` {
		t.Fatalf("mcp message: %s %s", m.Type, m.Data)
	}
	var out openenv.CallToolResult
	rpcResult(t, r, &out)
	if !strings.Contains(out.Data, "hi") || out.Meta["step"] != 1.0 {
		t.Errorf("mcp tools/call: %+v", out)
	}
	m = c.call(map[string]any{"type": "mcp", "data": map[string]any{"jsonrpc": "2.0", "method": "tools/list"}})
	if json.Unmarshal(m.Data, &r) != nil || r.Error != nil || string(r.ID) != "null" {
		t.Errorf("mcp tools/list: %s", m.Data)
	}
}

// TestMCPSessionEnds: an HTTP session's instance is torn down when it is
// closed, when it idles out (its id is unknown after) and when the server
// closes.
func TestMCPSessionEnds(t *testing.T) {
	f := fixture(t)
	srv, url := serve(t, f, openenv.Options{IdleTimeout: 300 * time.Millisecond})
	instances := filepath.Join(f.Env.WorkDir, "instances")
	live := func() int {
		es, _ := os.ReadDir(instances)
		n := 0
		for _, e := range es {
			if strings.HasPrefix(e.Name(), "openenv-") {
				n++
			}
		}
		return n
	}
	waitGone := func(what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for live() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: instances left", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	open := func() map[string]any {
		var sess struct {
			SessionID string `json:"session_id"`
		}
		rpcResult(t, rpc(t, url, openenv.MethodSessionCreate, nil), &sess)
		var res openenv.Result
		rpcResult(t, rpc(t, url, openenv.MethodReset, map[string]any{"session_id": sess.SessionID}), &res)
		if live() == 0 {
			t.Fatal("no instance after wildawm/reset")
		}
		return map[string]any{"session_id": sess.SessionID}
	}
	waitGone("before")
	sid := open()
	rpcResult(t, rpc(t, url, openenv.MethodSessionClose, sid), new(map[string]any))
	waitGone("after openenv/session/close")

	sid = open()
	time.Sleep(600 * time.Millisecond)
	rpcCode(t, rpc(t, url, openenv.MethodState, sid), openenv.RPCInvalidParams)
	waitGone("after the idle timeout")
	if n := srv.Metadata().ActiveSessions; n != 0 {
		t.Errorf("%d sessions still count", n)
	}

	open()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone("after the server's Close")
	rpcCode(t, rpc(t, url, openenv.MethodSessionCreate, nil), openenv.RPCServerError)
}

// TestMCPOverWebSocket drives the WebSocket /mcp, OpenEnv's
// mcp_websocket_endpoint: each message a JSON-RPC request on the
// connection's own session.
func TestMCPOverWebSocket(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	c := &client{t: t, c: conn}
	call := func(body string) openenv.RPCResponse {
		t.Helper()
		c.sendRaw(body)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r openenv.RPCResponse
		if err := json.Unmarshal(b, &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("reply %s: not JSON-RPC", b)
		}
		return r
	}
	rpcCode(t, call(`{"jsonrpc": "2.0", "method": "tools/list"`), openenv.RPCParseError)
	rpcCode(t, call(`{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`), openenv.RPCServerError)
	var sess struct {
		SessionID string `json:"session_id"`
	}
	rpcResult(t, call(`{"jsonrpc": "2.0", "id": 2, "method": "openenv/session/create"}`), &sess)
	tk := f.Tasks["wishlist-balance"]
	var res openenv.Result
	rpcResult(t, call(fmt.Sprintf(`{"jsonrpc": "2.0", "id": 3, "method": "wildawm/reset", "params": {"task_id": %q, "prompt": "x"}}`, tk.ID)), &res)
	if res.Observation.Task == nil || fmt.Sprint(res.Metadata[openenv.MetaIgnoredResetKeys]) != "[prompt]" {
		t.Fatalf("reset: %+v", res)
	}
	var out openenv.CallToolResult
	rpcResult(t, call(`{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "shell", "arguments": {"command": "echo $((6*7))"}}}`), &out)
	if !strings.Contains(out.Data, "42") || out.Meta["step"] != 1.0 {
		t.Errorf("tools/call: %+v", out)
	}
	rpcCode(t, call(fmt.Sprintf(`{"jsonrpc": "2.0", "id": 5, "method": "openenv/session/close", "params": {"session_id": %q}}`, sess.SessionID)), openenv.RPCInvalidRequest)
}
