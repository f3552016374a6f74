package taskgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/task"
)

// courseDeadlines: the persona puts the course assignments due soon on its
// to-do list. Which courses it takes and what it has handed in are on
// Openclass (GUI), and so are each course's assignments with the week they
// are due in; a script turns enrolment days and weeks into dates and keeps
// the table (CLI); the to-dos go into the tasks app (MCP).
type courseDeadlines struct{}

func (courseDeadlines) Name() string     { return "course-deadlines" }
func (courseDeadlines) Covers() []string { return []string{"courses", "tasks"} }

// courseWindows are the horizons, in days from today, a task may ask for.
var courseWindows = []int{7, 10, 14, 5}

// courseItem is an assignment of an active course.
type courseItem struct {
	slug, course, title string
	id, week, module    int64
	enrolled, due       string
	submitted           bool
}

// openAssignments are the persona's active courses' assignments that it
// has not submitted, with their due dates (enrolment day + 7 x due week).
func openAssignments(w *World, user string) ([]courseItem, error) {
	all, err := courseAssignments(w, user)
	if err != nil {
		return nil, err
	}
	var out []courseItem
	for _, it := range all {
		if !it.submitted {
			out = append(out, it)
		}
	}
	return out, nil
}

// courseAssignments are every assignment of the persona's active courses,
// submitted or not, by course and id.
func courseAssignments(w *World, user string) ([]courseItem, error) {
	enr, err := w.Query("courses", `SELECT course, substr(enrolled_at, 1, 10) FROM enrollments WHERE username = ? AND status = 'active' ORDER BY course`, user)
	if err != nil {
		return nil, err
	}
	subs, err := w.Query("courses", `SELECT DISTINCT course, assignment_id FROM submissions WHERE username = ?`, user)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, s := range subs {
		done[str(s[0])+"#"+strconv.FormatInt(num(s[1]), 10)] = true
	}
	var out []courseItem
	for _, e := range enr {
		day, err := time.Parse(time.DateOnly, str(e[1]))
		if err != nil {
			return nil, fmt.Errorf("taskgen: enrolment day %q: %w", str(e[1]), err)
		}
		as, err := w.Catalog(`SELECT c.title, a.id, a.title, a.due_week, a.module_pos FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE c.slug = ? ORDER BY a.id`, str(e[0]))
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			out = append(out, courseItem{slug: str(e[0]), course: str(a[0]), id: num(a[1]), title: str(a[2]), week: num(a[3]), module: num(a[4]),
				enrolled: str(e[1]), due: day.AddDate(0, 0, 7*int(num(a[3]))).Format(time.DateOnly),
				submitted: done[str(e[0])+"#"+strconv.FormatInt(num(a[1]), 10)]})
		}
	}
	return out, nil
}

// dueWithin are the items due from today up to today + days - 1.
func dueWithin(items []courseItem, today time.Time, days int) []courseItem {
	from, to := today.Format(time.DateOnly), today.AddDate(0, 0, days).Format(time.DateOnly)
	var out []courseItem
	for _, it := range items {
		if it.due >= from && it.due < to {
			out = append(out, it)
		}
	}
	return out
}

func (f courseDeadlines) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["courses"]
	if !ok || !hasTable(w, "tasks", "todos") {
		return nil, nil
	}
	projects, err := w.Query("tasks", `SELECT name FROM projects WHERE archived = 0 ORDER BY name`)
	if err != nil || len(projects) == 0 {
		return nil, err
	}
	items, err := openAssignments(w, login.User)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	project := str(projects[rng.IntN(len(projects))][0])
	for _, i := range rng.Perm(len(courseWindows)) {
		days := courseWindows[i]
		due := dueWithin(items, now, days)
		if len(due) == 0 || len(due) > 4 {
			continue
		}
		return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Put the course assignments due in the next %d days on the %s to-do list", days, project),
			Params: map[string]string{"days": strconv.Itoa(days), "project": project},
			Core: []string{"file plans/course-deadlines.csv", "read courses enrollments and assignments",
				fmt.Sprintf("create tasks to-dos for %d course assignments", len(due))}}}, nil
	}
	return nil, nil
}

func (f courseDeadlines) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["courses"]
	days, err := strconv.Atoi(s.Params["days"])
	if err != nil {
		return nil, fmt.Errorf("taskgen: %s: days %q", f.Name(), s.Params["days"])
	}
	project := s.Params["project"]
	items, err := openAssignments(w, login.User)
	if err != nil {
		return nil, err
	}
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	due := dueWithin(items, now, days)
	if len(due) == 0 {
		return nil, fmt.Errorf("taskgen: %s: nothing is due in the next %d days", f.Name(), days)
	}
	today := now.Format(time.DateOnly)
	const out = "plans/course-deadlines.csv"
	todoWhere := func(it courseItem) string {
		return fmt.Sprintf(`p.name = %s AND t.status = 'open' AND t.due_on = %s AND instr(lower(t.title), lower(%s)) > 0 AND instr(lower(t.title), lower(%s)) > 0`,
			sqlText(project), sqlText(it.due), sqlText(it.title), sqlText(it.course))
	}
	const todoFrom = `SELECT count(*) FROM todos t JOIN projects p ON p.id = t.project_id WHERE `
	priorAll, err := count(w, "tasks", `SELECT count(*) FROM todos`)
	if err != nil {
		return nil, err
	}

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Openclass login")
	ref.Login("courses", login)
	ref.Open("courses", "/enrollments", "the courses I take, with the day I enrolled")
	ref.Read("#results", "")
	ref.Open("courses", "/submissions", "what I handed in already")
	ref.Read("#main", "")
	handedAt := len(ref) - 1
	all, err := courseAssignments(w, login.User)
	if err != nil {
		return nil, err
	}
	var slugs []string
	for _, it := range all {
		if !slices.Contains(slugs, it.slug) {
			slugs = append(slugs, it.slug)
		}
	}
	for _, sl := range slugs {
		ref.Open("courses", "/courses/"+sl, "the course's assignments and the weeks they are due in")
		ref.Read("#main", "")
	}
	// What the three pages say: the enrolment days, what is handed in,
	// each assignment's due week. Read carelessly, nothing is handed in
	// (the Submissions page unread) and the Module column beside "Due in
	// week" is taken for it.
	type pyRow struct {
		Course     string `json:"course"`
		Assignment string `json:"assignment"`
		Week       int64  `json:"week"`
	}
	enrolled := map[string]string{}
	handedIn := [][2]string{}
	var rows, moduleRows []pyRow
	for _, it := range all {
		enrolled[it.course] = it.enrolled
		if it.submitted {
			handedIn = append(handedIn, [2]string{it.course, it.title})
		}
		rows = append(rows, pyRow{it.course, it.title, it.week})
		moduleRows = append(moduleRows, pyRow{it.course, it.title, it.module})
	}
	handedPy, weeksPy := "handed_in = "+pyJSON(handedIn), "assignments = "+pyJSON(rows)
	if f, ok := factOf("handed-in", task.FactRead, "what is handed in", task.Form{Value: handedPy, Wrong: "handed_in = " + pyJSON([][2]string{})}); ok {
		ref.FactAt(handedAt, f)
	}
	if f, ok := factOf("due-weeks", task.FactRead, `its assignments with "Due in week"`, task.Form{Value: weeksPy, Wrong: "assignments = " + pyJSON(moduleRows)}); ok {
		ref.Fact(f)
	}
	ref.Shell(fmt.Sprintf(`mkdir -p plans && python3 - <<'PY'
import csv, json
from datetime import date, timedelta
today = date.fromisoformat(%q)
enrolled = %s
%s
%s
out = []
for r in assignments:
    if [r['course'], r['assignment']] in handed_in:
        continue
    due = date.fromisoformat(enrolled[r['course']]) + timedelta(days=7 * r['week'])
    out.append((due.isoformat(), r['course'], r['assignment']))
out.sort()
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['course', 'assignment', 'due'])
    for due, course, a in out:
        w.writerow([course, a, due])
for due, course, a in out:
    if today <= date.fromisoformat(due) < today + timedelta(days=%d):
        print('TODO', due, course, '|', a)
PY`, today, pyJSON(enrolled), handedPy, weeksPy, out, days), "due dates from enrolment days and weeks; which fall in the window")
	// Without the script, the dates are counted a week short: week 1
	// taken for the enrolment week.
	var dates []task.Form
	for _, it := range due {
		d, _ := time.Parse(time.DateOnly, it.due)
		if p := (task.Form{Value: it.due, Wrong: d.AddDate(0, 0, -7).Format(time.DateOnly)}); !slices.Contains(dates, p) {
			dates = append(dates, p)
		}
	}
	slices.SortFunc(dates, func(a, b task.Form) int { return strings.Compare(a.Value, b.Value) })
	if f, ok := factOf("due-dates", task.FactOutput, "7 days after the enrolment day", dates...); ok {
		ref.Fact(f)
	}
	ref.MCP("tasks", "list_projects", nil, "the project's exact name")
	var crit []task.Criterion
	for i, it := range due {
		ref.MCP("tasks", "create_todo", map[string]any{"title": it.title + " – " + it.course, "project": project, "due_on": it.due, "priority": "high"},
			"a to-do for "+it.title+" of "+it.course)
		prior, err := count(w, "tasks", todoFrom+todoWhere(it))
		if err != nil {
			return nil, err
		}
		crit = append(crit, task.Criterion{ID: fmt.Sprintf("todo-%d", i+1), Kind: "sql", DB: "tasks",
			Description: fmt.Sprintf("an open to-do for %s of %s, due %s", it.title, it.course, it.due),
			Query:       todoFrom + todoWhere(it), Expect: rawInt(prior + 1)})
	}
	crit = append(crit,
		task.Criterion{ID: "no-other-todos", Kind: "sql", DB: "tasks", Description: "one to-do per assignment due in the window, nothing else",
			Query: `SELECT count(*) FROM todos`, Expect: rawInt(priorAll + int64(len(due)))},
		task.Criterion{ID: "table", Kind: "script", Script: "scripts/deadlines_table.py", Description: "the table of every open assignment's due date"})

	var want [][]string
	for _, it := range items {
		want = append(want, []string{it.slug, strings.ToLower(it.course), strings.ToLower(it.title), it.due})
	}
	checkPy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
keys = {}
for slug, course, a, due in want:
    keys[slug] = slug
    keys[course] = slug
wanted = sorted((slug, a, due) for slug, course, a, due in want)
got = []
for r in rows:
    c = (r.get("course") or "").strip().lower()
    got.append((keys.get(c, c), (r.get("assignment") or "").strip().lower(), (r.get("due") or "").strip()))
got.sort()
missing = [x for x in wanted if x not in got]
extra = [x for x in got if x not in wanted]
result(got == wanted, f"missing or wrong: {missing}; not open assignments: {extra}")
`, pyJSON(want), out, out)

	var dueNames []string
	for _, it := range due {
		dueNames = append(dueNames, fmt.Sprintf("%s of %s (%s)", it.title, it.course, it.due))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID("course-deadlines", w.Manifest.Persona, fmt.Sprintf("%dd-d%d", days, w.Manifest.Day)),
		Instruction: fmt.Sprintf("I keep losing track of my Openclass assignments. For every course I'm actively enrolled in, list the assignments I have not submitted yet with their due dates: "+
			"an assignment due in week N is due 7×N days after the day I enrolled in its course. Save them as ~/%s (columns course, assignment, due as YYYY-MM-DD). "+
			"Then, for each of those due in the next %d days (from today, %s, up to but not including %s), add a to-do in my tasks app's project %q, "+
			"due on its due date, high priority, with the assignment's name and the course's full title in its title. Add no other to-dos.",
			out, days, today, now.AddDate(0, 0, days).Format(time.DateOnly), project),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "courses", Title: "Read my active courses, enrolment days and submissions on Openclass", Interface: task.GUI},
			{ID: "assignments", Title: "Read each active course's assignments and due weeks", Interface: task.GUI},
			{ID: "table", Title: "Compute the due dates with a script and save " + out, Interface: task.CLI},
			{ID: "todos", Title: fmt.Sprintf("Add a to-do for each assignment due in the next %d days", days), Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Openclass's My courses page (/enrollments) has the enrolment days and Submissions (/submissions) what is handed in; each course's page lists its assignments with \"Due in week\" (week 1 is due 7 days after the enrolment day). "+
			"The tasks app's create_todo takes title, project (%q), due_on and priority.", project),
		Rubric: []string{
			fmt.Sprintf("~/%s lists exactly the unsubmitted assignments of the active courses, each with enrolment day + 7 × due week", out),
			fmt.Sprintf("one open high-priority to-do in %q per assignment due from %s for %d days, due on that date, naming the assignment and the course", project, today, days),
			"no other to-do was added",
		},
		Reference:  ref,
		Verifier:   task.Verifier{Criteria: crit},
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("today %s, window %d days; %d open assignments over %d active courses; due in the window: %s. The due weeks are only on the course pages (GUI), "+
			"the dates need arithmetic (CLI), the to-dos live in the tasks service (MCP).", today, days, len(items), len(slugs), strings.Join(dueNames, "; ")),
	}
	return &Draft{Task: t, Scripts: map[string]string{"deadlines_table.py": checkPy}}, nil
}
