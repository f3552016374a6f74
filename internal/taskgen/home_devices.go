package taskgen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// deviceSpendNote: the persona keeps a note of what it spent at the
// device maker's store. The orders with their totals and statuses are
// only on Lumen Store's order history (GUI); a script totals the kept
// orders and finds the dearest one (CLI); the note goes to the notes app
// (MCP), headed by the script's answer.
type deviceSpendNote struct{}

func (deviceSpendNote) Name() string     { return "device-spend-note" }
func (deviceSpendNote) Covers() []string { return []string{"devices", "notes"} }

const (
	homeSpendNotebook = "Money"
	homeSpendTitle    = "Lumen Store spending"
	homeSpendFile     = "decisions/device-orders.csv"
)

type homeDeviceOrder struct {
	order, sku, status string
	total, price       int64
}

func homeDeviceOrders(w *World, user string) ([]homeDeviceOrder, error) {
	rows, err := w.Query("devices", `SELECT order_no, sku, qty * price_cents, status, price_cents FROM orders WHERE username = ? ORDER BY order_no`, user)
	if err != nil {
		return nil, err
	}
	var out []homeDeviceOrder
	for _, r := range rows {
		out = append(out, homeDeviceOrder{order: str(r[0]), sku: str(r[1]), total: num(r[2]), status: str(r[3]), price: num(r[4])})
	}
	return out, nil
}

// homeKept is the total of the placed orders and the dearest of them, nil
// when none is placed or two share the highest total.
func homeKept(os []homeDeviceOrder) (int64, *homeDeviceOrder) {
	var sum int64
	var best *homeDeviceOrder
	tie := false
	for i := range os {
		o := &os[i]
		if o.status != "placed" {
			continue
		}
		sum += o.total
		switch {
		case best == nil || o.total > best.total:
			best, tie = o, false
		case o.total == best.total:
			tie = true
		}
	}
	if tie {
		return sum, nil
	}
	return sum, best
}

func (f deviceSpendNote) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["devices"]
	if !ok || !hasTable(w, "notes", "notes") {
		return nil, nil
	}
	os, err := homeDeviceOrders(w, login.User)
	if err != nil || len(os) < 2 {
		return nil, err
	}
	_, best := homeKept(os)
	if best == nil {
		return nil, nil
	}
	// A note of that title already there would make "create it" ambiguous.
	n, err := count(w, "notes", `SELECT count(*) FROM notes WHERE lower(title) = lower(?)`, homeSpendTitle)
	if err != nil || n > 0 {
		return nil, err
	}
	return []Sketch{{Family: f.Name(), Title: "Note the Lumen Store spending, headed by the dearest kept order " + best.order,
		Params: map[string]string{"order": best.order},
		Core:   []string{"create notes note " + homeSpendTitle, "file " + homeSpendFile, "read devices orders"}}}, nil
}

func (f deviceSpendNote) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["devices"]
	os, err := homeDeviceOrders(w, login.User)
	if err != nil {
		return nil, err
	}
	sum, best := homeKept(os)
	if best == nil || best.order != s.Params["order"] {
		return nil, fmt.Errorf("taskgen: %s: the dearest kept order is no longer %s", f.Name(), s.Params["order"])
	}
	notes, err := count(w, "notes", `SELECT count(*) FROM notes`)
	if err != nil {
		return nil, err
	}
	first := "Dearest kept order: " + best.order
	body := fmt.Sprintf("%s\nKept total: %s\n", first, dollars(sum))

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the store's login")
	ref.Login("devices", login)
	ref.Open("devices", "/orders", "every order with its total and status")
	ref.Read("#results", "")
	type pyRow struct {
		Order  string `json:"order_no"`
		Total  string `json:"total"`
		Status string `json:"status"`
	}
	var rows, priced []pyRow
	for _, o := range os {
		rows = append(rows, pyRow{o.order, dollars(o.total), o.status})
		priced = append(priced, pyRow{o.order, dollars(o.price), o.status})
	}
	// Read carelessly, an order's total is its product's price (the
	// quantity missed).
	if v, wrong := pyJSON(rows), pyJSON(priced); v != wrong {
		ref.Fact(task.Fact{ID: "order-totals", Kind: task.FactRead, Value: v, Wrong: wrong, Cue: "shows each order's total and status"})
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
from decimal import Decimal
rows = %s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['order_no', 'total', 'status'])
    for r in rows:
        w.writerow([r['order_no'], r['total'], r['status']])
kept = [r for r in rows if r['status'] == 'placed']
print('kept total:', sum(Decimal(r['total']) for r in kept))
print('dearest kept:', max(kept, key=lambda r: Decimal(r['total']))['order_no'])
PY`, pyJSON(rows), homeSpendFile), "the kept total and the dearest kept order")
	// Without the script, the guess counts every order, returned or not.
	var all int64
	dearest := &os[0]
	for i := range os {
		all += os[i].total
		if os[i].total > dearest.total {
			dearest = &os[i]
		}
	}
	ref.Fact(task.Fact{ID: "kept-spending", Kind: task.FactOutput, Value: body,
		Wrong: fmt.Sprintf("Dearest kept order: %s\nKept total: %s\n", dearest.order, dollars(all)),
		Forms: []task.Form{{Value: best.order + " " + dollars(sum), Wrong: dearest.order + " " + dollars(all)}}})
	// Choosing carelessly, the dearest order returned or not, or else the
	// next dearest kept one.
	var distractor *homeDeviceOrder
	cue := ""
	if dearest.order != best.order {
		distractor, cue = dearest, "only status placed counts as kept"
	} else {
		for i := range os {
			if o := &os[i]; o.status == "placed" && o.order != best.order && (distractor == nil || o.total > distractor.total) {
				distractor = o
			}
		}
	}
	note := len(ref)
	ref.MCP("notes", "create_note", map[string]any{"notebook": homeSpendNotebook, "title": homeSpendTitle, "body": body}, "the note, headed by the script's answer")
	if distractor != nil {
		ref.FactAt(note, task.Fact{ID: "dearest-kept", Kind: task.FactChoice, Value: first + "\n", Wrong: "Dearest kept order: " + distractor.order + "\n", Cue: cue,
			Forms: []task.Form{{Value: best.order + " " + dollars(sum), Wrong: distractor.order + " " + dollars(sum)}}})
	}

	want := map[string][]string{}
	var lines []string
	for _, o := range os {
		want[o.order] = []string{dollars(o.total), o.status}
		lines = append(lines, fmt.Sprintf("%s %s %s", o.order, dollars(o.total), o.status))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID(f.Name(), w.Manifest.Persona, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I want a note of what I spent at Lumen Store. List every order I placed there (whatever its status) in ~/%s with columns order_no, total (the order's total in dollars, e.g. 12.50) and status. "+
			"Then, in my notes app, create a note titled %q in the notebook %q. Its first line must be \"Dearest kept order: ORDER\" with the order number of the most expensive order that is still placed (not returned), "+
			"and it must also give the total of all still-placed orders as a plain number with two decimals (e.g. 1234.50). Tell me that order number and the total.", homeSpendFile, homeSpendTitle, homeSpendNotebook),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "orders", Title: "Read the orders, totals and statuses on Lumen Store's order history", Interface: task.GUI},
			{ID: "table", Title: "Save " + homeSpendFile + " and compute the kept total and the dearest kept order with a script", Interface: task.CLI},
			{ID: "note", Title: "Create the spending note in the notes app", Interface: task.MCP},
		},
		Hint: "Lumen Store's Orders page (/orders, after logging in with the account in ~/" + LoginsFile + ") shows each order's total and status; " +
			"only status placed counts as kept. The notes app's create_note takes notebook, title and body.",
		Rubric: []string{
			fmt.Sprintf("~/%s lists every Lumen Store order with its total and status", homeSpendFile),
			fmt.Sprintf("one new note %q in %q whose first line names %s and that gives the kept total %s", homeSpendTitle, homeSpendNotebook, best.order, dollars(sum)),
			"no other note was created",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "note", Kind: "script", Script: "scripts/spend_note.py", Description: "the note names the dearest kept order and the kept total"},
			{ID: "one-note", Kind: "sql", DB: "notes", Description: "no other note", Query: `SELECT count(*) FROM notes`, Expect: rawInt(notes + 1)},
			{ID: "table", Kind: "script", Script: "scripts/orders_table.py", Description: "the table of orders"},
		}},
		Answer:     best.order + " " + dollars(sum),
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("orders: %s; kept total %s, the dearest kept %s (%s). The orders and their statuses are only on the store's order history (GUI); "+
			"the totals and the choice come from the script (CLI); the note is only in the notes app (MCP).", strings.Join(lines, "; "), dollars(sum), best.order, dollars(best.total)),
	}
	return &Draft{Task: t, Scripts: map[string]string{
		"spend_note.py":   homeNoteCheck(homeSpendNotebook, homeSpendTitle, first, []string{dollars(sum)}, nil),
		"orders_table.py": homeCSVCheck(homeSpendFile, "order_no", []string{"total", "status"}, want),
	}}, nil
}
