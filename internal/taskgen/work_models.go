package taskgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/wildawm/wildawm/internal/task"
)

// modelPick: the persona picks a model to go with a dataset it collected.
// The dataset and the models are on Modelhaus (GUI: the collection, the
// filtered model lists, then the like); the choice needs a score the site
// does not sort by (downloads and likes weighed together), so a script
// ranks the candidates (CLI); the pick goes
// by mail to a contact whose address is in the contacts app (MCP).
type modelPick struct{}

func (modelPick) Name() string     { return "model-pick" }
func (modelPick) Covers() []string { return []string{"models", "mail", "contacts"} }

var (
	modelBudgets  = []int64{100, 150, 200, 300, 500, 700, 1000, 1500, 2000}
	modelLicenses = []string{"apache-2.0", "mit"}
)

type modelCand struct {
	id                       int64
	name, license            string
	params, downloads, likes int64
}

// likeWeight is how many downloads a like counts for in a model's score.
const likeWeight = 100

// score is a model's popularity: downloads, and likeWeight per like.
func (a modelCand) score() int64 { return a.downloads + likeWeight*a.likes }

// beats compares a's score with b's.
func (a modelCand) beats(b modelCand) int {
	switch {
	case a.score() > b.score():
		return 1
	case a.score() < b.score():
		return -1
	}
	return 0
}

// modelCands are the models of task within budget under the licenses.
func modelCands(w *World, taskName string, budget int64) ([]modelCand, error) {
	rows, err := w.Catalog(`SELECT id, owner || '/' || name, license, params_m, downloads, likes FROM models WHERE task = ? AND params_m <= ? AND license IN (?, ?) AND downloads > 0 ORDER BY id`,
		taskName, budget, modelLicenses[0], modelLicenses[1])
	if err != nil {
		return nil, err
	}
	var out []modelCand
	for _, r := range rows {
		out = append(out, modelCand{id: num(r[0]), name: str(r[1]), license: str(r[2]), params: num(r[3]), downloads: num(r[4]), likes: num(r[5])})
	}
	return out, nil
}

// bestModel is the candidate of the highest score, or nil on a tie at
// the top.
func bestModel(cs []modelCand) *modelCand {
	var best *modelCand
	tie := false
	for i := range cs {
		switch {
		case best == nil || cs[i].beats(*best) > 0:
			best, tie = &cs[i], false
		case cs[i].beats(*best) == 0:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

// mostDownloaded is the candidate the site lists first.
func mostDownloaded(cs []modelCand) modelCand {
	top := cs[0]
	for _, c := range cs[1:] {
		if c.downloads > top.downloads || c.downloads == top.downloads && c.id < top.id {
			top = c
		}
	}
	return top
}

func (f modelPick) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["models"]
	if !ok || !hasTable(w, "mail", "mails") {
		return nil, nil
	}
	contacts, err := w.Query("contacts", `SELECT name, email FROM contacts WHERE email <> '' ORDER BY ext_id`)
	if err != nil || len(contacts) == 0 {
		return nil, err
	}
	coll, err := w.Query("models", `SELECT dataset_id FROM collection WHERE username = ? ORDER BY dataset_id`, login.User)
	if err != nil {
		return nil, err
	}
	liked, err := w.Query("models", `SELECT model_id FROM likes WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	isLiked := map[int64]bool{}
	for _, l := range liked {
		isLiked[num(l[0])] = true
	}
	var out []Sketch
	for _, c := range coll {
		ds, err := w.Catalog(`SELECT owner || '/' || name, task FROM datasets WHERE id = ?`, num(c[0]))
		if err != nil {
			return nil, err
		}
		if len(ds) != 1 {
			continue
		}
		for _, i := range rng.Perm(len(modelBudgets)) {
			cs, err := modelCands(w, str(ds[0][1]), modelBudgets[i])
			if err != nil {
				return nil, err
			}
			if len(cs) < 3 || len(cs) > 20 {
				continue
			}
			best := bestModel(cs)
			if best == nil || isLiked[best.id] || best.id == mostDownloaded(cs).id {
				continue // the site's own order would decide
			}
			ct := contacts[rng.IntN(len(contacts))]
			out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Pick a %s model of at most %dM parameters for %s and mail %s", ds[0][1], modelBudgets[i], str(ds[0][0]), str(ct[0])),
				Params: map[string]string{"dataset": strconv.FormatInt(num(c[0]), 10), "budget": strconv.FormatInt(modelBudgets[i], 10), "contact": str(ct[0]), "email": str(ct[1])},
				Core: []string{"like models " + best.name, fmt.Sprintf("file decisions/models-%s.csv", idPart(str(ds[0][1]))),
					"send mail to " + str(ct[1])}})
			break
		}
	}
	return out, nil
}

func (f modelPick) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["models"]
	dsID, err1 := strconv.ParseInt(s.Params["dataset"], 10, 64)
	budget, err2 := strconv.ParseInt(s.Params["budget"], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("taskgen: %s: params %v", f.Name(), s.Params)
	}
	ds, err := w.Catalog(`SELECT owner || '/' || name, task FROM datasets WHERE id = ?`, dsID)
	if err != nil || len(ds) != 1 {
		return nil, fmt.Errorf("taskgen: %s: no dataset %d (%v)", f.Name(), dsID, err)
	}
	dsName, taskName := str(ds[0][0]), str(ds[0][1])
	cs, err := modelCands(w, taskName, budget)
	if err != nil {
		return nil, err
	}
	best := bestModel(cs)
	if best == nil {
		return nil, fmt.Errorf("taskgen: %s: no single best model", f.Name())
	}
	contact, email := s.Params["contact"], s.Params["email"]
	priorLikes, err := count(w, "models", `SELECT count(*) FROM likes WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	out := fmt.Sprintf("decisions/models-%s.csv", idPart(taskName))

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Modelhaus login")
	ref.Login("models", login)
	ref.Open("models", "/collection", "the datasets I collected")
	ref.Read("#results", "")
	ref.Open("models", fmt.Sprintf("/datasets/%d", dsID), "the dataset's task")
	ref.Read("#main", "")
	for _, lic := range modelLicenses {
		ref.Open("models", fmt.Sprintf("/models?task=%s&license=%s&max_params_m=%d", taskName, lic, budget), "the "+lic+" candidates within the budget")
		ref.Read("#results", "")
	}
	type pyRow struct {
		Model     string `json:"model"`
		Params    int64  `json:"params_m"`
		Downloads int64  `json:"downloads"`
		Likes     int64  `json:"likes"`
	}
	// Read carelessly, one licence's list is all there is: the last
	// list's models are missed.
	var rows, firstList []pyRow
	for _, c := range cs {
		rows = append(rows, pyRow{c.name, c.params, c.downloads, c.likes})
		if c.license != modelLicenses[len(modelLicenses)-1] {
			firstList = append(firstList, pyRow{c.name, c.params, c.downloads, c.likes})
		}
	}
	rowsPy := "rows = " + pyJSON(rows)
	if f, ok := factOf("candidates", task.FactRead, "filters by task, license", task.Form{Value: rowsPy, Wrong: "rows = " + pyJSON(firstList)}); ok {
		ref.Fact(f)
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
%s
for r in rows:
    r['score'] = r['downloads'] + %d * r['likes']
rows.sort(key=lambda r: -r['score'])
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['model', 'params_m', 'downloads', 'likes', 'score'])
    for r in rows:
        w.writerow([r['model'], r['params_m'], r['downloads'], r['likes'], r['score']])
print('best:', rows[0]['model'])
PY`, rowsPy, likeWeight, out), "rank the candidates by score")
	// Without the script, the guess is the site's first: the most
	// downloaded; choosing carelessly, the runner-up by score.
	pitch := func(c modelCand) string { return fmt.Sprintf("%s (%dM parameters, %s)", c.name, c.params, c.license) }
	instead := func(id, kind, cue string, c modelCand) (task.Fact, bool) {
		return factOf(id, kind, cue,
			task.Form{Value: fmt.Sprintf("site:models/models/%d", best.id), Wrong: fmt.Sprintf("site:models/models/%d", c.id)},
			task.Form{Value: pitch(*best), Wrong: pitch(c)}, task.Form{Value: best.name, Wrong: c.name})
	}
	if f, ok := instead("best", task.FactOutput, "not by the score", mostDownloaded(cs)); ok {
		ref.Fact(f)
	}
	byScore := slices.Clone(cs)
	slices.SortStableFunc(byScore, func(a, b modelCand) int { return b.beats(a) })
	like := len(ref)
	ref.KitAction("models", "/models", strconv.FormatInt(best.id, 10), "like", nil, "like the pick")
	if f, ok := instead("model", task.FactChoice, "", byScore[1]); ok {
		ref.FactAt(like, f)
	}
	ref.MCP("contacts", "search_contacts", map[string]any{"query": contact}, contact+"'s address")
	ref.MCP("mail", "send_mail", map[string]any{"to": []string{email}, "subject": "A model for " + dsName,
		"body": fmt.Sprintf("For %s I'd go with %s: the most popular of the candidates.", dsName, pitch(*best))}, "mail the pick")

	mailQ := fmt.Sprintf(`SELECT count(*) > 0 FROM mails m JOIN folders f ON f.id = m.folder_id WHERE f.name = 'sent' AND instr(lower(m.to_addrs), lower(%s)) > 0 AND instr(lower(m.subject || ' ' || m.body), lower(%s)) > 0`,
		sqlText(email), sqlText(best.name))
	want := map[string][]int64{}
	for _, c := range cs {
		want[c.name] = []int64{c.params, c.downloads, c.likes}
	}
	checkPy := fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = {k.lower(): v for k, v in %s.items()}
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def ints(r):
    try:
        return [int(float((r.get(c) or "").strip().replace(",", ""))) for c in ("params_m", "downloads", "likes")]
    except ValueError:
        return None
got = {}
for r in rows:
    got.setdefault((r.get("model") or "").strip().lower(), []).append(ints(r))
bad = sorted(m for m in want if got.get(m) != [want[m]])
extra = sorted(m for m in got if m not in want)
result(not bad and not extra, f"missing or wrong candidates: {bad}; not candidates: {extra}")
`, pyJSON(want), out, out)

	t := &task.Task{
		Version: task.Version, ID: taskID("model-pick", w.Manifest.Persona, best.name, "b"+s.Params["budget"], fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I need a model to go with the dataset %s in my Modelhaus collection: one for the dataset's task, with at most %d million parameters, licensed apache-2.0 or mit. "+
			"Of those, I want the most popular, scoring each as its downloads plus %d for every like. Keep every candidate in ~/%s (columns model as owner/name, params_m, downloads, likes, score), "+
			"like the winner on Modelhaus, and email %s which model it is (its owner/name).", dsName, budget, likeWeight, out, contact),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "dataset", Title: "Find the dataset's task on Modelhaus", Interface: task.GUI},
			{ID: "candidates", Title: "List the models of that task within the size and licences", Interface: task.GUI},
			{ID: "rank", Title: "Score and rank them with a script and save " + out, Interface: task.CLI},
			{ID: "like", Title: "Like the best one", Interface: task.GUI},
			{ID: "mail", Title: "Find " + contact + "'s address and mail the pick", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("The Models list filters by task, license and \"At most million parameters\"; the site sorts by downloads only, not by the score. %s's address is in the contacts app; send_mail takes to, subject and body.", contact),
		Rubric: []string{
			fmt.Sprintf("~/%s lists exactly the %d candidate models", out, len(cs)),
			fmt.Sprintf("%s is liked on Modelhaus and nothing else", best.name),
			fmt.Sprintf("a mail to %s names %s", email, best.name),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "liked", Kind: "sql", DB: "models", Description: "the pick, by its owner/name in the catalog, is liked",
				Query: fmt.Sprintf(`SELECT count(*) FROM likes l JOIN catalog.models m ON m.id = l.model_id WHERE l.username = %s AND m.owner || '/' || m.name = %s`, sqlText(login.User), sqlText(best.name)), Expect: rawInt(1)},
			{ID: "one-like", Kind: "sql", DB: "models", Description: "no other model was liked",
				Query: fmt.Sprintf(`SELECT count(*) FROM likes WHERE username = %s`, sqlText(login.User)), Expect: rawInt(priorLikes + 1)},
			{ID: "mailed", Kind: "sql", DB: "mail", Description: contact + " got the pick by mail", Query: mailQ, Expect: rawInt(1)},
			{ID: "candidates", Kind: "script", Script: "scripts/candidates_table.py", Description: "the table of candidates"},
		}},
		Answer:     best.name,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("dataset %s (%s); %d candidates of at most %dM under %v; the best score is %s (%d downloads + %d x %d likes). The list can be filtered on the site but not ranked by the score (GUI + CLI); "+
			"the address is only in contacts and the mail goes through the mail service (MCP).", dsName, taskName, len(cs), budget, modelLicenses, best.name, best.downloads, likeWeight, best.likes),
	}
	return &Draft{Task: t, Scripts: map[string]string{"candidates_table.py": checkPy}}, nil
}
