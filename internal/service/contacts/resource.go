package contacts

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// contactURIPrefix is the start of a contact resource's URI,
// contacts://contact/{ext_id}.
const contactURIPrefix = "contacts://contact/"

// ContactURI returns the resource URI of the contact with that ext_id.
func ContactURI(extID string) string {
	return contactURIPrefix + dbtool.URIEscape(extID)
}

// renderContact renders the contact keys[0] (its ext_id) as text: the name
// and id, one "Field: value" line per non-empty field, then the notes.
func renderContact(ctx context.Context, q querier, keys []string) (string, error) {
	r, err := findContact(ctx, q, keys[0])
	if err != nil {
		return "", err
	}
	return contactText(r.c), nil
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
