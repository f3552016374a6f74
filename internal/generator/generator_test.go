package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.sha256 from the current output")

const goldenFile = "testdata/golden.sha256"

// testCase is one file of testdata/cases.
type testCase struct {
	Name      string          `json:"-"`
	Generator string          `json:"generator"`
	Params    json.RawMessage `json:"params"`
}

func loadCases(t testing.TB) []testCase {
	t.Helper()
	files, err := filepath.Glob("testdata/cases/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/cases")
	}
	var cases []testCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c testCase
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		cases = append(cases, c)
	}
	return cases
}

// readGolden parses lines "<sha256 hex>  <case name>".
func readGolden(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		if *update && errors.Is(err, os.ErrNotExist) {
			return map[string]string{}
		}
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	m := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: malformed line %q", goldenFile, line)
		}
		m[name] = sum
	}
	return m
}

func TestGolden(t *testing.T) {
	r := Default()
	golden := readGolden(t)
	got := make(map[string]string)
	covered := make(map[string]bool)
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out1, err := r.Generate(c.Generator, c.Params)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			out2, err := r.Generate(c.Generator, c.Params)
			if err != nil {
				t.Fatalf("Generate (second run): %v", err)
			}
			if !bytes.Equal(out1, out2) {
				t.Fatal("two runs with the same params gave different bytes")
			}
			sum := sha256.Sum256(out1)
			got[c.Name] = hex.EncodeToString(sum[:])
			covered[c.Generator] = true
			if !*update && golden[c.Name] != got[c.Name] {
				t.Errorf("sha256 = %s, golden %q; output changed (run go test -update if intended)", got[c.Name], golden[c.Name])
			}
		})
	}
	for _, n := range r.Names() {
		if !covered[n] {
			t.Errorf("generator %q has no case in testdata/cases", n)
		}
	}
	if *update {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range got {
				if !yield(n) {
					return
				}
			}
		})
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s  %s\n", got[n], n)
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for n := range golden {
		if _, ok := got[n]; !ok {
			t.Errorf("%s names case %q, which is not in testdata/cases", goldenFile, n)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := Default()
	want := []string{"csv", "markdown", "pdf", "png", "product_image", "text"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		g, ok := r.Lookup(n)
		if !ok || g.Name() != n {
			t.Errorf("Lookup(%q) = %v, %v", n, g, ok)
		}
	}
	if _, ok := r.Lookup("docx"); ok {
		t.Error(`Lookup("docx") found a generator`)
	}
	_, err := r.Generate("docx", json.RawMessage(`{}`))
	if !errors.Is(err, ErrUnknownGenerator) {
		t.Fatalf("Generate(docx) error = %v, want ErrUnknownGenerator", err)
	}
	for _, n := range want {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
	names := r.Names()
	names[0] = "mutated"
	if r.Names()[0] != "csv" {
		t.Error("Names returned the registry's own slice")
	}
	if _, err := NewRegistry(Text(), Text()); err == nil {
		t.Error("NewRegistry accepted a duplicate name")
	}
}

func TestOutputs(t *testing.T) {
	r := Default()
	gen := func(name, params string) string {
		t.Helper()
		b, err := r.Generate(name, json.RawMessage(params))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(b)
	}
	tests := []struct{ name, params, want string }{
		{"text", `{"lines":["a","","b"]}`, "a\n\nb\n"},
		{"text", `{"lines":[]}`, ""},
		{"csv", `{"header":["a","b"],"rows":[[1.50,"x,y"],[true,null],["q\"uote","line\nbreak"]]}`,
			"a,b\n1.50,\"x,y\"\ntrue,\n\"q\"\"uote\",\"line\nbreak\"\n"},
		{"markdown", `{"title":"T","sections":[{"heading":"H","paragraphs":["p1","p2"],"bullets":["a","b\nc"],"table":{"header":["x","y"],"rows":[["1|2",3]]}}]}`,
			"# T\n\n## H\n\np1\n\np2\n\n- a\n- b\n  c\n\n| x | y |\n| --- | --- |\n| 1\\|2 | 3 |\n"},
	}
	for _, tt := range tests {
		if got := gen(tt.name, tt.params); got != tt.want {
			t.Errorf("%s %s:\ngot  %q\nwant %q", tt.name, tt.params, got, tt.want)
		}
	}
}

func TestParallel(t *testing.T) {
	r := Default()
	cases := loadCases(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			a, err := r.Generate(c.Generator, c.Params)
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Generate(c.Generator, c.Params)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Fatal("concurrent runs differ")
			}
		})
	}
}
