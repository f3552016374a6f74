package store

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports enforces what doc.go promises: the package imports only the
// standard library and internal/world.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".")
			if !std && p != "github.com/wildawm/wildawm/internal/world" && p != "golang.org/x/sys/unix" {
				t.Errorf("%s imports %s: store may import only the standard library, golang.org/x/sys and internal/world", f, p)
			}
			if p == "time" && f != "store.go" {
				t.Errorf("%s imports time: only the lock's retry timer may use it (no wall clock in store)", f)
			}
		}
	}
}
