package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServiceLint(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, filepath.Join(dir, "s"), "service", "lint", filepath.Join("..", "service", "notes", "service.yaml"))
	if err != nil || !strings.Contains(out, "ok ") || !strings.Contains(out, "(notes): 9 tools") {
		t.Errorf("lint notes: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join("..", "service", "notes", "service.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	os.WriteFile(broken, []byte(strings.Replace(string(src), "health_tool: list_notebooks", "health_tool: list_notebook", 1)), 0o644)
	out, _, err = run(t, filepath.Join(dir, "s"), "service", "lint", broken)
	if err == nil || !strings.Contains(out, `health_tool: "list_notebook" is not one of the tools`) {
		t.Errorf("lint of a broken definition: %v\n%s", err, out)
	}
}
