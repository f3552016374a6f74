package notes

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// noteURIPrefix is the start of a note resource's URI, notes://note/{ext_id}.
const noteURIPrefix = "notes://note/"

// NoteURI returns the resource URI of the note with that ext_id.
func NoteURI(extID string) string {
	return noteURIPrefix + dbtool.URIEscape(extID)
}

// readResource renders a note as markdown: a "# title" heading, a line with
// notebook, times and pin, the body, then its links.
func (s *Service) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, noteURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	extID, err := url.PathUnescape(rest)
	if err != nil || extID == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var n Note
	err = s.read(ctx, func(q querier) error {
		r, err := findNote(ctx, q, extID)
		n = r.n
		return err
	})
	if _, ok := err.(*toolError); ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "notes resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the notes service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: noteText(n)}}}, nil
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
