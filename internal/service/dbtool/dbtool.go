// Package dbtool is the plumbing every MCP service shares: its database,
// held open between calls and reopened when the file under its path is
// replaced (a vanished file is an error, never recreated empty), reads on a
// read-only handle, writes in one BEGIN IMMEDIATE transaction, and the tool
// handler that turns a failure the model can fix into an isError result and
// any other failure into a logged, detail-free one. It imports
// internal/state only.
package dbtool

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/state"
)

// Log attribute keys.
const (
	LogKeyTool = "tool"
	LogKeyErr  = "err"
	LogKeyDB   = "db"
)

// DB is one service's database, on one connection that stays open between
// calls (an open costs more than most tool calls), with the statements the
// tools run prepared once. Reads and writes share it, so a write does not
// make the next read reload its pages; reads run in a transaction that is
// rolled back, so a read tool cannot write. The connection is reopened when the file at
// Path is a different file than the one it holds (compared by device and
// inode on every call). An instance reset replaces the file under the same
// path, on an overlay possibly with the same inode number, so the runtime
// brackets every reset with Suspend.
type DB struct {
	// Service names the service in errors and logs ("tasks").
	Service string
	// Path is the world's db/NAME.sqlite.
	Path string
	// Log receives internal failures; it must not be nil.
	Log *slog.Logger
	// Ephemeral keeps the rollback journal of writes in memory and skips
	// fsync (PRAGMA journal_mode=MEMORY, synchronous=OFF): for a world
	// that is a throwaway copy, where a crash mid-write may leave the
	// database torn. Otherwise writes use a journal file and fsync.
	Ephemeral bool

	// gate is held shared by every call and exclusively by Suspend.
	gate sync.RWMutex
	// mu serialises this process's calls on the connection; BEGIN
	// IMMEDIATE serialises writes against other processes.
	mu sync.Mutex
	h  handle
}

// handle is the open connection and its prepared statements; DB.mu guards
// it.
type handle struct {
	db    *sql.DB
	conn  *sql.Conn
	file  fileID // the file conn holds
	stmts map[string]*sql.Stmt
}

// fileID identifies a file while it exists.
type fileID struct{ dev, ino uint64 }

// maxStmts bounds the prepared statements (a tool that builds its SQL
// could otherwise grow the cache without end).
const maxStmts = 128

// Querier is what tools need of *sql.DB and *sql.Conn.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open opens a new handle to the database, which must exist; the caller
// closes it. Tools use Read and Write, which keep their connection open.
func (d *DB) Open(readOnly bool) (*sql.DB, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return nil, fmt.Errorf("%s database: %w", d.Service, err)
	}
	return state.OpenDB(d.Path, readOnly)
}

// open makes d.h hold a connection to the file now at
// d.Path, closing one to a file since replaced or removed; d.mu is held.
func (d *DB) open(ctx context.Context) error {
	h := &d.h
	fi, err := os.Stat(d.Path)
	if err != nil {
		h.close()
		return fmt.Errorf("%s database: %w", d.Service, err)
	}
	var id fileID
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	if h.conn != nil && h.file == id {
		return nil
	}
	h.close()
	db, err := state.OpenDB(d.Path, false)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err == nil && d.Ephemeral {
		_, err = conn.ExecContext(ctx, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF")
	}
	if err != nil {
		db.Close()
		return fmt.Errorf("%s database: %w", d.Service, err)
	}
	*h = handle{db: db, conn: conn, file: id, stmts: map[string]*sql.Stmt{}}
	return nil
}

// close closes h's statements and connection.
func (h *handle) close() error {
	if h.db == nil {
		return nil
	}
	var errs []error
	for _, st := range h.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, h.conn.Close(), h.db.Close())
	*h = handle{}
	return errors.Join(errs...)
}

// Close closes the database's connection; the next call opens it again.
func (d *DB) Close() error {
	d.gate.Lock()
	defer d.gate.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.h.close()
}

// Suspend waits for the calls in flight, closes the database and holds
// every new call until resume is called; the first call after it opens
// the database again. The runtime suspends every service of an instance
// around its reset, so no connection keeps the replaced file (or its
// mount) alive.
func (d *DB) Suspend() (resume func()) {
	d.gate.Lock()
	d.mu.Lock()
	if err := d.h.close(); err != nil {
		d.Log.Error(d.Service+" database close failed", LogKeyDB, d.Path, LogKeyErr, err)
	}
	d.mu.Unlock()
	var once sync.Once
	return func() { once.Do(d.gate.Unlock) }
}

// Read runs fn in a transaction that is always rolled back, so a read
// tool cannot change the database; one that tried gets an error.
func (d *DB) Read(ctx context.Context, fn func(q Querier) error) error {
	d.gate.RLock()
	defer d.gate.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.open(ctx); err != nil {
		return err
	}
	q := stmtQuerier{&d.h}
	before, err := q.totalChanges(ctx)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err = fn(q)
	after, cerr := q.totalChanges(context.WithoutCancel(ctx))
	if _, rerr := q.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		d.h.close() // a connection whose state is in doubt is not reused
		return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	switch {
	case err != nil:
		return err
	case cerr != nil:
		return cerr
	case after != before:
		return fmt.Errorf("%s: a read changed %d rows (rolled back): the tool must use Write", d.Service, after-before)
	}
	return nil
}

// Write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise (a tool error changes nothing).
func (d *DB) Write(ctx context.Context, fn func(q Querier) error) (err error) {
	d.gate.RLock()
	defer d.gate.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.open(ctx); err != nil {
		return err
	}
	q := stmtQuerier{&d.h}
	bg := context.WithoutCancel(ctx)
	if _, err := q.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(q); err != nil {
		if _, rerr := q.ExecContext(bg, "ROLLBACK"); rerr != nil {
			d.h.close() // a connection whose state is in doubt is not reused
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := q.ExecContext(bg, "COMMIT"); err != nil {
		q.ExecContext(bg, "ROLLBACK")
		d.h.close()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// stmtQuerier runs queries on a handle's connection through its prepared
// statements: SQLite parses and plans each distinct statement once per
// connection instead of on every call.
type stmtQuerier struct{ h *handle }

// stmt returns the prepared statement for query, or nil when query holds
// several statements (which Prepare would cut to the first) and must run
// as it is.
func (q stmtQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := q.h.stmts[query]; ok {
		return st, nil
	}
	if strings.Contains(strings.TrimRight(strings.TrimSpace(query), "; \t\n"), ";") {
		return nil, nil
	}
	st, err := q.h.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(q.h.stmts) >= maxStmts {
		for k, old := range q.h.stmts {
			old.Close()
			delete(q.h.stmts, k)
		}
	}
	q.h.stmts[query] = st
	return st, nil
}

// totalChanges is the number of rows the connection has changed since it
// opened.
func (q stmtQuerier) totalChanges(ctx context.Context) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT total_changes()").Scan(&n); err != nil {
		return 0, fmt.Errorf("total_changes: %w", err)
	}
	return n, nil
}

func (q stmtQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		return q.h.conn.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (q stmtQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		return q.h.conn.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (q stmtQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		// Running it unprepared reports the same error through the Row.
		return q.h.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// ToolError is a failure the model can fix; its message names the problem
// and the fix.
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

// BadCall returns a ToolError.
func BadCall(format string, args ...any) error {
	return &ToolError{Msg: fmt.Sprintf(format, args...)}
}

// AddTool registers fn as the tool t on srv. Its input and output JSON
// Schemas are derived from In and Out (as the SDK's mcp.AddTool derives
// them), but the arguments are checked against In by a decoder built once
// here rather than by a general schema validator on every call, and the
// output is encoded once, not validated against its own schema: together
// that is most of the SDK's per-call cost. A bad argument (not an object,
// an unknown or missing field, a wrong type) is an isError result that
// names the field and what the tool takes; fn is then not called.
// A ToolError from fn becomes an isError result with its message; any
// other error is logged and becomes an isError result that says the
// service failed, without internal detail.
func AddTool[In, Out any](srv *mcp.Server, d *DB, t *mcp.Tool, fn func(context.Context, In) (Out, error)) {
	inSchema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("%s: tool %s: input schema: %v", d.Service, t.Name, err))
	}
	outSchema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("%s: tool %s: output schema: %v", d.Service, t.Name, err))
	}
	tt := *t
	tt.InputSchema, tt.OutputSchema = inSchema, outSchema
	args := newArgChecker(t.Name, inSchema)
	srv.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := args.decode(req.Params.Arguments, &in); err != nil {
			return errorResult(err), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			var te *ToolError
			if !errors.As(err, &te) {
				d.Log.ErrorContext(ctx, d.Service+" tool failed", LogKeyTool, t.Name, LogKeyDB, d.Path, LogKeyErr, err)
				err = fmt.Errorf("%s failed: the %s service had an internal error and changed nothing; try again later", t.Name, d.Service)
			}
			return errorResult(err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			d.Log.ErrorContext(ctx, d.Service+" tool output failed", LogKeyTool, t.Name, LogKeyErr, err)
			return errorResult(fmt.Errorf("%s failed: the %s service could not encode its answer; try again later", t.Name, d.Service)), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
		}, nil
	})
}

func errorResult(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// argChecker checks a tool's arguments against its input schema's top
// level (which keys exist, which are required, what type each is) and
// decodes them into the input type, rejecting unknown fields at any depth.
type argChecker struct {
	tool     string
	props    map[string]*jsonschema.Schema
	names    string // the property names, for messages
	required []string
}

func newArgChecker(tool string, s *jsonschema.Schema) *argChecker {
	c := &argChecker{tool: tool, props: s.Properties, required: s.Required}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		c.names = "no arguments"
	} else {
		c.names = "the arguments " + strings.Join(names, ", ")
	}
	return c
}

// decode checks raw and decodes it into in (a pointer to the input type).
func (c *argChecker) decode(raw json.RawMessage, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return BadCall("%s takes a JSON object of named arguments (%s); got %s", c.tool, c.names, jsonKind(raw))
	}
	for name, v := range fields {
		p, ok := c.props[name]
		if !ok {
			return BadCall("%s has no argument %q; it takes %s", c.tool, name, c.names)
		}
		if want := schemaType(p); want != "" && !kindMatches(v, want) {
			return BadCall("argument %q of %s must be %s, not %s", name, c.tool, article(want), jsonKind(v))
		}
	}
	for _, name := range c.required {
		if _, ok := fields[name]; !ok {
			return BadCall("argument %q of %s is required%s", name, c.tool, describe(c.props[name]))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return BadCall("argument %q of %s must be %s, not %s", te.Field, c.tool, te.Type.String(), te.Value)
		}
		return BadCall("the arguments of %s are not valid: %v", c.tool, err)
	}
	return nil
}

// schemaType is the JSON type a property's schema names ("" if it names
// none or several, other than null).
func schemaType(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	var t string
	for _, x := range s.Types {
		if x == "null" {
			continue
		}
		if t != "" {
			return ""
		}
		t = x
	}
	return t
}

// kindMatches reports whether the JSON value v is of type want.
func kindMatches(v json.RawMessage, want string) bool {
	got := jsonKind(v)
	switch want {
	case "integer":
		if got != "number" {
			return false
		}
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case "number":
		return got == "number"
	}
	return got == want
}

// jsonKind names the JSON type of v as JSON Schema does.
func jsonKind(v json.RawMessage) string {
	b := bytes.TrimSpace(v)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func describe(s *jsonschema.Schema) string {
	if s == nil || s.Description == "" {
		return ""
	}
	return ": " + s.Description
}

// URIEscape percent-encodes every byte of s but RFC 3986's unreserved
// characters, for an id in a resource URI. url.PathEscape keeps characters
// such as "&", "'" and "+", which the SDK's match of a URI against a {var}
// template refuses, and a seeded id may hold any of them.
func URIEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ResourceHandler returns the handler of a resource template whose URIs are
// prefix followed by segments keys, each escaped with URIEscape and joined
// by "/" (notes://note/{note}: segments 1). It unescapes the keys and runs
// render in a Read; render returns the resource's text, or a ToolError or
// sql.ErrNoRows when the keys name nothing, which (like a URI that does not
// parse) is answered with mcp.ResourceNotFoundError. Any other failure is
// logged and answered without internal detail.
func (d *DB) ResourceHandler(prefix, mimeType string, segments int, render func(ctx context.Context, q Querier, keys []string) (string, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		keys, ok := resourceKeys(uri, prefix, segments)
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var text string
		err := d.Read(ctx, func(q Querier) error {
			var err error
			text, err = render(ctx, q, keys)
			return err
		})
		var te *ToolError
		switch {
		case errors.As(err, &te), errors.Is(err, sql.ErrNoRows):
			return nil, mcp.ResourceNotFoundError(uri)
		case err != nil:
			d.Log.ErrorContext(ctx, d.Service+" resource failed", LogKeyDB, d.Path, LogKeyErr, err)
			return nil, fmt.Errorf("reading %s: internal error in the %s service", uri, d.Service)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text}}}, nil
	}
}

// resourceKeys splits the part of uri after prefix into segments keys and
// unescapes each; false if uri does not have that shape or a key is empty.
func resourceKeys(uri, prefix string, segments int) ([]string, bool) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != segments {
		return nil, false
	}
	for i, p := range parts {
		k, err := url.PathUnescape(p)
		if err != nil || k == "" {
			return nil, false
		}
		parts[i] = k
	}
	return parts, true
}
