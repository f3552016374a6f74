package openenv

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Defaults of Options.
const (
	DefaultMaxSessions = 32
	DefaultMaxSteps    = 256
	DefaultIdleTimeout = 10 * time.Minute
	DefaultStepTimeout = 5 * time.Minute
	DefaultMaxMessage  = 8 << 20
)

// Task is one task the server serves.
type Task struct {
	Task *task.Task
	// Dir is the task's directory; its verifier is Dir/verifier.
	Dir string
}

// Episodes is what the server runs its episodes through (a
// *rollout.Env): a fresh instance of the task's initial world, an agent
// session on it, and at the end the final world's snapshot judged by the
// task's verifier.
type Episodes interface {
	Start(ctx context.Context, snapshot world.ID, name string) (*runtime.Instance, error)
	Open(ctx context.Context, inst *runtime.Instance, traj *agent.Trajectory) (*rollout.Session, error)
	SnapshotFinal(ctx context.Context, t *task.Task, dir string, traj *agent.Trajectory) (*rollout.Result, error)
	Judge(ctx context.Context, t *task.Task, verifierDir string, res *rollout.Result) (*verify.Result, error)
}

// Options configure a Server. The zero value of each field but Tasks and
// Env means its default.
type Options struct {
	// Name and Description are /metadata's (default "wildawm" and a line
	// on what the worlds are).
	Name, Description string
	// Split names the pool split Tasks are ("rl" in /metadata when empty).
	Split string
	// Tasks are the tasks served, at least one.
	Tasks []Task
	// Env is the rollout environment a task's instances run in (per
	// persona, as the self-check's).
	Env func(t *task.Task) (Episodes, error)
	// MaxSessions bounds the WebSocket connections at once (default 32).
	MaxSessions int
	// MaxSteps is the step budget of an episode (default 256).
	MaxSteps int
	// IdleTimeout closes a session that sends nothing for so long
	// (default 10 minutes).
	IdleTimeout time.Duration
	// StepTimeout bounds one message's work: a reset, a step, the
	// verification (default 5 minutes).
	StepTimeout time.Duration
	// MaxMessage bounds a client message in bytes (default 8 MiB).
	MaxMessage int64
	// Seed orders the split for resets that name no task.
	Seed uint64
	// Logger logs sessions' starts and ends; nil discards.
	Logger *slog.Logger
}

// Server serves Options.Tasks over OpenEnv's HTTP and WebSocket protocol.
type Server struct {
	opts    Options
	order   []Task
	byID    map[string]Task
	next    atomic.Uint64
	schemas []byte
	log     *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	active   int
	closed   bool
	sessions atomic.Int64

	// rpc are the sessions of HTTP /mcp, by session id.
	rpcMu sync.Mutex
	rpc   map[string]*rpcSession
}

// Log attribute keys.
const (
	logSession = "session"
	logEpisode = "episode"
	logTask    = "task"
	logErr     = "err"
	logIgnored = "ignored"
)

// New checks opts and returns a Server; Close it when done.
func New(opts Options) (*Server, error) {
	if len(opts.Tasks) == 0 {
		return nil, errors.New("openenv: no tasks: serve a split that has tasks (wildawm pool split)")
	}
	if opts.Env == nil {
		return nil, errors.New("openenv: Options.Env is nil: give the rollout environment of a task")
	}
	opts.Name = cmp.Or(opts.Name, "wildawm")
	opts.Description = cmp.Or(opts.Description, "Personal-computer worlds: websites through a browser, MCP services, a sandboxed shell and files; each task verified by its checklist")
	opts.Split = cmp.Or(opts.Split, "rl")
	opts.MaxSessions = cmp.Or(opts.MaxSessions, DefaultMaxSessions)
	opts.MaxSteps = cmp.Or(opts.MaxSteps, DefaultMaxSteps)
	opts.IdleTimeout = cmp.Or(opts.IdleTimeout, DefaultIdleTimeout)
	opts.StepTimeout = cmp.Or(opts.StepTimeout, DefaultStepTimeout)
	opts.MaxMessage = cmp.Or(opts.MaxMessage, DefaultMaxMessage)
	if opts.MaxSessions < 0 || opts.MaxSteps < 0 || opts.IdleTimeout < 0 || opts.StepTimeout < 0 || opts.MaxMessage < 0 {
		return nil, errors.New("openenv: MaxSessions, MaxSteps, IdleTimeout, StepTimeout and MaxMessage must not be negative")
	}
	s := &Server{opts: opts, byID: map[string]Task{}, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range opts.Tasks {
		if t.Task == nil || t.Dir == "" {
			return nil, errors.New("openenv: a task without its Task or Dir")
		}
		if _, dup := s.byID[t.Task.ID]; dup {
			return nil, fmt.Errorf("openenv: task %s twice", t.Task.ID)
		}
		s.byID[t.Task.ID] = t
	}
	s.order = slices.SortedFunc(slices.Values(opts.Tasks), func(a, b Task) int { return cmp.Compare(a.Task.ID, b.Task.ID) })
	r := rand.New(rand.NewPCG(opts.Seed, 0x6f70656e656e76))
	r.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	sc, err := schemas()
	if err != nil {
		return nil, err
	}
	if s.schemas, err = json.Marshal(sc); err != nil {
		return nil, fmt.Errorf("openenv: encode schemas: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Handler serves GET /health, /metadata, /schema, the WebSocket /ws and
// OpenEnv's JSON-RPC POST /mcp.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	mux.HandleFunc("GET /metadata", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Metadata())
	})
	mux.HandleFunc("GET /schema", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.schemas)
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, false) })
	mux.HandleFunc("POST /mcp", s.serveMCP)
	mux.HandleFunc("GET /mcp", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, true) })
	return mux
}

// Metadata is the body of GET /metadata: OpenEnv's EnvironmentMetadata
// fields and the split served.
type Metadata struct {
	Name             string  `json:"name"`
	Description      string  `json:"description"`
	ReadmeContent    *string `json:"readme_content"`
	Version          string  `json:"version"`
	Author           *string `json:"author"`
	DocumentationURL *string `json:"documentation_url"`
	Split            string  `json:"split"`
	Tasks            int     `json:"tasks"`
	MaxSteps         int     `json:"max_steps"`
	MaxSessions      int     `json:"max_sessions"`
	ActiveSessions   int     `json:"active_sessions"`
}

// Metadata describes the server.
func (s *Server) Metadata() Metadata {
	s.mu.Lock()
	active := s.active
	s.mu.Unlock()
	return Metadata{Name: s.opts.Name, Description: s.opts.Description, Version: ProtocolVersion, Split: s.opts.Split, Tasks: len(s.order),
		MaxSteps: s.opts.MaxSteps, MaxSessions: s.opts.MaxSessions, ActiveSessions: active}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// acquire takes a session slot.
func (s *Server) acquire() (ok bool, active int, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, s.active, true
	}
	if s.active >= s.opts.MaxSessions {
		return false, s.active, false
	}
	s.active++
	s.wg.Add(1)
	return true, s.active, false
}

func (s *Server) release() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
	s.wg.Done()
}

// serveWS serves a WebSocket session: of OpenEnv's messages on /ws, of
// bare JSON-RPC requests on /mcp (rpc).
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, rpc bool) {
	ok, active, closed := s.acquire()
	if closed {
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		if ok {
			s.release()
		}
		return // Accept has answered the request
	}
	if !ok {
		// As OpenEnv does: accept, say why, close.
		msg := fmt.Sprintf("the server holds its maximum of %d sessions (--max-sessions): close a session or retry later", s.opts.MaxSessions)
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var m any = reply{Type: TypeError, Data: ErrorData{Message: msg, Code: CodeCapacityReached, ActiveSessions: active, MaxSessions: s.opts.MaxSessions}}
		if rpc {
			e := rpcFail(nil, RPCServerError, "%s", msg)
			e.Error.Data = map[string]any{"code": CodeCapacityReached, "active_sessions": active, "max_sessions": s.opts.MaxSessions}
			m = e
		}
		writeReply(wctx, conn, m)
		cancel()
		conn.Close(websocket.StatusTryAgainLater, "at capacity")
		return
	}
	defer s.release()
	conn.SetReadLimit(s.opts.MaxMessage)
	id := s.sessions.Add(1)
	ss := &session{srv: s, id: id, key: randomID(), rpc: rpc}
	s.log.Info("openenv session start", logSession, id)
	ss.serve(conn)
	s.log.Info("openenv session end", logSession, id)
}

func writeReply(ctx context.Context, conn *websocket.Conn, r any) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode a message: %w", err)
	}
	return conn.Write(ctx, websocket.MessageText, b)
}

// pick returns the task a reset asks for.
func (s *Server) pick(d ResetData) (Task, *protoError) {
	if d.TaskID != "" {
		t, ok := s.byID[d.TaskID]
		if !ok {
			ids := make([]string, 0, min(len(s.order), 10))
			for _, t := range s.order[:min(len(s.order), 10)] {
				ids = append(ids, t.Task.ID)
			}
			return Task{}, invalid("data.task_id", "no task %q in split %s: give one of %v (GET /metadata counts them), or omit task_id", d.TaskID, s.opts.Split, ids)
		}
		return t, nil
	}
	if d.Seed != nil {
		return s.order[*d.Seed%uint64(len(s.order))], nil
	}
	n := s.next.Add(1) - 1
	return s.order[n%uint64(len(s.order))], nil
}

// Close ends every session, tearing its instance down, and waits for them
// (or for ctx). New connections are refused from now on.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("openenv: close: sessions still tearing down: %w", ctx.Err())
	}
}
