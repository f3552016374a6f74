// Package search is the web search engine (GUI, a kit spec): full-text
// search over every page of the other sites (the catalog's search index),
// with links to them; the persona saves searches.
//
// It imports internal/site/kit and internal/site/web.
package search

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/web"
)

// Name is the site's name and world database (db/search.sqlite).
const Name = "search"

// Results on one page.
const PerPage = 10

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Seekr", Tagline: "Search every site at once.",
		Schema: []string{`CREATE TABLE saved_searches (id INTEGER PRIMARY KEY, username TEXT NOT NULL, query TEXT NOT NULL, saved_at TEXT NOT NULL)`,
			kit.NaturalKeyIndex("saved_searches", "username", "query", "saved_at")},
		Actions: []kit.Action{
			{Name: "save-search", Label: "Save a search", Inputs: []kit.Input{{Name: "query", Label: "Search to save", Kind: "text", MaxLen: kit.MaxQueryBytes}},
				Exec: []string{`INSERT INTO saved_searches (username, query, saved_at) VALUES (:user, :query, :now)`},
				Done: "Search saved.", Then: "/saved"},
			{Name: "forget", Label: "Remove", On: "saved", Exec: []string{`DELETE FROM saved_searches WHERE username = :user AND id = CAST(:key AS INTEGER)`}, Done: "Search removed.", Then: "/saved"},
		},
		Histories: []kit.History{{Name: "saved", Title: "Saved searches", Path: "/saved", Link: "/?q=",
			SQL:     `SELECT id AS key, query AS link, query, saved_at FROM saved_searches WHERE username = :user ORDER BY id DESC`,
			Columns: []kit.Column{{Key: "query", Label: "Search"}, {Key: "saved_at", Label: "Saved"}}}},
		Routes: []kit.Route{{Pattern: "GET /{$}", Handler: results}},
	}
}

// Match turns a visitor's words into an FTS5 query: every word, quoted
// (so no word is FTS syntax), all of them required.
func Match(q string) string {
	var words []string
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words = append(words, `"`+w+`"`)
		if len(words) == 12 {
			break
		}
	}
	return strings.Join(words, " ")
}

var resultsTmpl = template.Must(template.New("results").Parse(`<h1>Seekr</h1>
<form role="search" method="get" action="/">
<label for="search-input">Search the web</label>
<input id="search-input" name="q" type="search" maxlength="200" value="{{.Q}}">
<button id="search-button" type="submit">Search</button>
</form>
{{if .Q}}<p>{{.Total}} results for “{{.Q}}”{{if gt .Pages 1}}, page {{.Page}} of {{.Pages}}{{end}}</p>
<ol id="results" class="results">{{range .Rows}}<li><a href="{{.Href}}">{{.Title}}</a> <span class="site">{{.Site}}</span><p>{{.Snippet}}</p></li>{{end}}</ol>
<nav class="pages" aria-label="Pages">{{if .Prev}}<a rel="prev" href="{{.Prev}}">Previous page</a>{{end}} {{if .Next}}<a id="next-page" rel="next" href="{{.Next}}">Next page</a>{{end}}</nav>{{end}}`))

type result struct{ Href, Title, Site, Snippet string }

func results(s *kit.Site, q *kit.Request) error {
	v := q.R.URL.Query()
	data := struct {
		Q                  string
		Total, Page, Pages int
		Rows               []result
		Prev, Next         string
	}{Q: strings.TrimSpace(v.Get("q")), Page: 1}
	if len(data.Q) > kit.MaxQueryBytes {
		return web.Errorf(http.StatusBadRequest, "the search is too long: at most %d characters", kit.MaxQueryBytes)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > kit.MaxPage {
			return web.Errorf(http.StatusBadRequest, "page must be a whole number from 1 to %d, got %q", kit.MaxPage, p)
		}
		data.Page = n
	}
	if m := Match(data.Q); m != "" {
		db, err := s.Catalog()
		if err != nil {
			return err
		}
		ctx := q.R.Context()
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH ?`, m).Scan(&data.Total); err != nil {
			return web.Internal(err)
		}
		data.Pages = max(1, (data.Total+PerPage-1)/PerPage)
		if data.Page > data.Pages {
			return web.Errorf(http.StatusNotFound, "page %d does not exist: the search has %d pages", data.Page, data.Pages)
		}
		rows, err := db.QueryContext(ctx, `SELECT p.site, p.path, p.title, snippet(search_fts, 1, '', '', '…', 16)
			FROM search_fts JOIN search_pages p ON p.id = search_fts.rowid WHERE search_fts MATCH ? ORDER BY rank, p.id LIMIT ? OFFSET ?`, m, PerPage, (data.Page-1)*PerPage)
		if err != nil {
			return web.Internal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var r result
			var path string
			if err := rows.Scan(&r.Site, &path, &r.Title, &r.Snippet); err != nil {
				return web.Internal(err)
			}
			r.Href = strings.TrimSuffix(s.SiteURL(r.Site), "/") + path
			data.Rows = append(data.Rows, r)
		}
		if err := rows.Err(); err != nil {
			return web.Internal(err)
		}
		page := func(n int) string { return "/?" + url.Values{"q": {data.Q}, "page": {strconv.Itoa(n)}}.Encode() }
		if data.Page > 1 {
			data.Prev = page(data.Page - 1)
		}
		if data.Page < data.Pages {
			data.Next = page(data.Page + 1)
		}
	}
	var b bytes.Buffer
	if err := resultsTmpl.Execute(&b, data); err != nil {
		return web.Internal(err)
	}
	return q.Render("Search", template.HTML(b.String()))
}
