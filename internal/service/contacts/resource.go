package contacts

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// contactURIPrefix is the start of a contact resource's URI,
// contacts://contact/{ext_id}.
const contactURIPrefix = "contacts://contact/"

// ContactURI returns the resource URI of the contact with that ext_id.
func ContactURI(extID string) string {
	return contactURIPrefix + dbtool.URIEscape(extID)
}

// readResource renders a contact as text: the name and id, one "Field: value"
// line per non-empty field, then the notes.
func (s *Service) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, contactURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	extID, err := url.PathUnescape(rest)
	if err != nil || extID == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var c Contact
	err = s.read(ctx, func(q querier) error {
		r, err := findContact(ctx, q, extID)
		c = r.c
		return err
	})
	if _, ok := err.(*toolError); ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "contacts resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the contacts service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: contactText(c)}}}, nil
}

func contactText(c Contact) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (contact %s)\n", c.Name, c.Contact)
	for _, f := range []struct{ k, v string }{
		{"Email", c.Email}, {"Phone", c.Phone}, {"Company", c.Company}, {"Role", c.Role},
		{"Tags", strings.Join(c.Tags, ", ")}, {"Updated", c.UpdatedAt},
	} {
		if f.v != "" {
			fmt.Fprintf(&b, "%s: %s\n", f.k, f.v)
		}
	}
	if c.Notes != "" {
		fmt.Fprintf(&b, "\nNotes:\n%s\n", c.Notes)
	}
	return b.String()
}
