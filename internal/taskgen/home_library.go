package taskgen

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// libraryContact: the persona notes on a work contact's card the papers
// of its library to pass on, the most recently submitted first. The
// library is on Preprint Commons, the submission days only on the papers'
// pages (GUI); a script sorts them and writes the table (CLI); the line
// goes into the contact's notes in the address book (MCP).
type libraryContact struct{}

func (libraryContact) Name() string     { return "library-contact" }
func (libraryContact) Covers() []string { return []string{"archive", "contacts"} }

const (
	homeLibraryFile = "decisions/library.csv"
	homeLibraryTop  = 3
)

// homePaper is a paper of the library: added is the day it went in (the
// library page's Added column), listed its place there (newest first).
type homePaper struct {
	id, shelf, submitted, added string
	listed                      int64
}

// homeLibrary is the persona's library, the most recently submitted first
// (ties by id).
func homeLibrary(w *World, user string) ([]homePaper, error) {
	rows, err := w.Query("archive", `SELECT paper, shelf, added_at, id FROM library WHERE username = ? ORDER BY paper`, user)
	if err != nil {
		return nil, err
	}
	var out []homePaper
	for _, r := range rows {
		p, err := w.Catalog(`SELECT submitted_on FROM papers WHERE ext_id = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(p) == 1 {
			out = append(out, homePaper{id: str(r[0]), shelf: str(r[1]), submitted: str(p[0][0]), added: str(r[2])[:min(10, len(str(r[2])))], listed: num(r[3])})
		}
	}
	slices.SortFunc(out, func(a, b homePaper) int {
		if c := strings.Compare(b.submitted, a.submitted); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// homePapersLine is the line the contact's notes get.
func homePapersLine(ps []homePaper) string {
	var ids []string
	for i, p := range ps {
		if i >= homeLibraryTop {
			break
		}
		ids = append(ids, p.id)
	}
	return "Papers: " + strings.Join(ids, ", ")
}

func (f libraryContact) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["archive"]
	if !ok || !hasTable(w, "contacts", "contact_tags") {
		return nil, nil
	}
	ps, err := homeLibrary(w, login.User)
	if err != nil || len(ps) < 2 {
		return nil, err
	}
	cs, err := w.Query("contacts", `SELECT c.ext_id, c.name FROM contacts c JOIN contact_tags t ON t.contact_id = c.id WHERE t.tag = 'work' ORDER BY c.ext_id`)
	if err != nil {
		return nil, err
	}
	var out []Sketch
	for _, c := range cs {
		out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Note on %s's contact card the newest papers of the Preprint Commons library", str(c[1])),
			Params: map[string]string{"contact": str(c[0]), "name": str(c[1])},
			Core:   []string{"update contacts contact " + str(c[0]) + " notes", "file " + homeLibraryFile, "read archive library"}})
	}
	return out, nil
}

func (f libraryContact) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["archive"]
	ps, err := homeLibrary(w, login.User)
	if err != nil {
		return nil, err
	}
	cs, err := w.Query("contacts", `SELECT notes FROM contacts WHERE ext_id = ?`, s.Params["contact"])
	if err != nil || len(cs) != 1 {
		return nil, fmt.Errorf("taskgen: %s: no contact %q (%v)", f.Name(), s.Params["contact"], err)
	}
	oldNotes := str(cs[0][0])
	contacts, err := count(w, "contacts", `SELECT count(*) FROM contacts`)
	if err != nil {
		return nil, err
	}
	line := homePapersLine(ps)
	newNotes := line
	if strings.TrimSpace(oldNotes) != "" {
		newNotes = strings.TrimRight(oldNotes, "\n") + "\n" + line
	}

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the archive's login")
	ref.Login("archive", login)
	ref.Open("archive", "/library", "the papers of the library")
	ref.Read("#results", "")
	for _, p := range ps {
		ref.Open("archive", "/papers/"+p.id, "its submission day")
		ref.Read("#main", "")
	}
	type pyRow struct {
		Paper     string `json:"paper"`
		Submitted string `json:"submitted_on"`
		Shelf     string `json:"shelf"`
	}
	var rows, careless []pyRow
	for _, p := range slices.SortedFunc(slices.Values(ps), func(a, b homePaper) int { return strings.Compare(a.id, b.id) }) {
		rows = append(rows, pyRow{p.id, p.submitted, p.shelf})
		careless = append(careless, pyRow{p.id, p.added, p.shelf})
	}
	// Read carelessly, the days are the library's Added column, not the
	// papers' Submitted day.
	if v, wrong := pyJSON(rows), pyJSON(careless); v != wrong {
		ref.Fact(task.Fact{ID: "submitted-days", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "each paper's page shows its Submitted day"})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
rows = %s
rows.sort(key=lambda r: r['paper'])
rows.sort(key=lambda r: r['submitted_on'], reverse=True)
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['paper', 'submitted_on', 'shelf'])
    for r in rows:
        w.writerow([r['paper'], r['submitted_on'], r['shelf']])
print('Papers: ' + ', '.join(r['paper'] for r in rows[:%d]))
PY`, pyJSON(rows), homeLibraryFile, homeLibraryTop), "the newest papers, in order")
	// Without the script, the guess is the top of the library page (the
	// papers added last).
	ref.Fact(task.Fact{ID: "newest-papers", Kind: task.FactOutput, Value: line,
		Wrong: homePapersLine(slices.SortedFunc(slices.Values(ps), func(a, b homePaper) int { return cmp.Compare(b.listed, a.listed) }))})
	ref.MCP("contacts", "search_contacts", map[string]any{"query": s.Params["name"]}, "the contact's id")
	ref.MCP("contacts", "get_contact", map[string]any{"contact": s.Params["contact"]}, "the notes the contact has")
	// Not read, the old notes are replaced by the line.
	if newNotes != line {
		ref.Fact(task.Fact{ID: "old-notes", Kind: task.FactRead, Value: newNotes, Wrong: line, Cue: "so include the old ones"})
	}
	ref.MCP("contacts", "update_contact", map[string]any{"contact": s.Params["contact"], "fields": map[string]any{"notes": newNotes}}, "the line on the contact's card, the old notes kept")

	want := map[string][]string{}
	var lines []string
	for _, p := range ps {
		want[p.id] = []string{p.submitted, p.shelf}
		lines = append(lines, p.id+" "+p.submitted+" "+p.shelf)
	}
	checkPy := fmt.Sprintf(`import json
from _verify_sdk import query, result
contact, line, old = %s, %s, %s
rows = query("contacts", "SELECT notes FROM contacts WHERE ext_id = ?", (contact,))
if len(rows) != 1:
    result(False, f"no contact {contact}")
    raise SystemExit
notes = rows[0]["notes"] or ""
has = any(l.strip().lower() == line.lower() for l in notes.splitlines())
kept = old.strip() == "" or old.strip() in notes
result(has and kept, f"notes {notes!r}; want a line {line!r}" + ("" if kept else ", and the old notes kept"))
`, pyJSON(s.Params["contact"]), pyJSON(line), pyJSON(oldNotes))

	t := &task.Task{
		Version: task.Version, ID: taskID(f.Name(), w.Manifest.Persona, s.Params["contact"], fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I want to pass %s the newest papers of my Preprint Commons library. Save every paper of my library in ~/%s with columns paper (its id), submitted_on (YYYY-MM-DD) and shelf. "+
			"Then add one line to the notes of %s in my contacts, keeping what the notes already say: \"Papers: \" followed by the ids of the %d most recently submitted papers of the library (all of them if there are fewer), newest first, separated by \", \" (on the same day, the smaller id first). "+
			"Tell me the line.", s.Params["name"], homeLibraryFile, s.Params["name"], homeLibraryTop),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "library", Title: "Read the library and each paper's submission day on Preprint Commons", Interface: task.GUI},
			{ID: "table", Title: "Sort the papers with a script and save " + homeLibraryFile, Interface: task.CLI},
			{ID: "contact", Title: "Add the papers line to " + s.Params["name"] + "'s notes", Interface: task.MCP},
		},
		Hint: "Preprint Commons' Library page (/library) lists the papers and shelves; each paper's page shows its Submitted day. " +
			"In the contacts app, search_contacts finds the contact id; update_contact takes contact and fields {notes: ...}, and replaces the notes, so include the old ones.",
		Rubric: []string{
			fmt.Sprintf("~/%s lists every paper of the library with its submission day and shelf", homeLibraryFile),
			fmt.Sprintf("%s's notes gain the line %q and keep their old text", s.Params["name"], line),
			"no contact was added or removed",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "contact-notes", Kind: "script", Script: "scripts/contact_notes.py", Description: "the contact's notes have the papers line"},
			{ID: "contacts-kept", Kind: "sql", DB: "contacts", Description: "no contact added or removed", Query: `SELECT count(*) FROM contacts`, Expect: rawInt(contacts)},
			{ID: "table", Kind: "script", Script: "scripts/library_table.py", Description: "the table of papers"},
		}},
		Answer:     line,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("library: %s; the line is %q. The submission days are only on the papers' pages (GUI); the order comes from the script (CLI); "+
			"the contact's notes are only in the contacts app (MCP).", strings.Join(lines, "; "), line),
	}
	return &Draft{Task: t, Scripts: map[string]string{
		"contact_notes.py": checkPy,
		"library_table.py": homeCSVCheck(homeLibraryFile, "paper", []string{"submitted_on", "shelf"}, want),
	}}, nil
}
