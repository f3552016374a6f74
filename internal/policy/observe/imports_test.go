package observe

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoReference holds the policy to the task's public part: its code
// imports no package that holds or reads a task's reference completion,
// answer or verifier (the scripted policies, task generation, the pool,
// the verifier, the trainer), and of package task it names the type
// task.Public only, never task.Task or a loader. Nothing it writes selects
// a field named Reference, Answer or Verifier.
func TestNoReference(t *testing.T) {
	forbidden := []string{"internal/policy", "internal/taskgen", "internal/pool", "internal/verify", "internal/trainer", "internal/rollout", "internal/store", "internal/world"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		taskName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasSuffix(path, "/"+bad) {
					t.Errorf("%s imports %s", name, path)
				}
			}
			if strings.HasSuffix(path, "/internal/task") {
				taskName = "task"
				if imp.Name != nil {
					taskName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == taskName && taskName != "" && sel.Sel.Name != "Public" {
				t.Errorf("%s uses %s.%s: the policy may name task.Public only", name, taskName, sel.Sel.Name)
			}
			switch sel.Sel.Name {
			case "Reference", "Answer", "Verifier", "Rubric", "Subtasks":
				t.Errorf("%s selects .%s", name, sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
