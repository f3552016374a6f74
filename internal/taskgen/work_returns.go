package taskgen

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/task"
)

// returnWindow: the persona sends back the dearest shop purchase still in
// the return window that support has not heard of. The order lines are on
// the shop's order history (GUI; the home's exports and invoices are older
// and partial), the tickets only in the support app (MCP); a script totals
// the lines and marks the ticketed ones (CLI); the return is a ticket
// (MCP).
type returnWindow struct{}

func (returnWindow) Name() string     { return "return-window" }
func (returnWindow) Covers() []string { return []string{"shop", "support"} }

type orderLine struct {
	order, sku, placed string
	qty, cents         int64
	ticketed           bool
}

func (l orderLine) total() int64 { return l.qty * l.cents }

// returnable are the persona's shop order lines placed within 30 days of
// now, with whether a support ticket names them.
func returnable(w *World, user string) ([]orderLine, error) {
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	since := now.AddDate(0, 0, -30).Format(time.DateTime)
	rows, err := w.Query("shop", `SELECT o.order_no, i.sku, o.placed_at, i.qty, i.price_cents FROM orders o JOIN order_items i ON i.order_no = o.order_no
		WHERE o.username = ? AND o.placed_at >= ? ORDER BY o.order_no, i.sku`, user, since)
	if err != nil {
		return nil, err
	}
	tickets, err := w.Query("support", `SELECT order_no, sku FROM tickets`)
	if err != nil {
		return nil, err
	}
	had := map[string]bool{}
	for _, t := range tickets {
		had[str(t[0])+"#"+str(t[1])] = true
	}
	var out []orderLine
	for _, r := range rows {
		out = append(out, orderLine{order: str(r[0]), sku: str(r[1]), placed: str(r[2]), qty: num(r[3]), cents: num(r[4]), ticketed: had[str(r[0])+"#"+str(r[1])]})
	}
	return out, nil
}

// toReturn is the unticketed line of the highest total, or nil on a tie.
func toReturn(ls []orderLine) *orderLine {
	var best *orderLine
	tie := false
	for i := range ls {
		l := &ls[i]
		if l.ticketed {
			continue
		}
		switch {
		case best == nil || l.total() > best.total():
			best, tie = l, false
		case l.total() == best.total():
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

// homeOrders are the order numbers the home's exports and invoices name.
func homeOrders(w *World) (map[string]bool, error) {
	seen := map[string]bool{}
	files, err := w.HomeFiles("")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		switch {
		case strings.HasPrefix(f, "invoices/") && strings.HasSuffix(f, ".pdf"):
			seen[strings.ToUpper(strings.TrimSuffix(strings.TrimPrefix(f, "invoices/"), ".pdf"))] = true
		case strings.HasSuffix(f, ".csv"):
			b, err := w.Home(f)
			if err != nil {
				return nil, err
			}
			recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil || len(recs) == 0 {
				continue
			}
			for i, h := range recs[0] {
				if h != "order_no" {
					continue
				}
				for _, r := range recs[1:] {
					if i < len(r) {
						seen[r[i]] = true
					}
				}
			}
		}
	}
	return seen, nil
}

func (f returnWindow) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["shop"]
	if !ok || !hasTable(w, "support", "tickets") {
		return nil, nil
	}
	ls, err := returnable(w, login.User)
	if err != nil || len(ls) < 2 {
		return nil, err
	}
	pick := toReturn(ls)
	if pick == nil {
		return nil, nil
	}
	// No order on the window's first day: "since that day" and the
	// support's 30 days to the hour would disagree on it.
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	first := now.AddDate(0, 0, -30).Format(time.DateOnly)
	edge, err := count(w, "shop", `SELECT count(*) FROM orders WHERE username = ? AND substr(placed_at, 1, 10) = ?`, login.User, first)
	if err != nil || edge > 0 {
		return nil, err
	}
	// Only the website has every line: some order of the window is in
	// neither an export nor an invoice of the home.
	known, err := homeOrders(w)
	if err != nil {
		return nil, err
	}
	webOnly := false
	for _, l := range ls {
		webOnly = webOnly || !known[l.order]
	}
	if !webOnly {
		return nil, nil
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Return the dearest unticketed shop line of the last 30 days (%s %s)", pick.order, pick.sku),
		Params: map[string]string{"order": pick.order, "sku": pick.sku},
		Core:   []string{"open support return ticket " + pick.order + " " + pick.sku, "file decisions/returns.csv", "read shop orders"}}}, nil
}

func (f returnWindow) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["shop"]
	ls, err := returnable(w, login.User)
	if err != nil {
		return nil, err
	}
	pick := toReturn(ls)
	if pick == nil || pick.order != s.Params["order"] || pick.sku != s.Params["sku"] {
		return nil, fmt.Errorf("taskgen: %s: the line to return is no longer %s %s", f.Name(), s.Params["order"], s.Params["sku"])
	}
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	priorAll, err := count(w, "support", `SELECT count(*) FROM tickets`)
	if err != nil {
		return nil, err
	}
	ticketQ := fmt.Sprintf(`SELECT count(*) FROM tickets WHERE order_no = %s AND sku = %s AND kind = 'return' AND status = 'open'`, sqlText(pick.order), sqlText(pick.sku))
	prior, err := count(w, "support", ticketQ)
	if err != nil {
		return nil, err
	}
	const out = "decisions/returns.csv"

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the shop login")
	ref.Login("shop", login)
	ref.Open("shop", "/orders", "every order with its lines")
	ref.Read("#orders", "")
	// What the order history says; read carelessly, the lines are the
	// home's older exports and invoices (the orders they name).
	type pyRow struct {
		Order  string `json:"order_no"`
		SKU    string `json:"sku"`
		Placed string `json:"placed"`
		Qty    int64  `json:"qty"`
		Price  string `json:"price"`
	}
	known, err := homeOrders(w)
	if err != nil {
		return nil, err
	}
	var rows, exported []pyRow
	for _, l := range ls {
		r := pyRow{l.order, l.sku, l.placed[:10], l.qty, dollars(l.cents)}
		rows = append(rows, r)
		if known[l.order] {
			exported = append(exported, r)
		}
	}
	linesPy := "rows = " + pyJSON(rows)
	if f, ok := factOf("order-lines", task.FactRead, "the exports in ~/exports are older", task.Form{Value: linesPy, Wrong: "rows = " + pyJSON(exported)}); ok {
		ref.Fact(f)
	}
	ref.MCP("support", "list_tickets", map[string]any{"status": "all"}, "which lines support has heard of")
	// What support says of the window's lines; read carelessly, only the
	// return tickets count (not a ticket "of any kind").
	ts, err := w.Query("support", `SELECT order_no, sku, kind FROM tickets ORDER BY id`)
	if err != nil {
		return nil, err
	}
	tickets, returns := [][2]string{}, [][2]string{}
	for _, t := range ts {
		if !slices.ContainsFunc(ls, func(l orderLine) bool { return l.order == str(t[0]) && l.sku == str(t[1]) }) {
			continue
		}
		tickets = append(tickets, [2]string{str(t[0]), str(t[1])})
		if str(t[2]) == "return" {
			returns = append(returns, [2]string{str(t[0]), str(t[1])})
		}
	}
	ticketsPy := "tickets = " + pyJSON(tickets)
	if f, ok := factOf("tickets", task.FactRead, "list_tickets (status all) shows the tickets", task.Form{Value: ticketsPy, Wrong: "tickets = " + pyJSON(returns)}); ok {
		ref.Fact(f)
	}
	ref.Shell(fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv, json
from decimal import Decimal
%s
%s
for r in rows:
    r['total'] = Decimal(r['price']) * r['qty']
    r['ticketed'] = [r['order_no'], r['sku']] in tickets
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['order_no', 'sku', 'line_total', 'ticketed'])
    for r in rows:
        w.writerow([r['order_no'], r['sku'], '%%.2f' %% r['total'], 'yes' if r['ticketed'] else 'no'])
free = [r for r in rows if not r['ticketed']]
best = max(free, key=lambda r: r['total'])
print('return:', best['order_no'], best['sku'], best['total'])
PY`, linesPy, ticketsPy, out), "line totals; the dearest without a ticket is the one to return")
	// Without the script, the guess is the unticketed line of the
	// highest unit price; choosing carelessly, the dearest other line,
	// ticketed or not.
	subject := func(l orderLine) string { return "Return of " + l.sku + " from order " + l.order }
	instead := func(id, kind string, l orderLine) (task.Fact, bool) {
		return factOf(id, kind, "", task.Form{Value: subject(*pick), Wrong: subject(l)},
			task.Form{Value: pick.order, Wrong: l.order}, task.Form{Value: pick.sku, Wrong: l.sku})
	}
	var free, others []orderLine
	for _, l := range ls {
		if !l.ticketed {
			free = append(free, l)
		}
		if l.order != pick.order || l.sku != pick.sku {
			others = append(others, l)
		}
	}
	if f, ok := instead("return-line", task.FactOutput, slices.MaxFunc(free, func(a, b orderLine) int { return cmp.Compare(a.cents, b.cents) })); ok {
		ref.Fact(f)
	}
	open := len(ref)
	ref.MCP("support", "open_ticket", map[string]any{"order_no": pick.order, "sku": pick.sku, "kind": "return",
		"subject": subject(*pick), "body": "I would like to return this item; it is unused. Please send me a return label."}, "open the return")
	if f, ok := instead("line", task.FactChoice, slices.MaxFunc(others, func(a, b orderLine) int { return cmp.Compare(a.total(), b.total()) })); ok {
		ref.FactAt(open, f)
	}

	type wantLine struct {
		Total    string `json:"total"`
		Ticketed string `json:"ticketed"`
	}
	want := map[string]wantLine{}
	for _, l := range ls {
		want[l.order+" "+l.sku] = wantLine{dollars(l.total()), yesNo(l.ticketed)}
	}
	checkPy := fmt.Sprintf(`import json
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
    key = (r.get("order_no") or "").strip().upper() + " " + (r.get("sku") or "").strip().upper()
    try:
        total = Decimal((r.get("line_total") or "").strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        total = None
    got.setdefault(key, []).append((total, (r.get("ticketed") or "").strip().lower()))
bad = sorted(k for k, v in want.items() if got.get(k) != [(Decimal(v["total"]), v["ticketed"])])
extra = sorted(k for k in got if k not in want)
result(not bad and not extra, f"missing or wrong lines: {bad}; lines outside the window: {extra}")
`, pyJSON(want), out, out)

	var lines []string
	for _, l := range ls {
		lines = append(lines, fmt.Sprintf("%s %s %s%s", l.order, l.sku, dollars(l.total()), map[bool]string{true: " (ticketed)"}[l.ticketed]))
	}
	t := &task.Task{
		Version: task.Version, ID: taskID("return-window", w.Manifest.Persona, pick.order, pick.sku, fmt.Sprintf("d%d", w.Manifest.Day)),
		Instruction: fmt.Sprintf("I want to send one thing back to the shop. Look at every item line of the shop orders I placed in the last 30 days (since %s) and work out each line's total (quantity × unit price). "+
			"Save them as ~/%s with columns order_no, sku, line_total and ticketed (yes when a support ticket of any kind already names that order and SKU, else no). "+
			"Then open a return ticket with the shop's support for the line with the highest total that has no ticket yet. Tell me the order number and SKU.",
			now.AddDate(0, 0, -30).Format(time.DateOnly), out),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "orders", Title: "Read the order lines on the shop's order history", Interface: task.GUI},
			{ID: "tickets", Title: "List the support tickets", Interface: task.MCP},
			{ID: "table", Title: "Total the lines with a script and save " + out, Interface: task.CLI},
			{ID: "return", Title: "Open a return ticket for the dearest unticketed line", Interface: task.MCP},
		},
		Hint: "The shop's Orders page (/orders) shows every order with its items, quantities and unit prices; the exports in ~/exports are older. " +
			"The support app's list_tickets (status all) shows the tickets with their order and SKU; open_ticket takes order_no, sku, kind return, subject and body.",
		Rubric: []string{
			fmt.Sprintf("~/%s has every line of the orders of the last 30 days with its total and ticket status", out),
			fmt.Sprintf("one new open return ticket for %s in order %s", pick.sku, pick.order),
			"no other ticket was opened",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "returned", Kind: "sql", DB: "support", Description: "a return ticket for the chosen line", Query: ticketQ, Expect: rawInt(prior + 1)},
			{ID: "one-ticket", Kind: "sql", DB: "support", Description: "no other ticket", Query: `SELECT count(*) FROM tickets`, Expect: rawInt(priorAll + 1)},
			{ID: "table", Kind: "script", Script: "scripts/returns_table.py", Description: "the table of line totals"},
		}},
		Answer:     pick.order + " " + pick.sku,
		Provenance: provenance(w),
		Rationale: fmt.Sprintf("lines of the window: %s; the dearest unticketed is %s %s (%s). Some orders of the window are in no export or invoice of the home, so the order history (GUI) is needed; "+
			"the tickets are only in support (MCP); the totals and the choice come from the script (CLI).", strings.Join(lines, "; "), pick.order, pick.sku, dollars(pick.total())),
	}
	return &Draft{Task: t, Scripts: map[string]string{"returns_table.py": checkPy}}, nil
}
