package world

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestQuoteNameIsOneToOne(t *testing.T) {
	seen := map[string]string{}
	for _, n := range NastyNames() {
		q := QuoteName(n)
		if other, ok := seen[q]; ok {
			t.Errorf("QuoteName(%q) = QuoteName(%q) = %s", n, other, q)
		}
		seen[q] = n
		if strings.ContainsAny(q, "\n\r\x00") {
			t.Errorf("QuoteName(%q) = %q holds a line break or NUL", n, q)
		}
	}
	if QuoteName("docs/a.md") != "docs/a.md" || QuoteName("x\xff") != `"x\xff"` || QuoteName("a\nb") != `"a\nb"` {
		t.Errorf("QuoteName: plain names must stay as they are, others be Go-quoted")
	}
}

func TestSkippedJSONKeepsNames(t *testing.T) {
	seen := map[string]string{}
	for _, n := range NastyNames() {
		b, err := json.Marshal(Skipped{Path: "home/" + n, Reason: "fifo"})
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[string(b)]; ok {
			t.Errorf("%q and %q encode the same: %s", n, other, b)
		}
		seen[string(b)] = n
		var got Skipped
		if err := json.Unmarshal(b, &got); err != nil || got.Path != "home/"+n || got.Reason != "fifo" {
			t.Errorf("%q: round trip through %s = %+v, %v", n, b, got, err)
		}
	}
	// A valid name keeps the JSON it had before names were encoded, so
	// snapshot records keep their IDs.
	if b, _ := json.Marshal(Skipped{Path: "home/p", Reason: "r"}); string(b) != `{"path":"home/p","reason":"r"}` {
		t.Errorf("valid name: %s", b)
	}
	for _, bad := range []string{
		`{"path":"x","path_base64":"eA==","reason":""}`, // valid UTF-8 in base64
		`{"path":"y","path_base64":"eP8=","reason":""}`, // text is not the quoted form
	} {
		var s Skipped
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s decodes to %+v, want an error: one name, one encoding", bad, s)
		}
	}
}
