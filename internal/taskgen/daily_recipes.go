package taskgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// larderShopping: the persona cooks the quickest recipe it saved on Larder
// and has not reviewed yet, for a number of people. The saved recipes, the
// reviews and each recipe's minutes, servings and ingredients are only on
// the recipe site (GUI); a script picks the recipe and scales its
// ingredients into a shopping list (CLI); the shopping goes on the to-do
// list with the list in its notes (MCP tasks).
type larderShopping struct{}

func (larderShopping) Name() string     { return "larder-shopping" }
func (larderShopping) Covers() []string { return []string{"recipes", "tasks"} }

const (
	larderSavedFile = "decisions/larder-saved.csv"
	larderListFile  = "lists/larder-shopping.csv"
)

type larderRecipe struct {
	slug, title       string
	minutes, servings int64
	reviewed          bool
}

// larderSaved are the persona's saved recipes, in the order saved, with
// whether it reviewed them.
func larderSaved(w *World, user string) ([]larderRecipe, error) {
	rows, err := w.Query("recipes", `SELECT slug FROM saved_recipes WHERE username = ? ORDER BY id`, user)
	if err != nil {
		return nil, err
	}
	revs, err := w.Query("recipes", `SELECT DISTINCT slug FROM reviews WHERE username = ?`, user)
	if err != nil {
		return nil, err
	}
	reviewed := map[string]bool{}
	for _, r := range revs {
		reviewed[str(r[0])] = true
	}
	var out []larderRecipe
	for _, r := range rows {
		c, err := w.Catalog(`SELECT title, minutes, servings FROM recipes WHERE slug = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) == 1 {
			out = append(out, larderRecipe{slug: str(r[0]), title: str(c[0][0]), minutes: num(c[0][1]), servings: num(c[0][2]), reviewed: reviewed[str(r[0])]})
		}
	}
	return out, nil
}

// larderQuickest is the unreviewed saved recipe with the fewest minutes,
// or nil when none is unreviewed, two share the fewest, or two saved
// recipes share a title (the table is keyed by title).
func larderQuickest(rs []larderRecipe) *larderRecipe {
	var best *larderRecipe
	tie := false
	titles := map[string]bool{}
	for i := range rs {
		r := &rs[i]
		t := strings.ToLower(r.title)
		if titles[t] {
			return nil
		}
		titles[t] = true
		if r.reviewed {
			continue
		}
		switch {
		case best == nil || r.minutes < best.minutes:
			best, tie = r, false
		case r.minutes == best.minutes:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

type larderItem struct {
	ingredient, unit string
	qty              int64 // scaled, rounded up
}

// larderList is the recipe's shopping list for people: each ingredient in
// each unit once, in the recipe's order of first mention, its amounts
// summed, scaled from the recipe's servings and rounded up.
func larderList(w *World, r *larderRecipe, people int64) ([]larderItem, error) {
	rows, err := w.Catalog(`SELECT i.quantity, i.unit, i.ingredient FROM recipe_ingredients i JOIN recipes r ON r.id = i.recipe_id WHERE r.slug = ? ORDER BY i.pos`, r.slug)
	if err != nil {
		return nil, err
	}
	if r.servings < 1 {
		return nil, fmt.Errorf("taskgen: recipe %s serves %d", r.slug, r.servings)
	}
	sums := map[[2]string]int64{}
	var order [][2]string
	for _, row := range rows {
		q, err := strconv.ParseInt(str(row[0]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("taskgen: recipe %s: quantity %q is not a whole number", r.slug, str(row[0]))
		}
		k := [2]string{str(row[2]), str(row[1])}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += q
	}
	var out []larderItem
	for _, k := range order {
		out = append(out, larderItem{ingredient: k[0], unit: k[1], qty: (sums[k]*people + r.servings - 1) / r.servings})
	}
	return out, nil
}

// larderNotes is r's shopping list for people as the to-do's notes: a
// line "QUANTITY UNIT INGREDIENT" per item.
func larderNotes(w *World, r *larderRecipe, people int64) (string, error) {
	items, err := larderList(w, r, people)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, it := range items {
		notes = append(notes, fmt.Sprintf("%d %s %s", it.qty, it.unit, it.ingredient))
	}
	return strings.Join(notes, "\n"), nil
}

func (f larderShopping) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["recipes"]
	if !ok || !hasTable(w, "tasks", "todos") {
		return nil, nil
	}
	rs, err := larderSaved(w, login.User)
	if err != nil || len(rs) < 2 {
		return nil, err
	}
	pick := larderQuickest(rs)
	if pick == nil {
		return nil, nil
	}
	if _, err := larderList(w, pick, 1); err != nil {
		return nil, nil // a recipe the list cannot be made of
	}
	project, err := devProject(w)
	if err != nil || project == "" {
		return nil, err
	}
	// For a number of people the recipe is not written for: then the
	// amounts must be scaled.
	people := int64(2 + rng.IntN(7))
	if people == pick.servings {
		people = pick.servings%8 + 2
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Shop for the quickest unreviewed saved recipe, %s, for %d people", pick.title, people),
		Params: map[string]string{"recipe": pick.slug, "people": strconv.FormatInt(people, 10), "project": project},
		Core:   []string{"create tasks todo shop for " + pick.slug, "file " + larderListFile, "read recipes saved"}}}, nil
}

func (f larderShopping) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["recipes"]
	rs, err := larderSaved(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := larderQuickest(rs)
	if pick == nil || pick.slug != s.Params["recipe"] {
		return nil, fmt.Errorf("taskgen: %s: the quickest unreviewed saved recipe is no longer %s", f.Name(), s.Params["recipe"])
	}
	people, err := strconv.ParseInt(s.Params["people"], 10, 64)
	if err != nil || people < 1 {
		return nil, fmt.Errorf("taskgen: %s: people %q", f.Name(), s.Params["people"])
	}
	items, err := larderList(w, pick, people)
	if err != nil {
		return nil, err
	}
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	due := now.AddDate(0, 0, 1).Format("2006-01-02")
	project := s.Params["project"]
	title := "Shop for " + pick.title
	todoQ := fmt.Sprintf(`SELECT count(*) FROM todos t JOIN projects p ON p.id = t.project_id WHERE p.name = %s AND t.status = 'open' AND lower(trim(t.title)) = %s AND t.due_on = %s`,
		sqlText(project), sqlText(strings.ToLower(title)), sqlText(due))
	prior, err := count(w, "tasks", todoQ)
	if err != nil {
		return nil, err
	}
	priorAll, err := count(w, "tasks", `SELECT count(*) FROM todos`)
	if err != nil {
		return nil, err
	}
	// The to-do's notes name every ingredient of the list.
	notesQ := todoQ
	seen := map[string]bool{}
	for _, it := range items {
		if g := strings.ToLower(it.ingredient); !seen[g] {
			seen[g] = true
			notesQ += fmt.Sprintf(` AND instr(lower(t.notes), %s) > 0`, sqlText(g))
		}
	}
	priorNotes, err := count(w, "tasks", notesQ)
	if err != nil {
		return nil, err
	}

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Larder login")
	ref.Login("recipes", login)
	ref.Open("recipes", "/saved", "the saved recipes")
	ref.Read("#results", "")
	ref.Open("recipes", "/my-reviews", "the recipes I reviewed")
	ref.Read("#main", "") // with no review yet, the page has no table
	reviews := len(ref) - 1
	type pyIngredient struct {
		Quantity   int64  `json:"quantity"`
		Unit       string `json:"unit"`
		Ingredient string `json:"ingredient"`
	}
	type pyRecipe struct {
		Title       string         `json:"title"`
		Minutes     int64          `json:"minutes"`
		Servings    int64          `json:"servings"`
		Reviewed    bool           `json:"reviewed"`
		Ingredients []pyIngredient `json:"ingredients"`
	}
	var recipes, unchecked []pyRecipe
	cook := 0
	wantSaved := map[string][]string{}
	var lines []string
	for _, r := range rs {
		ref.Open("recipes", "/recipes/"+r.slug, "its minutes, servings and ingredients")
		ref.Read("#main", "")
		if r.slug == pick.slug {
			cook = len(ref) - 1
		}
		ing, err := w.Catalog(`SELECT i.quantity, i.unit, i.ingredient FROM recipe_ingredients i JOIN recipes r ON r.id = i.recipe_id WHERE r.slug = ? ORDER BY i.pos`, r.slug)
		if err != nil {
			return nil, err
		}
		pr := pyRecipe{Title: r.title, Minutes: r.minutes, Servings: r.servings, Reviewed: r.reviewed, Ingredients: []pyIngredient{}}
		for _, row := range ing {
			q, _ := strconv.ParseInt(str(row[0]), 10, 64)
			pr.Ingredients = append(pr.Ingredients, pyIngredient{q, str(row[1]), str(row[2])})
		}
		recipes = append(recipes, pr)
		pr.Reviewed = false
		unchecked = append(unchecked, pr)
		wantSaved[r.title] = []string{strconv.FormatInt(r.minutes, 10), yesNo(r.reviewed)}
		lines = append(lines, fmt.Sprintf("%s %d min, serves %d, reviewed %s", r.slug, r.minutes, r.servings, yesNo(r.reviewed)))
	}
	// /my-reviews not read, no recipe is taken for reviewed.
	if v, wrong := pyJSON(recipes), pyJSON(unchecked); v != wrong {
		ref.FactAt(reviews, task.Fact{ID: "reviewed", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "show what I saved and reviewed"})
	}
	// Read carelessly, an ingredient the recipe names twice in one unit
	// is taken once, at its first amount.
	var once []pyRecipe
	for _, r := range recipes {
		if r.Title == pick.title {
			seen := map[[2]string]bool{}
			var first []pyIngredient
			for _, i := range r.Ingredients {
				if k := [2]string{i.Ingredient, i.Unit}; !seen[k] {
					seen[k] = true
					first = append(first, i)
				}
			}
			r.Ingredients = first
		}
		once = append(once, r)
	}
	if v, wrong := pyJSON(recipes), pyJSON(once); v != wrong {
		ref.FactAt(cook, task.Fact{ID: "ingredients", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "summed amount"})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions lists && python3 - <<'PY'
import csv, json
recipes = %s
people = %d
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['recipe', 'minutes', 'reviewed'])
    for r in recipes:
        w.writerow([r['title'], r['minutes'], 'yes' if r['reviewed'] else 'no'])
pick = min((r for r in recipes if not r['reviewed']), key=lambda r: r['minutes'])
sums = {}
for i in pick['ingredients']:
    k = (i['ingredient'], i['unit'])
    sums[k] = sums.get(k, 0) + i['quantity']
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['ingredient', 'unit', 'quantity'])
    for (ing, unit), q in sums.items():
        w.writerow([ing, unit, -(-q * people // pick['servings'])])
print('cook:', pick['title'])
print(open(%q).read(), end='')
PY`, pyJSON(recipes), people, larderSavedFile, larderListFile, larderListFile), "pick the quickest unreviewed recipe and scale its ingredients")
	wantList := map[string]int64{}
	for _, it := range items {
		wantList[it.ingredient+"|"+it.unit] = it.qty
	}
	listed, err := larderNotes(w, pick, people)
	if err != nil {
		return nil, err
	}
	// Without the script, the guess is the amounts as the recipe gives
	// them, not scaled.
	asWritten, err := larderNotes(w, pick, pick.servings)
	if err != nil {
		return nil, err
	}
	ref.Fact(task.Fact{ID: "shopping-list", Kind: task.FactOutput, Value: listed, Wrong: asWritten})
	// Choosing carelessly, the quickest saved recipe reviewed or not, or
	// else the next quickest unreviewed one.
	var distractor *larderRecipe
	for i := range rs {
		r := &rs[i]
		if r.slug != pick.slug && r.minutes <= pick.minutes && (distractor == nil || r.minutes < distractor.minutes) {
			distractor = r
		}
	}
	if distractor == nil {
		for i := range rs {
			if r := &rs[i]; r.slug != pick.slug && !r.reviewed && (distractor == nil || r.minutes < distractor.minutes) {
				distractor = r
			}
		}
	}
	ref.MCP("tasks", "list_projects", nil, "the project and today's date")
	todo := len(ref)
	ref.MCP("tasks", "create_todo", map[string]any{"title": title, "project": project, "due_on": due, "notes": listed}, "the shopping to-do with the list")
	if distractor != nil {
		other, err := larderNotes(w, distractor, people)
		if err != nil {
			return nil, err
		}
		f := task.Fact{ID: "recipe", Kind: task.FactChoice, Value: pick.title, Wrong: distractor.title}
		if other != listed {
			f.Forms = []task.Form{{Value: listed, Wrong: other}}
		}
		ref.FactAt(todo, f)
	}

	listPy := fmt.Sprintf(`import json
from decimal import Decimal, InvalidOperation
from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {}
for r in rows:
    k = (r.get("ingredient") or "").strip().lower() + "|" + (r.get("unit") or "").strip().lower()
    try:
        got.setdefault(k, []).append(Decimal((r.get("quantity") or "").strip()))
    except InvalidOperation:
        got.setdefault(k, []).append(None)
bad = sorted(k for k, q in want.items() if got.get(k.lower()) != [Decimal(q)])
extra = sorted(k for k in got if k not in {x.lower() for x in want})
result(not bad and not extra, f"missing or wrong amounts: {bad}; not in the recipe: {extra}")
`, pyJSON(wantList), larderListFile, larderListFile)

	t := &task.Task{
		Version: task.Version, ID: taskID(f.Name(), w.Manifest.Persona, fmt.Sprintf("d%d-p%d", w.Manifest.Day, people), pick.slug),
		Instruction: fmt.Sprintf("Tomorrow I'll cook for %d people, one of the recipes I saved on Larder that I haven't reviewed yet: the quickest of them (fewest minutes). "+
			"First save ~/%s with every recipe I saved there: columns recipe (its title), minutes and reviewed (yes or no: whether I posted a review of it). "+
			"Then make the shopping list for the one I'll cook as ~/%s with columns ingredient, unit and quantity: one row per ingredient and unit, the amounts of the same ingredient in the same unit added up, "+
			"then scaled from the servings the recipe is written for to %d people and rounded up to a whole number. "+
			"Finally add a to-do titled %q to my %q project in my to-do list, due tomorrow (%s), with the shopping list in its notes. Tell me which recipe it is.",
			people, larderSavedFile, larderListFile, people, "Shop for RECIPE TITLE", project, due),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "saved", Title: "Read the saved recipes and my reviews on Larder", Interface: task.GUI},
			{ID: "recipes", Title: "Read each saved recipe's minutes, servings and ingredients", Interface: task.GUI},
			{ID: "pick", Title: "Pick the quickest unreviewed recipe and scale its ingredients with a script; save " + larderSavedFile + " and " + larderListFile, Interface: task.CLI},
			{ID: "todo", Title: "Add the shopping to-do with the list", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Larder's Saved recipes (/saved) and My reviews (/my-reviews) pages show what I saved and reviewed (the account is in ~/%s); each recipe's page has Minutes, Servings and the Ingredients. "+
			"Scaled amount = summed amount x %d / servings, rounded up. The tasks app's create_todo takes a title, the project name, due_on and notes.", LoginsFile, people),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every saved recipe with its minutes and whether I reviewed it", larderSavedFile),
			fmt.Sprintf("~/%s is the shopping list of %s for %d people, each amount summed, scaled and rounded up", larderListFile, pick.title, people),
			fmt.Sprintf("one new open to-do %q in %q, due %s, whose notes name every ingredient; no other to-do", title, project, due),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "todo", Kind: "sql", DB: "tasks", Description: "the shopping to-do for the quickest unreviewed recipe, due tomorrow", Query: todoQ, Expect: rawInt(prior + 1)},
			{ID: "todo-notes", Kind: "sql", DB: "tasks", Description: "its notes name every ingredient", Query: notesQ, Expect: rawInt(priorNotes + 1)},
			{ID: "one-todo", Kind: "sql", DB: "tasks", Description: "no other to-do", Query: `SELECT count(*) FROM todos`, Expect: rawInt(priorAll + 1)},
			{ID: "saved", Kind: "script", Script: "scripts/saved_table.py", Description: "the table of saved recipes"},
			{ID: "list", Kind: "script", Script: "scripts/shopping_list.py", Description: "the scaled shopping list"},
		}},
		Answer:     pick.title,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("saved: %s; the quickest unreviewed is %s (%d min, serves %d), scaled to %d people. The saved recipes, reviews and ingredients are only on Larder (GUI); "+
			"the pick and the amounts come from the script (CLI); the to-do list is only over MCP.", strings.Join(lines, "; "), pick.slug, pick.minutes, pick.servings, people),
	}
	return &Draft{Task: t, Scripts: map[string]string{
		"saved_table.py":   homeCSVCheck(larderSavedFile, "recipe", []string{"minutes", "reviewed"}, wantSaved),
		"shopping_list.py": listPy,
	}}, nil
}
