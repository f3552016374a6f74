package judge

import (
	"strings"
	"testing"
)

// TestCompareObs: a probe's view is compared by its identifiers and
// numbers (CSV by column, JSON by field, derived ids and number formats
// aside), an agent's free text only by what the reference's text gained
// or lost, and by words where the reference changed nothing else.
func TestCompareObs(t *testing.T) {
	file := func(path string) obsProbe { return obsProbe{Kind: probeFile, Path: path} }
	call := obsProbe{Kind: probeCall, Tool: "tasks__list_todos"}
	page := obsProbe{Kind: probePage, Site: "shop", Page: "/orders"}
	for _, tc := range []struct {
		name      string
		p         obsProbe
		w0, wr, w string
		differs   bool
		why       string
	}{
		{"csv by column, in any order", file("a.csv"), absent, "sku,price\nLD-0149,12.50\n", "price,sku\n12.5,LD-0149\n", false, ""},
		{"csv with a wrong cell", file("a.csv"), absent, "sku,price\nLD-0149,12.50\n", "sku,price\nLD-0149,13\n", true, `"price 13" appears once, not nowhere`},
		{"csv with a flipped word", file("a.csv"), absent, "sku,fits\nLD-0149,yes\nLD-0150,no\n", "sku,fits\nLD-0149,no\nLD-0150,no\n", true, "other words in its table's cells"},
		{"csv words in another case", file("a.csv"), absent, "sku,fits\nLD-0149,yes\n", "sku,fits\nLD-0149,Yes\n", false, ""},
		{"a file not written", file("a.csv"), absent, "sku\nLD-0149\n", absent, true, "does not exist; the reference completion writes it"},
		{"free text may say more", file("note.md"), absent, "Ordered LD-0149, 2 units.", "I ordered 2 units of LD-0149 on 2026-03-09 after checking the balance.", false, ""},
		{"free text that lacks the SKU", file("note.md"), absent, "Ordered LD-0149, 2 units.", "Ordered 2 units.", true, `"LD-0149" appears nowhere, as in the initial world, not once`},
		{"derived ids are not content", call, `{"todos":[]}`, `{"todos":[{"id":42,"due_on":"2026-03-11","todo_id":7}]}`, `{"todos":[{"id":43,"due_on":"2026-03-11","todo_id":9}]}`, false, ""},
		{"a field's value", call, `{"todos":[]}`, `{"todos":[{"id":42,"due_on":"2026-03-11"}]}`, `{"todos":[{"id":42,"due_on":"2026-03-12"}]}`, true, `"due_on 2026-03-12" appears once`},
		{"an extra row", call, `{"todos":[]}`, `{"todos":[{"due_on":"2026-03-11"}]}`, `{"todos":[{"due_on":"2026-03-11"},{"due_on":"2026-03-11"}]}`, true, "2 times, not once"},
		{"a status word the reference changes", call, `{"todos":[{"status":"open"}]}`, `{"todos":[{"status":"done"}]}`, `{"todos":[{"status":"open"}]}`, true, `"status done" appears nowhere`},
		{"a status word as the reference", call, `{"todos":[{"status":"open","done":false}]}`, `{"todos":[{"status":"done","done":true}]}`, `{"todos":[{"done":true,"status":"done"}]}`, false, ""},
		{"a refused page", page, "Orders: none", "Orders: SO-1001", "error: no such page", true, "was refused (no such page)"},
		{"a page is no free text", page, "Orders of the shop: 0 found", "Orders of the shop: 1 found SO-GP-004", "Orders of the shop: 2 found SO-GP-004 SO-GP-005", true, `"SO-GP-005" appears once, not nowhere`},
		{"a note's body may say more", call, `{"notes":[]}`, `{"notes":[{"body":"Ordered LD-0149 today, the one that fits the balance."}]}`, `{"notes":[{"body":"Ordered LD-0149 today, 1 unit, the one that fits the balance."}]}`, false, ""},
		{"a page as the reference's", page, "Orders: 0 found", "Orders: 1 found SO-GP-004 2026-03-09", "Orders:  1 found SO-GP-004 2026-03-09", false, ""},
	} {
		why, differs := compareObs(tc.p, tc.w0, tc.wr, tc.w)
		if differs != tc.differs || !strings.Contains(why, tc.why) {
			t.Errorf("%s: differs %v (%s), want %v (%s)", tc.name, differs, why, tc.differs, tc.why)
		}
	}
}
