// Package calc is the computational engine (GUI, a kit spec with one
// route): arithmetic, unit conversion and date arithmetic typed as one
// line, answered with the result and how it was read.
//
// It imports internal/site/kit and internal/site/web.
package calc

import (
	"bytes"
	"html/template"
	"net/http"
	"strings"

	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/web"
)

// Name is the site's name and world database (db/calc.sqlite).
const Name = "calc"

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Reckoner", Tagline: "Arithmetic, units and dates, one line at a time.",
		Schema: []string{`CREATE TABLE saved (id INTEGER PRIMARY KEY, username TEXT NOT NULL, query TEXT NOT NULL, saved_at TEXT NOT NULL)`,
			kit.NaturalKeyIndex("saved", "username", "query", "saved_at")},
		Actions: []kit.Action{
			{Name: "keep", Label: "Keep a calculation", Inputs: []kit.Input{{Name: "query", Label: "Calculation to keep", Kind: "text", MaxLen: kit.MaxQueryBytes}},
				Check: `SELECT 'you kept this calculation already: it is on your kept calculations' FROM saved WHERE username = :user AND query = :query`,
				Exec:  []string{`INSERT INTO saved (username, query, saved_at) VALUES (:user, :query, :now)`}, Done: "Calculation kept.", Then: "/kept"},
		},
		Histories: []kit.History{{Name: "kept", Title: "Kept calculations", Path: "/kept", Link: "/?q=",
			SQL:     `SELECT id AS key, query AS link, query, saved_at FROM saved WHERE username = :user ORDER BY id DESC`,
			Columns: []kit.Column{{Key: "query", Label: "Calculation"}, {Key: "saved_at", Label: "Kept"}}}},
		Routes: []kit.Route{{Pattern: "GET /{$}", Handler: page}},
	}
}

var pageTmpl = template.Must(template.New("calc").Parse(`<h1>Reckoner</h1>
<form role="search" method="get" action="/">
<label for="search-input">Calculate</label>
<input id="search-input" name="q" type="search" maxlength="200" value="{{.Q}}" placeholder="12.5 km in mi">
<button id="search-button" type="submit">Calculate</button>
</form>
<p class="tagline">Try “(3 + 4) * 2^3”, “72 f in c”, “2.5 lb to g”, “days between 2026-01-01 and 2026-03-15”, “2026-02-20 plus 10 days”, “weekday of 2026-07-04”.</p>
{{if .Q}}{{if .Err}}<p role="alert" id="calc-error">{{.Err}}</p>{{else}}<dl class="fields" id="calc-result"><dt>Read as</dt><dd>{{.As}}</dd><dt>Result</dt><dd id="calc-answer"><strong>{{.Answer}}</strong></dd></dl>{{end}}{{end}}`))

func page(s *kit.Site, q *kit.Request) error {
	expr := strings.TrimSpace(q.R.URL.Query().Get("q"))
	if len(expr) > kit.MaxQueryBytes {
		return web.Errorf(http.StatusBadRequest, "the calculation is too long: at most %d characters", kit.MaxQueryBytes)
	}
	data := struct{ Q, As, Answer, Err string }{Q: expr}
	if expr != "" {
		r, err := Eval(expr)
		if err != nil {
			data.Err = err.Error()
		} else {
			data.As, data.Answer = r.As, r.Answer
		}
	}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, data); err != nil {
		return web.Internal(err)
	}
	return q.Render("Calculate", template.HTML(b.String()))
}
