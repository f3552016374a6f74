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
