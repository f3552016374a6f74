package taskgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// readingQueue: the persona queues the newest papers of its reading lists.
// The lists are markdown files of the home (CLI); when each paper was
// submitted, and which are in its library already, only Preprint Commons
// tells (GUI); a script ranks them and keeps the table (CLI); the papers go
// on the "to read" shelf (GUI) and a friend hears which comes first
// (messages, MCP).
type readingQueue struct{}

func (readingQueue) Name() string     { return "reading-queue" }
func (readingQueue) Covers() []string { return []string{"archive", "messages"} }

var readingPaperRE = regexp.MustCompile(`arXiv:(\d{4}\.\d{4,5})\b`)

// errUnlisted is a reading list's paper that Preprint Commons does not have.
var errUnlisted = errors.New("taskgen: a reading list names a paper the archive does not have")

// listedPaper is a paper of the reading lists, as the catalog has it.
type listedPaper struct {
	id, title, submitted string
	inLibrary            bool
}

// readingPapers are the papers the home's reading lists name, newest
// submitted first (then by id), with whether the library holds them, and
// the lists that name them. A paper the catalog lacks is an error: the
// site could not tell its day.
func readingPapers(w *World, user string) ([]listedPaper, []string, error) {
	files, err := w.HomeFiles("reading")
	if err != nil {
		return nil, nil, err
	}
	var mds []string
	seen := map[string]bool{}
	var ids []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := w.Home(f)
		if err != nil {
			return nil, nil, err
		}
		found := false
		for _, m := range readingPaperRE.FindAllStringSubmatch(string(b), -1) {
			found = true
			if !seen[m[1]] {
				seen[m[1]] = true
				ids = append(ids, m[1])
			}
		}
		if found {
			mds = append(mds, f)
		}
	}
	lib, err := w.Query("archive", `SELECT paper FROM library WHERE username = ?`, user)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]bool{}
	for _, r := range lib {
		have[str(r[0])] = true
	}
	var out []listedPaper
	for _, id := range ids {
		p, err := w.Catalog(`SELECT title, submitted_on FROM papers WHERE ext_id = ?`, id)
		if err != nil {
			return nil, nil, err
		}
		if len(p) != 1 {
			return nil, nil, fmt.Errorf("%w: %s", errUnlisted, id)
		}
		out = append(out, listedPaper{id: id, title: str(p[0][0]), submitted: str(p[0][1]), inLibrary: have[id]})
	}
	slices.SortFunc(out, func(a, b listedPaper) int {
		if c := strings.Compare(b.submitted, a.submitted); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	slices.Sort(mds)
	return out, mds, nil
}

// newestMissing are the k newest papers not in the library, or nil when
// the k-th shares its day with the next (the ranking would not decide).
func newestMissing(ps []listedPaper, k int) []listedPaper {
	var missing []listedPaper
	for _, p := range ps {
		if !p.inLibrary {
			missing = append(missing, p)
		}
	}
	if len(missing) < k || len(missing) > k && missing[k].submitted == missing[k-1].submitted {
		return nil
	}
	return missing[:k]
}

func (f readingQueue) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["archive"]
	if !ok || !hasTable(w, "messages", "threads") {
		return nil, nil
	}
	ps, _, err := readingPapers(w, login.User)
	if errors.Is(err, errUnlisted) {
		return nil, nil
	}
	if err != nil || len(ps) < 3 {
		return nil, err
	}
	dms, err := w.Query("messages", `SELECT ext_id, title FROM threads WHERE kind = 'dm' ORDER BY ext_id`)
	if err != nil || len(dms) == 0 {
		return nil, err
	}
	dm := dms[rng.IntN(len(dms))]
	for _, k := range []int{1 + rng.IntN(2), 3, 1} {
		pick := newestMissing(ps, k)
		if pick == nil {
			continue
		}
		what := "the newest paper"
		if k > 1 {
			what = fmt.Sprintf("the %d newest papers", k)
		}
		return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Shelve %s of my reading lists not in the library and tell %s", what, str(dm[1])),
			Params: map[string]string{"k": strconv.Itoa(k), "thread": str(dm[0]), "friend": str(dm[1])},
			Core: []string{"file reading/queue.csv", "shelve archive papers " + strings.Join(paperIDs(pick), " ") + " to read",
				"send messages " + str(dm[0])}}}, nil
	}
	return nil, nil
}

func paperIDs(ps []listedPaper) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.id)
	}
	return out
}

func (f readingQueue) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["archive"]
	k, err := strconv.Atoi(s.Params["k"])
	if err != nil || k < 1 {
		return nil, fmt.Errorf("taskgen: %s: k %q", f.Name(), s.Params["k"])
	}
	ps, mds, err := readingPapers(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := newestMissing(ps, k)
	if pick == nil {
		return nil, fmt.Errorf("taskgen: %s: the %d newest papers not in the library do not decide", f.Name(), k)
	}
	thread, friend := s.Params["thread"], s.Params["friend"]
	priorLib, err := count(w, "archive", `SELECT count(*) FROM library WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	msgQ := fmt.Sprintf(`SELECT count(*) > 0 FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.ext_id = %s AND m.sender = %s AND instr(m.body, %s) > 0`,
		sqlText(thread), sqlText(w.Self), sqlText(pick[0].id))
	const out = "reading/queue.csv"

	var ref Steps
	ref.Shell("cat "+strings.Join(mds, " "), "the papers on my reading lists")
	ref.Shell("cat "+LoginsFile, "the Preprint Commons login")
	ref.Login("archive", login)
	ref.Open("archive", "/library", "what the library holds already")
	ref.Read("#results", "")
	// What the pages say: which papers the library holds, the day each
	// was submitted. Read carelessly, the library is not looked at, and
	// the day is taken from the id (its year and month, the first).
	inLib := []string{}
	for _, p := range ps {
		if p.inLibrary {
			inLib = append(inLib, p.id)
		}
	}
	libPy := "in_library = " + pyJSON(inLib)
	if f, ok := factOf("library", task.FactRead, "/library is what is shelved", task.Form{Value: libPy, Wrong: "in_library = " + pyJSON([]string{})}); ok {
		ref.Fact(f)
	}
	type pyRow struct {
		ID        string `json:"id"`
		Submitted string `json:"submitted"`
	}
	var rows, fromID []pyRow
	for _, p := range ps {
		ref.Open("archive", "/papers/"+p.id, "when "+p.id+" was submitted")
		ref.Read("#main", "")
		rows = append(rows, pyRow{p.id, p.submitted})
		fromID = append(fromID, pyRow{p.id, "20" + p.id[:2] + "-" + p.id[2:4] + "-01"})
	}
	papersPy := "rows = " + pyJSON(rows)
	if f, ok := factOf("submitted", task.FactRead, "with its Submitted day", task.Form{Value: papersPy, Wrong: "rows = " + pyJSON(fromID)}); ok {
		ref.Fact(f)
	}
	ref.Shell(fmt.Sprintf(`python3 - <<'PY'
import csv, json
%s
%s
for r in rows:
    r['in_library'] = r['id'] in in_library
rows.sort(key=lambda r: r['id'])
rows.sort(key=lambda r: r['submitted'], reverse=True)
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['arxiv_id', 'submitted', 'in_library'])
    for r in rows:
        w.writerow([r['id'], r['submitted'], 'yes' if r['in_library'] else 'no'])
print('queue:', [r['id'] for r in rows if not r['in_library']][:%d])
PY`, libPy, papersPy, out, k), "rank the papers; the newest not in the library go first")
	// Without the script, the guess is the highest ids not in the
	// library; choosing carelessly, the runner-up in place of the last
	// pick.
	var missing []listedPaper
	for _, p := range ps {
		if !p.inLibrary {
			missing = append(missing, p)
		}
	}
	instead := func(id, kind string, wrong []listedPaper) (task.Fact, bool) {
		pairs := []task.Form{{Value: fmt.Sprintf("reading %s next: %s", pick[0].id, pick[0].title), Wrong: fmt.Sprintf("reading %s next: %s", wrong[0].id, wrong[0].title)}}
		// The shelf is a set: a pick the mistake keeps stays where it is,
		// the others make way for the papers it adds.
		in := func(ps []listedPaper, p listedPaper) bool {
			return slices.ContainsFunc(ps, func(q listedPaper) bool { return q.id == p.id })
		}
		var added []listedPaper
		for _, p := range wrong {
			if !in(pick, p) {
				added = append(added, p)
			}
		}
		for _, p := range pick {
			if !in(wrong, p) {
				pairs = append(pairs, task.Form{Value: "site:archive/papers/" + p.id, Wrong: "site:archive/papers/" + added[0].id})
				added = added[1:]
			}
		}
		if !in(wrong, pick[0]) {
			// The answer: every step's form of the first pick is replaced
			// by now.
			pairs = append(pairs, task.Form{Value: pick[0].id, Wrong: wrong[0].id})
		}
		return factOf(id, kind, "", pairs...)
	}
	byID := slices.Clone(missing)
	slices.SortFunc(byID, func(a, b listedPaper) int { return strings.Compare(b.id, a.id) })
	if f, ok := instead("queue", task.FactOutput, byID[:k]); ok {
		ref.Fact(f)
	}
	shelve := len(ref)
	crit := []task.Criterion{}
	for i, p := range pick {
		ref.KitAction("archive", "/papers", p.id, "shelve", map[string]string{"shelf": "to read"}, "shelve "+p.id)
		crit = append(crit, task.Criterion{ID: fmt.Sprintf("shelved-%d", i+1), Kind: "sql", DB: "archive",
			Description: p.id + " is on the to read shelf",
			Query:       fmt.Sprintf(`SELECT shelf FROM library WHERE username = %s AND paper = %s`, sqlText(login.User), sqlText(p.id)), Expect: rawJSON("to read")})
	}
	if len(missing) > k {
		if f, ok := instead("papers", task.FactChoice, append(slices.Clone(pick[:k-1]), missing[k])); ok {
			ref.FactAt(shelve, f)
		}
	}
	ref.MCP("messages", "list_threads", nil, "the chat with "+friend)
	ref.MCP("messages", "send_message", map[string]any{"thread": thread, "body": fmt.Sprintf("I'm reading %s next: %s.", pick[0].id, pick[0].title)}, "tell "+friend)
	crit = append(crit,
		task.Criterion{ID: "no-other-papers", Kind: "sql", DB: "archive", Description: "no other paper was added",
			Query: fmt.Sprintf(`SELECT count(*) FROM library WHERE username = %s`, sqlText(login.User)), Expect: rawInt(priorLib + int64(k))},
		task.Criterion{ID: "told", Kind: "sql", DB: "messages", Description: friend + " was told the first paper's id", Query: msgQ, Expect: rawInt(1)},
		task.Criterion{ID: "queue", Kind: "script", Script: "scripts/queue_table.py", Description: "the ranked table of the reading lists' papers"})

	want := map[string][]string{}
	for _, p := range ps {
		want[p.id] = []string{p.submitted, yesNo(p.inLibrary)}
	}
	checkPy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = [((r.get("arxiv_id") or "").strip().removeprefix("arXiv:"), (r.get("submitted") or "").strip(), (r.get("in_library") or "").strip().lower()) for r in rows]
ids = [g[0] for g in got]
bad = sorted(i for i in want if [g[1:] for g in got if g[0] == i] != [tuple(want[i])])
extra = sorted(i for i in ids if i not in want)
dates = [g[1] for g in got]
ordered = dates == sorted(dates, reverse=True)
result(not bad and not extra and ordered, f"missing or wrong: {bad}; not on the lists: {extra}; newest first: {ordered}")
`, pyJSON(want), out, out)

	var names []string
	for _, p := range pick {
		names = append(names, p.id+" ("+p.submitted+")")
	}
	which := "paper"
	if k > 1 {
		which = fmt.Sprintf("%d papers", k)
	}
	t := &task.Task{
		Version: task.Version, ID: taskID("reading-queue", w.Manifest.Persona, pick[0].id, fmt.Sprintf("k%d-d%d", k, w.Manifest.Day)),
		Instruction: fmt.Sprintf("My reading lists in ~/reading name papers by arXiv id. Make ~/%s of every paper on them: columns arxiv_id, submitted (the day it was submitted, YYYY-MM-DD, as Preprint Commons shows it) "+
			"and in_library (yes or no: whether it is in my Preprint Commons library already), newest submitted first. "+
			"Then put the %s submitted most recently that are not in my library yet on my \"to read\" shelf there, and send %s a message in our chat saying which one I'm reading first (the newest), with its arXiv id. Shelve nothing else.",
			out, which, friend),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "lists", Title: "Collect the papers of the reading lists in ~/reading", Interface: task.CLI},
			{ID: "lookup", Title: "Look up each paper's submission day and the library on Preprint Commons", Interface: task.GUI},
			{ID: "rank", Title: "Rank them with a script and save " + out, Interface: task.CLI},
			{ID: "shelve", Title: fmt.Sprintf("Shelve the %s newest missing on \"to read\"", which), Interface: task.GUI},
			{ID: "tell", Title: "Message " + friend + " the first paper's id", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Each paper's page on Preprint Commons is /papers/ID with its Submitted day; /library is what is shelved; \"Add to library\" on a paper page takes the shelf. "+
			"The messages app's send_message takes the thread %s.", thread),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every paper of the reading lists with its submission day and library status, newest first", out),
			fmt.Sprintf("exactly the %s newest not in the library were shelved on \"to read\": %s", which, strings.Join(names, ", ")),
			fmt.Sprintf("%s got a message naming %s", friend, pick[0].id),
		},
		Reference:  ref,
		Verifier:   task.Verifier{Criteria: crit},
		Answer:     pick[0].id,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("%d papers on %d reading lists; the newest not in the library: %s. Submission days are only on the website (GUI), the lists only in the home (CLI), "+
			"the chat only in the messages service (MCP).", len(ps), len(mds), strings.Join(names, ", ")),
	}
	return &Draft{Task: t, Scripts: map[string]string{"queue_table.py": checkPy}}, nil
}
