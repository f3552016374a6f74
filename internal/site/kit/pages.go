package kit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/site/web"
)

type listView struct {
	Name, Title, Path string
	Query             string
	Filters           []filterView
	Columns           []string
	Rows              []rowView
	Total             int
	Page, Pages       int
	Prev, Next        string
}

type filterView struct {
	Name, Label, Value string
	Options            []string // empty: a free text or number field
	Number             bool
}

type rowView struct {
	Link  string
	Cells []string
	Forms []formView
}

type detailView struct {
	Title    string
	Image    string
	ImageAlt string
	Fields   []fieldView
	Sections []sectionView
	Forms    []formView
}

type fieldView struct {
	Label, Value string
	Long         bool
}

type sectionView struct {
	Title   string
	Columns []string
	Rows    []rowView
}

type historyView struct {
	Title   string
	Columns []string
	Rows    []rowView
}

type formView struct {
	Action, Label, Key string
	Inputs             []inputView
}

type inputView struct {
	Name, Label, Kind, Value string
	Min, Max, MaxLen         int
	Options                  []string
	Optional                 bool
}

var paramRE = regexp.MustCompile(`:([a-z_][a-z0-9_]*)`)

// named binds the :names query uses from p (a missing one binds NULL).
func named(query string, p map[string]any) []any {
	var args []any
	seen := map[string]bool{}
	for _, m := range paramRE.FindAllStringSubmatch(query, -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		args = append(args, sql.Named(m[1], p[m[1]]))
	}
	return args
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// rows reads every row of query as maps of column to value.
func rows(ctx context.Context, q querier, query string, p map[string]any) ([]map[string]any, error) {
	rs, err := q.QueryContext(ctx, query, named(query, p)...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			m[c] = vals[i]
		}
		out = append(out, m)
	}
	return out, rs.Err()
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func integer(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	n, _ := strconv.ParseInt(text(v), 10, 64)
	return n
}

// format shows v as its column's kind says.
func format(c Column, v any) string {
	switch c.Kind {
	case "cents":
		if v == nil {
			return ""
		}
		return catalog.FormatCents(integer(v))
	case "rating10":
		if v == nil {
			return ""
		}
		n := integer(v)
		return fmt.Sprintf("%d.%d / 5", n/10, n%10)
	case "bool":
		if integer(v) != 0 {
			return "yes"
		}
		return "no"
	case "list":
		var xs []string
		if json.Unmarshal([]byte(text(v)), &xs) == nil {
			return strings.Join(xs, ", ")
		}
	case "specs":
		var specs catalog.Specs
		if specs.UnmarshalJSON([]byte(text(v))) == nil {
			parts := make([]string, len(specs))
			for i, sp := range specs {
				parts[i] = sp.Label() + ": " + sp.Text()
			}
			return strings.Join(parts, "; ")
		}
	}
	return text(v)
}

func labels(cs []Column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Label
	}
	return out
}

// likeWords is the WHERE of a search: every word in one of cols.
func likeWords(q string, cols []string, p map[string]any) string {
	var conds []string
	for i, w := range strings.Fields(q) {
		if i == 8 {
			break // the first eight words
		}
		name := fmt.Sprintf("q%d", i)
		p[name] = "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(w)) + "%"
		var ors []string
		for _, c := range cols {
			ors = append(ors, fmt.Sprintf("lower(x.%s) LIKE :%s ESCAPE '\\'", c, name))
		}
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	return strings.Join(conds, " AND ")
}

func (s *Site) filterOptions(ctx context.Context, f Filter) ([]string, error) {
	if f.OptionsSQL == "" {
		return f.Options, nil
	}
	db, err := s.Catalog()
	if err != nil {
		return nil, err
	}
	rs, err := rows(ctx, db, f.OptionsSQL, nil)
	if err != nil {
		return nil, web.Internal(err)
	}
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		for _, v := range r {
			out = append(out, text(v))
		}
	}
	return out, nil
}

// listRows reads page n of l for query q and the filter values.
func (s *Site) listRows(ctx context.Context, l *List, q string, vals url.Values, n int) (*listView, error) {
	db, err := s.Catalog()
	if err != nil {
		return nil, err
	}
	p := map[string]any{}
	var where []string
	if w := likeWords(q, l.Search, p); w != "" {
		where = append(where, w)
	}
	v := &listView{Name: l.Name, Title: l.Title, Path: l.Path, Query: q, Columns: labels(l.Columns), Page: n}
	link := url.Values{}
	if q != "" {
		link.Set("q", q)
	}
	for _, f := range l.Filters {
		opts, err := s.filterOptions(ctx, f)
		if err != nil {
			return nil, err
		}
		fv := filterView{Name: f.Name, Label: f.Label, Options: opts, Number: f.Number}
		if val := strings.TrimSpace(vals.Get(f.Name)); val != "" {
			var bound any = val
			switch {
			case len(val) > 100:
				return nil, web.Errorf(http.StatusBadRequest, "%s is too long: at most 100 characters", f.Label)
			case len(opts) > 0 && !slices.Contains(opts, val):
				return nil, web.Errorf(http.StatusBadRequest, "%s %q is not one of the choices (%s)", f.Label, clip(val), strings.Join(clipList(opts), ", "))
			case f.Number:
				num, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					return nil, web.Errorf(http.StatusBadRequest, "%s must be a whole number, got %q", f.Label, clip(val))
				}
				bound = num
			}
			p["f_"+f.Name] = bound
			where = append(where, fmt.Sprintf("x.%s %s :f_%s", f.Column, cmpOr(f.Op, "="), f.Name))
			fv.Value = val
			link.Set(f.Name, val)
		}
		v.Filters = append(v.Filters, fv)
	}
	from := "(" + l.Select + ") AS x"
	if len(where) > 0 {
		from += " WHERE " + strings.Join(where, " AND ")
	}
	cq := "SELECT count(*) FROM " + from
	if err := db.QueryRowContext(ctx, cq, named(cq, p)...).Scan(&v.Total); err != nil {
		return nil, web.Internal(fmt.Errorf("%s list: %w", l.Name, err))
	}
	v.Pages = max(1, (v.Total+PageSize-1)/PageSize)
	if n > v.Pages {
		return nil, web.Errorf(http.StatusNotFound, "page %d does not exist: %s has %d pages", n, l.Title, v.Pages)
	}
	p["limit"], p["offset"] = PageSize, (n-1)*PageSize
	query := "SELECT * FROM " + from + " ORDER BY " + cmpOr(l.Order, "key") + " LIMIT :limit OFFSET :offset"
	rs, err := rows(ctx, db, query, p)
	if err != nil {
		return nil, web.Internal(fmt.Errorf("%s list: %w", l.Name, err))
	}
	for _, r := range rs {
		row := rowView{Link: l.Path + "/" + url.PathEscape(text(r["key"]))}
		for _, c := range l.Columns {
			row.Cells = append(row.Cells, format(c, r[c.Key]))
		}
		v.Rows = append(v.Rows, row)
	}
	page := func(k int) string {
		u := url.Values{}
		for name, vs := range link {
			u[name] = vs
		}
		u.Set("page", strconv.Itoa(k))
		return l.Path + "?" + u.Encode()
	}
	if n > 1 {
		v.Prev = page(n - 1)
	}
	if n < v.Pages {
		v.Next = page(n + 1)
	}
	return v, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func clipList(xs []string) []string {
	if len(xs) > 12 {
		return append(slices.Clone(xs[:12]), "…")
	}
	return xs
}

func (s *Site) list(w http.ResponseWriter, r *http.Request, l *List) error {
	qv := r.URL.Query()
	q := strings.TrimSpace(qv.Get("q"))
	if len(q) > MaxQueryBytes {
		return web.Errorf(http.StatusBadRequest, "the search is too long: at most %d characters", MaxQueryBytes)
	}
	n := 1
	if ps := qv.Get("page"); ps != "" {
		var err error
		if n, err = strconv.Atoi(ps); err != nil || n < 1 || n > MaxPage {
			return web.Errorf(http.StatusBadRequest, "page must be a whole number from 1 to %d, got %q", MaxPage, clip(ps))
		}
	}
	v, err := s.listRows(r.Context(), l, q, qv, n)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "list", &page{Title: l.Title, Query: q, List: v})
}

func (s *Site) detail(w http.ResponseWriter, r *http.Request, l *List) error {
	key := r.PathValue("key")
	if !keyRE.MatchString(key) {
		return web.Errorf(http.StatusNotFound, "no %s %q", strings.TrimSuffix(strings.ToLower(l.Title), "s"), clip(key))
	}
	db, err := s.Catalog()
	if err != nil {
		return err
	}
	p := map[string]any{"key": key}
	rs, err := rows(r.Context(), db, l.Detail.SQL, p)
	if err != nil {
		return web.Internal(fmt.Errorf("%s detail: %w", l.Name, err))
	}
	if len(rs) == 0 {
		return web.Errorf(http.StatusNotFound, "no %s %q", strings.TrimSuffix(strings.ToLower(l.Title), "s"), clip(key))
	}
	rec := rs[0]
	d := &detailView{Title: text(rec["title"])}
	if l.Detail.Image != "" && text(rec[l.Detail.Image]) != "" {
		d.Image = "/" + text(rec[l.Detail.Image])
		d.ImageAlt = "Picture of " + d.Title
	}
	for _, c := range l.Detail.Fields {
		d.Fields = append(d.Fields, fieldView{Label: c.Label, Value: format(c, rec[c.Key]), Long: c.Kind == "long"})
	}
	for _, sec := range l.Detail.Sections {
		srs, err := rows(r.Context(), db, sec.SQL, p)
		if err != nil {
			return web.Internal(fmt.Errorf("%s section %s: %w", l.Name, sec.Title, err))
		}
		sv := sectionView{Title: sec.Title, Columns: labels(sec.Columns)}
		for _, sr := range srs {
			row := rowView{}
			if sec.Link != "" {
				row.Link = sec.Link + url.PathEscape(text(sr["key"]))
			}
			for _, c := range sec.Columns {
				row.Cells = append(row.Cells, format(c, sr[c.Key]))
			}
			sv.Rows = append(sv.Rows, row)
		}
		d.Sections = append(d.Sections, sv)
	}
	ss, _ := s.sessions.Get(r) // render starts a visitor's session
	for i := range s.spec.Actions {
		if a := &s.spec.Actions[i]; a.On == l.Name && ss.User != "" {
			f, err := s.form(r.Context(), a, key)
			if err != nil {
				return err
			}
			d.Forms = append(d.Forms, f)
		}
	}
	return s.render(w, r, http.StatusOK, "detail", &page{Title: d.Title, Detail: d})
}

// form is an action's form for the record key.
func (s *Site) form(ctx context.Context, a *Action, key string) (formView, error) {
	f := formView{Action: "/do/" + a.Name, Label: a.Label, Key: key}
	for _, in := range a.Inputs {
		iv := inputView{Name: in.Name, Label: in.Label, Kind: in.Kind, Value: in.Default, Min: in.Min, Max: in.Max, MaxLen: in.MaxLen, Options: in.Options, Optional: in.Optional}
		if in.OptionsSQL != "" {
			opts, err := s.inputOptions(ctx, in, key)
			if err != nil {
				return f, err
			}
			iv.Options = opts
		}
		f.Inputs = append(f.Inputs, iv)
	}
	return f, nil
}

func (s *Site) inputOptions(ctx context.Context, in Input, key string) ([]string, error) {
	db, err := s.Catalog()
	if err != nil {
		return nil, err
	}
	rs, err := rows(ctx, db, in.OptionsSQL, map[string]any{"key": key})
	if err != nil {
		return nil, web.Internal(err)
	}
	var out []string
	for _, r := range rs {
		for _, v := range r {
			out = append(out, text(v))
		}
	}
	return out, nil
}

func (s *Site) history(w http.ResponseWriter, r *http.Request, h *History) error {
	ss, ok := s.sessions.Get(r)
	if !ok || ss.User == "" {
		return web.Redirect(w, r, "/login?next="+url.QueryEscape(h.Path))
	}
	db, c, err := s.openWorld(r.Context(), true)
	if err != nil {
		return err
	}
	defer db.Close()
	defer c.Close()
	rs, err := rows(r.Context(), c, h.SQL, map[string]any{"user": ss.User})
	if err != nil {
		return web.Internal(fmt.Errorf("%s history %s: %w", s.spec.Name, h.Name, err))
	}
	v := &historyView{Title: h.Title, Columns: labels(h.Columns)}
	for _, hr := range rs {
		row := rowView{}
		if h.Link != "" {
			esc := url.PathEscape
			if strings.HasSuffix(h.Link, "=") {
				esc = url.QueryEscape // the link is a query's value
			}
			row.Link = h.Link + esc(text(hr["link"]))
		}
		for _, col := range h.Columns {
			row.Cells = append(row.Cells, format(col, hr[col.Key]))
		}
		for i := range s.spec.Actions {
			if a := &s.spec.Actions[i]; a.On == h.Name {
				f, err := s.form(r.Context(), a, text(hr["key"]))
				if err != nil {
					return err
				}
				row.Forms = append(row.Forms, f)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return s.render(w, r, http.StatusOK, "history", &page{Title: h.Title, History: v})
}

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// checkInputs reads and checks an action's form values.
func (s *Site) checkInputs(ctx context.Context, a *Action, form url.Values, key string, p map[string]any) error {
	for _, in := range a.Inputs {
		raw := strings.TrimSpace(form.Get(in.Name))
		if raw == "" {
			if in.Optional {
				p[in.Name] = nil
				continue
			}
			return web.Errorf(http.StatusBadRequest, "%s is required", in.Label)
		}
		switch in.Kind {
		case "int":
			n, err := strconv.Atoi(raw)
			if err != nil || n < in.Min || n > in.Max {
				return web.Errorf(http.StatusBadRequest, "%s must be a whole number from %d to %d, got %q", in.Label, in.Min, in.Max, clip(raw))
			}
			p[in.Name] = int64(n)
		case "date":
			t, err := time.Parse("2006-01-02", raw)
			if err != nil || !dateRE.MatchString(raw) || t.Format("2006-01-02") != raw {
				return web.Errorf(http.StatusBadRequest, "%s must be a date YYYY-MM-DD, got %q", in.Label, clip(raw))
			}
			p[in.Name] = raw
		case "select":
			opts := in.Options
			if in.OptionsSQL != "" {
				var err error
				if opts, err = s.inputOptions(ctx, in, key); err != nil {
					return err
				}
			}
			if !slices.Contains(opts, raw) {
				return web.Errorf(http.StatusBadRequest, "%s %q is not one of the choices (%s)", in.Label, clip(raw), strings.Join(clipList(opts), ", "))
			}
			p[in.Name] = raw
		default: // text
			if max := cmpInt(in.MaxLen, 2000); len(raw) > max {
				return web.Errorf(http.StatusBadRequest, "%s is %d characters; at most %d", in.Label, len(raw), max)
			}
			if strings.ContainsRune(raw, 0) {
				return web.Errorf(http.StatusBadRequest, "%s contains a NUL character", in.Label)
			}
			p[in.Name] = raw
		}
	}
	return nil
}

func cmpInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// act runs an action: CSRF and login, the inputs, then Check and Exec in
// one BEGIN IMMEDIATE transaction; anything refused changes nothing.
func (s *Site) act(w http.ResponseWriter, r *http.Request, a *Action) error {
	ss, err := s.sessions.CheckCSRF(r)
	if err != nil {
		return err
	}
	if ss.User == "" {
		return web.Errorf(http.StatusUnauthorized, "log in to %s", strings.ToLower(a.Label))
	}
	now, err := s.now()
	if err != nil {
		return err
	}
	if err := s.do(r.Context(), a, ss.User, r.PostForm.Get("key"), r.PostForm, now); err != nil {
		return err
	}
	s.sessions.SetFlash(ss.Token, a.Done)
	return web.Redirect(w, r, cmpOr(a.Then, "/"))
}

// do runs action a for user on record key with the form's inputs at now:
// the record must exist, the inputs pass their checks, then Check and
// Exec run in one BEGIN IMMEDIATE transaction. Anything refused changes
// nothing. The GUI's POSTs and Do (synthesis) both run it.
func (s *Site) do(ctx context.Context, a *Action, user, key string, form url.Values, now string) error {
	if a.On != "" && !keyRE.MatchString(key) {
		return web.Errorf(http.StatusBadRequest, "the form names no record (key %q)", clip(key))
	}
	if l, ok := s.lists[a.On]; ok {
		db, err := s.Catalog()
		if err != nil {
			return err
		}
		rs, err := rows(ctx, db, l.Detail.SQL, map[string]any{"key": key})
		if err != nil {
			return web.Internal(err)
		}
		if len(rs) == 0 {
			return web.Errorf(http.StatusNotFound, "no %s %q", strings.TrimSuffix(strings.ToLower(l.Title), "s"), clip(key))
		}
	}
	p := map[string]any{"user": user, "key": key, "now": now}
	if err := s.checkInputs(ctx, a, form, key, p); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	db, c, err := s.openWorld(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return web.Internal(err)
	}
	err = func() error {
		if h, ok := s.histOf[a.On]; ok {
			// An action on a history's row acts only on a row of the
			// user's own history.
			if n, err := keyRows(ctx, c, h, user, key); err != nil {
				return web.Internal(err)
			} else if n == 0 {
				return web.Errorf(http.StatusNotFound, "%s has no %q", strings.ToLower(h.Title), clip(key))
			}
		}
		if a.Check != "" {
			var msg sql.NullString
			if err := c.QueryRowContext(ctx, a.Check, named(a.Check, p)...).Scan(&msg); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return web.Internal(fmt.Errorf("%s check: %w", a.Name, err))
			}
			if msg.Valid {
				return web.Errorf(http.StatusBadRequest, "%s", msg.String)
			}
		}
		for _, q := range a.Exec {
			if _, err := c.ExecContext(ctx, q, named(q, p)...); err != nil {
				if duplicate(err) {
					// The row exists already (a natural key, a UNIQUE
					// constraint): the visitor's doing, not the site's.
					return web.Errorf(http.StatusConflict, "%s: that is done already; nothing changed", a.Label)
				}
				return web.Internal(fmt.Errorf("%s: %w", a.Name, err))
			}
		}
		return nil
	}()
	if err != nil {
		if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			return web.Internal(errors.Join(err, rerr))
		}
		return err
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return web.Internal(err)
	}
	return nil
}

// duplicate reports whether err is SQLite refusing a row that a UNIQUE
// constraint or index (a natural key) holds already.
func duplicate(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// Do is the synthesis API: it writes the persona's web history, the rows
// of action name for user on record key at now (YYYY-MM-DD HH:MM:SS), the
// way the site's own form does, without a browser or a session: the
// same checks, the same statements. A refused action changes nothing and
// its error says why (a *web.Error with the visitor's message).
func (s *Site) Do(ctx context.Context, name, user, key string, inputs map[string]string, now string) error {
	i := slices.IndexFunc(s.spec.Actions, func(a Action) bool { return a.Name == name })
	if i < 0 {
		names := make([]string, len(s.spec.Actions))
		for j, a := range s.spec.Actions {
			names[j] = a.Name
		}
		return fmt.Errorf("%s: no action %q; the actions are %s", s.spec.Name, name, strings.Join(names, ", "))
	}
	if _, err := time.Parse(TimeFormat, now); err != nil {
		return fmt.Errorf("%s %s: now %q is not a time YYYY-MM-DD HH:MM:SS", s.spec.Name, name, now)
	}
	if user == "" {
		return fmt.Errorf("%s %s: user is empty", s.spec.Name, name)
	}
	form := url.Values{}
	for k, v := range inputs {
		form.Set(k, v)
	}
	return s.do(ctx, &s.spec.Actions[i], user, key, form, now)
}

// HistoryRows is how many rows history name of spec lists for user in the
// world at worldDir (over the catalog at catalogDir): what its page must
// show; with a key, how many of them have that key. The health check
// compares it with the page.
func HistoryRows(ctx context.Context, spec *Spec, worldDir, catalogDir, name, user string, key ...string) (int, error) {
	i := slices.IndexFunc(spec.Histories, func(h History) bool { return h.Name == name })
	if i < 0 {
		return 0, fmt.Errorf("%s: no history %q", spec.Name, name)
	}
	s := &Site{spec: spec, opts: Options{WorldDir: worldDir, CatalogDir: catalogDir}}
	db, c, err := s.openWorld(ctx, true)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	defer c.Close()
	return keyRows(ctx, c, &spec.Histories[i], user, key...)
}

// keyRows counts the rows history h lists for user; with a key, those
// whose key column is it.
func keyRows(ctx context.Context, q querier, h *History, user string, key ...string) (int, error) {
	rs, err := rows(ctx, q, h.SQL, map[string]any{"user": user})
	if err != nil || len(key) == 0 {
		return len(rs), err
	}
	n := 0
	for _, r := range rs {
		if text(r["key"]) == key[0] {
			n++
		}
	}
	return n, nil
}
