package taskgen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// starredIssues: the persona plans to help the starred Forgeyard
// repository with the most open issues. The stars and each repository's
// issues are only on Forgeyard (GUI); a script counts the open issues
// (not pull requests) per repository and picks the busiest (CLI); the
// to-do goes to the persona's to-do list (MCP tasks).
type starredIssues struct{}

func (starredIssues) Name() string     { return "starred-issues" }
func (starredIssues) Covers() []string { return []string{"code", "tasks"} }

type devRepo struct {
	id          int64
	full        string
	stars, open int64
	prs         int64
}

// devStarred are the repositories the persona follows on Forgeyard (starred,
// or where it opened an issue) with their counts of open issues and open
// pull requests in the repository's own table, by id.
func devStarred(w *World, user string) ([]devRepo, error) {
	rows, err := w.Query("code", `SELECT repo_id FROM stars WHERE username = ? UNION SELECT repo_id FROM issues WHERE username = ? ORDER BY 1`, user, user)
	if err != nil {
		return nil, err
	}
	var out []devRepo
	for _, r := range rows {
		c, err := w.Catalog(`SELECT r.owner || '/' || r.name, r.stars,
			(SELECT count(*) FROM repo_issues i WHERE i.repo_id = r.id AND i.is_pr = 0 AND i.state = 'open'),
			(SELECT count(*) FROM repo_issues i WHERE i.repo_id = r.id AND i.is_pr = 1 AND i.state = 'open')
			FROM repositories r WHERE r.id = ?`, num(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) == 1 {
			out = append(out, devRepo{id: num(r[0]), full: str(c[0][0]), stars: num(c[0][1]), open: num(c[0][2]), prs: num(c[0][3])})
		}
	}
	return out, nil
}

// devBusiest is the repository with the most open issues, the one with
// fewer stars (it needs the help more) between two with as many, or nil on
// a tie of both.
func devBusiest(rs []devRepo) *devRepo {
	var best *devRepo
	tie := false
	for i := range rs {
		r := &rs[i]
		switch {
		case best == nil || r.open > best.open || r.open == best.open && r.stars < best.stars:
			best, tie = r, false
		case r.open == best.open && r.stars == best.stars:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

// devMostStarred is the most-starred repository (the guess of an agent
// that did not count).
func devMostStarred(rs []devRepo) string {
	best := rs[0]
	for _, r := range rs[1:] {
		if r.stars > best.stars {
			best = r
		}
	}
	return best.full
}

// devProject is the persona's first active to-do project by name.
func devProject(w *World) (string, error) {
	rows, err := w.Query("tasks", `SELECT name FROM projects WHERE archived = 0 ORDER BY lower(name), name LIMIT 1`)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return str(rows[0][0]), nil
}

func (f starredIssues) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["code"]
	if !ok || !hasTable(w, "tasks", "todos") {
		return nil, nil
	}
	rs, err := devStarred(w, login.User)
	if err != nil || len(rs) < 3 {
		return nil, err
	}
	pick := devBusiest(rs)
	if pick == nil || pick.open == 0 {
		return nil, nil
	}
	project, err := devProject(w)
	if err != nil || project == "" {
		return nil, err
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Plan to help %s, the followed repository with the most open issues", pick.full),
		Params: map[string]string{"repo": pick.full, "project": project},
		Core:   []string{"create tasks todo triage " + pick.full, "file decisions/starred-issues.csv", "read code stars"}}}, nil
}

func (f starredIssues) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["code"]
	rs, err := devStarred(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := devBusiest(rs)
	if pick == nil || pick.full != s.Params["repo"] {
		return nil, fmt.Errorf("taskgen: %s: the busiest starred repository is no longer %s", f.Name(), s.Params["repo"])
	}
	project := s.Params["project"]
	title := "Triage the open issues of " + pick.full
	todoQ := fmt.Sprintf(`SELECT count(*) FROM todos t JOIN projects p ON p.id = t.project_id WHERE p.name = %s AND t.status = 'open' AND lower(t.title) LIKE %s`,
		sqlText(project), sqlText("%"+strings.ToLower(pick.full)+"%"))
	prior, err := count(w, "tasks", todoQ)
	if err != nil {
		return nil, err
	}
	priorAll, err := count(w, "tasks", `SELECT count(*) FROM todos`)
	if err != nil {
		return nil, err
	}
	const out = "decisions/starred-issues.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Forgeyard login")
	ref.Login("code", login)
	ref.Open("code", "/stars", "the starred repositories")
	ref.Read("#results", "")
	ref.Open("code", "/my-issues", "the repositories of my own issues")
	ref.Read("#results", "")
	type pyRow struct {
		Repo  string `json:"repo"`
		Stars int64  `json:"stars"`
		Open  int64  `json:"open_issues"`
	}
	var rows, careless []pyRow
	want := map[string]int64{}
	var lines []string
	for _, r := range rs {
		ref.Open("code", fmt.Sprintf("/repos/%d", r.id), "its issues and pull requests, with their states")
		ref.Read("#main", "")
		rows = append(rows, pyRow{r.full, r.stars, r.open})
		careless = append(careless, pyRow{r.full, r.stars, r.open + r.prs})
		want[r.full] = r.open
		lines = append(lines, fmt.Sprintf("%s: %d open issues, %d open pull requests", r.full, r.open, r.prs))
	}
	// What the pages say, read carelessly: pull requests counted as issues.
	if v, wrong := pyJSON(rows), pyJSON(careless); v != wrong {
		ref.Fact(task.Fact{ID: "open-issues", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "Kind and a State column"})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
rows = %s
rows.sort(key=lambda r: (-r['open_issues'], r['stars'], r['repo']))
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['repo', 'stars', 'open_issues'])
    for r in rows:
        w.writerow([r['repo'], r['stars'], r['open_issues']])
print('busiest:', rows[0]['repo'], rows[0]['open_issues'])
PY`, pyJSON(rows), out), "count the open issues; the busiest repository is the one to help")
	// Without the count, the likely guess is the most-starred repository.
	ref.Fact(task.Fact{ID: "busiest", Kind: task.FactOutput, Value: pick.full, Wrong: devMostStarred(rs)})
	ref.MCP("tasks", "list_projects", nil, "the active project")
	ref.MCP("tasks", "create_todo", map[string]any{"title": title, "project": project, "priority": "medium",
		"notes": fmt.Sprintf("%d open issues on Forgeyard", pick.open)}, "the to-do for the busiest repository")

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
    key = (r.get("repo") or "").strip().lower()
    try:
        got.setdefault(key, []).append(int((r.get("open_issues") or "").strip()))
    except ValueError:
        got.setdefault(key, []).append(None)
bad = sorted(k for k, v in want.items() if got.get(k.lower()) != [v])
extra = sorted(k for k in got if k not in {x.lower() for x in want})
result(not bad and not extra, f"missing or wrong repositories: {bad}; not followed: {extra}")
`, pyJSON(want), out, out)

	t := &task.Task{
		Version: task.Version, ID: taskID("starred-issues", w.Manifest.Persona, pick.full, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I want to help out one of the repositories I follow on Forgeyard: the ones I starred and the ones where I opened an issue myself. "+
			"For each of them, count the open issues in the repository's own list of issues and pull requests (issues only, not pull requests), "+
			"and save the counts as ~/%s with columns repo (owner/name), stars and open_issues. Then add a to-do to my %q project in my to-do list titled %q for the repository with the most open issues "+
			"(OWNER/NAME being that repository; between two with as many open issues, take the one with fewer stars). Tell me which repository it is.", out, project, "Triage the open issues of OWNER/NAME"),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "stars", Title: "List the starred repositories and my issues' repositories on Forgeyard", Interface: task.GUI},
			{ID: "issues", Title: "Read each starred repository's issues and pull requests", Interface: task.GUI},
			{ID: "table", Title: "Count the open issues with a script and save " + out, Interface: task.CLI},
			{ID: "todo", Title: "Add the triage to-do for the busiest repository", Interface: task.MCP},
		},
		Hint: "Forgeyard's Stars page (/stars) and My issues page (/my-issues) name the repositories; each repository's page has a table of issues and pull requests with a Kind and a State column. " +
			"The tasks app's create_todo takes a title and the project name from list_projects.",
		Rubric: []string{
			fmt.Sprintf("~/%s lists every starred repository and every repository of my own issues, once each, with its number of open issues, pull requests not counted", out),
			fmt.Sprintf("one new open to-do in %q names %s", project, pick.full),
			"no other to-do was created",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "todo", Kind: "sql", DB: "tasks", Description: "an open to-do naming the busiest repository in the project", Query: todoQ, Expect: rawInt(prior + 1)},
			{ID: "one-todo", Kind: "sql", DB: "tasks", Description: "no other to-do", Query: `SELECT count(*) FROM todos`, Expect: rawInt(priorAll + 1)},
			{ID: "table", Kind: "script", Script: "scripts/issues_table.py", Description: "the open issues of every starred repository"},
		}},
		Answer:     pick.full,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("followed: %s; the busiest is %s (%d open issues). The stars and the issues are only on Forgeyard (GUI); the to-do list only over MCP; the script's counts decide (pull requests are not issues).",
			strings.Join(lines, "; "), pick.full, pick.open),
	}
	return &Draft{Task: t, Scripts: map[string]string{"issues_table.py": checkPy}}, nil
}
