package synth

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// TaskInput is what authoring reads from the world it authors on.
type TaskInput struct {
	Persona    Persona
	Day        int
	Snapshot   world.ID
	Catalog    world.ID
	Rows       []SpecRow // the spec sheet's models
	Candidates [2]string // approved look-alike first
	ShopUser   string
	ShopPass   string
}

// CaseStudyTask authors the case-study task from its world: the solver's
// instruction, interfaces, sub-tasks, hint, rubric, reference completion,
// verifier (declarative criteria and scripts) and the internal rationale.
// It returns the task and the verifier scripts by file name.
func CaseStudyTask(in TaskInput) (*task.Task, map[string]string, error) {
	stocked := Stocked(in.Rows, in.Candidates)
	short := Shortlist(in.Rows, stocked)
	if len(short) < 2 || !(short[0].SKU == in.Candidates[0] || short[0].SKU == in.Candidates[1]) {
		return nil, nil, fmt.Errorf("author: the world does not put the two look-alikes at the top of the shortlist (got %v)", short)
	}
	// Only the photo may decide: if the approved look-alike came first in
	// the shortlist's own order, taking the first tied model would pass
	// without seeing any picture.
	if short[0].SKU == in.Candidates[0] {
		return nil, nil, fmt.Errorf("author: the approved look-alike %s ranks first by the shortlist's tie-break, so a photo-blind pick of the first tied model succeeds: the task would not be image-decisive", in.Candidates[0])
	}
	priya := in.Persona.Contact("install assistant")
	approved := in.Candidates[0]
	instruction := fmt.Sprintf(
		"Maya approved the surge protection for the venue rack in our direct messages. "+
			"Write a ranked shortlist of the rack surge protectors that meet the requirements in ~/%s and that we do not already stock "+
			"(see ~/%s), using the models in the spec sheet ~/%s, to ~/%s with the columns rank,sku,joules,outlets,price_usd "+
			"(rank by joules, highest first, then price, lowest first, then SKU). "+
			"Then put the model and quantity Maya approved in the shop cart, write a short restock note to ~/%s naming the SKU and quantity, "+
			"and message %s the SKU you ordered.",
		PathBOM, PathInventory, PathSpecSheet, PathShortlist, PathRestock, priya.Name)
	var shortRows [][]any
	for i, r := range short {
		shortRows = append(shortRows, []any{i + 1, r.SKU, r.Joules, r.Outlets, fmt.Sprintf("%d.%02d", r.PriceCents/100, r.PriceCents%100)})
	}
	expectShort, _ := json.Marshal(shortRows)
	note := fmt.Sprintf("# Restock: venue rack\n\nOrdered %d x %s (rack surge protector) for the venue rack.\n", ApprovedQty, approved)
	t := &task.Task{
		Version:     1,
		ID:          "venue-rack-surge-protector",
		Instruction: instruction,
		Interfaces:  []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "read-approval", Title: "Find Maya's approval and what exactly she approved", Interface: "mcp"},
			{ID: "shortlist", Title: "Join the BOM, inventory and spec sheet into the ranked shortlist with a script", Interface: "cli"},
			{ID: "pick-and-cart", Title: "Tell the tied top models apart on the shop and put the approved one in the cart", Interface: "gui", Decisive: task.DecisiveImage},
			{ID: "restock-note", Title: "Write the restock note", Interface: "cli"},
			{ID: "tell-assistant", Title: "Message the install assistant the ordered SKU", Interface: "mcp"},
		},
		Hint: "The two best models tie on every listed spec and price; Maya's approval describes the unit's look, so compare the product photos on the shop.",
		Rubric: []string{
			fmt.Sprintf("The cart holds exactly %d of the model Maya approved (white body, digital display) and nothing else.", ApprovedQty),
			"The shortlist lists exactly the eligible, unstocked rack models in the asked order and columns.",
			"The restock note names the ordered SKU and quantity.",
			fmt.Sprintf("%s received a direct message with the ordered SKU.", priya.Name),
		},
		Reference: []task.Step{
			// Not read, the approval's quantity is taken as one unit.
			{Interface: "mcp", Tool: "mcp.messages__read_thread", Args: map[string]any{"thread": ThreadMaya}, Note: "the approval: quantity and look",
				Facts: []task.Fact{{ID: "quantity", Kind: task.FactRead, Value: fmt.Sprintf("Ordered %d x", ApprovedQty), Wrong: "Ordered 1 x"}}},
			// Without the shortlist, the guess is its tie-break's first model.
			{Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": policy.ShortlistCommand(PathBOM, PathInventory, PathSpecSheet, PathShortlist)}, Note: "join the three sources",
				Facts: []task.Fact{{ID: "top-models", Kind: task.FactOutput, Value: approved, Wrong: in.Candidates[1]}}},
			{Interface: "gui", Tool: "browser.open", Args: map[string]any{"url": "/login"}},
			{Interface: "gui", Tool: "browser.fill", Args: map[string]any{"selector": "#login-username", "value": in.ShopUser}},
			{Interface: "gui", Tool: "browser.fill", Args: map[string]any{"selector": "#login-password", "value": in.ShopPass}},
			{Interface: "gui", Tool: "browser.click", Args: map[string]any{"selector": "#login-submit"}},
			{Interface: "gui", Tool: "browser.open", Args: map[string]any{"url": "/p/" + in.Candidates[1]}},
			{Interface: "gui", Tool: "vision.describe", Args: map[string]any{"selector": "#product-image"}, Note: "black body, no display"},
			// The decision the photo makes: careless, the look-alike.
			{Interface: "gui", Tool: "browser.open", Args: map[string]any{"url": "/p/" + approved},
				Facts: []task.Fact{{ID: "approved-model", Kind: task.FactChoice, Value: approved, Wrong: in.Candidates[1], Cue: "compare the product photos"}}},
			{Interface: "gui", Tool: "vision.describe", Args: map[string]any{"selector": "#product-image"}, Note: "white body, display: the approved one"},
			{Interface: "gui", Tool: "browser.fill", Args: map[string]any{"selector": "#qty", "value": fmt.Sprint(ApprovedQty)}},
			{Interface: "gui", Tool: "browser.click", Args: map[string]any{"selector": "#add-to-cart"}},
			{Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": fmt.Sprintf("mkdir -p projects/venue-rack && cat > %s <<'EOF'\n%sEOF", PathRestock, note)}},
			{Interface: "mcp", Tool: "mcp.messages__send_message", Args: map[string]any{"to": priya.Name, "body": fmt.Sprintf("Ordered %d x %s for the venue rack, please prep the mounting.", ApprovedQty, approved)}},
		},
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "cart", Kind: "sql", Description: "the cart holds exactly the approved model and quantity", DB: "shop",
				Query:  fmt.Sprintf("SELECT sku, qty FROM cart_items WHERE username = %s ORDER BY sku", sqlString(in.ShopUser)),
				Expect: json.RawMessage(fmt.Sprintf(`[[%q, %d]]`, approved, ApprovedQty))},
			{ID: "cart-script", Kind: "script", Description: "the cart, checked by script", Script: "scripts/check_cart.py"},
			{ID: "shortlist-header", Kind: "csv", Description: "the shortlist's columns and first row", Path: PathShortlist,
				Header: []string{"rank", "sku", "joules", "outlets", "price_usd"}, Row: 0, Equals: map[string]string{"rank": "1", "sku": short[0].SKU}, MinRows: len(short)},
			{ID: "shortlist-script", Kind: "script", Description: "every shortlist row, in order", Script: "scripts/check_shortlist.py"},
			{ID: "restock-note", Kind: "file", Description: "the restock note names SKU and quantity", Path: PathRestock,
				Contains: []string{approved}, Regex: fmt.Sprintf(`\b%d\b`, ApprovedQty)},
			{ID: "dm", Kind: "sql", Description: "the install assistant got a DM with the SKU", DB: "messages",
				Query: fmt.Sprintf("SELECT COUNT(*) >= 1 FROM messages m JOIN participants p ON p.thread_id = m.thread_id AND p.name = %s JOIN threads t ON t.id = m.thread_id AND t.kind = 'dm' WHERE m.sender = %s AND instr(m.body, %s) > 0",
					sqlString(priya.Name), sqlString(in.Persona.Name), sqlString(approved)),
				Expect: json.RawMessage(`1`)},
			{ID: "dm-script", Kind: "script", Description: "a new DM to the install assistant, checked against W0", Script: "scripts/check_dm.py"},
		}},
		Answer:     fmt.Sprintf("Ordered %d x %s", ApprovedQty, approved),
		Provenance: task.Provenance{Persona: in.Persona.ID, Day: in.Day, Snapshot: in.Snapshot, Catalog: in.Catalog},
		Rationale: fmt.Sprintf("Image-decisive: %s and %s tie on every listed spec and price; only the photo shows the white body and display panel the approval asks for, and the approved one is not first in the ranking's tie-break. "+
			"Stocked eligible models (%s) must be left out of the shortlist. The quantity is only in the approval.", in.Candidates[0], in.Candidates[1], skus(stocked)),
	}
	scripts := map[string]string{
		"check_cart.py": fmt.Sprintf(`from _verify_sdk import db, result
rows = [tuple(r) for r in db("shop").execute("SELECT sku, qty FROM cart_items WHERE username = ? ORDER BY sku", (%q,))]
result(rows == [(%q, %d)], "cart: %%r" %% (rows,))
`, in.ShopUser, approved, ApprovedQty),
		"check_shortlist.py": fmt.Sprintf(`import json
from _verify_sdk import read_csv, result
want = json.loads(%q)
try:
    rows = read_csv(%q)
except FileNotFoundError:
    result(False, "no shortlist file")
else:
    got = [[r.get("rank"), r.get("sku"), r.get("joules"), r.get("outlets"), r.get("price_usd")] for r in rows]
    want = [[str(c) for c in r] for r in want]
    result(got == want, "shortlist rows: %%r, want %%r" %% (got, want))
`, string(expectShort), PathShortlist),
		"check_dm.py": fmt.Sprintf(`from _verify_sdk import db, result
q = ("SELECT m.thread_id, m.seq, m.body FROM messages m JOIN participants p ON p.thread_id = m.thread_id AND p.name = ? "
     "JOIN threads t ON t.id = m.thread_id AND t.kind = 'dm' WHERE m.sender = ?")
args = (%q, %q)
before = set((r[0], r[1]) for r in db("messages", world="initial").execute(q, args))
new = [r for r in db("messages").execute(q, args) if (r[0], r[1]) not in before]
result(any(%q in r[2] for r in new), "new messages to the assistant: %%r" %% (new,))
`, priya.Name, in.Persona.Name, approved),
	}
	return t, scripts, nil
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func skus(rows []SpecRow) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = r.SKU
	}
	return strings.Join(s, ", ")
}
