package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// Lint checks what Validate cannot without a database: it builds the
// definition's test world in a temporary directory, prepares every SQL
// text of every step against its schema (an unknown table, column or
// function, a syntax error), and runs the example calls through an MCP
// client. A definition without a test world gets only the prepare check,
// over an empty database.
func Lint(ctx context.Context, c *Compiled) (*LintReport, error) {
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
	if err := writeWorld(ctx, tmp, d, test); err != nil {
		return nil, fmt.Errorf("building the test world: %w", err)
	}
	r.Problems = append(r.Problems, prepareAll(ctx, tmp, d)...)
	now, _ := parseNow(test.Now)
	svc, err := New(c, Options{WorldDir: tmp, Clock: world.FixedClock(now), Self: test.Self, SelfAddress: test.SelfAddress})
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
		case res.IsError && strings.Contains(contentText(res), "internal error"):
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

// writeWorld writes the test world of d into dir.
func writeWorld(ctx context.Context, dir string, d *Definition, test *Test) error {
	if err := os.MkdirAll(filepath.Join(dir, world.DBDir), 0o755); err != nil {
		return err
	}
	dbs := map[string][]string{d.Name: append(d.Schema(), test.SQL...)}
	for name, stmts := range test.Other {
		dbs[name] = stmts
	}
	for name, stmts := range dbs {
		db, err := state.OpenDB(world.DBPath(dir, name), false)
		if err != nil {
			return err
		}
		for i, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				db.Close()
				return fmt.Errorf("%s statement %d: %w", name, i, err)
			}
		}
		if err := db.Close(); err != nil {
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

// prepareAll prepares every SQL text of d's steps on the database it runs
// on, and lists those SQLite refuses.
func prepareAll(ctx context.Context, dir string, d *Definition) []string {
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	open := func(name string) *sql.DB {
		if db, ok := dbs[name]; ok {
			return db
		}
		db, err := state.OpenDB(world.DBPath(dir, name), true)
		if err != nil {
			db = nil
		}
		dbs[name] = db
		return db
	}
	var p []string
	check := func(where string, steps []Step) {
		for i, st := range steps {
			name := d.Name
			if st.DB != "" {
				name = st.DB
			}
			db := open(name)
			if db == nil {
				continue // a database only the real world has
			}
			for _, q := range []struct{ field, sql string }{
				{"if", wrap(st.If)}, {"check", st.Check}, {"row", st.Row}, {"missing", st.Missing}, {"rows", st.Rows},
				{"page", st.Page}, {"next", wrap(st.Next)}, {"exec", st.Exec}, {"result", st.Result},
			} {
				if strings.TrimSpace(q.sql) == "" {
					continue
				}
				// An exec step is prepared inside a transaction that is
				// rolled back: preparing never runs it, but say so.
				stmt, err := db.PrepareContext(ctx, q.sql)
				if err != nil {
					p = append(p, fmt.Sprintf("%s.steps[%d].%s: %v", where, i, q.field, err))
					continue
				}
				stmt.Close()
			}
		}
	}
	for i, t := range d.Tools {
		check(fmt.Sprintf("tools[%d] (%s)", i, t.Name), t.Steps)
	}
	for i, r := range d.Resources {
		check(fmt.Sprintf("resources[%d] (%s)", i, r.Name), r.Steps)
	}
	// Operations' checks and conditions run on the parameters alone.
	mem, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return append(p, err.Error())
	}
	defer mem.Close()
	for i, o := range d.Ops {
		for j, st := range o.Checks {
			if stmt, err := mem.PrepareContext(ctx, st.Check); err != nil {
				p = append(p, fmt.Sprintf("ops[%d] (%s).checks[%d]: %v", i, o.Name, j, err))
			} else {
				stmt.Close()
			}
		}
		for j, e := range o.Emit {
			if e.If == "" {
				continue
			}
			if stmt, err := mem.PrepareContext(ctx, condition(e.If)); err != nil {
				p = append(p, fmt.Sprintf("ops[%d] (%s).emit[%d].if: %v", i, o.Name, j, err))
			} else {
				stmt.Close()
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
