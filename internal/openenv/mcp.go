package openenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// JSON-RPC 2.0 error codes, OpenEnv's JsonRpcErrorCode.
const (
	RPCParseError     = -32700
	RPCInvalidRequest = -32600
	RPCMethodNotFound = -32601
	RPCInvalidParams  = -32602
	RPCInternalError  = -32603
	RPCServerError    = -32000
)

// JSON-RPC methods: MCP's tools/list and tools/call, OpenEnv's session
// methods for HTTP /mcp, and wildawm's reset and state of a session's
// episode (OpenEnv's /mcp has none: its tools need no reset, wildawm's
// depend on the task's world).
const (
	MethodToolsList     = "tools/list"
	MethodToolsCall     = "tools/call"
	MethodSessionCreate = "openenv/session/create"
	MethodSessionClose  = "openenv/session/close"
	MethodReset         = "wildawm/reset"
	MethodState         = "wildawm/state"
)

// rpcRequest is a JSON-RPC 2.0 request, OpenEnv's JsonRpcRequest.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// RPCResponse is a JSON-RPC 2.0 response, OpenEnv's JsonRpcResponse: id,
// and result or error.
type RPCResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object. Data carries the wildawm error code
// (SESSION_ERROR, ...) and the offending field, or the session counts with
// a full server.
type RPCError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// RPCTool is a tool as tools/list gives it: MCP's inputSchema, and
// input_schema as OpenEnv's Tool model names it.
type RPCTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Schema      json.RawMessage `json:"input_schema"`
}

func rpcFail(id json.RawMessage, code int, format string, args ...any) RPCResponse {
	return RPCResponse{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func rpcOK(id json.RawMessage, v any) RPCResponse {
	return RPCResponse{JSONRPC: "2.0", ID: id, Result: v}
}

// rpcProto turns a session's error into a JSON-RPC error: a message the
// client must fix is invalid params, the rest a server error.
func rpcProto(id json.RawMessage, e *protoError) RPCResponse {
	code := RPCServerError
	if e.code == CodeValidation {
		code = RPCInvalidParams
	}
	d := map[string]any{"code": e.code}
	if e.field != "" {
		d["field"] = e.field
	}
	return RPCResponse{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: code, Message: e.msg, Data: d}}
}

// parseRPC decodes one JSON-RPC request strictly, as OpenEnv's
// JsonRpcRequest (extra="forbid") does.
func parseRPC(b []byte) (rpcRequest, *RPCResponse) {
	var req rpcRequest
	if !json.Valid(b) {
		r := rpcFail(nil, RPCParseError, "Parse error: the body is not JSON")
		return req, &r
	}
	if e := duplicateKey(b); e != nil {
		r := rpcFail(nil, RPCInvalidRequest, "Invalid request: %s", e.msg)
		return req, &r
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		r := rpcFail(nil, RPCInvalidRequest, "Invalid request: %v: send {\"jsonrpc\": \"2.0\", \"method\": ..., \"params\": {...}, \"id\": 1}", err)
		return req, &r
	}
	if id := bytes.TrimSpace(req.ID); len(id) > 0 && id[0] != '"' && string(id) != "null" {
		var n json.Number
		if json.Unmarshal(id, &n) != nil || strings.ContainsAny(string(n), ".eE") {
			r := rpcFail(nil, RPCInvalidRequest, "Invalid request: id must be a string, an integer or null")
			return req, &r
		}
	}
	switch {
	case req.JSONRPC != "2.0":
		r := rpcFail(req.ID, RPCInvalidRequest, "Invalid request: jsonrpc must be \"2.0\"")
		return req, &r
	case req.Method == "":
		r := rpcFail(req.ID, RPCInvalidRequest, "Invalid request: method is missing")
		return req, &r
	}
	return req, nil
}

// rpcSession is a session opened by openenv/session/create over HTTP
// /mcp: one episode at a time, as a WebSocket session holds; requests to
// it run one at a time. It ends on openenv/session/close, the idle
// timeout or the server's Close.
type rpcSession struct {
	ss     *session
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	idle   *time.Timer
}

// createRPC opens an HTTP session.
func (s *Server) createRPC(id json.RawMessage) RPCResponse {
	ok, active, closed := s.acquire()
	if closed {
		return rpcFail(id, RPCServerError, "the server is shutting down")
	}
	if !ok {
		r := rpcFail(id, RPCServerError, "the server holds its maximum of %d sessions (--max-sessions): close a session or retry later", s.opts.MaxSessions)
		r.Error.Data = map[string]any{"code": CodeCapacityReached, "active_sessions": active, "max_sessions": s.opts.MaxSessions}
		return r
	}
	ss := &session{srv: s, id: s.sessions.Add(1), key: randomID()}
	ctx, cancel := context.WithCancel(s.ctx)
	rs := &rpcSession{ss: ss, ctx: ctx, cancel: cancel, idle: time.AfterFunc(s.opts.IdleTimeout, cancel)}
	s.rpcMu.Lock()
	if s.rpc == nil {
		s.rpc = map[string]*rpcSession{}
	}
	s.rpc[ss.key] = rs
	s.rpcMu.Unlock()
	s.log.Info("openenv session start", logSession, ss.id, "transport", "mcp")
	go func() {
		<-ctx.Done()
		rs.mu.Lock()
		rs.idle.Stop()
		s.rpcMu.Lock()
		delete(s.rpc, ss.key)
		s.rpcMu.Unlock()
		ss.teardown(context.Background())
		rs.mu.Unlock()
		s.log.Info("openenv session end", logSession, ss.id, "transport", "mcp")
		s.release()
	}()
	return rpcOK(id, map[string]string{"session_id": ss.key})
}

// useRPC locks the HTTP session key names; done unlocks it and restarts
// its idle clock.
func (s *Server) useRPC(key string) (rs *rpcSession, done func()) {
	s.rpcMu.Lock()
	rs = s.rpc[key]
	s.rpcMu.Unlock()
	if rs == nil {
		return nil, nil
	}
	rs.mu.Lock()
	if rs.ctx.Err() != nil {
		rs.mu.Unlock()
		return nil, nil
	}
	rs.idle.Stop()
	return rs, func() {
		rs.idle.Reset(s.opts.IdleTimeout)
		rs.mu.Unlock()
	}
}

// serveMCP serves POST /mcp: one JSON-RPC request per body, answered with
// 200 and a JSON-RPC response, as OpenEnv's mcp_endpoint does.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxMessage))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, rpcFail(nil, RPCInvalidRequest, "the request is over %d bytes", s.opts.MaxMessage))
		}
		return
	}
	req, fail := parseRPC(b)
	if fail != nil {
		writeJSON(w, http.StatusOK, fail)
		return
	}
	writeJSON(w, http.StatusOK, s.rpcCall(req))
}

// rpcMessage answers the data of an mcp message on /ws: a JSON-RPC request
// on the WebSocket's own session.
func (s *Server) rpcMessage(ctx context.Context, data json.RawMessage, ss *session) RPCResponse {
	req, fail := parseRPC(data)
	if fail != nil {
		return *fail
	}
	return s.dispatch(ctx, req, ss)
}

// rpcCall answers a request over HTTP: the session methods, and the rest
// on the session params.session_id names.
func (s *Server) rpcCall(req rpcRequest) RPCResponse {
	params, fail := rpcParams(req)
	if fail != nil {
		return *fail
	}
	key, _ := params["session_id"].(string)
	switch req.Method {
	case MethodSessionCreate:
		return s.createRPC(req.ID)
	case MethodSessionClose:
		if key == "" {
			return rpcFail(req.ID, RPCInvalidParams, "Invalid params - 'session_id' is required")
		}
		rs, done := s.useRPC(key)
		if rs == nil {
			return rpcFail(req.ID, RPCInvalidParams, "Unknown session_id: %s", key)
		}
		rs.cancel()
		done()
		return rpcOK(req.ID, map[string]any{"session_id": key, "closed": true})
	}
	if !slices.Contains(sessionMethods, req.Method) {
		return methodNotFound(req)
	}
	if key == "" {
		return rpcFail(req.ID, RPCInvalidParams, "%s needs params.session_id: wildawm's tools are those of an episode's world; call %s, then %s with it", req.Method, MethodSessionCreate, MethodReset)
	}
	rs, done := s.useRPC(key)
	if rs == nil {
		return rpcFail(req.ID, RPCInvalidParams, "Unknown session_id: %s (closed, idle for --idle-timeout, or never created)", key)
	}
	defer done()
	return s.dispatch(rs.ctx, req, rs.ss)
}

func rpcParams(req rpcRequest) (map[string]any, *RPCResponse) {
	params := map[string]any{}
	if p := bytes.TrimSpace(req.Params); len(p) > 0 {
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.UseNumber()
		if err := dec.Decode(&params); err != nil || params == nil {
			r := rpcFail(req.ID, RPCInvalidParams, "Params must be an object")
			return nil, &r
		}
	}
	return params, nil
}

// dispatch runs a method on session ss.
func (s *Server) dispatch(ctx context.Context, req rpcRequest, ss *session) RPCResponse {
	params, fail := rpcParams(req)
	if fail != nil {
		return *fail
	}
	id := req.ID
	switch req.Method {
	case MethodSessionCreate:
		return rpcOK(id, map[string]string{"session_id": ss.key})
	case MethodSessionClose:
		if key, _ := params["session_id"].(string); key == ss.key {
			return rpcFail(id, RPCInvalidRequest, "Cannot close active WebSocket-managed session via MCP method")
		}
		return rpcFail(id, RPCInvalidParams, "Unknown session_id: close an HTTP session over POST /mcp")
	case MethodToolsList:
		tools, perr := ss.listTools()
		if perr != nil {
			return rpcProto(id, perr)
		}
		out := make([]RPCTool, len(tools))
		for i, t := range tools {
			out[i] = RPCTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Schema: t.InputSchema}
		}
		return rpcOK(id, map[string]any{"tools": out})
	case MethodToolsCall:
		name, _ := params["name"].(string)
		if name == "" {
			return rpcFail(id, RPCInvalidParams, "Missing 'name' in params")
		}
		args := map[string]any{}
		if a, has := params["arguments"]; has && a != nil {
			m, ok := a.(map[string]any)
			if !ok {
				return rpcFail(id, RPCInvalidParams, "params.arguments must be an object: the tool's arguments")
			}
			args = m
		}
		obs, r, perr := ss.callTool(ctx, name, args)
		if perr != nil {
			return rpcProto(id, perr)
		}
		if obs.Error != nil {
			resp := rpcFail(id, RPCInvalidParams, "%s", obs.Error.Message)
			resp.Error.Data = map[string]any{"error_type": obs.Error.ErrorType}
			return resp
		}
		res := *obs.Result
		res.Meta = map[string]any{"step": obs.Step, "max_steps": obs.MaxSteps, "done": r.Done, "reward": r.Reward}
		if obs.Interface != "" {
			res.Meta["interface"] = obs.Interface
		}
		if r.Done {
			res.Meta["end_reason"], res.Meta["verification"] = obs.EndReason, obs.Verification
			if f, ok := r.Metadata["fault"]; ok {
				res.Meta["fault"] = f
			}
		}
		return rpcOK(id, res)
	case MethodReset:
		delete(params, "session_id")
		b, err := json.Marshal(params)
		if err != nil {
			return rpcFail(id, RPCInvalidParams, "params: %v", err)
		}
		var d ResetData
		if perr := decodeReset(b, &d, "params"); perr != nil {
			return rpcProto(id, perr)
		}
		rep, _ := ss.reset(ctx, d)
		if e, ok := rep.Data.(ErrorData); ok {
			return rpcProto(id, &protoError{code: e.Code, field: e.Field, msg: e.Message})
		}
		return rpcOK(id, rep.Data)
	case MethodState:
		return rpcOK(id, ss.state())
	default:
		return methodNotFound(req)
	}
}

// sessionMethods are the methods that act on a session's episode.
var sessionMethods = []string{MethodReset, MethodToolsList, MethodToolsCall, MethodState}

func methodNotFound(req rpcRequest) RPCResponse {
	return rpcFail(req.ID, RPCMethodNotFound, "Method not found: %s (give %s, %s, %s, %s, %s or %s)", req.Method,
		MethodSessionCreate, MethodReset, MethodToolsList, MethodToolsCall, MethodState, MethodSessionClose)
}
