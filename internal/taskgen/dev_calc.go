package taskgen

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/site/calc"
	"github.com/wildawm/wildawm/internal/task"
)

// keptCalcs: the persona copies its kept Reckoner calculations, with
// their results, into a note, the largest result first. The kept
// calculations are only on Reckoner (GUI), which also gives each result;
// a script tabulates them and orders them by value (CLI); the note goes to
// the notes app (MCP).
type keptCalcs struct{}

func (keptCalcs) Name() string     { return "kept-calcs" }
func (keptCalcs) Covers() []string { return []string{"calc", "notes"} }

// devNoteTitle is the note the kept-calcs task writes.
const devNoteTitle = "Kept calculations"

type devCalc struct {
	query, answer string
	value         float64
}

// devKept are the persona's kept calculations with Reckoner's results,
// largest value first; ok is false unless every result is a number and no
// two are equal (then the order is the script's to decide, and one).
func devKept(w *World, user string) (cs []devCalc, ok bool, err error) {
	rows, err := w.Query("calc", `SELECT DISTINCT query FROM saved WHERE username = ? ORDER BY query`, user)
	if err != nil {
		return nil, false, err
	}
	seen := map[float64]bool{}
	ok = true
	for _, r := range rows {
		res, err := calc.Eval(str(r[0]))
		if err != nil {
			ok = false
			continue
		}
		f := strings.Fields(strings.ReplaceAll(res.Answer, ",", ""))
		v, perr := strconv.ParseFloat(strings.Join(f[:min(1, len(f))], ""), 64)
		if perr != nil || seen[v] {
			ok = false
		}
		seen[v] = true
		cs = append(cs, devCalc{query: str(r[0]), answer: res.Answer, value: v})
	}
	slices.SortStableFunc(cs, func(a, b devCalc) int {
		switch {
		case a.value > b.value:
			return -1
		case a.value < b.value:
			return 1
		}
		return strings.Compare(a.query, b.query)
	})
	return cs, ok && len(cs) >= 2, nil
}

// devRounded is a result worked out by hand instead of read off
// Reckoner: its number to two decimals, the unit kept ("7.767424 mi" is
// "7.77 mi"); a number with fewer decimals stays as it is.
func devRounded(answer string) string {
	num, unit, _ := strings.Cut(answer, " ")
	if _, dec, ok := strings.Cut(num, "."); !ok || len(dec) <= 2 {
		return answer
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return answer
	}
	r := strconv.FormatFloat(v, 'f', 2, 64)
	if unit != "" {
		r += " " + unit
	}
	return r
}

// devKeptOrder is cs in the order Reckoner's /kept lists them, newest
// first (each calculation where it was last kept).
func devKeptOrder(w *World, user string, cs []devCalc) ([]devCalc, error) {
	rows, err := w.Query("calc", `SELECT query FROM saved WHERE username = ? ORDER BY id DESC`, user)
	if err != nil {
		return nil, err
	}
	var out []devCalc
	for _, r := range rows {
		i := slices.IndexFunc(cs, func(c devCalc) bool { return c.query == str(r[0]) })
		if i >= 0 && !slices.ContainsFunc(out, func(c devCalc) bool { return c.query == cs[i].query }) {
			out = append(out, cs[i])
		}
	}
	return out, nil
}

func (f keptCalcs) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["calc"]
	if !ok || !hasTable(w, "notes", "notes") {
		return nil, nil
	}
	cs, ok, err := devKept(w, login.User)
	if err != nil || !ok {
		return nil, err
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Copy the %d kept Reckoner calculations into a note, largest result first", len(cs)),
		Params: map[string]string{"top": cs[0].query},
		Core:   []string{"create notes note " + devNoteTitle, "file reports/reckoner-kept.csv", "read calc kept"}}}, nil
}

func (f keptCalcs) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["calc"]
	cs, ok, err := devKept(w, login.User)
	if err != nil {
		return nil, err
	}
	if !ok || cs[0].query != s.Params["top"] {
		return nil, fmt.Errorf("taskgen: %s: the kept calculations changed since the sketch", f.Name())
	}
	titleQ := `SELECT count(*) FROM notes WHERE title = ` + sqlText(devNoteTitle)
	prior, err := count(w, "notes", titleQ)
	if err != nil {
		return nil, err
	}
	priorAll, err := count(w, "notes", `SELECT count(*) FROM notes`)
	if err != nil {
		return nil, err
	}
	const out = "reports/reckoner-kept.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Reckoner login")
	ref.Login("calc", login)
	ref.Open("calc", "/kept", "the kept calculations")
	ref.Read("#results", "")
	type pyRow struct {
		Query  string `json:"query"`
		Answer string `json:"answer"`
	}
	var rows, rough []pyRow
	var lines, roughLines []string
	for _, c := range cs {
		ref.Open("calc", "/?q="+url.QueryEscape(c.query), "Reckoner's result")
		ref.Read("#calc-answer", "")
		rows = append(rows, pyRow{c.query, c.answer})
		rough = append(rough, pyRow{c.query, devRounded(c.answer)})
		lines = append(lines, c.query+" = "+c.answer)
		roughLines = append(roughLines, c.query+" = "+devRounded(c.answer))
	}
	// The rows go to the script in the order /kept shows them (newest
	// first is not the order asked for): the script sorts.
	slices.Reverse(rows)
	slices.Reverse(rough)
	body := strings.Join(lines, "\n") + "\n"
	// Not read off Reckoner, the results are worked out to two decimals.
	if v, wrong := pyJSON(rows), pyJSON(rough); v != wrong {
		ref.Fact(task.Fact{ID: "results", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "each linking to its result page",
			Forms: []task.Form{{Value: body, Wrong: strings.Join(roughLines, "\n") + "\n"}}})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p reports && python3 - <<'PY'
import csv, json
rows = %s
def value(a):
    return float(a.split()[0].replace(',', ''))
rows.sort(key=lambda r: (-value(r['answer']), r['query']))
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['query', 'answer'])
    for r in rows:
        w.writerow([r['query'], r['answer']])
for r in rows:
    print(r['query'], '=', r['answer'])
PY`, pyJSON(rows), out), "the table, largest result first: the note's order")
	// Without the script, the note keeps the order /kept shows (newest
	// first) and names its first as the largest.
	kept, err := devKeptOrder(w, login.User, cs)
	if err != nil {
		return nil, err
	}
	var keptLines []string
	for _, c := range kept {
		keptLines = append(keptLines, c.query+" = "+c.answer)
	}
	ref.Fact(task.Fact{ID: "largest-first", Kind: task.FactOutput, Value: body, Wrong: strings.Join(keptLines, "\n") + "\n"})
	ref.MCP("notes", "create_note", map[string]any{"notebook": "Reckoner", "title": devNoteTitle, "body": body}, "the note, in the script's order")

	want := make([][2]string, len(cs))
	for i, c := range cs {
		want[i] = [2]string{c.query, c.answer}
	}
	checkPy := fmt.Sprintf(`import json
from _verify_sdk import query, read_csv, result
want = %s
title = %s
notes = query("notes", "SELECT body FROM notes WHERE title = ? ORDER BY id DESC", (title,))
if not notes:
    result(False, "no note titled " + title)
    raise SystemExit
lines = [l.strip().lower() for l in notes[0]["body"].splitlines()]
at = []
for q, a in want:
    hit = [i for i, l in enumerate(lines) if q.lower() in l and a.lower() in l]
    at.append(hit[0] if hit else None)
note_ok = None not in at and at == sorted(at)
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = [[(r.get("query") or "").strip().lower(), (r.get("answer") or "").strip().lower()] for r in rows]
csv_ok = got == [[q.lower(), a.lower()] for q, a in want]
result(note_ok and csv_ok, f"note lines at {at} (want every calculation with its result, in order); csv rows {got}")
`, pyJSON(want), pyJSON(devNoteTitle), out, out)

	t := &task.Task{
		Version: task.Version, ID: taskID("kept-calcs", w.Manifest.Persona, fmt.Sprintf("%dcalcs", len(cs)), fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("Collect the calculations I kept on Reckoner with their results as Reckoner gives them. Save them as ~/%s with columns query and answer, "+
			"ordered by the number the result starts with, largest first. Then put them in a new note titled %q in my notes (notebook Reckoner), one line per calculation "+
			"written as \"QUERY = ANSWER\", in the same order. Tell me which calculation has the largest result.", out, devNoteTitle),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "kept", Title: "List the kept calculations on Reckoner", Interface: task.GUI},
			{ID: "results", Title: "Read each kept calculation's result on Reckoner", Interface: task.GUI},
			{ID: "table", Title: "Order the results with a script and save " + out, Interface: task.CLI},
			{ID: "note", Title: "Write the note " + devNoteTitle, Interface: task.MCP},
		},
		Hint: "Reckoner's Kept calculations page (/kept) lists them, each linking to its result page (/?q=...). The notes app's create_note takes notebook, title and body.",
		Rubric: []string{
			fmt.Sprintf("~/%s has every kept calculation with Reckoner's result, largest first", out),
			fmt.Sprintf("a new note %q lists every calculation and result in that order", devNoteTitle),
			"no other note was created",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "note", Kind: "sql", DB: "notes", Description: "the new note", Query: titleQ, Expect: rawInt(prior + 1)},
			{ID: "one-note", Kind: "sql", DB: "notes", Description: "no other note", Query: `SELECT count(*) FROM notes`, Expect: rawInt(priorAll + 1)},
			{ID: "ordered", Kind: "script", Script: "scripts/kept_order.py", Description: "the table and the note list every result, largest first"},
		}},
		Answer:     cs[0].query,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("kept, largest first: %s. The kept list is only on Reckoner (GUI), which gives the results; the order comes from the script (CLI), not from /kept (newest first); the note only over MCP.",
			strings.Join(lines, "; ")),
	}
	return &Draft{Task: t, Scripts: map[string]string{"kept_order.py": checkPy}}, nil
}
