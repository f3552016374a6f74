package taskgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// citeReferences: the persona cites the paper it finished last and keeps
// its references in a note. The library, its shelves and each paper's
// authors and day are only on Preprint Commons (GUI); a script tabulates
// the library and picks the most recently submitted paper of the "read"
// shelf (CLI), which moves to "cite" (GUI); the cite shelf's reference
// list, oldest first, goes into a note (notes, MCP).
type citeReferences struct{}

func (citeReferences) Name() string     { return "cite-references" }
func (citeReferences) Covers() []string { return []string{"archive", "notes"} }

// mediaPaper is a paper of the persona's library, as the catalog has it.
type mediaPaper struct {
	id, shelf, title, submitted string
	authors                     []string
	// added is the day the paper went into the library (the library
	// page's Added column), listed is its place there (newest first).
	added  string
	listed int64
}

func (p mediaPaper) surname() string {
	if len(p.authors) == 0 {
		return ""
	}
	f := strings.Fields(p.authors[0])
	return f[len(f)-1]
}

// mediaLibrary is the persona's library by paper id; nil when a paper is
// not in the catalog.
func mediaLibrary(w *World, user string) ([]mediaPaper, error) {
	rows, err := w.Query("archive", `SELECT paper, shelf, added_at, id FROM library WHERE username = ? ORDER BY paper`, user)
	if err != nil {
		return nil, err
	}
	var out []mediaPaper
	for _, r := range rows {
		c, err := w.Catalog(`SELECT title, submitted_on, authors FROM papers WHERE ext_id = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) != 1 {
			return nil, nil
		}
		p := mediaPaper{id: str(r[0]), shelf: str(r[1]), title: str(c[0][0]), submitted: str(c[0][1]), added: str(r[2])[:min(10, len(str(r[2])))], listed: num(r[3])}
		if err := json.Unmarshal([]byte(str(c[0][2])), &p.authors); err != nil || len(p.authors) == 0 {
			return nil, nil
		}
		out = append(out, p)
	}
	return out, nil
}

// mediaCitePick is the most recently submitted paper of the read shelf,
// or nil when there is none or two share the newest day.
func mediaCitePick(ps []mediaPaper) *mediaPaper {
	var read []mediaPaper
	for _, p := range ps {
		if p.shelf == "read" {
			read = append(read, p)
		}
	}
	slices.SortFunc(read, func(a, b mediaPaper) int { return strings.Compare(b.submitted, a.submitted) })
	if len(read) == 0 || len(read) > 1 && read[0].submitted == read[1].submitted {
		return nil
	}
	return &read[0]
}

// mediaCited is the cite shelf once pick is on it, oldest submitted first
// (then by id).
func mediaCited(ps []mediaPaper, pick string) []mediaPaper {
	var out []mediaPaper
	for _, p := range ps {
		if p.shelf == "cite" || p.id == pick {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b mediaPaper) int {
		if c := strings.Compare(a.submitted, b.submitted); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

const mediaReferencesTitle = "References"

// mediaReadPapers are the papers of the read shelf, most recently
// submitted first (then by id).
func mediaReadPapers(ps []mediaPaper) []mediaPaper {
	var read []mediaPaper
	for _, p := range ps {
		if p.shelf == "read" {
			read = append(read, p)
		}
	}
	slices.SortStableFunc(read, func(a, b mediaPaper) int {
		if c := strings.Compare(b.submitted, a.submitted); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return read
}

// mediaReferences is the reference list of the cite shelf with pick on
// it, oldest submitted first.
func mediaReferences(ps []mediaPaper, pick string) string {
	var lines []string
	for _, p := range mediaCited(ps, pick) {
		who := p.surname()
		if len(p.authors) > 1 {
			who += " et al."
		}
		lines = append(lines, fmt.Sprintf("- %s (%s). %s. arXiv:%s", who, p.submitted[:4], p.title, p.id))
	}
	return strings.Join(lines, "\n") + "\n"
}

func (f citeReferences) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["archive"]
	if !ok || !hasTable(w, "notes", "notebooks") {
		return nil, nil
	}
	ps, err := mediaLibrary(w, login.User)
	if err != nil || len(ps) < 2 {
		return nil, err
	}
	pick := mediaCitePick(ps)
	if pick == nil {
		return nil, nil
	}
	notebook := mediaNotebook(w, []string{"Learning", "Reading", "Work"}[rng.IntN(3)])
	return []Sketch{{Family: f.Name(), Title: "Cite the paper I read that was submitted last and note my references",
		Params: map[string]string{"notebook": notebook},
		Core:   []string{"file reading/library.csv", "shelve archive paper " + pick.id + " cite", "create notes " + mediaReferencesTitle}}}, nil
}

func (f citeReferences) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["archive"]
	ps, err := mediaLibrary(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := mediaCitePick(ps)
	if pick == nil {
		return nil, fmt.Errorf("taskgen: %s: no newest paper on the read shelf", f.Name())
	}
	cited := mediaCited(ps, pick.id)
	notebook := s.Params["notebook"]
	priorCite, err := count(w, "archive", `SELECT count(*) FROM library WHERE username = ? AND shelf = 'cite'`, login.User)
	if err != nil {
		return nil, err
	}
	const out = "reading/library.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Preprint Commons login")
	ref.Login("archive", login)
	ref.Open("archive", "/library", "my library and its shelves")
	ref.Read("#results", "")
	type pyRow struct {
		ID        string   `json:"id"`
		Shelf     string   `json:"shelf"`
		Authors   []string `json:"authors"`
		Submitted string   `json:"submitted"`
	}
	var rows, careless []pyRow
	var added []mediaPaper
	for _, p := range ps {
		ref.Open("archive", "/papers/"+p.id, "the authors and day of "+p.id)
		ref.Read("#main", "")
		rows = append(rows, pyRow{p.id, p.shelf, p.authors, p.submitted})
		careless = append(careless, pyRow{p.id, p.shelf, p.authors, p.added})
		q := p
		q.submitted = p.added
		added = append(added, q)
	}
	body := mediaReferences(ps, pick.id)
	// Read carelessly, the days are the library's Added column, not the
	// papers' Submitted day.
	if v, wrong := pyJSON(rows), pyJSON(careless); v != wrong {
		f := task.Fact{ID: "submitted-days", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "shows its authors and Submitted day"}
		if b := mediaReferences(added, pick.id); b != body {
			f.Forms = []task.Form{{Value: body, Wrong: b}}
		}
		ref.Fact(f)
	}
	ref.Shell(fmt.Sprintf(`mkdir -p reading && python3 - <<'PY'
import csv, json
rows = %s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['arxiv_id', 'first_author', 'authors', 'submitted'])
    for r in sorted(rows, key=lambda r: r['id']):
        w.writerow([r['id'], r['authors'][0], len(r['authors']), r['submitted']])
read = sorted((r for r in rows if r['shelf'] == 'read'), key=lambda r: r['submitted'], reverse=True)
print('cite next:', read[0]['id'], read[0]['submitted'])
PY`, pyJSON(rows), out), "tabulate the library; the read paper submitted last is the one to cite")
	read := mediaReadPapers(ps)
	// Without the table, the guess is the read paper at the top of the
	// library (the one added last).
	top := slices.MinFunc(read, func(a, b mediaPaper) int { return cmp.Compare(b.listed, a.listed) })
	ref.Fact(task.Fact{ID: "cite-next", Kind: task.FactOutput, Value: body, Wrong: mediaReferences(ps, top.id),
		Forms: []task.Form{{Value: pick.id, Wrong: top.id}}})
	move := len(ref)
	ref.KitAction("archive", "/papers", pick.id, "shelve", map[string]string{"shelf": "cite"}, "move "+pick.id+" to cite")
	// Choosing carelessly, the runner-up: the read paper submitted next.
	if len(read) > 1 {
		ref.FactAt(move, task.Fact{ID: "cite", Kind: task.FactChoice, Value: body, Wrong: mediaReferences(ps, read[1].id),
			Forms: []task.Form{{Value: pick.id, Wrong: read[1].id}}})
	}
	ref.MCP("notes", "create_note", map[string]any{"notebook": notebook, "title": mediaReferencesTitle, "body": body}, "the references, oldest first")

	wantCSV := map[string][]string{}
	others := []string{}
	for _, p := range ps {
		wantCSV[p.id] = []string{p.authors[0], fmt.Sprint(len(p.authors)), p.submitted}
		if p.shelf != "cite" && p.id != pick.id {
			others = append(others, p.id)
		}
	}
	tablePy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {(r.get("arxiv_id") or "").strip().removeprefix("arXiv:"): [(r.get("first_author") or "").strip(), (r.get("authors") or "").strip(), (r.get("submitted") or "").strip()] for r in rows}
bad = sorted(i for i in want if got.get(i) != want[i])
extra = sorted(i for i in got if i not in want)
result(not bad and not extra and len(rows) == len(want), f"missing or wrong: {bad}; not in the library: {extra}")
`, pyJSON(wantCSV), out, out)
	var wantRefs [][]string
	for _, p := range cited {
		wantRefs = append(wantRefs, []string{p.id, p.surname()})
	}
	notePy := mediaNoteCheck(mediaReferencesTitle) + fmt.Sprintf(`want = %s
others = %s
notebook_want = %s
lines = [l for l in body.splitlines() if l.strip()]
pos, bad = [], []
for pid, surname in want:
    at = [i for i, l in enumerate(lines) if pid in l]
    if len(at) != 1 or surname.lower() not in lines[at[0]].lower():
        bad.append(pid)
    else:
        pos.append(at[0])
extra = [pid for pid in others if pid in body]
ordered = pos == sorted(pos)
ok_nb = notebook.strip().lower() == notebook_want.lower()
result(not bad and not extra and ordered and ok_nb, f"missing or without first author: {bad}; not on the cite shelf: {extra}; oldest first: {ordered}; notebook {notebook!r}")
`, pyJSON(wantRefs), pyJSON(others), pyJSON(notebook))

	t := &task.Task{
		Version: task.Version, ID: taskID("cite-references", w.Manifest.Persona, pick.id, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("Make ~/%s of every paper in my Preprint Commons library: columns arxiv_id, first_author, authors (how many) and submitted (YYYY-MM-DD, as the site shows it). "+
			"Of the papers on my \"read\" shelf, move the one submitted most recently to my \"cite\" shelf. "+
			"Then, in my notes, create a note titled %q in the %s notebook with my reference list: one line per paper on the cite shelf (with the one you moved), "+
			"giving the first author's surname, the year, the title and the arXiv id, oldest submitted first. Change nothing else in the library.",
			out, mediaReferencesTitle, notebook),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "library", Title: "Read the library and each paper's authors and submission day on Preprint Commons", Interface: task.GUI},
			{ID: "table", Title: "Tabulate the library with a script, save " + out + " and find the read paper submitted last", Interface: task.CLI},
			{ID: "cite", Title: "Move that paper to the cite shelf", Interface: task.GUI},
			{ID: "note", Title: fmt.Sprintf("Create the note %q of the cite shelf, oldest first", mediaReferencesTitle), Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Preprint Commons' /library shows each paper's shelf once logged in (the login is in ~/%s); /papers/ID shows its authors and Submitted day, and \"Add to library\" there with the shelf cite moves it. "+
			"The notes app's create_note takes notebook, title and body.", LoginsFile),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every library paper with its first author, author count and submission day", out),
			fmt.Sprintf("%s (submitted %s), the read paper submitted last, is on the cite shelf; no other paper moved", pick.id, pick.submitted),
			fmt.Sprintf("one note %q in %s lists the %d cited papers oldest first, each with its first author's surname", mediaReferencesTitle, notebook, len(cited)),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "cited", Kind: "sql", DB: "archive", Description: pick.id + " is on the cite shelf",
				Query: fmt.Sprintf(`SELECT shelf FROM library WHERE username = %s AND paper = %s`, sqlText(login.User), sqlText(pick.id)), Expect: rawJSON("cite")},
			{ID: "cite-count", Kind: "sql", DB: "archive", Description: "no other paper moved to cite",
				Query: fmt.Sprintf(`SELECT count(*) FROM library WHERE username = %s AND shelf = 'cite'`, sqlText(login.User)), Expect: rawInt(priorCite + 1)},
			{ID: "library-kept", Kind: "sql", DB: "archive", Description: "no paper added or removed",
				Query: fmt.Sprintf(`SELECT count(*) FROM library WHERE username = %s`, sqlText(login.User)), Expect: rawInt(int64(len(ps)))},
			{ID: "table", Kind: "script", Script: "scripts/library_table.py", Description: "the table of the library"},
			{ID: "note", Kind: "script", Script: "scripts/references_note.py", Description: "the reference list of the cite shelf, oldest first"},
		}},
		Answer:     pick.id,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("%d papers in the library; the read paper submitted last is %s (%s); the cite shelf then holds %d. Shelves, authors and days are only on the website (GUI), the table and pick are the script's (CLI), the note goes to the notes service (MCP).",
			len(ps), pick.id, pick.submitted, len(cited)),
	}
	return &Draft{Task: t, Scripts: map[string]string{"library_table.py": tablePy, "references_note.py": notePy}}, nil
}
