package skill_test

import (
	"flag"
	"os"
	"testing"

	"github.com/wildawm/wildawm/internal/skill"
)

var update = flag.Bool("update", false, "rewrite docs/skills.md from the library")

// TestDocsCurrent checks docs/skills.md is the library's text form.
func TestDocsCurrent(t *testing.T) {
	const path = "../../docs/skills.md"
	want := skill.All().Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s is not the library's text form (%v): run go test ./internal/skill -run TestDocsCurrent -update", path, err)
	}
}
