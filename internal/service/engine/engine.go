package engine

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/sqlguard"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TimeFormat is the layout of :now (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// Hooks are a definition's logic in Go, for what SQL cannot say: SQL
// functions its statements call, and step hooks (step: hook: NAME).
type Hooks struct {
	// Funcs are SQL functions; their names must start with the service's
	// name and "_" (the driver's functions are global to the process).
	Funcs map[string]Func
	// Steps are step hooks by name.
	Steps map[string]StepFunc
}

// StepFunc is a step hook: it reads and sets c's parameters, queries c.Q
// (in the call's transaction), and returns a ToolError (c.BadCall) for a
// call the model can fix.
type StepFunc func(c *Call) error

// Call is one tool call or resource read in progress.
type Call struct {
	Ctx context.Context
	// Q is the service's database, in the call's transaction.
	Q dbtool.Querier
	// Name is the tool's or the resource's name.
	Name   string
	Params map[string]any
	Env    *Options
	// Result, when a hook sets it, is the tool's result (a JSON object)
	// and ends the call.
	Result json.RawMessage
	svc    *Service
	// policy is what the definition's SQL of the call may do: the read
	// or the write policy of the SQL guard (sqlguard).
	policy *sqlguard.Policy
}

// BadCall returns a tool error with the message.
func (c *Call) BadCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }

// Read runs fn on the database name (one of the definition's reads),
// read-only.
func (c *Call) Read(name string, fn func(q dbtool.Querier) error) error {
	d := c.svc.reads[name]
	if d == nil {
		return fmt.Errorf("%s reads no database %q", c.svc.c.Def.Name, name)
	}
	return d.Read(c.Ctx, fn)
}

// Text returns the parameter name as text ("" when NULL).
func (c *Call) Text(name string) string { return text(c.Params[name]) }

// Int returns the parameter name as an integer (0 when NULL).
func (c *Call) Int(name string) int64 { return integer(c.Params[name]) }

// Compiled is a definition ready to serve: its tools' schemas and argument
// checkers, built once and shared by every Service of it (hundreds of
// instances of a world hold one).
type Compiled struct {
	Def   *Definition
	hooks Hooks
	tools []*tool
	// resources are the resources' steps as run (optimize), by index.
	resources [][]Step
	// read and write are the SQL guard's policies of the definition's
	// SQL (sqlguard): read-only tools and resources only read; the other
	// tools write rows too. Neither changes the schema, attaches, vacuums
	// or reads the host.
	read, write *sqlguard.Policy
}

type tool struct {
	def   *Tool
	mcp   *mcp.Tool
	args  *dbtool.Args
	input map[string]any // the input schema, for checkDeep
	out   *outSchema     // the output schema, for shape
	steps []Step         // as run (optimize)
	// pre are the leading steps of steps that read no table: they run
	// before the transaction (pure.go), and steps[len(pre):] in it.
	pre int
}

// Hooks returns the Go hooks c was compiled with.
func (c *Compiled) Hooks() Hooks { return c.hooks }

// Compile checks that d's hooks exist in h and registers its SQL functions
// (and the built-ins) with the SQLite driver.
func Compile(d *Definition, h Hooks) (*Compiled, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if err := register("builtin", Builtins); err != nil {
		return nil, err
	}
	for name := range h.Funcs {
		if _, builtin := Builtins[name]; builtin || !strings.HasPrefix(name, d.Name+"_") {
			return nil, fmt.Errorf("%s: hook function %s: name it %s_...", d.Name, name, d.Name)
		}
	}
	if err := register(d.Name, h.Funcs); err != nil {
		return nil, err
	}
	c := &Compiled{Def: d, hooks: h,
		read:  &sqlguard.Policy{Who: "a read-only tool or resource of " + d.Name, Recursive: true},
		write: &sqlguard.Policy{Who: "a tool of " + d.Name, Write: true, Recursive: true},
	}
	var missing []string
	check := func(where string, steps []Step) {
		for i, s := range steps {
			if s.Hook != "" && h.Steps[s.Hook] == nil {
				missing = append(missing, fmt.Sprintf("%s.steps[%d].hook: no Go hook %q", where, i, s.Hook))
			}
		}
	}
	for i := range d.Tools {
		t := &d.Tools[i]
		check("tools["+t.Name+"]", t.Steps)
		in, err := toSchema(t.Input)
		if err != nil {
			return nil, fmt.Errorf("%s: tools[%s].input: %w", d.Name, t.Name, err)
		}
		ct := &tool{def: t, args: dbtool.NewArgs(t.Name, in), out: compileOutput(t.Output), input: t.Input, steps: optimize(t.Steps)}
		ct.pre = leadingPure(ct.steps)
		pubIn, err := dbtool.Portable(in)
		if err != nil {
			return nil, fmt.Errorf("%s: tools[%s].input: %w", d.Name, t.Name, err)
		}
		out, err := toSchema(t.Output)
		if err != nil {
			return nil, fmt.Errorf("%s: tools[%s].output: %w", d.Name, t.Name, err)
		}
		pubOut, err := dbtool.Portable(out)
		if err != nil {
			return nil, fmt.Errorf("%s: tools[%s].output: %w", d.Name, t.Name, err)
		}
		a := t.Annotations
		ct.mcp = &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: pubIn, OutputSchema: pubOut,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld}}
		c.tools = append(c.tools, ct)
	}
	for _, r := range d.Resources {
		check("resources["+r.Name+"]", r.Steps)
		c.resources = append(c.resources, optimize(r.Steps))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: %w", d.Name, Problems(missing))
	}
	return c, nil
}

func toSchema(m map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Schema returns the DDL of the definition's database, one statement per
// entry, in the order a delta's db.create runs them.
func (d *Definition) Schema() []string {
	var out []string
	for _, t := range d.Tables {
		lines := append(slices.Clone(t.Columns), t.Constraints...)
		out = append(out, "CREATE TABLE "+t.Name+" (\n  "+strings.Join(lines, ",\n  ")+"\n)")
		// A table's indexes follow it, as the hand-written services
		// ordered them (mail's before its attachments table).
		out = append(out, t.Indexes...)
	}
	return out
}

// Options open a Service over one world.
type Options struct {
	// WorldDir is the world; the service's database is db/NAME.sqlite,
	// which must exist, and the definition's reads db/READ.sqlite.
	WorldDir string
	Clock    world.Clock
	// Self is the persona's name; SelfAddress their mail address.
	Self, SelfAddress string
	Logger            *slog.Logger
	// SessionTimeout closes streamable-HTTP sessions idle this long.
	SessionTimeout time.Duration
	// MaxSessions caps the streamable-HTTP sessions open at once
	// (dbtool.Transports.MaxSessions); zero means
	// dbtool.DefaultMaxSessions.
	MaxSessions int
	// SQLTimeout bounds each step of a call, which runs one SQL statement
	// of the definition (and its condition); zero means
	// sqlguard.DefaultTimeout. A call that exceeds it is stopped and
	// answered with a tool error naming the tool and the bound; a write
	// is rolled back.
	SQLTimeout time.Duration
	// Ephemeral marks the world as a throwaway copy (dbtool.DB.Ephemeral).
	Ephemeral bool
	// DBPath, when set, is the service's database instead of WorldDir's
	// db/NAME.sqlite: one database file outside a world (a benchmark's, a
	// conformance run's). WorldDir may then be empty unless the definition
	// reads other databases or its hooks read home files.
	DBPath string
}

// Service serves one world's database of a definition over MCP.
type Service struct {
	dbtool.Transports // HTTPHandler and RunStdio

	c     *Compiled
	opts  Options
	log   *slog.Logger
	db    *dbtool.DB
	reads map[string]*dbtool.DB
}

// New checks opts and that the world's database has every table and column
// of the definition, and returns a Service.
func New(c *Compiled, opts Options) (*Service, error) {
	name := c.Def.Name
	switch {
	case opts.WorldDir == "" && opts.DBPath == "":
		return nil, fmt.Errorf("%s: Options.WorldDir is required", name)
	case opts.WorldDir == "" && len(c.Def.Reads) > 0:
		return nil, fmt.Errorf("%s: Options.WorldDir is required: the service reads %s", name, strings.Join(c.Def.Reads, ", "))
	case opts.Clock == nil:
		return nil, fmt.Errorf("%s: Options.Clock is required", name)
	case opts.Self == "":
		return nil, fmt.Errorf("%s: Options.Self is required", name)
	}
	s := &Service{c: c, opts: opts, log: opts.Logger, reads: map[string]*dbtool.DB{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout, MaxSessions: opts.MaxSessions}
	path := opts.DBPath
	if path == "" {
		path = world.DBPath(opts.WorldDir, name)
	}
	s.db = &dbtool.DB{Service: name, Path: path, Log: s.log, Ephemeral: opts.Ephemeral}
	for _, r := range c.Def.Reads {
		s.reads[r] = &dbtool.DB{Service: r, Path: world.DBPath(opts.WorldDir, r), Log: s.log, ReadOnly: true}
	}
	db, err := s.db.Open(false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer db.Close()
	if err := c.Def.CheckTables(context.Background(), db); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, path, err)
	}
	return s, nil
}

// CheckTables fails unless every table and column of the definition
// exists in q's database.
func (d *Definition) CheckTables(ctx context.Context, q state.Querier) error {
	for _, t := range d.Tables {
		desc, err := state.DescribeTable(ctx, q, t.Name)
		if err != nil {
			return err
		}
		for _, c := range t.Columns {
			col, _, _ := strings.Cut(strings.TrimSpace(c), " ")
			if _, ok := desc.Column(col); !ok {
				return fmt.Errorf("table %s has no column %s", t.Name, col)
			}
		}
	}
	return nil
}

// Definition returns the service's definition.
func (s *Service) Definition() *Definition { return s.c.Def }

// Suspend closes the databases and holds every call until resume
// (dbtool.DB.Suspend); the runtime brackets an instance reset with it.
func (s *Service) Suspend() (resume func()) {
	resumes := []func(){s.db.Suspend()}
	for _, r := range s.c.Def.Reads {
		resumes = append(resumes, s.reads[r].Suspend())
	}
	return func() {
		for _, r := range slices.Backward(resumes) {
			r()
		}
	}
}

// Hold holds every call until release (dbtool.DB.Hold); the runtime
// brackets a snapshot of the instance with it.
func (s *Service) Hold() (release func()) { return s.db.Hold() }

// Server returns a new MCP server with the definition's tools and
// resources.
func (s *Service) Server() *mcp.Server {
	d := s.c.Def
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-" + d.Name, Title: d.Title, Version: cmp(d.Version, "1")}, &mcp.ServerOptions{
		Instructions: s.expand(d.Instructions),
		Logger:       s.log,
	})
	for _, t := range s.c.tools {
		mt := t.mcp
		if strings.Contains(mt.Description, "{{") {
			// The compiled tool is shared by every instance; the persona's
			// name and address go into a copy.
			cp := *mt
			cp.Description = s.expand(mt.Description)
			mt = &cp
		}
		srv.AddTool(mt, s.toolHandler(t))
	}
	for i := range d.Resources {
		r, steps := &d.Resources[i], s.c.resources[i]
		vars, _ := templateVars(r.URI)
		if len(vars) == 0 {
			srv.AddResource(&mcp.Resource{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIME, URI: r.URI}, s.fixedResource(r, steps))
			continue
		}
		prefix := r.URI[:strings.IndexByte(r.URI, '{')]
		srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIME, URITemplate: r.URI},
			s.db.ResourceHandler(prefix, r.MIME, len(vars), func(ctx context.Context, q dbtool.Querier, keys []string) (string, error) {
				params := s.params()
				for i, v := range vars {
					params[v] = keys[i]
				}
				return s.resourceText(ctx, q, r.Name, steps, params)
			}))
	}
	return srv
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// expand replaces {{self}} and {{self_address}} in s.
func (s *Service) expand(t string) string {
	return strings.NewReplacer("{{self}}", s.opts.Self, "{{self_address}}", s.opts.SelfAddress).Replace(t)
}

// params returns the built-in parameters of a call.
func (s *Service) params() map[string]any {
	now := s.opts.Clock.Now().UTC()
	return map[string]any{"now": now.Format(TimeFormat), "today": now.Format(time.DateOnly), "self": s.opts.Self, "self_address": s.opts.SelfAddress}
}

func (s *Service) fixedResource(r *Resource, steps []Step) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		var out string
		err := s.db.Read(ctx, func(q dbtool.Querier) error {
			var err error
			out, err = s.resourceText(ctx, q, r.Name, steps, s.params())
			return err
		})
		var te *dbtool.ToolError
		switch {
		case errors.As(err, &te):
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		case err != nil:
			s.log.ErrorContext(ctx, s.c.Def.Name+" resource failed", dbtool.LogKeyErr, err)
			return nil, fmt.Errorf("reading %s: internal error in the %s service", req.Params.URI, s.c.Def.Name)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: r.MIME, Text: out}}}, nil
	}
}

func (s *Service) resourceText(ctx context.Context, q dbtool.Querier, name string, steps []Step, params map[string]any) (string, error) {
	c := &Call{Ctx: ctx, Q: q, Name: name, Params: params, Env: &s.opts, svc: s, policy: s.c.read}
	v, err := s.run(c, steps)
	if err != nil {
		return "", err
	}
	return text(v), nil
}

func (s *Service) toolHandler(t *tool) mcp.ToolHandler {
	name, svc := t.def.Name, s.c.Def.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		growStack()
		out, err := s.callTool(ctx, t, req.Params.Arguments)
		if err != nil {
			var te *dbtool.ToolError
			if !errors.As(err, &te) {
				s.log.ErrorContext(ctx, svc+" tool failed", dbtool.LogKeyTool, name, dbtool.LogKeyDB, s.db.Path, dbtool.LogKeyErr, err)
				err = fmt.Errorf("%s failed: the %s service had an internal error and changed nothing; try again later", name, svc)
			}
			var res mcp.CallToolResult
			res.SetError(err)
			return &res, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: out}, nil
	}
}

// callTool checks the arguments, runs the steps in a read (rolled back)
// or a write transaction and returns the result shaped by the output
// schema.
func (s *Service) callTool(ctx context.Context, t *tool, raw json.RawMessage) (json.RawMessage, error) {
	fields, err := t.args.Check(raw)
	if err != nil {
		return nil, err
	}
	if err := checkDeep(t.def.Name, fields, t.input); err != nil {
		return nil, err
	}
	params := s.params()
	for k, v := range fields {
		params[k] = sqlValue(v)
	}
	policy := s.c.write
	if t.def.Annotations.ReadOnly {
		policy = s.c.read
	}
	// The leading steps that read no table run before the transaction,
	// on the same connection: a call they refuse never opens one.
	var pre func(q dbtool.Querier) error
	if t.pre > 0 {
		pre = func(q dbtool.Querier) error {
			c := &Call{Ctx: ctx, Q: q, Name: t.def.Name, Params: params, Env: &s.opts, svc: s, policy: policy}
			_, err := s.run(c, t.steps[:t.pre])
			return err
		}
	}
	var out json.RawMessage
	run := func(q dbtool.Querier) error {
		c := &Call{Ctx: ctx, Q: q, Name: t.def.Name, Params: params, Env: &s.opts, svc: s, policy: policy}
		v, err := s.run(c, t.steps[t.pre:])
		if err != nil {
			return err
		}
		if c.Result != nil {
			// A hook's JSON is checked.
			if !json.Valid(c.Result) {
				err = fmt.Errorf("not JSON: %.120s", c.Result)
			} else {
				out, err = shape(c.Result, t.out)
			}
		} else {
			// SQLite's JSON functions and the engine's own builder write
			// valid JSON, so it is not validated again: a result step
			// that returns something else (SELECT 'text') fails the
			// shaping or, at worst, the response's encoding.
			raw, isBytes := v.([]byte)
			if !isBytes {
				raw = []byte(text(v))
			}
			out, err = shape(raw, t.out)
		}
		if err != nil {
			return fmt.Errorf("%s: result: %w", t.def.Name, err)
		}
		return nil
	}
	if t.def.Annotations.ReadOnly {
		err = s.db.ReadAfter(ctx, pre, run)
	} else {
		err = s.db.WriteAfter(ctx, pre, run)
	}
	return out, err
}

// sqlValue is a JSON argument as an SQL value: a string as text, an
// integral number as an integer, another number as a real, a boolean as 1
// or 0, null as NULL, an object or array as its JSON text.
func sqlValue(raw json.RawMessage) any {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case 'n':
		return nil
	case 't':
		return int64(1)
	case 'f':
		return int64(0)
	case '"':
		var s string
		if in := b[1:max(len(b)-1, 1)]; len(b) >= 2 && b[len(b)-1] == '"' && bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
			s = string(in) // valid JSON (Args.Check) without escapes: the text as it is
		} else if json.Unmarshal(b, &s) != nil {
			return nil
		}
		if strings.IndexByte(s, 0) >= 0 {
			// SQLite hands text to Go functions as a C string, cut at the
			// first NUL: as a BLOB it reaches them whole (has_control_text
			// sees the NUL).
			return []byte(s)
		}
		return s
	case '{', '[':
		return string(b)
	}
	var n json.Number
	if json.Unmarshal(b, &n) != nil {
		return nil
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// run runs steps and returns the result step's value (nil if a hook set
// c.Result). Each step runs within the statement bound (Options.SQLTimeout)
// and its SQL under the guard of c's policy; a hook's own SQL is the
// service's, and runs unguarded.
func (s *Service) run(c *Call, steps []Step) (any, error) {
	for i := range steps {
		st := &steps[i]
		if c.Result != nil {
			return nil, nil
		}
		if err := c.Ctx.Err(); err != nil {
			return nil, err // a cancelled call stops at its next step
		}
		v, skip, err := s.boundedStep(c, i, st)
		if err != nil {
			var te *dbtool.ToolError
			if errors.As(err, &te) {
				return nil, err
			}
			return nil, fmt.Errorf("%s step %d: %w", c.Name, i, err)
		}
		if !skip && st.Result != "" {
			return v, nil
		}
	}
	return nil, nil
}

// TimeoutMessage is in the tool error of a call stopped by the statement
// bound (Options.SQLTimeout); lint reports such an example call.
const TimeoutMessage = "ran longer than the bound of one SQL statement"

// boundedStep runs step i within the statement bound; skip is true when
// its condition was false.
func (s *Service) boundedStep(c *Call, i int, st *Step) (v any, skip bool, err error) {
	limit := s.opts.SQLTimeout
	if limit <= 0 {
		limit = sqlguard.DefaultTimeout
	}
	outer := c.Ctx
	ctx, cancel := context.WithTimeout(outer, limit)
	c.Ctx = ctx
	stop := dbtool.Watch(ctx, c.Q) // the driver stops only a first row
	defer func() {
		stop()
		cancel()
		c.Ctx = outer
	}()
	v, skip, err = s.guardedStep(c, i, st)
	if err != nil && outer.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, false, dbtool.BadCall("%s: step %d %s (%s) and was stopped; the call changed nothing. Narrow it (a tighter filter, fewer rows) or try again", c.Name, i, TimeoutMessage, limit)
	}
	return v, skip, err
}

// guardedStep evaluates step i's condition and runs it.
func (s *Service) guardedStep(c *Call, i int, st *Step) (v any, skip bool, err error) {
	if st.If != "" {
		if pred := predicateOf(st.If); pred != nil {
			if yes, ok := pred(c.Params); ok {
				if !yes {
					return nil, true, nil
				}
				goto run
			}
		}
		if x := condOf(st.If); x != nil {
			if v, ok := x.eval(c.Params); ok {
				if yes, ok := truth(v); ok {
					if !yes {
						return nil, true, nil
					}
					goto run
				}
			}
		}
		var yes bool
		q, err := c.guarded(c.Q)
		if err != nil {
			return nil, false, err
		}
		text, a := bind(condition(st.If), c.Params)
		if err := queryRow(c.Ctx, q, text, a, &yes); err != nil {
			return nil, false, fmt.Errorf("if: %w", err)
		}
		if !yes {
			return nil, true, nil
		}
	}
run:
	if st.DB != "" {
		err = c.Read(st.DB, func(rq dbtool.Querier) error {
			defer dbtool.Watch(c.Ctx, rq)()
			sub := *c
			sub.Q = rq
			v, err = s.step(&sub, st)
			return err
		})
	} else {
		v, err = s.step(c, st)
	}
	return v, false, err
}

// guarded returns q judged by the SQL guard under the call's policy.
func (c *Call) guarded(q dbtool.Querier) (dbtool.Querier, error) {
	p := c.policy
	if p == nil {
		p = c.svc.c.read
	}
	return dbtool.Guarded(q, p)
}

// queryRow scans the one value of query's first row, which the guard
// judges first so that a refusal gives its reason.
func queryRow(ctx context.Context, q dbtool.Querier, text string, args []any, dst any) error {
	if err := dbtool.Prepare(ctx, q, text); err != nil {
		return err
	}
	return q.QueryRowContext(ctx, text, args...).Scan(dst)
}

// step runs one step.
func (s *Service) step(c *Call, st *Step) (any, error) {
	if st.Hook != "" {
		return nil, s.c.hooks.Steps[st.Hook](c)
	}
	ctx, p := c.Ctx, c.Params
	q, err := c.guarded(c.Q)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Check != "":
		if plan := selectPlanOf(st.Check); plan != nil && len(plan.cols) == 1 {
			if vals, found, ok := plan.row(p); ok {
				if !found || vals[0] == nil {
					return nil, nil
				}
				return nil, dbtool.BadCall("%s", asText(vals[0]))
			}
		}
		var msg sql.NullString
		text, a := bind(st.Check, p)
		err := queryRow(ctx, q, text, a, &msg)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("check: %w", err)
		case msg.Valid:
			return nil, dbtool.BadCall("%s", msg.String)
		}
		return nil, nil
	case st.Row != "":
		cols, vals, ok, err := firstRowOf(ctx, q, st.Row, p)
		if err != nil {
			return nil, fmt.Errorf("row: %w", err)
		}
		if !ok && st.Missing != "" {
			var msg sql.NullString
			text, a := bind(st.Missing, p)
			if err := queryRow(ctx, q, text, a, &msg); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("missing: %w", err)
			}
			if !msg.Valid {
				msg.String = "not found"
			}
			return nil, dbtool.BadCall("%s", msg.String)
		}
		for i, col := range cols {
			if ok {
				p[col] = vals[i]
			} else {
				p[col] = nil
			}
		}
		return nil, nil
	case st.Rows != "":
		arr, _, _, err := jsonRows(ctx, q, st.Rows, p, -1)
		if err != nil {
			return nil, fmt.Errorf("rows: %w", err)
		}
		p[st.As] = arr
		return nil, nil
	case st.Page != "":
		limit := int(integer(p[st.Limit]))
		if limit < 1 {
			return nil, fmt.Errorf("page: limit :%s is %v", st.Limit, p[st.Limit])
		}
		arr, last, more, err := jsonRows(ctx, q, st.Page, p, limit)
		if err != nil {
			return nil, fmt.Errorf("page: %w", err)
		}
		p[st.As] = arr
		if st.More != "" {
			p[st.More] = boolInt(more)
		}
		if st.NextAs != "" {
			p[st.NextAs] = nil
			if more && st.Next != "" {
				lp := overlay(p, last)
				if t := nextTermOf(st.Next); t != nil {
					if v, ok := t.eval(lp); ok {
						p[st.NextAs] = v
						return nil, nil
					}
				}
				var next sql.NullString
				text, a := bind("SELECT ("+st.Next+")", lp)
				if err := queryRow(ctx, q, text, a, &next); err != nil {
					return nil, fmt.Errorf("page next: %w", err)
				}
				if next.Valid {
					p[st.NextAs] = next.String
				}
			}
		}
		return nil, nil
	case st.Exec != "":
		text, a := bind(st.Exec, p)
		res, err := q.ExecContext(ctx, text, a...)
		if err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
		p["changes"] = n
		return nil, nil
	case st.Result != "":
		if t := resultTermOf(st.Result); t != nil {
			if out, ok := t.build(p); ok {
				return out, nil // []byte: the result is not copied again
			}
		}
		var v any
		text, a := bind(st.Result, p)
		if err := queryRow(ctx, q, text, a, &v); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		return v, nil
	}
	return nil, errors.New("empty step")
}

// overlay returns p overlaid with extra.
func overlay(p, extra map[string]any) map[string]any {
	out := make(map[string]any, len(p)+len(extra))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// A statement's :name parameters are bound by position: the engine
// prepares the statement with each :name written as ?, and binds the
// values in the order the names occur. Bound by name, the driver asks
// SQLite for every parameter's name on every call (a call into C and a
// string each) and looks it up; by position it takes the next value.

// bound is a statement as the engine prepares it.
type bound struct {
	text  string   // the SQL, :name written as ?
	names []string // the parameter of each ?, in order; nil: by name (byName)
	// byName holds the parameters of a statement left as written (one the
	// rewrite cannot be sure of), bound with sql.Named.
	byName []string
}

var bounds sync.Map // SQL -> *bound

// boundOf returns how query is prepared and bound.
func boundOf(query string) *bound {
	if v, ok := bounds.Load(query); ok {
		return v.(*bound)
	}
	b := positional(query)
	bounds.Store(query, b)
	return b
}

// positional rewrites query's :name parameters as ?, reading them as
// sqlParams does (outside quotes and -- comments); a statement with a
// block comment, a bracketed identifier or a parameter name that SQLite
// would read further (an upper-case letter, a $) is left as it is.
func positional(query string) *bound {
	var out strings.Builder
	var names []string
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := strings.IndexByte(query[i+1:], c)
			if j < 0 {
				return &bound{text: query, byName: sqlParams(query)}
			}
			out.WriteString(query[i : i+j+2])
			i += j + 1
			continue
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i - 1
			}
			out.WriteString(query[i : i+j+1])
			i += j
			continue
		case c == '/' && i+1 < len(query) && query[i+1] == '*', c == '[', c == '?', c == '@', c == '$':
			return &bound{text: query, byName: sqlParams(query)}
		case c == ':' && i+1 < len(query) && (query[i+1] == '_' || query[i+1] >= 'a' && query[i+1] <= 'z'):
			j := i + 1
			for j < len(query) && (query[j] == '_' || query[j] >= 'a' && query[j] <= 'z' || query[j] >= '0' && query[j] <= '9') {
				j++
			}
			if j < len(query) && (query[j] >= 'A' && query[j] <= 'Z' || query[j] == '$' || query[j] >= 0x80 || query[j] == ':') {
				return &bound{text: query, byName: sqlParams(query)}
			}
			names = append(names, query[i+1:j])
			out.WriteByte('?')
			i = j - 1
			continue
		case c == ':':
			return &bound{text: query, byName: sqlParams(query)}
		}
		out.WriteByte(c)
	}
	if names == nil {
		names = []string{}
	}
	return &bound{text: out.String(), names: names}
}

// bind returns the SQL to run for query and its arguments from p.
func bind(query string, p map[string]any) (string, []any) {
	b := boundOf(query)
	if b.names == nil {
		out := make([]any, len(b.byName))
		for i, n := range b.byName {
			out[i] = sql.Named(n, p[n])
		}
		return b.text, out
	}
	out := make([]any, len(b.names))
	for i, n := range b.names {
		out[i] = p[n]
	}
	return b.text, out
}

// firstRowOf is firstRow, evaluated in Go when query reads no table and
// Go can (rowTermOf, selectPlanOf).
func firstRowOf(ctx context.Context, q dbtool.Querier, query string, p map[string]any) (cols []string, vals []any, ok bool, err error) {
	if r := rowTermOf(query); r != nil {
		if vals, ok := r.eval(p); ok {
			return r.names, vals, true, nil
		}
	}
	if plan := selectPlanOf(query); plan != nil && !slices.Contains(plan.names, "") {
		if vals, found, ok := plan.row(p); ok {
			return plan.names, vals, found, nil
		}
	}
	return firstRow(ctx, q, query, p)
}

// firstRow returns the columns and the first row of query.
func firstRow(ctx context.Context, q dbtool.Querier, query string, p map[string]any) (cols []string, vals []any, ok bool, err error) {
	text, a := bind(query, p)
	rows, err := q.QueryContext(ctx, text, a...)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	if cols, err = rows.Columns(); err != nil {
		return nil, nil, false, err
	}
	if !rows.Next() {
		return cols, nil, false, rows.Err()
	}
	vals = make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, false, err
	}
	return cols, vals, true, nil
}

// jsonRows returns the first column of query's rows as a JSON array (each
// must be JSON text or a number or NULL), at most limit of them when limit
// is not -1, with the columns of the last one kept and whether there were
// more.
func jsonRows(ctx context.Context, q dbtool.Querier, query string, p map[string]any, limit int) (arr string, last map[string]any, more bool, err error) {
	if plan := objectRowsOf(query); plan != nil {
		arr, last, more, ok, err := plan.run(ctx, q, query, p, limit)
		if err != nil || ok {
			return arr, last, more, err
		}
	}
	text, a := bind(query, p)
	rows, err := q.QueryContext(ctx, text, a...)
	if err != nil {
		return "", nil, false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", nil, false, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var b strings.Builder
	b.WriteByte('[')
	n := 0
	for rows.Next() {
		if limit >= 0 && n == limit {
			more = true
			break
		}
		if err := ctx.Err(); err != nil {
			return "", nil, false, err // the statement bound
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", nil, false, err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONValue(&b, vals[0]); err != nil {
			return "", nil, false, fmt.Errorf("row %d: %w", n, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return "", nil, false, err
	}
	b.WriteByte(']')
	if n > 0 {
		last = make(map[string]any, len(cols))
		for i, c := range cols {
			last[c] = vals[i]
		}
	}
	return b.String(), last, more, nil
}

func writeJSONValue(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case int64, float64:
		j, _ := json.Marshal(x)
		b.Write(j)
	// The text is not validated here: the result's json(:X) parses it, and
	// Shape validates the result. Text that cannot start a JSON value is
	// refused with the fix.
	case string:
		if !startsJSON(x) {
			return fmt.Errorf("the first column %.60q is not JSON: write json_object(...) or json_quote(...)", x)
		}
		b.WriteString(x)
	case []byte:
		if !startsJSON(string(x)) {
			return fmt.Errorf("the first column is not JSON: write json_object(...) or json_quote(...)")
		}
		b.Write(x)
	default:
		return fmt.Errorf("the first column is a %T", v)
	}
	return nil
}

// condition is the statement that evaluates an if: as SQLite's WHERE
// would (NULL is false, a number is true when not zero).
func condition(expr string) string { return "SELECT CASE WHEN (" + expr + ") THEN 1 ELSE 0 END" }

// startsJSON reports whether s can start a JSON value.
func startsJSON(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r")
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '{' || c == '[' || c == '"' || c == '-' || c >= '0' && c <= '9':
		return true
	}
	return s == "true" || s == "false" || s == "null"
}

// run runs the plan's statement; ok is false when a value needs SQLite's
// own statement.
func (plan *objectRows) run(ctx context.Context, q dbtool.Querier, query string, p map[string]any, limit int) (arr string, last map[string]any, more, ok bool, err error) {
	text, a := bind(plan.query, p)
	rows, err := q.QueryContext(ctx, text, a...)
	if err != nil {
		return "", nil, false, false, nil // the statement as written says what is wrong
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", nil, false, false, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	b := make([]byte, 1, 4096)
	b[0] = '['
	n := 0
	var lastObject []byte
	for rows.Next() {
		if limit >= 0 && n == limit {
			more = true
			break
		}
		if err := ctx.Err(); err != nil {
			return "", nil, false, false, err // the statement bound
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", nil, false, false, err
		}
		if n > 0 {
			b = append(b, ',')
		}
		from := len(b)
		if b, ok = plan.appendObject(b, vals); !ok {
			return "", nil, false, false, nil
		}
		lastObject = b[from:]
		n++
	}
	if err := rows.Err(); err != nil {
		return "", nil, false, false, err
	}
	b = append(b, ']')
	if n > 0 {
		nk := plan.width
		last = make(map[string]any, len(cols)-nk+1)
		last[plan.name] = string(lastObject)
		for i, c := range cols[nk:] {
			last[c] = vals[nk+i]
		}
	}
	return string(b), last, more, true, nil
}

// Builtin returns the compiled definition of a service built into the
// program (its service.yaml embedded as src, with its Go hooks), compiled
// once, on first use, and shared by every instance. The definition is part
// of the program, so a definition that does not compile is a programming
// error: it panics with the problems (every built-in is compiled by its
// tests).
func Builtin(name string, src []byte, h Hooks) func() *Compiled {
	return sync.OnceValue(func() *Compiled {
		d, err := Parse(src)
		if err == nil {
			var c *Compiled
			if c, err = Compile(d, h); err == nil {
				return c
			}
		}
		panic(name + ": service.yaml: " + err.Error())
	})
}
