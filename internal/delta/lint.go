package delta

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Generators turns a named generator and its parameters into file content.
// internal/generator's Registry implements it.
type Generators interface {
	Generate(name string, params json.RawMessage) ([]byte, error)
}

// Options configure Lint and Apply. The zero value is valid but has no
// generators: a delta that names one then fails lint.
type Options struct {
	Generators Generators
	// Parent is recorded as the new manifest's parent snapshot.
	Parent world.ID
	// SQLTimeout bounds each SQL statement apply runs for the delta; zero
	// means DefaultSQLTimeout. It is a resource limit, never an input to the
	// state: a statement it stops fails the apply (ErrSQLTimeout).
	SQLTimeout time.Duration
}

// Issue is one lint finding: where (operation index, field path) and what.
type Issue struct {
	Op    int    `json:"op"` // -1 for top-level fields
	Field string `json:"field"`
	Msg   string `json:"message"`
}

func (i Issue) String() string {
	where := i.Field
	if i.Op >= 0 {
		where = fmt.Sprintf("ops[%d]", i.Op)
		if i.Field != "" {
			where += "." + i.Field
		}
	}
	return where + ": " + i.Msg
}

// LintError holds every issue lint found.
type LintError struct{ Issues []Issue }

// ErrLint is matched by errors.Is for every *LintError.
var ErrLint = errors.New("delta lint failed")

func (e *LintError) Error() string {
	const show = 10
	var b strings.Builder
	fmt.Fprintf(&b, "delta lint: %d issue(s)", len(e.Issues))
	for i, is := range e.Issues {
		if i == show {
			fmt.Fprintf(&b, "\n  ... %d more", len(e.Issues)-show)
			break
		}
		b.WriteString("\n  " + is.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrLint) true.
func (e *LintError) Is(target error) bool { return target == ErrLint }

var (
	wallClockRE = regexp.MustCompile(`(?i)\b(current_timestamp|current_date|current_time)\b`)
	bannedFnRE  = regexp.MustCompile(`(?i)\b(random|randomblob|now|sqlite_version|sqlite_source_id|load_extension|changes|total_changes|last_insert_rowid)\s*\(`)
	nowLitRE    = regexp.MustCompile(`(?i)'\s*(now|localtime|utc|auto|subsec|subsecond)\s*'`)
	stmtRE      = regexp.MustCompile(`(?is)^\s*(create\s+(table|(unique\s+)?index|view)\b|alter\s+table\b)`)
)

// forbiddenSQL returns why s is not deterministic, or "".
func forbiddenSQL(s string) string {
	if m := wallClockRE.FindString(s); m != "" {
		return fmt.Sprintf("%s reads the wall clock: write a frozen literal timestamp such as '2026-03-04 09:12:00'", strings.ToUpper(m))
	}
	if m := bannedFnRE.FindStringSubmatch(s); m != nil {
		fn := strings.ToLower(m[1])
		switch fn {
		case "random", "randomblob":
			return fmt.Sprintf("%s() is random: write the value as a literal (derive it from a seed when you generate the delta)", fn)
		case "now":
			return "now() reads the wall clock: write a frozen literal timestamp"
		case "sqlite_version", "sqlite_source_id", "load_extension":
			return fmt.Sprintf("%s() depends on the machine: it is not allowed in a delta", fn)
		default:
			return fmt.Sprintf("%s() depends on the connection's history: use natural keys or a ref", fn)
		}
	}
	if m := nowLitRE.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("the date modifier '%s' reads the wall clock or the machine's time zone: write a frozen literal timestamp", m[1])
	}
	return ""
}

// schema is lint's model of the databases as the delta goes: the parent's
// schema loaded into in-memory SQLite, with the delta's DDL applied in order
// under the same SQL guard apply uses.
type schema struct {
	ctx    context.Context
	dbs    map[string]*guardedDB
	tables map[string]map[string]*state.Table // db -> table -> description
}

func newSchema(ctx context.Context, parent string, dbs []string) (*schema, error) {
	s := &schema{ctx: ctx, dbs: map[string]*guardedDB{}, tables: map[string]map[string]*state.Table{}}
	for _, name := range dbs {
		mem, err := memDB(ctx)
		if err != nil {
			s.close()
			return nil, err
		}
		s.dbs[name] = mem
		src, err := state.OpenDB(world.DBPath(parent, name), true)
		if err != nil {
			s.close()
			return nil, err
		}
		stmts, err := schemaSQL(ctx, src)
		src.Close()
		if err != nil {
			s.close()
			return nil, fmt.Errorf("read schema of %s: %w", name, err)
		}
		for _, st := range stmts {
			if _, err := mem.conn.ExecContext(ctx, st); err != nil {
				s.close()
				return nil, fmt.Errorf("load schema of %s: %w", name, err)
			}
		}
		if err := s.refresh(name); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// memDB opens an in-memory database on one pinned connection with a guard.
func memDB(ctx context.Context) (*guardedDB, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return newGuardedDB(ctx, db)
}

func schemaSQL(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (s *schema) refresh(db string) error {
	ts, err := state.Tables(s.ctx, s.dbs[db].conn)
	if err != nil {
		return fmt.Errorf("describe %s: %w", db, err)
	}
	m := map[string]*state.Table{}
	for i := range ts {
		m[ts[i].Name] = &ts[i]
	}
	s.tables[db] = m
	return nil
}

func (s *schema) close() {
	for _, db := range s.dbs {
		db.close()
	}
}

// linter accumulates issues.
type linter struct {
	d      *Delta
	opts   *Options
	sc     *schema
	issues []Issue
	// home is what each home path holds as the delta goes; a path not in
	// it is absent.
	home     map[string]entryKind
	accounts map[string]bool
}

func (l *linter) add(op int, field, format string, args ...any) {
	l.issues = append(l.issues, Issue{Op: op, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Lint checks d against the world at parent ("" for the empty world of day
// 0). It returns a *LintError listing every issue, or another error when the
// parent cannot be read. It changes nothing.
func Lint(ctx context.Context, parent string, d *Delta, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	var (
		pm    *world.Manifest
		dbs   []string
		accts []world.Account
	)
	home := map[string]entryKind{}
	if parent != "" {
		layout, err := state.ReadLayout(parent)
		if err != nil {
			return err
		}
		if pm, err = world.ReadManifest(parent); err != nil {
			return err
		}
		if accts, err = world.ReadAccounts(parent); err != nil {
			return err
		}
		dbs = layout.DBs
		err = state.WalkHome(parent+"/"+world.HomeDir, func(rel string, _ fs.DirEntry, fi fs.FileInfo) error {
			home[rel] = kindOfMode(fi.Mode())
			return nil
		})
		if err != nil {
			return err
		}
	}
	sc, err := newSchema(ctx, parent, dbs)
	if err != nil {
		return err
	}
	defer sc.close()
	l := &linter{d: d, opts: opts, sc: sc, home: home, accounts: map[string]bool{}}
	for _, a := range accts {
		l.accounts[a.Site+"\x00"+a.Username] = true
	}
	l.top(pm)
	for i := range d.Ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.op(i, &d.Ops[i])
	}
	l.produces()
	if len(l.issues) > 0 {
		return &LintError{Issues: l.issues}
	}
	return nil
}

func (l *linter) top(pm *world.Manifest) {
	d := l.d
	if d.Persona == "" {
		l.add(-1, "persona", "must not be empty")
	}
	if err := world.ValidateServices("services", d.Services); err != nil {
		l.add(-1, "services", "%v", err)
	} else if pm != nil {
		if _, err := MergeServices(pm.Services, d.Services); err != nil {
			l.add(-1, "services", "%v", err)
		}
	}
	clock, err := time.Parse(time.RFC3339, d.Clock)
	if err != nil {
		l.add(-1, "clock", "%q is not RFC 3339 (e.g. \"2026-03-04T18:00:00Z\")", d.Clock)
	}
	if pm == nil {
		if d.Day != 0 {
			l.add(-1, "day", "the parent is the empty world, so the day must be 0, got %d", d.Day)
		}
		return
	}
	if d.Persona != "" && d.Persona != pm.Persona {
		l.add(-1, "persona", "%q differs from the parent's persona %q", d.Persona, pm.Persona)
	}
	if d.Day != pm.Day+1 {
		l.add(-1, "day", "got %d, the parent is day %d so want %d", d.Day, pm.Day, pm.Day+1)
	}
	if pt, perr := pm.Time(); err == nil && perr == nil && clock.Before(pt) {
		l.add(-1, "clock", "%s is before the parent's clock %s: time only moves forward", d.Clock, pm.Clock)
	}
}

func (l *linter) op(i int, o *Op) {
	allowed, ok := fieldsOf[o.Op]
	if !ok {
		names := make([]string, 0, len(fieldsOf))
		for n := range fieldsOf {
			names = append(names, n)
		}
		slices.Sort(names)
		l.add(i, "op", "unknown operation %q; want one of %s", o.Op, strings.Join(names, ", "))
		return
	}
	for _, f := range o.setFields() {
		if !slices.Contains(allowed, f) {
			l.add(i, f, "not used by %s (it takes %s)", o.Op, strings.Join(allowed, ", "))
		}
	}
	switch o.Op {
	case OpDBCreate:
		l.dbCreate(i, o)
	case OpDBInsert, OpDBUpdate, OpDBDelete:
		l.dbRow(i, o)
	case OpFileWrite, OpFileAppend:
		l.fileWrite(i, o)
	case OpFileDelete:
		if p, ok := l.path(i, roleDelete, "path", o.Path); ok {
			delete(l.home, p)
		}
	case OpFileMove:
		from, ok1 := l.path(i, roleMoveFrom, "from", o.From)
		to, ok2 := l.path(i, roleMoveTo, "to", o.To)
		if ok1 && ok2 {
			delete(l.home, from)
			l.addFile(to)
		}
	case OpAccountCreate:
		for _, fe := range accountErrors(o) {
			l.add(i, fe.field, "%v", fe.err)
		}
		k := o.Site + "\x00" + o.Username
		if l.accounts[k] {
			l.add(i, "username", "account %s/%s already exists", o.Site, o.Username)
		}
		l.accounts[k] = true
	}
}

// fieldError is a problem with one field of an operation.
type fieldError struct {
	field string
	err   error
}

// accountErrors is the one rule for the fields of an account.create: lint
// and apply both call it. The site names a database and the username is a
// key of the world's accounts, so both are checked as such (world.ValidSite,
// world.ValidUsername).
func accountErrors(o *Op) []fieldError {
	var errs []fieldError
	check := func(field string, err error) {
		if err != nil {
			errs = append(errs, fieldError{field, err})
		}
	}
	check("site", world.ValidSite(o.Site))
	check("username", world.ValidUsername(o.Username))
	check("password", world.ValidSecret("password", o.Password))
	if o.Salt == "" {
		check("salt", errors.New("salt is empty: give a fixed salt so the hash is deterministic"))
	} else {
		check("salt", world.ValidSecret("salt", o.Salt))
	}
	check("display", world.ValidDisplay(o.Display))
	return errs
}

// addFile records a regular file at p and directories at its parents.
func (l *linter) addFile(p string) {
	l.home[p] = regular
	for dir := p; ; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			return
		}
		dir = dir[:i]
		l.home[dir] = directory
	}
}

// path checks a home path with the rule apply uses (checkHomePath) on lint's
// model of home.
func (l *linter) path(i int, role pathRole, field, p string) (string, bool) {
	clean, err := checkHomePath(role, p, func(q string) (entryKind, error) { return l.home[q], nil })
	if err != nil {
		l.add(i, field, "%v", err)
		return "", false
	}
	return clean, true
}

func (l *linter) fileWrite(i int, o *Op) {
	p, ok := l.path(i, roleWrite, "path", o.Path)
	n := 0
	for _, set := range []bool{o.Content != nil, o.ContentBase64 != nil, o.Generator != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		l.add(i, "content", "give exactly one of content, content_base64 or generator")
	}
	if o.ContentBase64 != nil {
		if _, err := decodeBase64(*o.ContentBase64); err != nil {
			l.add(i, "content_base64", "%v", err)
		}
	}
	if g := o.Generator; g != nil {
		switch {
		case g.Name == "":
			l.add(i, "generator.name", "must not be empty")
		case l.opts.Generators == nil:
			l.add(i, "generator", "no generators are configured in this build")
		default:
			if _, err := l.opts.Generators.Generate(g.Name, g.Params); err != nil {
				l.add(i, "generator.params", "%v", err)
			}
		}
	}
	if o.Mode != "" {
		if _, err := parseMode(o.Mode); err != nil {
			l.add(i, "mode", "%v", err)
		}
	}
	if ok {
		l.addFile(p)
	}
}

func parseMode(s string) (os.FileMode, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 {
		return 0, fmt.Errorf("%q is not an octal permission such as \"0644\" or \"0755\"", s)
	}
	if m&0o600 != 0o600 {
		return 0, fmt.Errorf("%q must let the owner read and write (0600 bits)", s)
	}
	return os.FileMode(m), nil
}

func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not standard base64: %v", err)
	}
	return b, nil
}

func (l *linter) dbCreate(i int, o *Op) {
	if err := world.ValidDBName(o.DB); err != nil {
		l.add(i, "db", "%v", err)
		return
	}
	if len(o.SQL) == 0 {
		l.add(i, "sql", "give at least one CREATE TABLE statement")
	}
	mem, ok := l.sc.dbs[o.DB]
	if !ok {
		var err error
		if mem, err = memDB(l.sc.ctx); err != nil {
			l.add(i, "db", "%v", err)
			return
		}
		l.sc.dbs[o.DB] = mem
	}
	for j, s := range o.SQL {
		field := fmt.Sprintf("sql[%d]", j)
		switch {
		case len(s) > MaxSQLBytes:
			l.add(i, field, "statement is longer than %d KiB", MaxSQLBytes>>10)
			continue
		case !stmtRE.MatchString(s):
			l.add(i, field, "only CREATE TABLE, CREATE [UNIQUE] INDEX, CREATE VIEW and ALTER TABLE are allowed; write rows with db.insert")
			continue
		case strings.Contains(strings.TrimRight(strings.TrimSpace(s), ";"), ";"):
			l.add(i, field, "one statement per entry")
			continue
		}
		if why := forbiddenSQL(s); why != "" {
			l.add(i, field, "%s", why)
			continue
		}
		if err := mem.execDDL(l.sc.ctx, mem.conn, s); err != nil {
			l.add(i, field, "%v", err)
		}
	}
	if err := l.sc.refresh(o.DB); err != nil {
		l.add(i, "sql", "%v", err)
	}
}

func (l *linter) table(i int, db, table, field string) *state.Table {
	if err := world.ValidDBName(db); err != nil {
		l.add(i, field+"db", "%v", err)
		return nil
	}
	tables, ok := l.sc.tables[db]
	if !ok {
		l.add(i, field+"db", "unknown database %q (create it first with db.create)", db)
		return nil
	}
	t, ok := tables[table]
	if !ok {
		l.add(i, field+"table", "unknown table %q in database %s", table, db)
		return nil
	}
	return t
}

func (l *linter) dbRow(i int, o *Op) {
	t := l.table(i, o.DB, o.Table, "")
	if t == nil {
		return
	}
	l.key(i, "key", o.DB, t, o.Key)
	cols := o.Values
	field := "values"
	if o.Op == OpDBUpdate {
		cols, field = o.Set, "set"
		if len(cols) == 0 {
			l.add(i, "set", "give at least one column to update")
		}
	}
	for _, c := range sortedKeys(cols) {
		f := field + "." + c
		if _, ok := t.Column(c); !ok {
			l.add(i, f, "table %s has no column %q (columns: %s)", t.Name, c, strings.Join(t.ColumnNames(), ", "))
			continue
		}
		if _, dup := o.Key[c]; dup && o.Op == OpDBInsert {
			l.add(i, f, "column %q is already given in key", c)
		}
		scope := ""
		if o.Op == OpDBUpdate {
			scope = t.Name // an update's expressions see the row's columns
		}
		l.value(i, f, o.DB, scope, cols[c])
	}
	if o.Op == OpDBInsert {
		for _, c := range t.Columns {
			_, inKey := o.Key[c.Name]
			_, inVals := o.Values[c.Name]
			derived := t.IntegerPK && c.PK == 1
			if c.NotNull && !c.HasDefault && !inKey && !inVals && !derived {
				l.add(i, "values."+c.Name, "column is NOT NULL and has no default: give a value")
			}
		}
	}
}

// key checks that key names exactly the natural key of t, with literal values.
func (l *linter) key(i int, field, db string, t *state.Table, key map[string]Value) {
	if len(t.NaturalKey) == 0 {
		l.add(i, field, "table %s.%s declares no natural key: add `CREATE UNIQUE INDEX %s_nk ON %s(...)` or a UNIQUE constraint", db, t.Name, t.Name, t.Name)
		return
	}
	got := sortedKeys(key)
	want := slices.Sorted(slices.Values(t.NaturalKey))
	if !slices.Equal(got, want) {
		l.add(i, field, "got columns [%s], the natural key of %s is [%s]", strings.Join(got, ", "), t.Name, strings.Join(t.NaturalKey, ", "))
	}
	for _, c := range got {
		dv, err := key[c].decode()
		switch {
		case err != nil:
			l.add(i, field+"."+c, "%v", err)
		case dv.kind == KindRef:
			l.value(i, field+"."+c, db, "", key[c])
		case dv.kind != KindLiteral:
			l.add(i, field+"."+c, "key values must be literals or refs, not %s", dv.kind)
		case dv.lit == nil:
			l.add(i, field+"."+c, "key values must not be null")
		}
	}
}

func (l *linter) value(i int, field, db, scope string, v Value) {
	dv, err := v.decode()
	if err != nil {
		l.add(i, field, "%v", err)
		return
	}
	switch dv.kind {
	case KindSQL:
		switch {
		case strings.Contains(dv.sql, ";"):
			l.add(i, field, "an sql value is one expression: no ';'")
		case strings.Contains(dv.sql, "--") || strings.Contains(dv.sql, "/*"):
			l.add(i, field, "an sql value may not contain a comment ('--' or '/*'): it would swallow the rest of the statement")
		case len(dv.sql) > MaxSQLBytes:
			l.add(i, field, "expression longer than %d KiB", MaxSQLBytes>>10)
		default:
			if why := forbiddenSQL(dv.sql); why != "" {
				l.add(i, field, "%s", why)
			} else if err := l.sc.dbs[db].compile(l.sc.ctx, exprProbe(dv.sql, scope)); err != nil {
				l.add(i, field, "%v", err)
			}
		}
	case KindRef:
		t := l.table(i, db, dv.ref.Table, field+".ref.")
		if t == nil {
			return
		}
		l.key(i, field+".ref.key", db, t, dv.ref.Key)
		if _, ok := t.Column(dv.ref.Column); !ok {
			l.add(i, field+".ref.column", "table %s has no column %q", t.Name, dv.ref.Column)
		}
	}
}

func (l *linter) produces() {
	p := &l.d.Produces
	for j, r := range p.Rows {
		f := fmt.Sprintf("produces.rows[%d]", j)
		t := l.table(-1, r.DB, r.Table, f+".")
		if t == nil {
			continue
		}
		key := make(map[string]Value, len(r.Key))
		for k, v := range r.Key {
			key[k] = Lit(v)
		}
		l.key(-1, f+".key", r.DB, t, key)
	}
	for j, path := range p.Files {
		if _, err := world.CleanHomePath(path); err != nil {
			l.add(-1, fmt.Sprintf("produces.files[%d]", j), "%v", err)
		}
	}
	for j, a := range p.Accounts {
		f := fmt.Sprintf("produces.accounts[%d]", j)
		if err := world.ValidSite(a.Site); err != nil {
			l.add(-1, f+".site", "%v", err)
		}
		if err := world.ValidUsername(a.Username); err != nil {
			l.add(-1, f+".username", "%v", err)
		}
	}
}

// exprProbe is a statement that compiles expr as apply will run it: with the
// row's columns in scope for an update, without for an insert.
func exprProbe(expr, table string) string {
	if table == "" {
		return "SELECT (" + expr + ")"
	}
	return "SELECT (" + expr + ") FROM " + state.QuoteIdent(table)
}
