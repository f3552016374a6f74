package state

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestHashInjectiveOverNames: worlds that differ only in the bytes of one
// home name (names differing only in invalid UTF-8, a name and its quoted
// form, a file in a directory and a file whose name holds the separator's
// neighbours) never hash the same, and Copy keeps every name.
func TestHashInjectiveOverNames(t *testing.T) {
	names := append(world.NastyNames(), `"\xff"`, "x", "x\xff\xfe", "d/x\xff")
	seen := map[world.ID]string{}
	for _, n := range names {
		w := MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), TestWorld{Files: map[string]string{n: "same"}})
		h := mustHash(t, w)
		if other, ok := seen[h]; ok {
			t.Errorf("a home holding only %q hashes as one holding only %q", n, other)
		}
		seen[h] = n
		cp := filepath.Join(t.TempDir(), "copy")
		if err := Copy(context.Background(), w, cp); err != nil {
			t.Fatalf("Copy of a home holding %q: %v", n, err)
		}
		if mustHash(t, cp) != h {
			t.Errorf("Copy of a home holding %q hashes differently", n)
		}
	}
}

// TestDiffNastyNames: a diff lists every world.NastyNames entry once with its
// exact path; its JSON decodes back to the same paths and encodes
// different paths differently; its text has one line per change, the path
// quoted when it is not plain.
func TestDiffNastyNames(t *testing.T) {
	ctx := context.Background()
	a := MakeTestWorld(t, filepath.Join(t.TempDir(), "a"), TestWorld{})
	files := map[string]string{}
	for _, n := range world.NastyNames() {
		files[n] = n
	}
	b := MakeTestWorld(t, filepath.Join(t.TempDir(), "b"), TestWorld{Files: files})
	if err := os.Symlink("t\xff\n", filepath.Join(b, "home", "link\xfe")); err != nil {
		t.Fatal(err)
	}
	d, err := Compare(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := len(files) + 1
	got := map[string]bool{}
	for _, f := range d.Files {
		got[f.Path] = true
	}
	for n := range files {
		if !got[n] {
			t.Errorf("diff lacks %q", n)
		}
	}
	if len(d.Files) != want || len(got) != want {
		t.Errorf("diff has %d changes (%d paths), want %d", len(d.Files), len(got), want)
	}

	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Files []FileChange `json:"files"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Files []json.RawMessage `json:"files"`
	}
	json.Unmarshal(js.Bytes(), &raw)
	encodings := map[string]bool{}
	for i, f := range back.Files {
		if f.Path != d.Files[i].Path {
			t.Errorf("JSON path %q decodes to %q", d.Files[i].Path, f.Path)
		}
		encodings[string(raw.Files[i])] = true
	}
	if len(encodings) != want {
		t.Errorf("%d distinct JSON encodings of %d changes", len(encodings), want)
	}

	var txt bytes.Buffer
	if err := d.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(txt.String(), "\n"), "\n")
	fileLines := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "file + ") {
			fileLines++
		}
	}
	if fileLines != want || len(lines) != want+1 {
		t.Errorf("text has %d file lines of %d lines, want %d and a summary:\n%s", fileLines, len(lines), want, txt.String())
	}
	for n := range files {
		if !strings.Contains(txt.String(), "file + "+world.QuoteName(n)+" (file, ") {
			t.Errorf("text lacks the line of %q as %s", n, world.QuoteName(n))
		}
	}
}

// TestSkippedEntryJSON: a diff's skipped entry keeps its world beside a
// path encoded as world.Skipped's (whose MarshalJSON would otherwise be
// promoted and drop "world").
func TestSkippedEntryJSON(t *testing.T) {
	for _, p := range []string{"home/pipe", "home/p\xff\n"} {
		in := SkippedEntry{World: "b", Skipped: world.Skipped{Path: p, Reason: "fifo"}}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out SkippedEntry
		if err := json.Unmarshal(b, &out); err != nil || out != in {
			t.Errorf("%q: %s decodes to %+v, %v", p, b, out, err)
		}
		if p == "home/pipe" && string(b) != `{"world":"b","path":"home/pipe","reason":"fifo"}` {
			t.Errorf("plain path: %s, want the form before names were encoded", b)
		}
	}
}
