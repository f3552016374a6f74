package taskgen

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// courseFocusNote: the persona picks the course it is furthest behind in
// and keeps that in a note. The enrolments and submissions are only on
// Openclass (GUI); a script counts the submissions per course and picks
// the one with the fewest (CLI); the note goes to the notes app (MCP),
// headed by the pick.
type courseFocusNote struct{}

func (courseFocusNote) Name() string     { return "course-focus-note" }
func (courseFocusNote) Covers() []string { return []string{"courses", "notes"} }

const (
	homeFocusNotebook = "Study"
	homeFocusTitle    = "Coursework focus"
	homeFocusFile     = "decisions/coursework.csv"
)

type homeCourse struct {
	slug, title, enrolled string
	submitted             int64
	// assignments is how many the course sets; listed is its place on
	// /enrollments (newest first).
	assignments, listed int64
}

// homeCourses are the persona's active enrolments with their submission
// counts, in enrolment order.
func homeCourses(w *World, user string) ([]homeCourse, error) {
	rows, err := w.Query("courses", `SELECT e.course, e.enrolled_at, (SELECT count(*) FROM submissions s WHERE s.username = e.username AND s.course = e.course), e.id
		FROM enrollments e WHERE e.username = ? AND e.status = 'active' ORDER BY e.enrolled_at, e.course`, user)
	if err != nil {
		return nil, err
	}
	var out []homeCourse
	for _, r := range rows {
		c, err := w.Catalog(`SELECT c.title, (SELECT count(*) FROM course_assignments a WHERE a.course_id = c.id) FROM courses c WHERE c.slug = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) == 1 {
			out = append(out, homeCourse{slug: str(r[0]), title: str(c[0][0]), enrolled: str(r[1]), submitted: num(r[2]), assignments: num(c[0][1]), listed: num(r[3])})
		}
	}
	return out, nil
}

// homeFocus is the course with the fewest submissions, the earliest
// enrolled on a tie; nil when two courses tie on both or share a title.
func homeFocus(cs []homeCourse) *homeCourse {
	var best *homeCourse
	tie := false
	titles := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		if titles[strings.ToLower(c.title)] {
			return nil
		}
		titles[strings.ToLower(c.title)] = true
		switch {
		case best == nil || c.submitted < best.submitted || c.submitted == best.submitted && c.enrolled < best.enrolled:
			best, tie = c, false
		case c.submitted == best.submitted && c.enrolled == best.enrolled:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

func (f courseFocusNote) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["courses"]
	if !ok || !hasTable(w, "notes", "notes") {
		return nil, nil
	}
	cs, err := homeCourses(w, login.User)
	if err != nil || len(cs) < 2 {
		return nil, err
	}
	best := homeFocus(cs)
	if best == nil {
		return nil, nil
	}
	n, err := count(w, "notes", `SELECT count(*) FROM notes WHERE lower(title) = lower(?)`, homeFocusTitle)
	if err != nil || n > 0 {
		return nil, err
	}
	return []Sketch{{Family: f.Name(), Title: "Note the Openclass course to focus on: " + best.title,
		Params: map[string]string{"course": best.slug},
		Core:   []string{"create notes note " + homeFocusTitle, "file " + homeFocusFile, "read courses submissions"}}}, nil
}

func (f courseFocusNote) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["courses"]
	cs, err := homeCourses(w, login.User)
	if err != nil {
		return nil, err
	}
	best := homeFocus(cs)
	if best == nil || best.slug != s.Params["course"] {
		return nil, fmt.Errorf("taskgen: %s: the course to focus on is no longer %s", f.Name(), s.Params["course"])
	}
	notes, err := count(w, "notes", `SELECT count(*) FROM notes`)
	if err != nil {
		return nil, err
	}
	first := "Focus: " + best.title
	var bodyLines, carelessLines []string
	for _, c := range cs {
		bodyLines = append(bodyLines, fmt.Sprintf("- %s: %d submitted", c.title, c.submitted))
		carelessLines = append(carelessLines, fmt.Sprintf("- %s: %d submitted", c.title, c.assignments))
	}
	body := first + "\n\n" + strings.Join(bodyLines, "\n") + "\n"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Openclass login")
	ref.Login("courses", login)
	ref.Open("courses", "/enrollments", "the active courses and when I enrolled")
	ref.Read("#results", "")
	ref.Open("courses", "/submissions", "what I submitted, by course")
	ref.Read("#main", "")
	type pyRow struct {
		Course    string `json:"course"`
		Enrolled  string `json:"enrolled"`
		Submitted int64  `json:"submitted"`
	}
	var rows, careless []pyRow
	for _, c := range cs {
		rows = append(rows, pyRow{c.title, c.enrolled, c.submitted})
		careless = append(careless, pyRow{c.title, c.enrolled, c.assignments})
	}
	// Read carelessly, a course's count is the assignments it sets, not
	// the ones submitted.
	if v, wrong := pyJSON(rows), pyJSON(careless); v != wrong {
		ref.Fact(task.Fact{ID: "submissions", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "lists every submission with its course",
			Forms: []task.Form{{Value: body, Wrong: first + "\n\n" + strings.Join(carelessLines, "\n") + "\n"}}})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
rows = %s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['course', 'submitted'])
    for r in rows:
        w.writerow([r['course'], r['submitted']])
focus = min(rows, key=lambda r: (r['submitted'], r['enrolled']))
print('Focus:', focus['course'])
PY`, pyJSON(rows), homeFocusFile), "submissions per course; the fewest is the focus")
	// Without the script, the guess is the course enrolled in last (the
	// top of /enrollments); choosing carelessly, the other of a tie (the
	// rule misread) or else the next fewest.
	focus := func(c homeCourse) string { return "Focus: " + c.title + "\n\n" }
	latest := slices.MaxFunc(cs, func(a, b homeCourse) int { return cmp.Compare(a.listed, b.listed) })
	ref.Fact(task.Fact{ID: "focus", Kind: task.FactOutput, Value: focus(*best), Wrong: focus(latest)})
	var distractor *homeCourse
	for i := range cs {
		c := &cs[i]
		if c.slug != best.slug && (distractor == nil || c.submitted < distractor.submitted || c.submitted == distractor.submitted && c.enrolled < distractor.enrolled) {
			distractor = c
		}
	}
	note := len(ref)
	ref.MCP("notes", "create_note", map[string]any{"notebook": homeFocusNotebook, "title": homeFocusTitle, "body": body}, "the note, headed by the script's pick")
	ref.FactAt(note, task.Fact{ID: "focus-course", Kind: task.FactChoice, Value: focus(*best), Wrong: focus(*distractor)})

	want := map[string][]string{}
	perCourse := map[string]int64{}
	var lines []string
	for _, c := range cs {
		want[c.title] = []string{fmt.Sprint(c.submitted)}
		perCourse[c.title] = c.submitted
		lines = append(lines, fmt.Sprintf("%s (%s, enrolled %s): %d", c.title, c.slug, c.enrolled, c.submitted))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID(f.Name(), w.Manifest.Persona, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I am behind in one of my Openclass courses and want to focus on it. For every course I am actively enrolled in, count the assignments I have submitted, and save ~/%s with columns course (the course title) and submitted. "+
			"Then create a note titled %q in the notebook %q of my notes app whose first line is \"Focus: COURSE\" with the title of the course with the fewest submissions (on a tie, the one I enrolled in first), followed by one line per course with its count. "+
			"Tell me which course it is.", homeFocusFile, homeFocusTitle, homeFocusNotebook),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "courses", Title: "Read the active courses and the submissions on Openclass", Interface: task.GUI},
			{ID: "table", Title: "Count the submissions per course with a script and save " + homeFocusFile, Interface: task.CLI},
			{ID: "note", Title: "Create the focus note in the notes app", Interface: task.MCP},
		},
		Hint: "Openclass's My courses page (/enrollments) lists the courses with status and enrolment time; /submissions lists every submission with its course. " +
			"The notes app's create_note takes notebook, title and body.",
		Rubric: []string{
			fmt.Sprintf("~/%s has every active course with its number of submissions", homeFocusFile),
			fmt.Sprintf("one new note %q in %q whose first line is %q, then a line per course with its count", homeFocusTitle, homeFocusNotebook, first),
			"no other note was created",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "note", Kind: "script", Script: "scripts/focus_note.py", Description: "the note names the course with the fewest submissions"},
			{ID: "one-note", Kind: "sql", DB: "notes", Description: "no other note", Query: `SELECT count(*) FROM notes`, Expect: rawInt(notes + 1)},
			{ID: "table", Kind: "script", Script: "scripts/coursework_table.py", Description: "the submissions per course"},
		}},
		Answer:     best.title,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("active courses: %s; the focus is %s. Enrolments and submissions are only on Openclass (GUI); the counts and the pick come from the script (CLI); "+
			"the note is only in the notes app (MCP).", strings.Join(lines, "; "), best.title),
	}
	return &Draft{Task: t, Scripts: map[string]string{
		"focus_note.py":       homeNoteCheck(homeFocusNotebook, homeFocusTitle, first, nil, perCourse),
		"coursework_table.py": homeCSVCheck(homeFocusFile, "course", []string{"submitted"}, want),
	}}, nil
}
