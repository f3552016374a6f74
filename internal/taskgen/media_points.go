package taskgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// coursePoints: the persona plans its study around the course with the
// most points still to earn. Its courses, their assignments with points
// and due weeks, and what it has handed in are on Openclass (GUI); a
// script sums the open points of each course and keeps the table (CLI),
// and its largest sum decides which course's open assignments go into a
// study-plan note (notes, MCP).
type coursePoints struct{}

func (coursePoints) Name() string     { return "course-points" }
func (coursePoints) Covers() []string { return []string{"courses", "notes"} }

type mediaAssignment struct {
	id           int64
	title, kind  string
	week, points int64
	submitted    bool
}

type mediaCourse struct {
	slug, title       string
	assignments       []mediaAssignment
	total, done, open int64
}

// mediaCourses are the persona's active courses by slug with their
// assignments (by id) and points; nil when a course is not in the catalog.
func mediaCourses(w *World, user string) ([]mediaCourse, error) {
	rows, err := w.Query("courses", `SELECT course FROM enrollments WHERE username = ? AND status = 'active' ORDER BY course`, user)
	if err != nil {
		return nil, err
	}
	subs, err := w.Query("courses", `SELECT DISTINCT assignment_id FROM submissions WHERE username = ?`, user)
	if err != nil {
		return nil, err
	}
	done := map[int64]bool{}
	for _, r := range subs {
		done[num(r[0])] = true
	}
	var out []mediaCourse
	for _, r := range rows {
		c, err := w.Catalog(`SELECT title FROM courses WHERE slug = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) != 1 {
			return nil, nil
		}
		as, err := w.Catalog(`SELECT a.id, a.title, a.kind, a.due_week, a.points FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE c.slug = ? ORDER BY a.id`, str(r[0]))
		if err != nil {
			return nil, err
		}
		mc := mediaCourse{slug: str(r[0]), title: str(c[0][0])}
		for _, a := range as {
			x := mediaAssignment{id: num(a[0]), title: str(a[1]), kind: str(a[2]), week: num(a[3]), points: num(a[4]), submitted: done[num(a[0])]}
			mc.assignments = append(mc.assignments, x)
			mc.total += x.points
			if x.submitted {
				mc.done += x.points
			} else {
				mc.open += x.points
			}
		}
		out = append(out, mc)
	}
	return out, nil
}

// mediaMostOpen is the course with the most open points, or nil when two
// share the most (the table would not decide) or none has any.
func mediaMostOpen(cs []mediaCourse) *mediaCourse {
	if len(cs) == 0 {
		return nil
	}
	s := slices.Clone(cs)
	slices.SortStableFunc(s, func(a, b mediaCourse) int { return int(b.open - a.open) })
	if s[0].open == 0 || len(s) > 1 && s[1].open == s[0].open {
		return nil
	}
	return &s[0]
}

// mediaOpenAssignments are a course's assignments not handed in, by due
// week then title.
func mediaOpenAssignments(c *mediaCourse) []mediaAssignment {
	var out []mediaAssignment
	for _, a := range c.assignments {
		if !a.submitted {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b mediaAssignment) int {
		if a.week != b.week {
			return int(a.week - b.week)
		}
		return strings.Compare(a.title, b.title)
	})
	return out
}

const mediaStudyTitle = "Study plan"

// mediaStudyBody is the study-plan note of c, its open assignments by
// due week.
func mediaStudyBody(c *mediaCourse) string {
	var lines []string
	for _, a := range mediaOpenAssignments(c) {
		lines = append(lines, fmt.Sprintf("- week %d: %s (%s, %d points)", a.week, a.title, a.kind, a.points))
	}
	return fmt.Sprintf("%s\n\n%s\n", c.title, strings.Join(lines, "\n"))
}

// mediaMatchedByTitle are the courses as an agent sees them that matches
// the submissions to assignments by title alone (the titles repeat from
// course to course): an assignment counts as handed in when one of that
// title was, in any course.
func mediaMatchedByTitle(cs []mediaCourse) []mediaCourse {
	done := map[string]bool{}
	for _, c := range cs {
		for _, a := range c.assignments {
			done[a.title] = done[a.title] || a.submitted
		}
	}
	out := slices.Clone(cs)
	for i := range out {
		c := &out[i]
		c.assignments = slices.Clone(c.assignments)
		c.done, c.open = 0, 0
		for j := range c.assignments {
			a := &c.assignments[j]
			a.submitted = done[a.title]
			if a.submitted {
				c.done += a.points
			} else {
				c.open += a.points
			}
		}
	}
	return out
}

// mediaMost is the course with the most of by, the first on a tie, other
// than not.
func mediaMost(cs []mediaCourse, not string, by func(mediaCourse) int64) *mediaCourse {
	var best *mediaCourse
	for i := range cs {
		if cs[i].slug != not && (best == nil || by(cs[i]) > by(*best)) {
			best = &cs[i]
		}
	}
	return best
}

func (f coursePoints) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["courses"]
	if !ok || !hasTable(w, "notes", "notebooks") {
		return nil, nil
	}
	cs, err := mediaCourses(w, login.User)
	if err != nil || len(cs) < 2 {
		return nil, err
	}
	pick := mediaMostOpen(cs)
	if pick == nil {
		return nil, nil
	}
	notebook := mediaNotebook(w, []string{"Learning", "Study", "Personal"}[rng.IntN(3)])
	return []Sketch{{Family: f.Name(), Title: "Plan my study around the course with the most points still to earn",
		Params: map[string]string{"notebook": notebook},
		Core:   []string{"file plans/course-points.csv", "read courses enrollments assignments submissions", "create notes " + mediaStudyTitle + " " + pick.slug}}}, nil
}

func (f coursePoints) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["courses"]
	cs, err := mediaCourses(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := mediaMostOpen(cs)
	if pick == nil {
		return nil, fmt.Errorf("taskgen: %s: no course has the most open points", f.Name())
	}
	open := mediaOpenAssignments(pick)
	notebook := s.Params["notebook"]
	const out = "plans/course-points.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Openclass login")
	ref.Login("courses", login)
	ref.Open("courses", "/enrollments", "the courses I take")
	ref.Read("#results", "")
	ref.Open("courses", "/submissions", "what I have handed in")
	ref.Read("#main", "")
	submissions := len(ref) - 1
	type pyA struct {
		Title     string `json:"title"`
		Points    int64  `json:"points"`
		Submitted bool   `json:"submitted"`
	}
	type pyC struct {
		Slug        string `json:"slug"`
		Assignments []pyA  `json:"assignments"`
	}
	pyRows := func(cs []mediaCourse) string {
		var rows []pyC
		for _, c := range cs {
			r := pyC{Slug: c.slug}
			for _, a := range c.assignments {
				r.Assignments = append(r.Assignments, pyA{a.title, a.points, a.submitted})
			}
			rows = append(rows, r)
		}
		return pyJSON(rows)
	}
	for _, c := range cs {
		ref.Open("courses", "/courses/"+c.slug, "the assignments and points of "+c.title)
		ref.Read("#main", "")
	}
	body := mediaStudyBody(pick)
	// What /submissions says, read carelessly: a submission matched to
	// the assignments by title alone, in every course.
	if careless := mediaMatchedByTitle(cs); pyRows(careless) != pyRows(cs) {
		f := task.Fact{ID: "handed-in", Kind: task.FactRead, Value: pyRows(cs), Wrong: pyRows(careless), Cue: "match each submission by its course"}
		i := slices.IndexFunc(careless, func(c mediaCourse) bool { return c.slug == pick.slug })
		if b := mediaStudyBody(&careless[i]); b != body {
			f.Forms = []task.Form{{Value: body, Wrong: b}}
		}
		ref.FactAt(submissions, f)
	}
	ref.Shell(fmt.Sprintf(`mkdir -p plans && python3 - <<'PY'
import csv, json
rows = %s
out = []
for c in rows:
    total = sum(a['points'] for a in c['assignments'])
    done = sum(a['points'] for a in c['assignments'] if a['submitted'])
    out.append((c['slug'], total, done, total - done))
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['course', 'total_points', 'submitted_points', 'open_points'])
    for r in out:
        w.writerow(r)
print('most open:', max(out, key=lambda r: r[3]))
PY`, pyRows(cs), out), "sum the points per course; the most still open decides")
	// Without the sums, the guess is the course with the most points in
	// all; choosing carelessly, the one with the most assignments left.
	instead := func(id, kind string, c *mediaCourse) task.Fact {
		return task.Fact{ID: id, Kind: kind, Value: body, Wrong: mediaStudyBody(c), Forms: []task.Form{{Value: pick.slug, Wrong: c.slug}}}
	}
	ref.Fact(instead("most-open", task.FactOutput, mediaMost(cs, "", func(c mediaCourse) int64 { return c.total })))
	left := func(c mediaCourse) int64 { return int64(len(mediaOpenAssignments(&c)))*1000 + c.open }
	distractor := mediaMost(cs, pick.slug, left)
	if n := int64(len(open)); left(*distractor) < n*1000 {
		distractor = mediaMost(cs, pick.slug, func(c mediaCourse) int64 { return c.open })
	}
	note := len(ref)
	ref.MCP("notes", "create_note", map[string]any{"notebook": notebook, "title": mediaStudyTitle, "body": body}, "the study plan of "+pick.title)
	ref.FactAt(note, instead("study-course", task.FactChoice, distractor))

	wantCSV := map[string][]string{}
	for _, c := range cs {
		wantCSV[c.slug] = []string{strconv.FormatInt(c.total, 10), strconv.FormatInt(c.done, 10), strconv.FormatInt(c.open, 10)}
	}
	tablePy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def n(v):
    v = (v or "").strip()
    try:
        return str(int(float(v)))
    except ValueError:
        return v
got = {(r.get("course") or "").strip(): [n(r.get("total_points")), n(r.get("submitted_points")), n(r.get("open_points"))] for r in rows}
bad = sorted(c for c in want if got.get(c) != want[c])
extra = sorted(c for c in got if c not in want)
result(not bad and not extra and len(rows) == len(want), f"missing or wrong: {bad}; not an active course: {extra}")
`, pyJSON(wantCSV), out, out)
	type wantA struct {
		Title  string `json:"title"`
		Week   int64  `json:"week"`
		Points int64  `json:"points"`
	}
	var wantOpen []wantA
	for _, a := range open {
		wantOpen = append(wantOpen, wantA{a.title, a.week, a.points})
	}
	doneTitles := []string{}
	for _, a := range pick.assignments {
		if a.submitted {
			doneTitles = append(doneTitles, a.title)
		}
	}
	notePy := mediaNoteCheck(mediaStudyTitle) + fmt.Sprintf(`import re
course = %s
want = %s
done = %s
notebook_want = %s
lines = [l for l in body.splitlines() if l.strip()]
def line_of(title):
    at = [i for i, l in enumerate(lines) if re.search(r"\b" + re.escape(title) + r"\b(?!\d)", l, re.I)]
    return at[0] if len(at) == 1 else None
pos, bad = [], []
for a in want:
    i = line_of(a["title"])
    if i is None or not re.search(r"\b%%d\b" %% a["points"], lines[i]) or not re.search(r"\b%%d\b" %% a["week"], lines[i]):
        bad.append(a["title"])
    else:
        pos.append(i)
extra = [t for t in done if line_of(t) is not None]
ordered = pos == sorted(pos)
named = course.lower() in body.lower()
ok_nb = notebook.strip().lower() == notebook_want.lower()
result(not bad and not extra and ordered and named and ok_nb, f"course named: {named}; open assignments missing or wrong: {bad}; handed in already: {extra}; by due week: {ordered}; notebook {notebook!r}")
`, pyJSON(pick.title), pyJSON(wantOpen), pyJSON(doneTitles), pyJSON(notebook))

	var table []string
	for _, c := range cs {
		table = append(table, fmt.Sprintf("%s=%d open of %d", c.slug, c.open, c.total))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID("course-points", w.Manifest.Persona, fmt.Sprintf("d%d", w.Manifest.Day), pick.slug),
		Instruction: fmt.Sprintf("I want to focus on the Openclass course where I still have the most assignment points to earn. Make ~/%s of my active courses: columns course (the course's id in its address), "+
			"total_points (all its assignments' points), submitted_points (those I have handed in) and open_points (the rest). "+
			"Then, in my notes, create a note titled %q in the %s notebook that names the course with the most open points and lists its assignments I have not handed in, "+
			"one per line with its due week and points, earliest due week first.", out, mediaStudyTitle, notebook),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "courses", Title: "Read my courses, their assignments and my submissions on Openclass", Interface: task.GUI},
			{ID: "table", Title: "Sum the points per course with a script and save " + out, Interface: task.CLI},
			{ID: "note", Title: fmt.Sprintf("Create the note %q of the course with the most open points", mediaStudyTitle), Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Openclass' /enrollments lists my courses and /submissions what I handed in, once logged in (the login is in ~/%s); each course's page /courses/ID lists its assignments with their due week and points. "+
			"Assignment titles repeat from course to course: match each submission by its course too. "+
			"The notes app's create_note takes notebook, title and body.", LoginsFile),
		Rubric: []string{
			fmt.Sprintf("~/%s has every active course with the right total, submitted and open points", out),
			fmt.Sprintf("one note %q in %s names %s and lists its %d open assignments by due week, with none handed in already", mediaStudyTitle, notebook, pick.title, len(open)),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "table", Kind: "script", Script: "scripts/points_table.py", Description: "the table of points per course"},
			{ID: "note", Kind: "script", Script: "scripts/study_note.py", Description: "the study plan of the course with the most open points"},
		}},
		Answer:     pick.slug,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("%s; the most open is %s with %d points in %d assignments. Courses, points and submissions are only on the website (GUI), the sums are the script's (CLI), the note goes to the notes service (MCP).",
			strings.Join(table, ", "), pick.slug, pick.open, len(open)),
	}
	return &Draft{Task: t, Scripts: map[string]string{"points_table.py": tablePy, "study_note.py": notePy}}, nil
}
