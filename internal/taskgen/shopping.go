package taskgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

func shoppingFamilies() []Family {
	return []Family{wishlistBalance{}}
}

// wishlistBalance: the persona buys the dearest device of its wish list
// that a share of its checking balance covers. The balance is in the
// payments app (MCP), the wish list and its prices on the device maker's
// store (GUI), the decision is a script's table of which devices fit
// (CLI), and the order goes back to the store (GUI).
type wishlistBalance struct{}

func (wishlistBalance) Name() string     { return "wishlist-balance" }
func (wishlistBalance) Covers() []string { return []string{"devices", "payments"} }

// shares are the parts of the balance a task may allow.
var shares = []struct {
	name string
	div  int64
}{{"a quarter", 4}, {"a third", 3}, {"half", 2}, {"a fifth", 5}, {"a tenth", 10}, {"all", 1}}

type wishItem struct {
	sku, title string
	cents      int64
}

func (f wishlistBalance) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["devices"]
	if !ok {
		return nil, nil
	}
	items, err := wishlist(w, login.User)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	accts, err := w.Query("payments", `SELECT ext_id, name, balance_cents FROM accounts WHERE kind IN ('checking', 'savings') AND balance_cents > 0 ORDER BY ext_id`)
	if err != nil || len(accts) == 0 {
		return nil, err
	}
	var out []Sketch
	for _, a := range accts {
		// A share under which something fits, and preferably not all:
		// then the table decides.
		best := -1
		for _, i := range rng.Perm(len(shares)) {
			pick, fits := choose(items, num(a[2])/shares[i].div)
			if pick == nil {
				continue
			}
			if best < 0 || fits < len(items) {
				best = i
			}
			if fits < len(items) {
				break
			}
		}
		if best >= 0 {
			sh := shares[best]
			pick, _ := choose(items, num(a[2])/sh.div)
			out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Buy the dearest wish-list device within %s of %s", sh.name, str(a[1])),
				Params: map[string]string{"account": str(a[0]), "account_name": str(a[1]), "share": sh.name, "div": strconv.FormatInt(sh.div, 10)},
				Core:   []string{"order devices " + pick.sku, "file decisions/wishlist.csv", "read payments balance " + str(a[0])}})
		}
	}
	return out, nil
}

func wishlist(w *World, user string) ([]wishItem, error) {
	rows, err := w.Query("devices", `SELECT sku FROM wishlist WHERE username = ? ORDER BY sku`, user)
	if err != nil {
		return nil, err
	}
	var out []wishItem
	for _, r := range rows {
		p, err := w.Catalog(`SELECT title, price_cents FROM products WHERE site = 'devices' AND sku = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(p) == 1 {
			out = append(out, wishItem{sku: str(r[0]), title: str(p[0][0]), cents: num(p[0][1])})
		}
	}
	return out, nil
}

// choose is the dearest item at or under limit, and how many fit.
func choose(items []wishItem, limit int64) (*wishItem, int) {
	var pick *wishItem
	n := 0
	for i := range items {
		if items[i].cents <= limit {
			n++
			if pick == nil || items[i].cents > pick.cents || (items[i].cents == pick.cents && items[i].sku < pick.sku) {
				pick = &items[i]
			}
		}
	}
	return pick, n
}

func dollars(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func (f wishlistBalance) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["devices"]
	items, err := wishlist(w, login.User)
	if err != nil {
		return nil, err
	}
	accts, err := w.Query("payments", `SELECT balance_cents FROM accounts WHERE ext_id = ?`, s.Params["account"])
	if err != nil || len(accts) != 1 {
		return nil, fmt.Errorf("taskgen: %s: no account %q in the world (%v)", f.Name(), s.Params["account"], err)
	}
	div, _ := strconv.ParseInt(s.Params["div"], 10, 64)
	balance := num(accts[0][0])
	limit := balance / div
	pick, _ := choose(items, limit)
	if pick == nil {
		return nil, fmt.Errorf("taskgen: %s: nothing on the wish list fits %s of the balance", f.Name(), s.Params["share"])
	}
	prior, err := w.Query("devices", `SELECT count(*) FROM orders WHERE username = ?`, login.User)
	if err != nil {
		return nil, err
	}
	priorPick, err := w.Query("devices", `SELECT count(*) FROM orders WHERE username = ? AND sku = ? AND status = 'placed'`, login.User, pick.sku)
	if err != nil {
		return nil, err
	}
	const out = "decisions/wishlist.csv"
	id := fmt.Sprintf("wishlist-balance-%s-%s-d%d", strings.ToLower(pick.sku), s.Params["account"], w.Manifest.Day)

	var ref Steps
	ref.MCP("payments", "get_balance", map[string]any{"account": s.Params["account"]}, "the checking balance")
	// Read carelessly, the balance is its cents taken for dollars.
	balancePy := "balance = " + dollars(balance)
	if f, ok := factOf("balance", task.FactRead, "get_balance in the payments app", task.Form{Value: balancePy, Wrong: fmt.Sprintf("balance = %d", balance)}); ok {
		ref.Fact(f)
	}
	ref.Shell("cat "+LoginsFile, "the store's login")
	ref.Login("devices", login)
	ref.Open("devices", "/wishlist", "the wish list with its prices")
	ref.Read("#results", "")
	// Read carelessly, the prices lose their cents (when they have any).
	var rowsPy, roundPy []string
	cents := false
	for _, it := range items {
		rowsPy = append(rowsPy, fmt.Sprintf("(%q, %s)", it.sku, dollars(it.cents)))
		roundPy = append(roundPy, fmt.Sprintf("(%q, %d)", it.sku, it.cents/100))
		cents = cents || it.cents%100 != 0
	}
	itemsPy := "items = [" + strings.Join(rowsPy, ", ") + "]"
	if f, ok := factOf("prices", task.FactRead, "shows every price to the cent", task.Form{Value: itemsPy, Wrong: "items = [" + strings.Join(roundPy, ", ") + "]"}); ok && cents {
		ref.Fact(f)
	}
	script := fmt.Sprintf(`mkdir -p decisions && python3 - <<'PY'
import csv
%s
limit = balance / %d
%s
with open(%q, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['sku', 'price', 'fits'])
    for sku, price in sorted(items, key=lambda r: -r[1]):
        w.writerow([sku, '%%.2f' %% price, 'yes' if price <= limit + 1e-9 else 'no'])
print(open(%q).read(), end='')
PY`, balancePy, div, itemsPy, out, out)
	ref.Shell(script, "the table that decides: which devices fit")
	// Without the table, the guess is the dearest device of the list;
	// choosing carelessly, the runner-up: the next dearest that fits, or
	// the nearest miss when nothing else fits.
	instead := func(id, kind string, it wishItem) (task.Fact, bool) {
		return factOf(id, kind, "", task.Form{Value: "site:devices/products/" + pick.sku, Wrong: "site:devices/products/" + it.sku}, task.Form{Value: pick.sku, Wrong: it.sku})
	}
	byPrice := slices.Clone(items)
	slices.SortStableFunc(byPrice, func(a, b wishItem) int { return cmp.Or(cmp.Compare(b.cents, a.cents), strings.Compare(a.sku, b.sku)) })
	if f, ok := instead("dearest-fit", task.FactOutput, byPrice[0]); ok {
		ref.Fact(f)
	}
	at := slices.IndexFunc(byPrice, func(it wishItem) bool { return it.sku == pick.sku })
	var runnerUp *wishItem
	if at+1 < len(byPrice) {
		runnerUp = &byPrice[at+1]
	} else if at > 0 {
		runnerUp = &byPrice[at-1]
	}
	buy := len(ref)
	ref.KitAction("devices", "/products", pick.sku, "buy", map[string]string{"qty": "1"}, "order the dearest that fits")
	if runnerUp != nil {
		if f, ok := instead("device", task.FactChoice, *runnerUp); ok {
			ref.FactAt(buy, f)
		}
	}

	expect := map[string]string{}
	for _, it := range items {
		fits := "no"
		if it.cents <= limit {
			fits = "yes"
		}
		expect[it.sku] = fits
	}
	want, _ := json.Marshal(expect)
	checkPy := fmt.Sprintf(`from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
got = {r.get("sku", ""): (r.get("fits") or "").strip().lower() for r in rows}
bad = sorted(s for s in want if got.get(s) != want[s])
extra = sorted(s for s in got if s not in want)
result(not bad and not extra, f"wrong or missing fits: {bad}; not on the wish list: {extra}")
`, want, out, out)

	t := &task.Task{
		Version: task.Version, ID: id,
		Instruction: fmt.Sprintf("I want to buy one device from my Lumen Store wish list, but only one that costs at most %s of what is in my %s account right now. "+
			"Work out which of my wish-list devices fit, keep the table as ~/%s (columns sku, price, fits with yes or no), and then buy the most expensive one that fits, one unit. "+
			"Tell me which one you bought.", s.Params["share"], s.Params["account_name"], out),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "balance", Title: "Read the " + s.Params["account_name"] + " balance in the payments app", Interface: task.MCP},
			{ID: "wishlist", Title: "Read the wish list and its prices on Lumen Store", Interface: task.GUI},
			{ID: "table", Title: "Compute which devices fit with a script and save " + out, Interface: task.CLI},
			{ID: "order", Title: "Buy the most expensive device that fits", Interface: task.GUI},
		},
		Hint: fmt.Sprintf("get_balance in the payments app takes the account id %s; the wish list at Lumen Store's /wishlist shows every price to the cent; a device fits when its price is at most the balance divided by %d.", s.Params["account"], div),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every wish-list device with the right yes/no", out),
			"exactly one new Lumen Store order, of the dearest device that fits, quantity 1",
			"no other order was placed",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "ordered", Kind: "sql", DB: "devices", Description: "the dearest fitting device is ordered once more",
				Query:  fmt.Sprintf(`SELECT count(*) FROM orders WHERE username = '%s' AND sku = '%s' AND status = 'placed' AND qty = 1`, login.User, pick.sku),
				Expect: json.RawMessage(strconv.FormatInt(num(priorPick[0][0])+1, 10))},
			{ID: "one-order", Kind: "sql", DB: "devices", Description: "no other order",
				Query: fmt.Sprintf(`SELECT count(*) FROM orders WHERE username = '%s'`, login.User), Expect: json.RawMessage(strconv.FormatInt(num(prior[0][0])+1, 10))},
			{ID: "table", Kind: "script", Script: "scripts/fits_table.py", Description: "the table of which devices fit"},
		}},
		Answer:     pick.sku,
		Provenance: task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog},
		Rationale: fmt.Sprintf("balance %s, limit %s; wish list %v; the dearest that fits is %s (%s)", dollars(balance), dollars(limit),
			slices.Collect(func(yield func(string) bool) {
				for _, it := range items {
					if !yield(it.sku + "=" + dollars(it.cents)) {
						return
					}
				}
			}), pick.sku, dollars(pick.cents)),
	}
	return &Draft{Task: t, Scripts: map[string]string{"fits_table.py": checkPy}}, nil
}
