package world_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wildawm/wildawm/internal/"

// allowed lists, for each package, the project packages it may import. The
// domain package imports none; the deterministic core stays below the CLI.
var allowed = map[string][]string{
	"world":      {},
	"generator":  {},
	"state":      {"world"},
	"store":      {"world"},
	"delta":      {"world", "state"},
	"reset":      {"world"},
	"benchworld": {"world", "state", "delta"},
	"task":       {"world"},
	"verify":     {"world", "state", "task"},
	"sandbox":    {"world"},
	"gate":       {},
	"vision":     {},
	"catalog":    {"world", "state", "generator"},
	"gcpolicy":   {},
}

func TestImportDirection(t *testing.T) {
	root := ".."
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		pkg := e.Name()
		want, ok := allowed[pkg]
		if !ok {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				dep, ok := strings.CutPrefix(path, module)
				if ok && !slices.Contains(want, dep) {
					t.Errorf("%s imports %s; it may import only %v", f, path, want)
				}
			}
		}
	}
}

// TestCoreReadsNoClock checks that the deterministic core never calls
// time.Now or the global math/rand source.
func TestCoreReadsNoClock(t *testing.T) {
	for _, pkg := range []string{"world", "state", "store", "delta", "generator", "benchworld", "task", "verify", "gate", "vision", "catalog"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			for _, bad := range []string{"time.Now(", "time.Since(", "rand.Int(", "rand.IntN(", "rand.Float64(", "rand.Read(", `"math/rand"`} {
				if strings.Contains(src, bad) {
					t.Errorf("%s uses %s: the core takes a Clock and a seeded *rand.Rand", f, bad)
				}
			}
		}
	}
}
