// Package servicetest has the helpers the MCP services' tests share:
// reading a resource through a real client and checking what came back.
// Tests only; it imports no package of the project.
package servicetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadResource reads uri through cs and returns its only content's text,
// failing the test on an error, on other contents, or on a MIME type other
// than mimeType.
func ReadResource(t testing.TB, cs *mcp.ClientSession, uri, mimeType string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != mimeType {
		t.Fatalf("read %s: contents %+v, want one %s content", uri, res.Contents, mimeType)
	}
	return res.Contents[0].Text
}

// WantNotFound fails the test unless reading uri through cs is the SDK's
// resource-not-found error.
func WantNotFound(t testing.TB, cs *mcp.ClientSession, uri string) {
	t.Helper()
	_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeResourceNotFound {
		t.Errorf("read %s: %v, want resource not found", uri, err)
	}
}

// WantText fails the test for every one of wants that text (read from uri)
// lacks.
func WantText(t testing.TB, uri, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", uri, want, text)
		}
	}
}

// WantTemplates fails the test unless cs lists exactly the resource
// templates want (URI templates, in any order), each with a name, title,
// description and the MIME type mimeType.
func WantTemplates(t testing.TB, cs *mcp.ClientSession, mimeType string, want ...string) {
	t.Helper()
	res, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range res.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
		if rt.Name == "" || rt.Title == "" || rt.Description == "" || rt.MIMEType != mimeType {
			t.Errorf("template %+v: name, title, description or MIME type %s missing", rt, mimeType)
		}
	}
	slices.Sort(uris)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(uris, want) {
		t.Fatalf("templates = %v, want %v", uris, want)
	}
}
