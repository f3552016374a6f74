package judge

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wildawm/wildawm/"

// deps returns every package of this module that pkg (a directory relative
// to the module root) imports, directly or not, outside its tests.
func deps(t *testing.T, root, pkg string, seen map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
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
			if dir, ok := strings.CutPrefix(p, module); ok && !seen[dir] {
				seen[dir] = true
				deps(t, root, dir, seen)
			}
		}
	}
}

// TestJudgesDoNotImportPolicies: a judge must not share the blind spots of
// the agents it judges, so neither it nor anything it imports may import
// internal/policy.
func TestJudgesDoNotImportPolicies(t *testing.T) {
	seen := map[string]bool{}
	deps(t, "../..", "internal/judge", seen)
	if !seen["internal/rollout"] || !seen["internal/agent"] {
		t.Fatalf("the import walk found %v: it cannot see what the judge imports", seen)
	}
	if seen["internal/policy"] {
		t.Fatal("internal/judge imports internal/policy (directly or through a package it imports): judges must not use the policies' code")
	}
}
