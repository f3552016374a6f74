package delta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// ApplyError names the operation that failed at apply time.
type ApplyError struct {
	Op    int
	Field string
	Err   error
}

func (e *ApplyError) Error() string {
	where := fmt.Sprintf("ops[%d]", e.Op)
	if e.Field != "" {
		where += "." + e.Field
	}
	return "apply delta: " + where + ": " + e.Err.Error()
}

func (e *ApplyError) Unwrap() error { return e.Err }

// Apply lints d against the world at dir and applies it there, in place. dir
// is a scratch copy of the parent (or an empty or missing directory for day
// 0): on error it is left half-applied and the caller discards it. Use
// ApplyCopy to leave the parent untouched.
func Apply(ctx context.Context, dir string, d *Delta, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	parent := dir
	pm, err := world.ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		parent, pm = "", nil
	} else if err != nil {
		return err
	}
	if err := Lint(ctx, parent, d, opts); err != nil {
		return err
	}
	return applyLinted(ctx, dir, pm, d, opts)
}

// applyLinted is Apply after lint. It enforces on its own every rule that
// protects the host (the SQL guard, checkHomePath), so a rule lint missed is
// still refused here.
func applyLinted(ctx context.Context, dir string, pm *world.Manifest, d *Delta, opts *Options) error {
	for _, sub := range []string{world.DBDir, world.HomeDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("apply delta: %w", err)
		}
	}
	a := &applier{ctx: ctx, dir: dir, opts: opts, dbs: map[string]*openDB{}}
	defer a.rollback()
	for i := range d.Ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.op(&d.Ops[i]); err != nil {
			var ae *ApplyError
			if errors.As(err, &ae) {
				ae.Op = i
				return ae
			}
			return &ApplyError{Op: i, Err: err}
		}
	}
	if err := a.commit(); err != nil {
		return fmt.Errorf("apply delta: %w", err)
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: d.Persona, Day: d.Day, Clock: d.Clock, Parent: opts.Parent, Catalog: d.Catalog}
	if pm != nil && d.Catalog.IsZero() {
		m.Catalog = pm.Catalog
	}
	var parentServices []world.ServiceRef
	if pm != nil {
		parentServices = pm.Services
	}
	services, err := MergeServices(parentServices, d.Services)
	if err != nil {
		return fmt.Errorf("apply delta: %w", err)
	}
	m.Services = services
	if !producesEmpty(&d.Produces) {
		p := d.Produces
		m.Produces = &p
	}
	if _, err := os.Stat(filepath.Join(dir, world.AccountsFile)); errors.Is(err, fs.ErrNotExist) {
		if err := world.WriteAccounts(dir, nil); err != nil {
			return err
		}
	}
	return world.WriteManifest(dir, m)
}

func producesEmpty(p *world.Produces) bool {
	return len(p.Rows) == 0 && len(p.Files) == 0 && len(p.Accounts) == 0
}

type openDB struct {
	*guardedDB
	tx     *sql.Tx
	tables map[string]*state.Table
}

type applier struct {
	ctx  context.Context
	dir  string
	opts *Options
	dbs  map[string]*openDB
}

func (a *applier) database(name string) (*openDB, error) {
	if o, ok := a.dbs[name]; ok {
		return o, nil
	}
	if err := world.ValidDBName(name); err != nil {
		return nil, err
	}
	db, err := state.OpenDB(world.DBPath(a.dir, name), false)
	if err != nil {
		return nil, err
	}
	g, err := newGuardedDB(a.ctx, db)
	if err != nil {
		return nil, err
	}
	tx, err := g.conn.BeginTx(a.ctx, nil)
	if err != nil {
		g.close()
		return nil, err
	}
	o := &openDB{guardedDB: g, tx: tx, tables: map[string]*state.Table{}}
	a.dbs[name] = o
	return o, nil
}

func (o *openDB) table(ctx context.Context, name string) (*state.Table, error) {
	if t, ok := o.tables[name]; ok {
		return t, nil
	}
	t, err := state.DescribeTable(ctx, o.tx, name)
	if err != nil {
		return nil, err
	}
	o.tables[name] = t
	return t, nil
}

func (a *applier) commit() error {
	for _, name := range sortedKeys(a.dbs) {
		o := a.dbs[name]
		if err := o.tx.Commit(); err != nil {
			return fmt.Errorf("commit %s: %w", name, err)
		}
		o.tx = nil
		if err := o.close(); err != nil {
			return fmt.Errorf("close %s: %w", name, err)
		}
		delete(a.dbs, name)
	}
	return nil
}

func (a *applier) rollback() {
	for name, o := range a.dbs {
		if o.tx != nil {
			o.tx.Rollback()
		}
		o.close()
		delete(a.dbs, name)
	}
}

func (a *applier) op(o *Op) error {
	switch o.Op {
	case OpDBCreate:
		db, err := a.database(o.DB)
		if err != nil {
			return &ApplyError{Field: "db", Err: err}
		}
		for j, s := range o.SQL {
			err := a.bounded(func(ctx context.Context) error { return db.execDDL(ctx, db.tx, s) })
			if err != nil {
				return &ApplyError{Field: fmt.Sprintf("sql[%d]", j), Err: err}
			}
		}
		clear(db.tables)
		return nil
	case OpDBInsert:
		return a.insert(o)
	case OpDBUpdate, OpDBDelete:
		return a.updateOrDelete(o)
	case OpFileWrite:
		return a.fileWrite(o)
	case OpFileAppend:
		return a.fileAppend(o)
	case OpFileDelete:
		p, err := a.homePath(roleDelete, "path", o.Path)
		if err != nil {
			return err
		}
		// The entry is a file or a symlink: os.Remove removes a symlink
		// itself, never its target.
		if err := os.Remove(p); err != nil {
			return &ApplyError{Field: "path", Err: err}
		}
		return nil
	case OpFileMove:
		from, err := a.homePath(roleMoveFrom, "from", o.From)
		if err != nil {
			return err
		}
		to, err := a.homePath(roleMoveTo, "to", o.To)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return &ApplyError{Field: "to", Err: err}
		}
		if err := os.Rename(from, to); err != nil {
			return &ApplyError{Field: "from", Err: err}
		}
		return nil
	case OpAccountCreate:
		if errs := accountErrors(o); len(errs) > 0 {
			return &ApplyError{Field: errs[0].field, Err: errs[0].err}
		}
		accts, err := world.ReadAccounts(a.dir)
		if err != nil {
			return err
		}
		accts = append(accts, world.Account{Site: o.Site, Username: o.Username, Display: o.Display,
			PasswordHash: world.HashPassword(o.Site, o.Username, o.Salt, o.Password)})
		return world.WriteAccounts(a.dir, accts)
	}
	return &ApplyError{Field: "op", Err: fmt.Errorf("unknown operation %q", o.Op)}
}

// homePath checks rel for role with the rule lint uses (checkHomePath) on
// the disk, and returns its absolute path.
func (a *applier) homePath(role pathRole, field, rel string) (string, error) {
	clean, err := checkHomePath(role, rel, diskKind(a.dir))
	if err != nil {
		return "", &ApplyError{Field: field, Err: err}
	}
	return filepath.Join(a.dir, world.HomeDir, filepath.FromSlash(clean)), nil
}

func (a *applier) content(o *Op) ([]byte, error) {
	switch {
	case o.Content != nil:
		return []byte(*o.Content), nil
	case o.ContentBase64 != nil:
		b, err := decodeBase64(*o.ContentBase64)
		if err != nil {
			return nil, &ApplyError{Field: "content_base64", Err: err}
		}
		return b, nil
	case o.Generator != nil:
		if a.opts.Generators == nil {
			return nil, &ApplyError{Field: "generator", Err: errors.New("no generators configured")}
		}
		b, err := a.opts.Generators.Generate(o.Generator.Name, o.Generator.Params)
		if err != nil {
			return nil, &ApplyError{Field: "generator", Err: err}
		}
		return b, nil
	}
	return nil, &ApplyError{Field: "content", Err: errors.New("no content")}
}

func (a *applier) fileWrite(o *Op) error {
	p, err := a.homePath(roleWrite, "path", o.Path)
	if err != nil {
		return err
	}
	b, err := a.content(o)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if o.Mode != "" {
		if mode, err = parseMode(o.Mode); err != nil {
			return &ApplyError{Field: "mode", Err: err}
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return &ApplyError{Field: "path", Err: err}
	}
	return world.WriteFileAtomic(p, b, mode)
}

func (a *applier) fileAppend(o *Op) error {
	p, err := a.homePath(roleWrite, "path", o.Path)
	if err != nil {
		return err
	}
	b, err := a.content(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return &ApplyError{Field: "path", Err: err}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return &ApplyError{Field: "path", Err: err}
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return &ApplyError{Field: "path", Err: err}
	}
	return f.Close()
}

// bounded runs one statement of the delta within the statement bound.
func (a *applier) bounded(f func(ctx context.Context) error) error {
	return bounded(a.ctx, a.opts.sqlTimeout(), f)
}

// exec runs one statement built from the delta under the guard and the bound.
func (a *applier) exec(db *openDB, q string, args []any) (sql.Result, error) {
	var res sql.Result
	err := a.bounded(func(ctx context.Context) error {
		return db.run(q, func() error {
			var err error
			res, err = db.tx.ExecContext(ctx, q, args...)
			return err
		})
	})
	return res, err
}

// literal returns the SQLite value of a literal Value.
func literal(v Value) (any, error) {
	dv, err := v.decode()
	if err != nil {
		return nil, err
	}
	if dv.kind != KindLiteral && dv.kind != KindBlob {
		return nil, fmt.Errorf("want a literal, got %s", dv.kind)
	}
	return dv.lit, nil
}

// whereKey returns `"a" IS ? AND "b" IS ?` with its arguments, in sorted
// column order. Key values are literals or refs (resolved now).
func (a *applier) whereKey(db *openDB, key map[string]Value, field string) (string, []any, error) {
	var conds []string
	var args []any
	for _, c := range sortedKeys(key) {
		v, err := a.keyValue(db, field+"."+c, key[c])
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, state.QuoteIdent(c)+" IS ?")
		args = append(args, v)
	}
	return strings.Join(conds, " AND "), args, nil
}

// keyValue resolves a key value: a literal, or a ref looked up now.
func (a *applier) keyValue(db *openDB, field string, v Value) (any, error) {
	dv, err := v.decode()
	if err != nil {
		return nil, &ApplyError{Field: field, Err: err}
	}
	switch dv.kind {
	case KindLiteral, KindBlob:
		return dv.lit, nil
	case KindRef:
		return a.lookup(db, field, dv.ref)
	}
	return nil, &ApplyError{Field: field, Err: fmt.Errorf("key values are literals or refs, not %s", dv.kind)}
}

// lookup returns column ref.Column of the row of ref.Table with ref.Key.
func (a *applier) lookup(db *openDB, field string, ref *Ref) (any, error) {
	where, args, err := a.whereKey(db, ref.Key, field+".ref.key")
	if err != nil {
		return nil, err
	}
	var got any
	q := fmt.Sprintf("SELECT +%s FROM %s WHERE %s", state.QuoteIdent(ref.Column), state.QuoteIdent(ref.Table), where)
	err = a.bounded(func(ctx context.Context) error {
		return db.run(q, func() error { return db.tx.QueryRowContext(ctx, q, args...).Scan(&got) })
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &ApplyError{Field: field + ".ref", Err: fmt.Errorf("no row in %s with key %s", ref.Table, keyText(ref.Key))}
	} else if err != nil {
		return nil, &ApplyError{Field: field + ".ref", Err: err}
	}
	return got, nil
}

// expr returns the SQL text and arguments for one column value.
func (a *applier) expr(db *openDB, field string, v Value) (string, []any, error) {
	dv, err := v.decode()
	if err != nil {
		return "", nil, &ApplyError{Field: field, Err: err}
	}
	switch dv.kind {
	case KindSQL:
		return "(" + dv.sql + ")", nil, nil
	case KindRef:
		got, err := a.lookup(db, field, dv.ref)
		if err != nil {
			return "", nil, err
		}
		return "?", []any{got}, nil
	}
	return "?", []any{dv.lit}, nil
}

func keyText(key map[string]Value) string {
	parts := make([]string, 0, len(key))
	for _, c := range sortedKeys(key) {
		parts = append(parts, c+"="+string(key[c].raw))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// insert adds the row unless a row with the same natural key exists. An
// INTEGER PRIMARY KEY left out is derived as MAX(id)+1 at apply time.
func (a *applier) insert(o *Op) error {
	db, err := a.database(o.DB)
	if err != nil {
		return &ApplyError{Field: "db", Err: err}
	}
	t, err := db.table(a.ctx, o.Table)
	if err != nil {
		return &ApplyError{Field: "table", Err: err}
	}
	var cols, exprs []string
	var args []any
	for _, c := range sortedKeys(o.Key) {
		v, err := a.keyValue(db, "key."+c, o.Key[c])
		if err != nil {
			return err
		}
		cols, exprs, args = append(cols, state.QuoteIdent(c)), append(exprs, "?"), append(args, v)
	}
	for _, c := range sortedKeys(o.Values) {
		e, eargs, err := a.expr(db, "values."+c, o.Values[c])
		if err != nil {
			return err
		}
		cols, exprs, args = append(cols, state.QuoteIdent(c)), append(exprs, e), append(args, eargs...)
	}
	if t.IntegerPK {
		pk := t.PK[0]
		if _, given := o.Values[pk]; !given {
			if _, inKey := o.Key[pk]; !inKey {
				q := state.QuoteIdent(pk)
				cols = append(cols, q)
				exprs = append(exprs, fmt.Sprintf("(SELECT COALESCE(MAX(%s), 0) + 1 FROM %s)", q, state.QuoteIdent(t.Name)))
			}
		}
	}
	where, wargs, err := a.whereKey(db, o.Key, "key")
	if err != nil {
		return err
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s WHERE NOT EXISTS (SELECT 1 FROM %s WHERE %s)",
		state.QuoteIdent(t.Name), strings.Join(cols, ", "), strings.Join(exprs, ", "), state.QuoteIdent(t.Name), where)
	if _, err := a.exec(db, q, append(args, wargs...)); err != nil {
		return &ApplyError{Field: "values", Err: err}
	}
	return nil
}

func (a *applier) updateOrDelete(o *Op) error {
	db, err := a.database(o.DB)
	if err != nil {
		return &ApplyError{Field: "db", Err: err}
	}
	if _, err := db.table(a.ctx, o.Table); err != nil {
		return &ApplyError{Field: "table", Err: err}
	}
	where, wargs, err := a.whereKey(db, o.Key, "key")
	if err != nil {
		return err
	}
	var q string
	var args []any
	if o.Op == OpDBDelete {
		q = fmt.Sprintf("DELETE FROM %s WHERE %s", state.QuoteIdent(o.Table), where)
	} else {
		var sets []string
		for _, c := range sortedKeys(o.Set) {
			e, eargs, err := a.expr(db, "set."+c, o.Set[c])
			if err != nil {
				return err
			}
			sets = append(sets, state.QuoteIdent(c)+" = "+e)
			args = append(args, eargs...)
		}
		q = fmt.Sprintf("UPDATE %s SET %s WHERE %s", state.QuoteIdent(o.Table), strings.Join(sets, ", "), where)
	}
	res, err := a.exec(db, q, append(args, wargs...))
	if err != nil {
		return &ApplyError{Field: "set", Err: err}
	}
	if n, err := res.RowsAffected(); err != nil {
		return &ApplyError{Err: err}
	} else if n != 1 {
		return &ApplyError{Field: "key", Err: fmt.Errorf("no row in %s.%s with key %s", o.DB, o.Table, keyText(o.Key))}
	}
	return nil
}

// MergeServices returns the parent's service definitions with the day's
// added, sorted by name; a name the parent serves from another definition
// is an error (a service's definition is fixed once a world serves it).
func MergeServices(parent, day []world.ServiceRef) ([]world.ServiceRef, error) {
	out := slices.Clone(parent)
	for _, r := range day {
		i, found := slices.BinarySearchFunc(out, r.Name, func(a world.ServiceRef, name string) int { return strings.Compare(a.Name, name) })
		switch {
		case found && out[i].SHA256 != r.SHA256:
			return nil, fmt.Errorf("services: %s is already served from the definition %s; a world keeps a service's definition (give the new one another name)", r.Name, out[i].SHA256)
		case !found:
			out = slices.Insert(out, i, r)
		}
	}
	return out, nil
}
