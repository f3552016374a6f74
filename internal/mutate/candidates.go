package mutate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// Limits on the candidates derived from one file.
const (
	maxDropLines = 8
	maxTokens    = 16
)

// Ranks of mutation kinds: among equally likely candidates, the more
// targeted kinds come first (a perturbed cell before a deleted row).
const (
	rankPerturb = iota
	rankRemove
	rankDuplicate
	rankSibling
)

// mutation is one candidate change to a copy of W_ref, or a wrong answer.
type mutation struct {
	desc string
	rank int
	// What it touches: a database (table, column), a home path, or the
	// answer.
	db, table, column string
	values            []string // the row's text values, for ranking
	path              string
	answer            *string
	apply             func(ctx context.Context, dir string) error
}

// candidates derives the mutations from W0 -> W_ref and the answer
// criteria.
func candidates(ctx context.Context, initial, solved string, t *task.Task) ([]*mutation, error) {
	d, err := state.Compare(ctx, initial, solved)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	var out []*mutation
	for _, dc := range d.DBs {
		if dc.Change == state.Added {
			name := dc.DB
			out = append(out, &mutation{desc: fmt.Sprintf("deleting database %s, which the reference created", name), rank: rankRemove, db: name,
				apply: func(_ context.Context, dir string) error { return os.Remove(world.DBPath(dir, name)) }})
		}
	}
	skip := map[string]map[string]bool{}
	for _, td := range d.Tables {
		if td.Table == "sqlite_sequence" || td.Change == state.Deleted {
			continue
		}
		if skip[td.DB] == nil {
			if skip[td.DB], err = virtualTables(ctx, world.DBPath(solved, td.DB)); err != nil {
				return nil, err
			}
		}
		if skip[td.DB][td.Table] {
			continue
		}
		desc, err := describe(ctx, world.DBPath(solved, td.DB), td.Table)
		if err != nil {
			return nil, err
		}
		out = append(out, rowCandidates(td, desc)...)
	}
	for _, fc := range d.Files {
		fs, err := fileCandidates(initial, solved, fc)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	out = append(out, answerCandidates(t)...)
	return out, nil
}

// virtualTables names the virtual tables of the database at p and their
// shadow tables (an FTS index's x_data, x_idx, ...): writing them directly
// would corrupt the index rather than change content.
func virtualTables(ctx context.Context, p string) (map[string]bool, error) {
	db, err := state.OpenDB(p, true)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table'
		AND (sql LIKE 'CREATE VIRTUAL TABLE%' OR EXISTS (SELECT 1 FROM sqlite_schema v WHERE v.type = 'table'
		AND v.sql LIKE 'CREATE VIRTUAL TABLE%' AND sqlite_schema.name LIKE v.name || '\_%' ESCAPE '\'))`)
	if err != nil {
		return nil, fmt.Errorf("mutate: list virtual tables: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("mutate: list virtual tables: %w", err)
		}
		out[n] = true
	}
	return out, rows.Err()
}

func describe(ctx context.Context, p, table string) (*state.Table, error) {
	db, err := state.OpenDB(p, true)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer db.Close()
	t, err := state.DescribeTable(ctx, db, table)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	return t, nil
}

// rowCandidates derives the mutations of one table's changed rows.
func rowCandidates(td state.TableDiff, t *state.Table) []*mutation {
	where := fmt.Sprintf("%s.%s", td.DB, td.Table)
	var out []*mutation
	add := func(rank int, column string, row state.Row, desc string, sql string, args ...any) {
		out = append(out, &mutation{desc: desc, rank: rank, db: td.DB, table: td.Table, column: column, values: textValues(row),
			apply: execApply(td.DB, sql, args)})
	}
	intPK := ""
	if t.IntegerPK {
		intPK = t.PK[0]
	}
	for _, row := range td.Added {
		name := rowName(row, td.Key, t)
		cond, condArgs := match(row, td.Key, t)
		add(rankRemove, "", row, fmt.Sprintf("deleting the row %s the reference added to %s", name, where),
			"DELETE FROM "+state.QuoteIdent(td.Table)+cond, condArgs...)
		cols := slices.DeleteFunc(t.ColumnNames(), func(c string) bool { return c == intPK })
		if len(cols) == 0 {
			continue
		}
		// A copy needs a fresh key: a fresh rowid, and each natural-key
		// column perturbed.
		fresh := map[string]any{}
		var freshText []string
		for _, k := range td.Key {
			col, _ := t.Column(k)
			if v, ok := perturb(row[k], col.Type); ok && k != intPK {
				fresh[k] = v
				freshText = append(freshText, k+" "+valueText(v))
			}
		}
		copyOf := fmt.Sprintf("inserting a copy of the row %s the reference added to %s", name, where)
		if len(freshText) > 0 {
			copyOf += " with a fresh key (" + strings.Join(freshText, ", ") + ")"
		}
		sql, args := insert(td.Table, cols, row, fresh)
		add(rankDuplicate, "", row, copyOf, sql, args...)
		for _, c := range t.Columns {
			if c.Name == intPK {
				continue
			}
			v, ok := perturb(row[c.Name], c.Type)
			if !ok {
				continue
			}
			add(rankPerturb, c.Name, row, fmt.Sprintf("setting %s of the row %s the reference added to %s from %s to %s", c.Name, name, where, valueText(row[c.Name]), valueText(v)),
				"UPDATE "+state.QuoteIdent(td.Table)+" SET "+state.QuoteIdent(c.Name)+" = ?"+cond, append([]any{bind(v)}, condArgs...)...)
			over, desc := map[string]any{c.Name: v}, fmt.Sprintf("inserting a copy of the row %s the reference added to %s with %s %s instead of %s", name, where, c.Name, valueText(v), valueText(row[c.Name]))
			if !slices.Contains(td.Key, c.Name) {
				for k, fv := range fresh {
					over[k] = fv
				}
				if len(freshText) > 0 {
					desc += " and a fresh key (" + strings.Join(freshText, ", ") + ")"
				}
			}
			sql, args := insert(td.Table, cols, row, over)
			add(rankSibling, c.Name, row, desc, sql, args...)
		}
	}
	for _, rc := range td.Changed {
		after := state.Row{}
		for k, v := range rc.Key {
			after[k] = v
		}
		for k, v := range rc.After {
			after[k] = v
		}
		if len(td.Key) == 0 {
			continue // matched by every column: a changed row is a delete and an add
		}
		name := rowName(rc.Key, td.Key, t)
		cond, condArgs := match(rc.Key, td.Key, t)
		for _, c := range rc.Cols {
			if _, ok := rc.Before[c]; !ok {
				continue
			}
			add(rankPerturb, c, after, fmt.Sprintf("restoring %s of the row %s in %s to its W0 value %s (the reference set %s)", c, name, where, valueText(rc.Before[c]), valueText(rc.After[c])),
				"UPDATE "+state.QuoteIdent(td.Table)+" SET "+state.QuoteIdent(c)+" = ?"+cond, append([]any{bind(rc.Before[c])}, condArgs...)...)
		}
		for _, c := range rc.Cols {
			col, ok := t.Column(c)
			if !ok || slices.Contains(td.Key, c) {
				continue
			}
			v, ok := perturb(rc.After[c], col.Type)
			if !ok || valueEqual(v, rc.Before[c]) {
				continue
			}
			add(rankSibling, c, after, fmt.Sprintf("setting %s of the row %s in %s to %s (the reference set %s)", c, name, where, valueText(v), valueText(rc.After[c])),
				"UPDATE "+state.QuoteIdent(td.Table)+" SET "+state.QuoteIdent(c)+" = ?"+cond, append([]any{bind(v)}, condArgs...)...)
		}
	}
	for _, row := range td.Deleted {
		cols := make([]string, 0, len(row))
		for _, c := range t.ColumnNames() {
			if _, ok := row[c]; ok {
				cols = append(cols, c)
			}
		}
		sql, args := insert(td.Table, cols, row, nil)
		add(rankRemove, "", row, fmt.Sprintf("re-inserting the row %s the reference deleted from %s", rowName(row, td.Key, t), where), sql, args...)
	}
	return out
}

// match is the WHERE clause that finds row: by its key, else by every
// column (the first such row).
func match(row state.Row, key []string, t *state.Table) (string, []any) {
	cols := key
	if len(cols) == 0 {
		cols = t.ColumnNames()
	}
	var conds []string
	var args []any
	for _, c := range cols {
		conds = append(conds, state.QuoteIdent(c)+" IS ?")
		args = append(args, bind(row[c]))
	}
	cond := strings.Join(conds, " AND ")
	if len(key) == 0 {
		return fmt.Sprintf(" WHERE rowid IN (SELECT rowid FROM %s WHERE %s LIMIT 1)", state.QuoteIdent(t.Name), cond), args
	}
	return " WHERE " + cond, args
}

// insert is an INSERT of row's cols, with the values of over instead.
func insert(table string, cols []string, row state.Row, over map[string]any) (string, []any) {
	q := make([]string, len(cols))
	marks := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		q[i], marks[i], args[i] = state.QuoteIdent(c), "?", bind(row[c])
		if v, ok := over[c]; ok {
			args[i] = bind(v)
		}
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", state.QuoteIdent(table), strings.Join(q, ", "), strings.Join(marks, ", ")), args
}

// execApply runs one statement on the copy's database; a statement that
// changes no row, or that a constraint refuses, does not apply.
func execApply(db, sql string, args []any) func(ctx context.Context, dir string) error {
	return func(ctx context.Context, dir string) error {
		p := world.DBPath(dir, db)
		if err := unshare(p); err != nil {
			return err
		}
		conn, err := state.OpenDB(p, false)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		res, err := conn.ExecContext(ctx, sql, args...)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %v", errInapplicable, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return errInapplicable
		}
		return conn.Close()
	}
}

// perturb returns a value near v that differs from it: a number plus one,
// text with its last character changed, something for NULL.
func perturb(v any, colType string) (any, bool) {
	switch x := v.(type) {
	case int64:
		return x + 1, true
	case float64:
		return x + 1, true
	case string:
		return changeLast(x), true
	case state.Blob:
		return append(slices.Clone([]byte(x)), 'x'), true
	case nil:
		if t := strings.ToUpper(colType); strings.Contains(t, "INT") || strings.Contains(t, "REAL") || strings.Contains(t, "NUM") || strings.Contains(t, "DEC") || strings.Contains(t, "BOOL") {
			return int64(1), true
		}
		return "x", true
	}
	return nil, false
}

// changeLast changes s's last character: a digit or letter to the next
// one (9 to 0, z to a), anything else to x.
func changeLast(s string) string {
	r, n := utf8.DecodeLastRuneInString(s)
	if n == 0 {
		return "x"
	}
	next := 'x'
	switch {
	case r >= '0' && r < '9', r >= 'a' && r < 'z', r >= 'A' && r < 'Z':
		next = r + 1
	case r == '9':
		next = '0'
	case r == 'z':
		next = 'a'
	case r == 'Z':
		next = 'A'
	case r == 'x':
		next = 'y'
	}
	return s[:len(s)-n] + string(next)
}

func bind(v any) any {
	if b, ok := v.(state.Blob); ok {
		return []byte(b)
	}
	return v
}

func valueEqual(a, b any) bool {
	ba, okA := a.(state.Blob)
	bb, okB := b.(state.Blob)
	if okA || okB {
		return okA && okB && bytes.Equal(ba, bb)
	}
	return a == b
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(cut(x, 60))
	case state.Blob:
		return fmt.Sprintf("a %d-byte BLOB", len(x))
	case []byte:
		return fmt.Sprintf("a %d-byte BLOB", len(x))
	}
	return fmt.Sprint(v)
}

// rowName names a row by its key, else by its first columns.
func rowName(row state.Row, key []string, t *state.Table) string {
	cols := key
	if len(cols) == 0 {
		cols = t.ColumnNames()
		if len(cols) > 3 {
			cols = cols[:3]
		}
	}
	parts := make([]string, 0, len(cols))
	for _, c := range cols {
		parts = append(parts, c+"="+valueText(row[c]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func textValues(row state.Row) []string {
	var out []string
	for _, v := range row {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func cleanPath(rel string) string {
	if c, err := world.CleanHomePath(rel); err == nil {
		return c
	}
	return path.Clean(rel)
}

// fileCandidates derives the mutations of one home entry the reference
// added, changed or deleted.
func fileCandidates(initial, solved string, fc state.FileChange) ([]*mutation, error) {
	rel := fc.Path
	home := "~/" + rel
	file := func(rank int, desc string, apply func(p string) error) *mutation {
		return &mutation{desc: desc, rank: rank, path: rel, apply: func(_ context.Context, dir string) error {
			return apply(filepath.Join(dir, world.HomeDir, filepath.FromSlash(rel)))
		}}
	}
	if fc.Change == state.Deleted {
		src := filepath.Join(initial, world.HomeDir, filepath.FromSlash(rel))
		switch fc.Kind {
		case "file":
			return []*mutation{file(rankRemove, fmt.Sprintf("restoring %s, which the reference deleted", home), func(p string) error { return copyFile(src, p) })}, nil
		case "symlink":
			return []*mutation{file(rankRemove, fmt.Sprintf("restoring the symlink %s, which the reference deleted", home), func(p string) error {
				target, err := os.Readlink(src)
				if err != nil {
					return err
				}
				return os.Symlink(target, p)
			})}, nil
		}
		return nil, nil
	}
	if fc.Kind != "file" {
		if fc.Kind == "symlink" {
			return []*mutation{file(rankRemove, fmt.Sprintf("deleting the symlink %s", home), os.Remove)}, nil
		}
		return nil, nil // a directory's files are candidates of their own
	}
	content, err := os.ReadFile(filepath.Join(solved, world.HomeDir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("mutate: read ~/%s: %w", rel, err)
	}
	write := func(b []byte) func(p string) error {
		return func(p string) error {
			if err := unshare(p); err != nil {
				return err
			}
			return os.WriteFile(p, b, 0)
		}
	}
	var out []*mutation
	if fc.Change == state.Changed && slices.Contains(fc.What, "content") {
		before, err := os.ReadFile(filepath.Join(initial, world.HomeDir, filepath.FromSlash(rel)))
		if err == nil {
			out = append(out, file(rankPerturb, fmt.Sprintf("restoring %s to its W0 content", home), write(before)))
		}
	}
	text := utf8.Valid(content) && !bytes.ContainsRune(content, 0)
	if text {
		lines := strings.SplitAfter(string(content), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for _, tk := range tokens(lines) {
			changed := slices.Clone(lines)
			changed[tk.line] = tk.replaced
			out = append(out, file(rankPerturb, fmt.Sprintf("changing %s to %s on line %d of %s", strconv.Quote(tk.old), strconv.Quote(tk.new), tk.line+1, home),
				write([]byte(strings.Join(changed, "")))))
		}
		for _, i := range spread(len(lines), maxDropLines) {
			dropped := slices.Concat(lines[:i], lines[i+1:])
			out = append(out, file(rankRemove, fmt.Sprintf("dropping line %d of %s (%s)", i+1, home, strconv.Quote(cut(strings.TrimRight(lines[i], "\r\n"), 60))),
				write([]byte(strings.Join(dropped, "")))))
		}
		junk := string(content)
		if junk != "" && !strings.HasSuffix(junk, "\n") {
			junk += "\n"
		}
		out = append(out, file(rankDuplicate, fmt.Sprintf("appending a junk line to %s", home), write([]byte(junk+"zz-mutation-junk\n"))))
	} else {
		out = append(out, file(rankDuplicate, fmt.Sprintf("appending junk bytes to %s", home), write(append(slices.Clone(content), "\nzz-mutation-junk\n"...))))
	}
	out = append(out, file(rankSibling, fmt.Sprintf("deleting %s", home), os.Remove))
	return out, nil
}

// token is one changeable token of a file: a number or a yes/no word.
type token struct {
	line     int
	old, new string
	replaced string // the line with the token changed
}

var tokenRE = regexp.MustCompile(`(?i)\b\d+(?:\.\d+)?\b|\b(?:yes|no|true|false)\b`)

var swaps = map[string]string{"yes": "no", "no": "yes", "true": "false", "false": "true"}

// tokens lists the changeable tokens of lines, the first and the last
// maxTokens/2 when there are more.
func tokens(lines []string) []token {
	var all []token
	for i, l := range lines {
		for _, loc := range tokenRE.FindAllStringIndex(l, -1) {
			old := l[loc[0]:loc[1]]
			var repl string
			if s, ok := swaps[strings.ToLower(old)]; ok {
				repl = matchCase(s, old)
			} else if n, err := strconv.ParseInt(old, 10, 64); err == nil {
				repl = fmt.Sprintf("%0*d", len(old), n+1) // 03 -> 04
			} else if f, err := strconv.ParseFloat(old, 64); err == nil {
				dec := len(old) - strings.IndexByte(old, '.') - 1
				repl = strconv.FormatFloat(f+1, 'f', dec, 64)
			} else {
				continue
			}
			all = append(all, token{line: i, old: old, new: repl, replaced: l[:loc[0]] + repl + l[loc[1]:]})
		}
	}
	if len(all) <= maxTokens {
		return all
	}
	return slices.Concat(all[:maxTokens/2], all[len(all)-maxTokens/2:])
}

func matchCase(s, like string) string {
	switch {
	case like == strings.ToUpper(like):
		return strings.ToUpper(s)
	case like[:1] == strings.ToUpper(like[:1]):
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// spread picks at most max of n indices: all when n <= max, else the
// first and the last max/2.
func spread(n, max int) []int {
	var out []int
	for i := range n {
		if n <= max || i < max/2 || i >= n-max/2 {
			out = append(out, i)
		}
	}
	return out
}

// answerCandidates are wrong final answers: for each answer criterion the
// reference's answer without that criterion's substrings, and the empty
// answer.
func answerCandidates(t *task.Task) []*mutation {
	seen := map[string]bool{t.Answer: true}
	var out []*mutation
	add := func(a, desc string) {
		if seen[a] {
			return
		}
		seen[a] = true
		out = append(out, &mutation{desc: desc, rank: rankPerturb, answer: &a})
	}
	for _, c := range t.Verifier.Criteria {
		if c.Kind != task.KindAnswer {
			continue
		}
		a := t.Answer
		for _, s := range c.Contains {
			a = removeFold(a, s)
		}
		add(a, fmt.Sprintf("answering %s, the reference's answer without %s", strconv.Quote(cut(a, 80)), strconv.Quote(strings.Join(c.Contains, ", "))))
	}
	add("", "answering nothing (an empty final answer)")
	return out
}

// removeFold removes every case-insensitive occurrence of sub from s.
func removeFold(s, sub string) string {
	if sub == "" {
		return s
	}
	re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(sub))
	return re.ReplaceAllString(s, "")
}
