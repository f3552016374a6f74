package taskgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// wordPractice: the persona keeps the long words of its Wordhoard word
// list in a note to practise. The word list is only on the website behind
// the login, each word's pronunciation and definition on its page (GUI);
// a script counts the syllables and keeps the table (CLI), and its count
// decides which words go into the note, written in the notes app (MCP).
type wordPractice struct{}

func (wordPractice) Name() string     { return "word-practice" }
func (wordPractice) Covers() []string { return []string{"dictionary", "notes"} }

// mediaWord is a word of the persona's word list, as the catalog has it.
type mediaWord struct {
	headword, pos, pronunciation, definition, example string
	syllables                                         int
}

// mediaSyllables counts a pronunciation's parts between middle dots
// ("/mu·wo·vie·l/" has 4).
func mediaSyllables(pron string) int {
	p := strings.Trim(strings.TrimSpace(pron), "/")
	if p == "" {
		return 0
	}
	return len(strings.Split(p, "·"))
}

// mediaSpelled is the pronunciation a careless agent makes up from the
// spelling instead of reading Wordhoard's: a syllable per vowel group, the
// consonants before a group going with it and the last ones with the last
// ("muwoviel" is /mu·wo·viel/ where Wordhoard writes /mu·wo·vie·l/).
func mediaSpelled(w string) string {
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	var parts []string
	start, in, seen := 0, false, false
	for i := 0; i < len(w); i++ {
		v := vowel(w[i])
		if v && !in && seen {
			cut := i
			for cut > start && !vowel(w[cut-1]) {
				cut--
			}
			parts = append(parts, w[start:cut])
			start = cut
		}
		seen = seen || v
		in = v
	}
	return "/" + strings.Join(append(parts, w[start:]), "·") + "/"
}

// mediaWordList is the persona's word list, by headword; nil when a word
// is not in the catalog (the site could not show it).
func mediaWordList(w *World, user string) ([]mediaWord, error) {
	rows, err := w.Query("dictionary", `SELECT headword FROM word_list WHERE username = ? ORDER BY headword`, user)
	if err != nil {
		return nil, err
	}
	var out []mediaWord
	for _, r := range rows {
		c, err := w.Catalog(`SELECT pos, pronunciation, definition, example FROM words WHERE headword = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) != 1 {
			return nil, nil
		}
		out = append(out, mediaWord{headword: str(r[0]), pos: str(c[0][0]), pronunciation: str(c[0][1]), definition: str(c[0][2]), example: str(c[0][3]), syllables: mediaSyllables(str(c[0][1]))})
	}
	return out, nil
}

// mediaLongWords splits the words at k syllables: those with at least k
// (most syllables first, then by headword) and the others.
func mediaLongWords(ws []mediaWord, k int) (long, short []mediaWord) {
	for _, x := range ws {
		if x.syllables >= k {
			long = append(long, x)
		} else {
			short = append(short, x)
		}
	}
	slices.SortStableFunc(long, func(a, b mediaWord) int { return b.syllables - a.syllables })
	return long, short
}

const mediaPracticeTitle = "Words to practise"

func (f wordPractice) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["dictionary"]
	if !ok || !hasTable(w, "notes", "notebooks") {
		return nil, nil
	}
	ws, err := mediaWordList(w, login.User)
	if err != nil || len(ws) < 3 {
		return nil, err
	}
	// A threshold that splits the list: some words in the note, some not.
	var ks []int
	for _, x := range ws {
		if long, short := mediaLongWords(ws, x.syllables); len(long) > 0 && len(short) > 0 && !slices.Contains(ks, x.syllables) {
			ks = append(ks, x.syllables)
		}
	}
	if len(ks) == 0 {
		return nil, nil
	}
	slices.Sort(ks)
	k := ks[rng.IntN(len(ks))]
	long, _ := mediaLongWords(ws, k)
	var heads []string
	for _, x := range long {
		heads = append(heads, x.headword)
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Note the words of my word list with %d or more syllables to practise", k),
		Params: map[string]string{"k": strconv.Itoa(k), "notebook": mediaNotebook(w, "Learning")},
		Core:   []string{"file vocab/word-list.csv", "create notes " + mediaPracticeTitle + ": " + strings.Join(heads, " ")}}}, nil
}

// mediaNotebook is the persona's notebook named like want, or want.
func mediaNotebook(w *World, want string) string {
	rows, err := w.Query("notes", `SELECT name FROM notebooks WHERE lower(name) = lower(?) ORDER BY id LIMIT 1`, want)
	if err == nil && len(rows) == 1 {
		return str(rows[0][0])
	}
	return want
}

func (f wordPractice) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["dictionary"]
	k, err := strconv.Atoi(s.Params["k"])
	if err != nil || k < 1 {
		return nil, fmt.Errorf("taskgen: %s: k %q", f.Name(), s.Params["k"])
	}
	ws, err := mediaWordList(w, login.User)
	if err != nil {
		return nil, err
	}
	long, short := mediaLongWords(ws, k)
	if len(long) == 0 || len(short) == 0 {
		return nil, fmt.Errorf("taskgen: %s: %d syllables do not split the word list", f.Name(), k)
	}
	notebook := s.Params["notebook"]
	const out = "vocab/word-list.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Wordhoard login")
	ref.Login("dictionary", login)
	ref.Open("dictionary", "/word-list", "the words on my list")
	ref.Read("#results", "")
	type pyRow struct {
		Headword      string `json:"headword"`
		Pos           string `json:"pos"`
		Pronunciation string `json:"pronunciation"`
	}
	var rows, spelled []pyRow
	for _, x := range ws {
		ref.Open("dictionary", "/words/"+x.headword, "the pronunciation and definition of "+x.headword)
		ref.Read("#main", "")
		rows = append(rows, pyRow{x.headword, x.pos, x.pronunciation})
		spelled = append(spelled, pyRow{x.headword, x.pos, mediaSpelled(x.headword)})
		// The note gives the definitions of the long words; copied
		// carelessly from the page, the example below it.
		if x.syllables >= k && x.example != x.definition {
			ref.Fact(task.Fact{ID: "definition-" + x.headword, Kind: task.FactRead, Value: x.definition, Wrong: x.example, Cue: "a Definition above the Example"})
		}
	}
	// Not read, the pronunciations are made up from the spelling (a
	// syllable per vowel group).
	if v, wrong := pyJSON(rows), pyJSON(spelled); v != wrong {
		ref.Fact(task.Fact{ID: "pronunciations", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "shows a pronunciation like"})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p vocab && python3 - <<'PY'
import csv, json
rows = %s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['headword', 'pos', 'syllables'])
    for r in rows:
        n = len(r['pronunciation'].strip().strip('/').split('\u00b7'))
        r['n'] = n
        w.writerow([r['headword'], r['pos'], n])
print('to practise:', [r['headword'] for r in sorted(rows, key=lambda r: -r['n']) if r['n'] >= %d])
PY`, pyJSON(rows), out, k), "count the syllables; the words with enough go into the note")
	var lines []string
	for _, x := range long {
		lines = append(lines, fmt.Sprintf("- %s (%s): %s", x.headword, x.pos, x.definition))
	}
	body := strings.Join(lines, "\n") + "\n"
	// Without the count, the words guessed long from their spelling.
	var guessed, guessedHeads, heads []string
	for _, x := range ws {
		if mediaSyllables(mediaSpelled(x.headword)) >= k {
			guessed = append(guessed, fmt.Sprintf("- %s (%s): %s", x.headword, x.pos, x.definition))
			guessedHeads = append(guessedHeads, x.headword)
		}
	}
	for _, x := range long {
		heads = append(heads, x.headword)
	}
	ref.Fact(task.Fact{ID: "long-words", Kind: task.FactOutput, Value: body, Wrong: strings.Join(guessed, "\n") + "\n",
		Forms: []task.Form{{Value: strings.Join(heads, ", "), Wrong: strings.Join(guessedHeads, ", ")}}})
	ref.MCP("notes", "list_notebooks", nil, "the notebooks")
	ref.MCP("notes", "create_note", map[string]any{"notebook": notebook, "title": mediaPracticeTitle, "body": body}, "the note of the words to practise")

	wantCSV := map[string][]string{}
	for _, x := range ws {
		wantCSV[x.headword] = []string{x.pos, strconv.Itoa(x.syllables)}
	}
	tablePy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {(r.get("headword") or "").strip(): [(r.get("pos") or "").strip().lower(), (r.get("syllables") or "").strip()] for r in rows}
bad = sorted(h for h in want if got.get(h) != want[h])
extra = sorted(h for h in got if h not in want)
result(not bad and not extra and len(rows) == len(want), f"missing or wrong: {bad}; not on the word list: {extra}")
`, pyJSON(wantCSV), out, out)
	var wantIn [][]string
	for _, x := range long {
		wantIn = append(wantIn, []string{x.headword, x.definition})
	}
	var wantOut []string
	for _, x := range short {
		wantOut = append(wantOut, x.headword)
	}
	notePy := mediaNoteCheck(mediaPracticeTitle) + fmt.Sprintf(`import re
want_in = %s
want_out = %s
notebook_want = %s
words = set(re.findall(r"[a-z]+", body.lower()))
missing = [h for h, d in want_in if h not in words or d.lower() not in body.lower()]
extra = [h for h in want_out if h in words]
ok_nb = notebook.strip().lower() == notebook_want.lower()
result(not missing and not extra and ok_nb, f"missing or without definition: {missing}; should not be there: {extra}; notebook {notebook!r}")
`, pyJSON(wantIn), pyJSON(wantOut), pyJSON(notebook))

	var names []string
	for _, x := range long {
		names = append(names, fmt.Sprintf("%s (%d)", x.headword, x.syllables))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID("word-practice", w.Manifest.Persona, fmt.Sprintf("k%d-d%d", k, w.Manifest.Day)),
		Instruction: fmt.Sprintf("I want to practise the long words on my Wordhoard word list. Make ~/%s of every word on the list: columns headword, pos (its part of speech) and syllables "+
			"(the number of syllables of its pronunciation as Wordhoard writes it, the parts between the dots). "+
			"Then, in my notes, create a note titled %q in the %s notebook with one line for each word that has %d or more syllables: the word, its part of speech and its definition. Leave the shorter words out.",
			out, mediaPracticeTitle, notebook, k),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "list", Title: "Read the word list and each word's pronunciation and definition on Wordhoard", Interface: task.GUI},
			{ID: "count", Title: "Count the syllables with a script and save " + out, Interface: task.CLI},
			{ID: "note", Title: fmt.Sprintf("Create the note %q of the words with %d or more syllables", mediaPracticeTitle, k), Interface: task.MCP},
		},
		Hint: fmt.Sprintf("The word list is Wordhoard's /word-list once logged in (the login is in ~/%s); each word's page /words/WORD shows a pronunciation like /mu·wo·vie·l/ (4 syllables) and a Definition above the Example. "+
			"The notes app's create_note takes notebook, title and body.", LoginsFile),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every word of the word list with its part of speech and syllable count", out),
			fmt.Sprintf("one note %q in %s holds exactly the words with %d or more syllables, with their definitions: %s", mediaPracticeTitle, notebook, k, strings.Join(names, ", ")),
			"the word list itself is unchanged",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "table", Kind: "script", Script: "scripts/word_table.py", Description: "the table of the word list's syllables"},
			{ID: "note", Kind: "script", Script: "scripts/practice_note.py", Description: "the note holds the long words with their definitions and no short word"},
			{ID: "list-kept", Kind: "sql", DB: "dictionary", Description: "the word list is unchanged",
				Query: fmt.Sprintf(`SELECT count(*) FROM word_list WHERE username = %s`, sqlText(login.User)), Expect: rawInt(int64(len(ws)))},
		}},
		Answer:     strings.Join(heads, ", "),
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("%d words on the list; with %d or more syllables: %s. The list and pronunciations are only on the website (GUI), the count is the script's (CLI), the note goes to the notes service (MCP).",
			len(ws), k, strings.Join(names, ", ")),
	}
	return &Draft{Task: t, Scripts: map[string]string{"word_table.py": tablePy, "practice_note.py": notePy}}, nil
}
