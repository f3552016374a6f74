package sqlguard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// DefaultTimeout bounds one statement when its caller sets no bound.
const DefaultTimeout = 10 * time.Second

// ErrRefused is matched by errors.Is when the guard refused a statement.
var ErrRefused = errors.New("SQL refused")

// ErrTimeout is matched by errors.Is when a statement did not finish within
// its bound.
var ErrTimeout = errors.New("SQL statement did not finish in time")

// SchemaPragmas are the only pragmas a policy may allow: they describe the
// world's own schema and change nothing. Every other pragma, as a PRAGMA
// statement or a table-valued function (pragma_database_list gives a host
// path, pragma_compile_options the build), is refused.
var schemaPragmas = []string{"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list"}

// SchemaPragmas returns the pragmas a Policy may allow (a copy).
func SchemaPragmas() []string { return slices.Clone(schemaPragmas) }

// hostTables are eponymous virtual tables that read the host, the build or
// the connection's history rather than the world.
var hostTables = []string{"sqlite_stmt", "sqlite_dbpage", "dbstat"}

// deniedFunctions are functions no statement may call: they load code or
// read and write host files when the build has them.
var deniedFunctions = []string{"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}

// Policy is what one kind of SQL may do beyond reading the world's tables.
// The zero Policy allows reads only. Every policy refuses ATTACH and
// DETACH, VACUUM, PRAGMA and the pragma_* tables (but Pragmas), the tables
// that read the host, load_extension and its kind, transaction control
// (BEGIN, COMMIT, SAVEPOINT: the caller owns the transaction) and CREATE
// TABLE ... AS SELECT.
type Policy struct {
	// Who names the SQL's author in refusals ("a delta", "a read-only
	// tool").
	Who string
	// Write allows INSERT, UPDATE and DELETE.
	Write bool
	// Schema allows DDL: creating, altering and dropping tables, indexes,
	// views, triggers and virtual tables, and ANALYZE and REINDEX.
	Schema bool
	// Recursive allows WITH RECURSIVE, then bounded only by the
	// statement's deadline.
	Recursive bool
	// Pragmas are the pragmas (of SchemaPragmas) allowed as table-valued
	// functions and as PRAGMA statements that read.
	Pragmas []string
}

func (p *Policy) who() string {
	if p.Who == "" {
		return "this SQL"
	}
	return p.Who
}

// Guard is the authorizer of one connection (Install). It judges only the
// statements compiled inside Run; the rest (the caller's BEGIN, COMMIT and
// schema reads) pass. A connection is used by one goroutine at a time, and
// so is its Guard.
type Guard struct {
	// interrupt stops the statement running on the connection (Watch).
	interrupt func()

	p     *Policy // nil: off
	table bool    // the statement creates a table
	view  string  // the view the statement creates, if any
	why   string  // the first refusal of the statement
}

// Install registers g as the authorizer of the connection behind c.
func (g *Guard) Install(c *sql.Conn) error {
	return c.Raw(func(dc any) error { return g.InstallDriver(dc) })
}

// InstallDriver registers g as the authorizer of a driver connection (the
// argument of sql.Conn.Raw).
func (g *Guard) InstallDriver(dc any) error {
	r, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return errors.New("the SQLite driver has no authorizer: refusing to run SQL without the guard")
	}
	interrupt, err := interrupter(dc)
	if err != nil {
		return err
	}
	g.interrupt = interrupt
	return r.RegisterAuthorizer(g.authorize)
}

// Run runs f, which compiles (and may run) statements of the policy's
// author, with the guard on. A refusal is returned as an error wrapping
// ErrRefused with the guard's reason, rather than SQLite's "not
// authorized".
func (g *Guard) Run(p *Policy, f func() error) error {
	if p == nil {
		p = &Policy{}
	}
	g.p, g.table, g.view, g.why = p, false, "", ""
	err := f()
	g.p = nil
	if g.why != "" {
		return &refusal{why: g.why}
	}
	return err
}

// View returns the view the last statement run under Run created, or "".
// A caller compiles it (SELECT * FROM it) under the guard, so a refusal in
// its body is reported by the statement that created it.
func (g *Guard) View() string { return g.view }

// refusal is the error of a statement the guard refused.
type refusal struct{ why string }

func (r *refusal) Error() string        { return r.why }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

// Refused returns an error wrapping ErrRefused with the reason why.
func Refused(why string) error { return &refusal{why: why} }

func (g *Guard) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	p := g.p
	if p == nil {
		return sqlite.AuthorizerOK
	}
	why := g.judge(p, action, arg1, arg2)
	if why == "" {
		return sqlite.AuthorizerOK
	}
	if g.why == "" {
		g.why = why
	}
	return sqlite.AuthorizerDeny
}

func (g *Guard) judge(p *Policy, action sqlite.AuthorizerActionCode, arg1, arg2 string) string {
	switch action {
	case sqlite.AuthSelect:
		if g.table {
			return "CREATE TABLE ... AS SELECT writes rows outside db.insert: declare the columns (CREATE TABLE t (a, b)) and add the rows with db.insert"
		}
		return ""
	case sqlite.AuthRead:
		t := strings.ToLower(arg1)
		if name, ok := strings.CutPrefix(t, "pragma_"); ok {
			if slices.Contains(p.Pragmas, name) {
				return ""
			}
			return fmt.Sprintf("%s reads the host or the connection, not the world (pragma_database_list, for one, gives a host path): %s may not read it", arg1, p.who())
		}
		if slices.Contains(hostTables, t) {
			return fmt.Sprintf("%s reads the host or the connection, not the world: %s may not read it", arg1, p.who())
		}
		return ""
	case sqlite.AuthFunction:
		if slices.Contains(deniedFunctions, strings.ToLower(arg2)) {
			return fmt.Sprintf("%s() reads the host or loads code: %s may not call it", arg2, p.who())
		}
		return ""
	case sqlite.AuthRecursive:
		if p.Recursive {
			return ""
		}
		return "a recursive common table expression (WITH RECURSIVE) may never end: write the values as literals or the rows with db.insert"
	case sqlite.AuthPragma:
		if slices.Contains(p.Pragmas, strings.ToLower(arg1)) {
			return "" // a schema pragma, which reads
		}
		return fmt.Sprintf("PRAGMA %s is not allowed in %s", arg1, p.who())
	case sqlite.AuthAttach, sqlite.AuthDetach:
		return fmt.Sprintf("ATTACH and DETACH are not allowed in %s: it reaches one database, the world's own", p.who())
	case sqlite.AuthTransaction, sqlite.AuthSavepoint:
		return fmt.Sprintf("BEGIN, COMMIT, ROLLBACK and SAVEPOINT are not allowed in %s: the caller owns the transaction", p.who())
	case sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete:
		if p.Write || p.Schema {
			return ""
		}
		return fmt.Sprintf("%s may only read: it cannot insert, update or delete rows (of %s)", p.who(), arg1)
	case sqlite.AuthCreateTable, sqlite.AuthCreateTempTable:
		g.table = true
	case sqlite.AuthCreateView, sqlite.AuthCreateTempView:
		g.view = arg1
	case sqlite.AuthCreateIndex, sqlite.AuthCreateTempIndex, sqlite.AuthCreateTrigger, sqlite.AuthCreateTempTrigger,
		sqlite.AuthCreateVTable, sqlite.AuthDropVTable, sqlite.AuthAlterTable, sqlite.AuthAnalyze, sqlite.AuthReindex,
		sqlite.AuthDropIndex, sqlite.AuthDropTable, sqlite.AuthDropTempIndex, sqlite.AuthDropTempTable,
		sqlite.AuthDropTempTrigger, sqlite.AuthDropTempView, sqlite.AuthDropTrigger, sqlite.AuthDropView:
	default:
		return fmt.Sprintf("SQLite action %d is not allowed in %s", action, p.who())
	}
	// The schema changes.
	if p.Schema {
		return ""
	}
	return fmt.Sprintf("%s may not change the schema (CREATE, ALTER, DROP)", p.who())
}

// Bound runs f with a context that ends after limit (DefaultTimeout when
// zero). A statement the bound cut off gives an error wrapping ErrTimeout
// that names the bound; the end of ctx itself gives f's own error.
func Bound(ctx context.Context, limit time.Duration, f func(ctx context.Context) error) error {
	if limit <= 0 {
		limit = DefaultTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := f(sctx)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return &timeout{limit: limit}
	}
	return err
}

// Timeout returns the error of a statement stopped by the bound limit.
func Timeout(limit time.Duration) error { return &timeout{limit: limit} }

type timeout struct{ limit time.Duration }

func (t *timeout) Error() string {
	return fmt.Sprintf("%v: stopped after %s; the statement is unbounded or too large (a join of many tables?): simplify it or write the values as literals", ErrTimeout, t.limit)
}
func (t *timeout) Unwrap() error { return ErrTimeout }
