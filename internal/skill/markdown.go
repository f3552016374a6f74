package skill

import (
	"fmt"
	"strings"
)

// Markdown renders the library's text form: what docs/skills.md holds and
// what model-driven stages read.
func (l *Library) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The skill library\n\n%d event skills. Each is documented here from its definition in internal/skill (this file is generated: `go test ./internal/skill -run TestDocsCurrent -update`). Parameters are JSON objects decoded strictly: an unknown or mistyped field is an error naming it.\n\n", len(l.names))
	b.WriteString("| skill | interfaces | sites | services | files |\n|---|---|---|---|---|\n")
	for _, d := range l.Docs() {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", d.Name, strings.ReplaceAll(d.Name, "_", "_"), strings.Join(d.Interfaces, ", "),
			strings.Join(d.Sites, ", "), strings.Join(d.Services, ", "), strings.Join(d.Files, ", "))
	}
	for _, d := range l.Docs() {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", d.Name, d.Summary)
		if d.Setup {
			b.WriteString("A setup skill: it proposes nothing once its database or account exists.\n\n")
		}
		b.WriteString("Changes:\n")
		for _, c := range d.Changes {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\nConsistency constraints:\n")
		for _, c := range d.Constraints {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		if len(d.Continues) > 0 {
			fmt.Fprintf(&b, "\nContinues: %s\n", strings.Join(d.Continues, ", "))
		}
		if len(d.Example) > 0 {
			fmt.Fprintf(&b, "\nExample parameters:\n\n```json\n%s\n```\n", d.Example)
		}
	}
	return b.String()
}
