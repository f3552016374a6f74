package taskgen

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// sectionDigest: the persona wants the longest of the latest stories in a
// section it follows on The Daily Ledger. The followed sections and the
// stories are only on the news site (GUI); a script counts each story's
// words and picks the longest (CLI); the persona bookmarks it (GUI) and
// sends a friend its headline (messages, MCP).
type sectionDigest struct{}

func (sectionDigest) Name() string     { return "section-digest" }
func (sectionDigest) Covers() []string { return []string{"news", "messages"} }

// newsMinLead is how many words the longest story must lead the next by:
// a closer call would turn on how a word is counted.
const newsMinLead = 3

type newsStory struct {
	slug, title, published, body, summary string
	words                                 int
	bookmarked                            bool
}

// newsLatest are the k latest articles of section as the site lists them
// (published_at DESC, then slug), with their words and whether the
// persona bookmarked them.
func newsLatest(w *World, user, section string, k int) ([]newsStory, error) {
	rows, err := w.Catalog(`SELECT slug, title, published_at, body, summary FROM articles WHERE section = ? ORDER BY published_at DESC, slug LIMIT ?`, section, k)
	if err != nil {
		return nil, err
	}
	marks, err := w.Query("news", `SELECT article FROM bookmarks WHERE username = ?`, user)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, r := range marks {
		have[str(r[0])] = true
	}
	var out []newsStory
	for _, r := range rows {
		body := str(r[3])
		out = append(out, newsStory{slug: str(r[0]), title: str(r[1]), published: str(r[2]), body: body, summary: str(r[4]), words: len(strings.Fields(body)), bookmarked: have[str(r[0])]})
	}
	return out, nil
}

// newsLongest is the story with the most words, or nil when it does not
// lead the next by newsMinLead, is bookmarked already, or two stories
// share a headline (the table is keyed by headline).
func newsLongest(ss []newsStory) *newsStory {
	var best *newsStory
	second := -1
	titles := map[string]bool{}
	for i := range ss {
		s := &ss[i]
		t := strings.ToLower(s.title)
		if titles[t] {
			return nil
		}
		titles[t] = true
		switch {
		case best == nil:
			best = s
		case s.words > best.words:
			second, best = best.words, s
		case s.words > second:
			second = s.words
		}
	}
	if best == nil || best.bookmarked || second >= 0 && best.words-second < newsMinLead {
		return nil
	}
	return best
}

func newsDigestFile(section string) string { return "decisions/ledger-" + idPart(section) + ".csv" }

func (f sectionDigest) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["news"]
	if !ok || !hasTable(w, "messages", "threads") {
		return nil, nil
	}
	secs, err := w.Query("news", `SELECT section FROM followed_sections WHERE username = ? ORDER BY section`, login.User)
	if err != nil || len(secs) == 0 {
		return nil, err
	}
	dms, err := w.Query("messages", `SELECT ext_id, title FROM threads WHERE kind = 'dm' ORDER BY ext_id`)
	if err != nil || len(dms) == 0 {
		return nil, err
	}
	var out []Sketch
	for _, sec := range secs {
		section := str(sec[0])
		for _, k := range []int{4 + rng.IntN(3), 5, 4, 6} {
			ss, err := newsLatest(w, login.User, section, k)
			if err != nil {
				return nil, err
			}
			pick := newsLongest(ss)
			if len(ss) < k || pick == nil {
				continue
			}
			dm := dms[rng.IntN(len(dms))]
			out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Bookmark the longest of the %d latest %s stories and tell %s", k, section, str(dm[1])),
				Params: map[string]string{"section": section, "k": strconv.Itoa(k), "thread": str(dm[0]), "friend": str(dm[1])},
				Core:   []string{"bookmark news " + pick.slug, "file " + newsDigestFile(section), "send messages " + str(dm[0])}})
			break
		}
	}
	return out, nil
}

func (f sectionDigest) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["news"]
	section, thread, friend := s.Params["section"], s.Params["thread"], s.Params["friend"]
	k, err := strconv.Atoi(s.Params["k"])
	if err != nil || k < 1 {
		return nil, fmt.Errorf("taskgen: %s: k %q", f.Name(), s.Params["k"])
	}
	ss, err := newsLatest(w, login.User, section, k)
	if err != nil {
		return nil, err
	}
	pick := newsLongest(ss)
	if pick == nil || len(ss) < k {
		return nil, fmt.Errorf("taskgen: %s: the %d latest %s stories do not decide", f.Name(), k, section)
	}
	priorMarks, err := count(w, "news", `SELECT count(*) FROM bookmarks WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	priorFollows, err := count(w, "news", `SELECT count(*) FROM followed_sections WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	msgQ := fmt.Sprintf(`SELECT count(*) > 0 FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.ext_id = %s AND m.sender = %s AND instr(lower(m.body), %s) > 0`,
		sqlText(thread), sqlText(w.Self), sqlText(strings.ToLower(pick.title)))
	out := newsDigestFile(section)

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Daily Ledger login")
	ref.Login("news", login)
	ref.Open("news", "/following", "the sections I follow")
	ref.Read("#results", "")
	ref.Open("news", "/articles?section="+url.QueryEscape(section), fmt.Sprintf("the %s stories, latest first", section))
	ref.Read("#results", "")
	type pyRow struct {
		Headline string `json:"headline"`
		Story    string `json:"story"`
	}
	var rows, summaries []pyRow
	want := map[string]int{}
	var lines []string
	for _, st := range ss {
		ref.Open("news", "/articles/"+st.slug, "the story")
		ref.Read("#main", "")
		rows = append(rows, pyRow{st.title, st.body})
		summaries = append(summaries, pyRow{st.title, st.summary})
		want[st.title] = st.words
		lines = append(lines, fmt.Sprintf("%s (%s): %d words", st.slug, st.published, st.words))
	}
	// Read carelessly, the text is the article's summary ("In short").
	if v, wrong := pyJSON(rows), pyJSON(summaries); v != wrong {
		ref.Fact(task.Fact{ID: "stories", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: `has the story under "Story"`})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
rows = %s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['headline', 'words'])
    for r in rows:
        w.writerow([r['headline'], len(r['story'].split())])
print('longest:', max(rows, key=lambda r: len(r['story'].split()))['headline'])
PY`, pyJSON(rows), out), "count the words of each story; the longest is the one to keep")
	// Without the count, the guess is the story of the longest summary;
	// choosing carelessly, the runner-up.
	instead := func(id, kind string, st *newsStory) task.Fact {
		return task.Fact{ID: id, Kind: kind, Value: pick.slug, Wrong: st.slug, Forms: []task.Form{{Value: pick.title, Wrong: st.title}}}
	}
	guess, runnerUp := &ss[0], (*newsStory)(nil)
	for i := range ss {
		st := &ss[i]
		if len(strings.Fields(st.summary)) > len(strings.Fields(guess.summary)) {
			guess = st
		}
		if st.slug != pick.slug && (runnerUp == nil || st.words > runnerUp.words) {
			runnerUp = st
		}
	}
	ref.Fact(instead("longest", task.FactOutput, guess))
	bookmark := len(ref)
	ref.KitAction("news", "/articles", pick.slug, "bookmark", nil, "bookmark the longest story")
	ref.FactAt(bookmark, instead("bookmark", task.FactChoice, runnerUp))
	ref.MCP("messages", "list_threads", nil, "the chat with "+friend)
	ref.MCP("messages", "send_message", map[string]any{"thread": thread, "body": "Worth a read from The Daily Ledger: " + pick.title}, "tell "+friend)

	checkPy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def norm(s):
    return " ".join((s or "").split()).lower()
got = {}
for r in rows:
    try:
        n = int(float((r.get("words") or "").strip()))
    except ValueError:
        n = None
    got.setdefault(norm(r.get("headline")), []).append(n)
bad = sorted(h for h, n in want.items() if len(got.get(norm(h), [])) != 1 or got[norm(h)][0] is None or abs(got[norm(h)][0] - n) > 1)
extra = sorted(h for h in got if h not in {norm(x) for x in want})
result(not bad and not extra, f"missing or wrong word counts: {bad}; not among the latest stories: {extra}")
`, pyJSON(want), out, out)

	t := &task.Task{
		Version: task.Version, ID: taskID(f.Name(), w.Manifest.Persona, fmt.Sprintf("d%d-k%d", w.Manifest.Day, k), section),
		Instruction: fmt.Sprintf("I follow the %s section on The Daily Ledger. Take its %d latest stories (the most recently published) and count the words of each story's text (the story itself, not the headline or the summary; words are what is separated by spaces). "+
			"Save the counts as ~/%s with columns headline and words. Then bookmark the longest of them on The Daily Ledger, and send %s a message in our chat with its headline. Bookmark nothing else and follow no new section. Tell me which story it is.",
			section, k, out, friend),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "section", Title: fmt.Sprintf("Find the %d latest %s stories on The Daily Ledger", k, section), Interface: task.GUI},
			{ID: "stories", Title: "Read each story's text", Interface: task.GUI},
			{ID: "count", Title: "Count the words with a script and save " + out, Interface: task.CLI},
			{ID: "bookmark", Title: "Bookmark the longest story", Interface: task.GUI},
			{ID: "tell", Title: "Send " + friend + " its headline", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("The Daily Ledger's Articles page filters by section and lists the latest first; each article's page has the story under \"Story\" and a Bookmark button when logged in (the account is in ~/%s). "+
			"The messages app's send_message takes the thread %s.", LoginsFile, thread),
		Rubric: []string{
			fmt.Sprintf("~/%s lists the %d latest %s stories by headline with their word counts", out, k, section),
			fmt.Sprintf("the longest, %q, is bookmarked, and nothing else", pick.title),
			fmt.Sprintf("%s got a message with its headline", friend),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "bookmarked", Kind: "sql", DB: "news", Description: "the longest story is bookmarked",
				Query: fmt.Sprintf(`SELECT count(*) FROM bookmarks WHERE username = %s AND article = %s`, sqlText(login.User), sqlText(pick.slug)), Expect: rawInt(1)},
			{ID: "one-bookmark", Kind: "sql", DB: "news", Description: "no other bookmark",
				Query: fmt.Sprintf(`SELECT count(*) FROM bookmarks WHERE username = %s`, sqlText(login.User)), Expect: rawInt(priorMarks + 1)},
			{ID: "no-follow", Kind: "sql", DB: "news", Description: "no new section followed",
				Query: fmt.Sprintf(`SELECT count(*) FROM followed_sections WHERE username = %s`, sqlText(login.User)), Expect: rawInt(priorFollows)},
			{ID: "told", Kind: "sql", DB: "messages", Description: friend + " got the headline", Query: msgQ, Expect: rawInt(1)},
			{ID: "counts", Kind: "script", Script: "scripts/story_words.py", Description: "the word count of every latest story"},
		}},
		Answer:     pick.title,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("the %d latest %s stories: %s; the longest is %s (%d words). The sections and stories are only on the news site (GUI); "+
			"the counts that decide come from the script (CLI); the chat is only in the messages service (MCP).", k, section, strings.Join(lines, "; "), pick.slug, pick.words),
	}
	return &Draft{Task: t, Scripts: map[string]string{"story_words.py": checkPy}}, nil
}
