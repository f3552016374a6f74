package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/sqlguard"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// LintReport is what Lint found.
type LintReport struct {
	Tools, Resources, Ops, Calls int
	// Problems are statements SQLite cannot prepare against the schema,
	// and example calls that failed inside the service (not a tool error
	// the model could fix, which an example may show on purpose).
	Problems []string
}

// LintOptions tune Lint; the zero value means the defaults.
type LintOptions struct {
	// SQLTimeout bounds each statement lint runs (the test world's SQL)
	// and each step of an example call; zero means sqlguard.DefaultTimeout.
	SQLTimeout time.Duration
}

// Lint checks what Validate cannot without a database: it builds the
// definition's test world in a temporary directory, prepares every SQL
// text of every step against its schema (an unknown table, column or
// function, a syntax error), and runs the example calls through an MCP
// client. A definition without a test world gets only the prepare check,
// over an empty database.
//
// Every statement runs under the SQL guard (sqlguard) of the definition's
// policies, as at call time, and within the statement bound: a definition
// cannot attach, vacuum into or otherwise create or touch a file outside
// the temporary world, read the host through a pragma, run two statements
// in one step, or hang lint.
func Lint(ctx context.Context, c *Compiled) (*LintReport, error) {
	return LintWith(ctx, c, LintOptions{})
}

// LintWith is Lint with options.
func LintWith(ctx context.Context, c *Compiled, o LintOptions) (*LintReport, error) {
	d := c.Def
	r := &LintReport{Tools: len(d.Tools), Resources: len(d.Resources), Ops: len(d.Ops)}
	tmp, err := os.MkdirTemp("", "wildawm-lint-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	test := d.Test
	if test == nil {
		test = &Test{Self: "Alex", Now: "2026-01-01T00:00:00Z"}
	}
	if err := writeGuardedWorld(ctx, tmp, d, test, o.SQLTimeout); err != nil {
		return nil, fmt.Errorf("building the test world: %w", err)
	}
	r.Problems = append(r.Problems, prepareAll(ctx, tmp, c)...)
	now, _ := parseNow(test.Now)
	svc, err := New(c, Options{WorldDir: tmp, Clock: world.FixedClock(now), Self: test.Self, SelfAddress: test.SelfAddress, SQLTimeout: o.SQLTimeout})
	if err != nil {
		return nil, err
	}
	var failed []string
	ct, st := mcp.NewInMemoryTransports()
	ss, err := svc.Server().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wildawm-lint", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	for i, call := range test.Calls {
		r.Calls++
		where := fmt.Sprintf("test.calls[%d]", i)
		if call.Resource != "" {
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: call.Resource}); err != nil && strings.Contains(err.Error(), "internal error") {
				failed = append(failed, fmt.Sprintf("%s (%s): %v", where, call.Resource, err))
			}
			continue
		}
		args := call.Args
		if args == nil {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: args})
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s (%s): %v", where, call.Tool, err))
		case res.IsError && (strings.Contains(contentText(res), "internal error") || strings.Contains(contentText(res), TimeoutMessage)):
			failed = append(failed, fmt.Sprintf("%s (%s): %s", where, call.Tool, contentText(res)))
		}
	}
	r.Problems = append(r.Problems, failed...)
	return r, nil
}

func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// WriteTestWorld writes the definition's test world into dir (created): a
// manifest at the test clock, no accounts, the service's database with its
// schema and rows, the other databases and the home files.
func WriteTestWorld(ctx context.Context, dir string, d *Definition) error {
	if d.Test == nil {
		return fmt.Errorf("%s has no test world (test:)", d.Name)
	}
	if err := writeWorld(ctx, dir, d, d.Test); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, world.HomeDir), 0o755); err != nil {
		return err
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: "test-persona", Clock: d.Test.Now}
	if err := world.WriteManifest(dir, m); err != nil {
		return err
	}
	return world.WriteAccounts(dir, nil)
}

// schemaPolicy is what the SQL that builds a test world (the schema, the
// test rows, the other databases) may do under the SQL guard.
func schemaPolicy(d *Definition) *sqlguard.Policy {
	return &sqlguard.Policy{Who: "the schema or test world of " + d.Name, Write: true, Schema: true, Recursive: true}
}

// writeWorld writes the test world of d into dir.
func writeWorld(ctx context.Context, dir string, d *Definition, test *Test) error {
	return writeGuardedWorld(ctx, dir, d, test, 0)
}

// writeGuardedWorld writes the test world of d into dir, every statement
// one statement, under the SQL guard and within the bound limit.
func writeGuardedWorld(ctx context.Context, dir string, d *Definition, test *Test, limit time.Duration) error {
	policy := schemaPolicy(d)
	if err := os.MkdirAll(filepath.Join(dir, world.DBDir), 0o755); err != nil {
		return err
	}
	dbs := map[string][]string{d.Name: append(d.Schema(), test.SQL...)}
	for name, stmts := range test.Other {
		dbs[name] = stmts
	}
	for name, stmts := range dbs {
		if err := world.ValidDBName(name); err != nil {
			return fmt.Errorf("test.other: %w", err)
		}
		conn, closeDB, err := guardedConn(ctx, world.DBPath(dir, name), false)
		if err != nil {
			return err
		}
		for i, s := range stmts {
			err := runGuarded(ctx, conn, policy, s, limit, func(ctx context.Context) error {
				_, err := conn.db.ExecContext(ctx, s)
				return err
			})
			if err != nil {
				closeDB()
				return fmt.Errorf("%s statement %d: %w", name, i, err)
			}
		}
		if err := closeDB(); err != nil {
			return err
		}
	}
	for rel, content := range test.Files {
		p, err := world.HomePath(dir, rel)
		if err != nil {
			return fmt.Errorf("test.files: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// conn is one pinned connection with the SQL guard installed.
type conn struct {
	db    *sql.Conn
	guard *sqlguard.Guard
}

// guardedConn opens the database at path on one connection with the SQL
// guard installed; closeDB closes both.
func guardedConn(ctx context.Context, path string, readOnly bool) (*conn, func() error, error) {
	db, err := state.OpenDB(path, readOnly)
	if err != nil {
		return nil, nil, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	g := &sqlguard.Guard{}
	if err := g.Install(c); err != nil {
		c.Close()
		db.Close()
		return nil, nil, err
	}
	return &conn{db: c, guard: g}, func() error {
		err := c.Close()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// runGuarded runs f, which compiles and runs the one statement q, under
// the guard with policy p and within the bound limit.
func runGuarded(ctx context.Context, c *conn, p *sqlguard.Policy, q string, limit time.Duration, f func(ctx context.Context) error) error {
	if _, err := sqlguard.One(q); err != nil {
		return err
	}
	return sqlguard.Bound(ctx, limit, func(ctx context.Context) error {
		return c.guard.Run(p, func() error { return f(ctx) })
	})
}

// prepareAll prepares every SQL text of c's steps on the database it runs
// on, under the SQL guard with the policy it runs under, and lists those
// SQLite or the guard refuses. Preparing runs nothing.
func prepareAll(ctx context.Context, dir string, c *Compiled) []string {
	d := c.Def
	type open struct {
		c     *conn
		close func() error
	}
	dbs := map[string]*open{}
	defer func() {
		for _, db := range dbs {
			if db != nil {
				db.close()
			}
		}
	}()
	get := func(name string) *conn {
		if db, ok := dbs[name]; ok {
			if db == nil {
				return nil
			}
			return db.c
		}
		cn, closeDB, err := guardedConn(ctx, world.DBPath(dir, name), true)
		if err != nil {
			dbs[name] = nil
			return nil
		}
		dbs[name] = &open{cn, closeDB}
		return cn
	}
	prepare := func(cn *conn, p *sqlguard.Policy, q string) error {
		return runGuarded(ctx, cn, p, q, 0, func(ctx context.Context) error {
			st, err := cn.db.PrepareContext(ctx, q)
			if err != nil {
				return err
			}
			return st.Close()
		})
	}
	var p []string
	check := func(where string, steps []Step, policy *sqlguard.Policy) {
		for i, st := range steps {
			name := d.Name
			pol := policy
			if st.DB != "" {
				name, pol = st.DB, c.read
			}
			cn := get(name)
			if cn == nil {
				continue // a database only the real world has
			}
			for _, q := range []struct{ field, sql string }{
				{"if", wrap(st.If)}, {"check", st.Check}, {"row", st.Row}, {"missing", st.Missing}, {"rows", st.Rows},
				{"page", st.Page}, {"next", wrap(st.Next)}, {"exec", st.Exec}, {"result", st.Result},
			} {
				if strings.TrimSpace(q.sql) == "" {
					continue
				}
				// Preparing never runs an exec step.
				if err := prepare(cn, pol, q.sql); err != nil {
					p = append(p, fmt.Sprintf("%s.steps[%d].%s: %v", where, i, q.field, err))
				}
			}
		}
	}
	for i, t := range d.Tools {
		pol := c.write
		if t.Annotations.ReadOnly {
			pol = c.read
		}
		check(fmt.Sprintf("tools[%d] (%s)", i, t.Name), t.Steps, pol)
	}
	for i, r := range d.Resources {
		check(fmt.Sprintf("resources[%d] (%s)", i, r.Name), r.Steps, c.read)
	}
	// Operations' checks and conditions run on the parameters alone.
	mem, closeMem, err := guardedConn(ctx, ":memory:", false)
	if err != nil {
		return append(p, err.Error())
	}
	defer closeMem()
	for i, o := range d.Ops {
		for j, st := range o.Checks {
			if err := prepare(mem, c.read, st.Check); err != nil {
				p = append(p, fmt.Sprintf("ops[%d] (%s).checks[%d]: %v", i, o.Name, j, err))
			}
		}
		for j, e := range o.Emit {
			if e.If == "" {
				continue
			}
			if err := prepare(mem, c.read, condition(e.If)); err != nil {
				p = append(p, fmt.Sprintf("ops[%d] (%s).emit[%d].if: %v", i, o.Name, j, err))
			}
		}
	}
	return p
}

func wrap(expr string) string {
	if strings.TrimSpace(expr) == "" {
		return ""
	}
	return "SELECT (" + expr + ")"
}
