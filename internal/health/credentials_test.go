package health

import (
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

func TestPasswordNear(t *testing.T) {
	a := world.Account{Site: "shop", Username: "alex.rivera", PasswordHash: world.HashPassword("shop", "alex.rivera", "salt", "rack-it-up-42")}
	for _, tc := range []struct {
		name, text string
		line       int
	}{
		{"synth note", "- shop: user `alex.rivera`, password `rack-it-up-42`\n", 1},
		{"two lines", "# Logins\n\nshop\nusername: alex.rivera\npassword: rack-it-up-42\n", 5},
		{"key=value", "user=alex.rivera pass=rack-it-up-42", 1},
		{"line before", "password \"rack-it-up-42\"\nfor alex.rivera on the shop", 1},
		{"trailing punctuation", "shop alex.rivera rack-it-up-42.", 1},
	} {
		line, pw, ok := passwordNear(tc.text, a)
		if !ok || pw != "rack-it-up-42" || line != tc.line {
			t.Errorf("%s: got line %d %q %v, want line %d", tc.name, line, pw, ok, tc.line)
		}
	}
	for _, tc := range []struct{ name, text string }{
		{"wrong password", "- shop: user `alex.rivera`, password `rack-it-up-43`\n"},
		{"too far", "alex.rivera\n\n\n\nrack-it-up-42"},
		{"other user", "- shop: user `sam`, password `rack-it-up-42`\n"},
	} {
		if line, pw, ok := passwordNear(tc.text, a); ok {
			t.Errorf("%s: found %q at line %d", tc.name, pw, line)
		}
	}
}

func TestElements(t *testing.T) {
	page := `<div id="orders"><section class="order" data-order-no="SO-1"><li class="order-item" data-sku="X"></li></section>` +
		`<section class="order wide" data-order-no="SO-&#34;2&#34;"></section><p class="order-total"></p></div>`
	var got []string
	for _, e := range elements(page) {
		if e.hasClass("order") {
			got = append(got, e["data-order-no"])
		}
	}
	if len(got) != 2 || got[0] != "SO-1" || got[1] != `SO-"2"` {
		t.Errorf("orders %q", got)
	}
}

// TestPasswordSearchTriesTheLikeliestFirst: with one username on fifteen
// sites, finding the last site's password costs one password hash, not
// one per word of every line before it.
func TestPasswordSearchTriesTheLikeliestFirst(t *testing.T) {
	sites := []string{"archive", "calc", "code", "courses", "devices", "dictionary", "flights", "maps", "models", "news", "recipes", "search", "shop", "sports", "stays"}
	var text string
	for _, s := range sites {
		text += "- " + s + ": user `sam.lee`, password `pw-" + s + "-77`\n"
	}
	a := world.Account{Site: "stays", Username: "sam.lee", PasswordHash: world.HashPassword("stays", "sam.lee", "salt", "pw-stays-77")}
	line, pw, ok, hashes := passwordSearch(text, a)
	if !ok || pw != "pw-stays-77" || line != 15 {
		t.Fatalf("got line %d %q %v", line, pw, ok)
	}
	if hashes != 1 {
		t.Errorf("%d password hashes computed, want 1", hashes)
	}
}
