package fake

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestFind: the first element a selector selects, in document order; nil
// when none does; an error naming what the matcher reads otherwise.
func TestFind(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<form id="f"><input id="a" data-wa-ref="3"><button class="go" data-wa-ref="4">Go</button></form><button class="go">Other</button>`))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Find(doc, "form#f .go")
	if err != nil || n == nil || attr(n, "data-wa-ref") != "4" {
		t.Fatalf("form#f .go: %v, %v", n, err)
	}
	if n, err := Find(doc, "#nosuch"); n != nil || err != nil {
		t.Fatalf("#nosuch: %v, %v", n, err)
	}
	if _, err := Find(doc, "a:hover"); err == nil || !strings.Contains(err.Error(), "the fake reads") {
		t.Fatalf("a:hover: %v", err)
	}
}
