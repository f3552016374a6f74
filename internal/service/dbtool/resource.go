package dbtool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URIEscape percent-encodes every byte of s but RFC 3986's unreserved
// characters, for an id in a resource URI. url.PathEscape keeps characters
// such as "&", "'" and "+", which the SDK's match of a URI against a {var}
// template refuses, and a seeded id may hold any of them.
func URIEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ResourceHandler returns the handler of a resource template whose URIs are
// prefix followed by segments keys, each escaped with URIEscape and joined
// by "/" (notes://note/{note}: segments 1). It unescapes the keys and runs
// render in a Read; render returns the resource's text, or a ToolError or
// sql.ErrNoRows when the keys name nothing, which (like a URI that does not
// parse) is answered with mcp.ResourceNotFoundError. Any other failure is
// logged and answered without internal detail.
func (d *DB) ResourceHandler(prefix, mimeType string, segments int, render func(ctx context.Context, q Querier, keys []string) (string, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		keys, ok := resourceKeys(uri, prefix, segments)
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var text string
		err := d.Read(ctx, func(q Querier) error {
			var err error
			text, err = render(ctx, q, keys)
			return err
		})
		var te *ToolError
		switch {
		case errors.As(err, &te), errors.Is(err, sql.ErrNoRows):
			return nil, mcp.ResourceNotFoundError(uri)
		case err != nil:
			d.Log.ErrorContext(ctx, d.Service+" resource failed", LogKeyDB, d.Path, LogKeyErr, err)
			return nil, fmt.Errorf("reading %s: internal error in the %s service", uri, d.Service)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text}}}, nil
	}
}

// resourceKeys splits the part of uri after prefix into segments keys and
// unescapes each; false if uri does not have that shape or a key is empty.
func resourceKeys(uri, prefix string, segments int) ([]string, bool) {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != segments {
		return nil, false
	}
	for i, p := range parts {
		k, err := url.PathUnescape(p)
		if err != nil || k == "" {
			return nil, false
		}
		parts[i] = k
	}
	return parts, true
}
