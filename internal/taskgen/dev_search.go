package taskgen

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/site/search"
	"github.com/wildawm/wildawm/internal/task"
)

// broadSearch: the persona narrows down the saved Seekr search that
// brings the most results. The saved searches and their result counts are
// only on Seekr (GUI); a script tabulates the counts and picks the
// broadest (CLI); the to-do to narrow it goes to the to-do list (MCP
// tasks).
type broadSearch struct{}

func (broadSearch) Name() string     { return "broad-search" }
func (broadSearch) Covers() []string { return []string{"search", "tasks"} }

type devSaved struct {
	query   string
	results int64
}

// devSavedSearches are the persona's saved searches (each query once, by
// query) with Seekr's number of results.
func devSavedSearches(w *World, user string) ([]devSaved, error) {
	rows, err := w.Query("search", `SELECT DISTINCT query FROM saved_searches WHERE username = ? ORDER BY query`, user)
	if err != nil {
		return nil, err
	}
	var out []devSaved
	for _, r := range rows {
		q := strings.TrimSpace(str(r[0]))
		var n int64
		if m := search.Match(q); m != "" {
			c, err := w.Catalog(`SELECT count(*) FROM search_fts WHERE search_fts MATCH ?`, m)
			if err != nil {
				return nil, err
			}
			n = num(c[0][0])
		}
		out = append(out, devSaved{query: q, results: n})
	}
	return out, nil
}

// devBroadest is the saved search with the most results, or nil on a tie.
func devBroadest(ss []devSaved) *devSaved {
	var best *devSaved
	tie := false
	for i := range ss {
		switch {
		case best == nil || ss[i].results > best.results:
			best, tie = &ss[i], false
		case ss[i].results == best.results:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

func (f broadSearch) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["search"]
	if !ok || !hasTable(w, "tasks", "todos") {
		return nil, nil
	}
	ss, err := devSavedSearches(w, login.User)
	if err != nil || len(ss) < 2 {
		return nil, err
	}
	pick := devBroadest(ss)
	if pick == nil || pick.results == 0 {
		return nil, nil
	}
	project, err := devProject(w)
	if err != nil || project == "" {
		return nil, err
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Plan to narrow down the broadest saved Seekr search (%q)", pick.query),
		Params: map[string]string{"query": pick.query, "project": project},
		Core:   []string{"create tasks todo narrow search " + pick.query, "file reports/seekr-saved.csv", "read search saved"}}}, nil
}

func (f broadSearch) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["search"]
	ss, err := devSavedSearches(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := devBroadest(ss)
	if pick == nil || pick.query != s.Params["query"] {
		return nil, fmt.Errorf("taskgen: %s: the broadest saved search is no longer %q", f.Name(), s.Params["query"])
	}
	project := s.Params["project"]
	todoQ := fmt.Sprintf(`SELECT count(*) FROM todos t JOIN projects p ON p.id = t.project_id WHERE p.name = %s AND t.status = 'open' AND lower(t.title) LIKE %s`,
		sqlText(project), sqlText("%"+strings.ToLower(pick.query)+"%"))
	prior, err := count(w, "tasks", todoQ)
	if err != nil {
		return nil, err
	}
	priorAll, err := count(w, "tasks", `SELECT count(*) FROM todos`)
	if err != nil {
		return nil, err
	}
	const out = "reports/seekr-saved.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Seekr login")
	ref.Login("search", login)
	ref.Open("search", "/saved", "the saved searches")
	ref.Read("#results", "")
	type pyRow struct {
		Query   string `json:"query"`
		Results int64  `json:"results"`
	}
	var rows, listed []pyRow
	want := map[string]int64{}
	var lines []string
	for _, sv := range ss {
		ref.Open("search", "/?q="+url.QueryEscape(sv.query), "how many results the search brings")
		ref.Read("#main", "")
		rows = append(rows, pyRow{sv.query, sv.results})
		listed = append(listed, pyRow{sv.query, min(sv.results, search.PerPage)})
		want[sv.query] = sv.results
		lines = append(lines, fmt.Sprintf("%q: %d results", sv.query, sv.results))
	}
	// Read carelessly, the count is the results listed on the first page.
	if v, wrong := pyJSON(rows), pyJSON(listed); v != wrong {
		ref.Fact(task.Fact{ID: "result-counts", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: `start with "N results for"`})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p reports && python3 - <<'PY'
import csv, json
rows = %s
rows.sort(key=lambda r: (-r['results'], r['query']))
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['query', 'results'])
    for r in rows:
        w.writerow([r['query'], r['results']])
print('broadest:', rows[0]['query'], rows[0]['results'])
PY`, pyJSON(rows), out), "the counts; the broadest search is the one to narrow")
	// Without the table, the guess is the search of the fewest words
	// (it sounds the broadest).
	guess := slices.MinFunc(ss, func(a, b devSaved) int {
		return cmp.Or(cmp.Compare(len(strings.Fields(a.query)), len(strings.Fields(b.query))), cmp.Compare(len(a.query), len(b.query)), strings.Compare(a.query, b.query))
	})
	ref.Fact(task.Fact{ID: "broadest", Kind: task.FactOutput, Value: pick.query, Wrong: guess.query,
		Forms: []task.Form{{Value: fmt.Sprintf("%d results on Seekr", pick.results), Wrong: fmt.Sprintf("%d results on Seekr", guess.results)}}})
	ref.MCP("tasks", "list_projects", nil, "the active project")
	ref.MCP("tasks", "create_todo", map[string]any{"title": "Narrow down the Seekr search " + pick.query, "project": project, "priority": "low",
		"notes": fmt.Sprintf("%d results on Seekr", pick.results)}, "the to-do for the broadest search")

	checkPy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {}
for r in rows:
    key = " ".join((r.get("query") or "").split()).lower()
    try:
        got.setdefault(key, []).append(int((r.get("results") or "").strip().replace(",", "")))
    except ValueError:
        got.setdefault(key, []).append(None)
bad = sorted(k for k, v in want.items() if got.get(" ".join(k.split()).lower()) != [v])
extra = sorted(k for k in got if k not in {" ".join(x.split()).lower() for x in want})
result(not bad and not extra, f"missing or wrong searches: {bad}; not saved: {extra}")
`, pyJSON(want), out, out)

	t := &task.Task{
		Version: task.Version, ID: taskID("broad-search", w.Manifest.Persona, pick.query, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("Some of my saved searches on Seekr bring far too many results. Run each of my saved searches and note how many results Seekr finds; "+
			"save the counts as ~/%s with columns query and results. Then add a to-do to my %q project in my to-do list titled %q for the saved search with the most results "+
			"(QUERY being that search, as saved). Tell me which search it is.", out, project, "Narrow down the Seekr search QUERY"),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "saved", Title: "List the saved searches on Seekr", Interface: task.GUI},
			{ID: "counts", Title: "Run each saved search and read its number of results", Interface: task.GUI},
			{ID: "table", Title: "Tabulate the counts with a script and save " + out, Interface: task.CLI},
			{ID: "todo", Title: "Add the to-do to narrow the broadest search", Interface: task.MCP},
		},
		Hint: "Seekr's Saved searches page (/saved) links each search to its results, which start with \"N results for\". The tasks app's create_todo takes a title and the project name from list_projects.",
		Rubric: []string{
			fmt.Sprintf("~/%s lists every saved search with Seekr's number of results", out),
			fmt.Sprintf("one new open to-do in %q names the search %q", project, pick.query),
			"no other to-do was created",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "todo", Kind: "sql", DB: "tasks", Description: "an open to-do naming the broadest search in the project", Query: todoQ, Expect: rawInt(prior + 1)},
			{ID: "one-todo", Kind: "sql", DB: "tasks", Description: "no other to-do", Query: `SELECT count(*) FROM todos`, Expect: rawInt(priorAll + 1)},
			{ID: "table", Kind: "script", Script: "scripts/search_counts.py", Description: "the result counts of every saved search"},
		}},
		Answer:     pick.query,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("saved searches: %s; the broadest is %q. The saved searches and their counts are only on Seekr (GUI); the to-do list only over MCP; the script's table decides.",
			strings.Join(lines, "; "), pick.query),
	}
	return &Draft{Task: t, Scripts: map[string]string{"search_counts.py": checkPy}}, nil
}
