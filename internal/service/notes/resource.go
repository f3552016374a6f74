package notes

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// noteURIPrefix is the start of a note resource's URI, notes://note/{ext_id}.
const noteURIPrefix = "notes://note/"

// NoteURI returns the resource URI of the note with that ext_id.
func NoteURI(extID string) string {
	return noteURIPrefix + dbtool.URIEscape(extID)
}

// renderNote renders the note keys[0] (its ext_id) as markdown: a "# title"
// heading, a line with notebook, times and pin, the body, then its links.
func renderNote(ctx context.Context, q querier, keys []string) (string, error) {
	r, err := findNote(ctx, q, keys[0])
	if err != nil {
		return "", err
	}
	return noteText(r.n), nil
}

func noteText(n Note) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nNotebook: %s · Created: %s · Updated: %s", n.Title, n.Notebook, n.CreatedAt, n.UpdatedAt)
	if n.Pinned {
		b.WriteString(" · Pinned")
	}
	b.WriteString("\n\n")
	if n.Body != "" {
		b.WriteString(strings.TrimRight(n.Body, "\n"))
		b.WriteString("\n")
	}
	if len(n.Links) > 0 {
		b.WriteString("\nLinks:\n")
		for _, l := range n.Links {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}
