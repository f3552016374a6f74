package dbtool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodeResults is a receiving middleware that hands the SDK the result of
// a tools/call in a form encoding/json writes in one pass, when it has the
// shape the service engine gives it (text content and structured content,
// nothing else).
//
// The SDK encodes a result through nested MarshalJSON methods (the text
// content's, the result's), and encoding/json re-scans the output of each
// one to compact it, so every byte of a result was scanned three to four
// times before it reached the transport: on a 18 KiB read_thread answer
// that was about a third of the server's time per call. plainResult has no
// MarshalJSON, so its fields are written directly, once. The wire form is
// the SDK's, except that <, > and & in the text are not escaped as \u003c
// and so on (both decode to the same string).
func encodeResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			if p, ok := plain(r); ok {
				return p, nil
			}
		}
		return res, nil
	}
}

// plainResult is a CallToolResult written by encoding/json field by field.
// It embeds the result for the methods the SDK calls on a Result after the
// middleware (for a request of protocol 2026-07-28 or later the SDK adds
// the server's identity to _meta and may set a result type, on the
// embedded result). The embedded result's MarshalJSON would be promoted too and make
// encoding/json call it, so noMarshal, embedded at the same depth, makes
// the name ambiguous and leaves plainResult without one (the Go spec's rule
// for selectors at equal depth). Meta and ResultType read the embedded
// result when the result is encoded, so what the SDK set there is written.
type plainResult struct {
	*mcp.CallToolResult `json:"-"`
	noMarshal           `json:"-"`

	Meta              metaOf       `json:"_meta,omitzero"`
	Content           []plainText  `json:"content"`
	StructuredContent any          `json:"structuredContent,omitempty"`
	IsError           bool         `json:"isError,omitempty"`
	ResultType        resultTypeOf `json:"resultType,omitzero"`
}

type plainText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type noMarshal struct{}

// MarshalJSON is never called: it only hides the embedded result's.
func (noMarshal) MarshalJSON() ([]byte, error) {
	return nil, errors.New("dbtool: noMarshal.MarshalJSON called")
}

// metaOf writes a result's _meta (small, so encoding/json's re-scan of a
// MarshalJSON's output costs nothing here).
type metaOf struct{ r *mcp.CallToolResult }

func (m metaOf) IsZero() bool                 { return len(m.r.Meta) == 0 }
func (m metaOf) MarshalJSON() ([]byte, error) { return json.Marshal(m.r.Meta) }

// resultTypeOf writes a result's resultType, which the SDK keeps in an
// unexported field: read by reflection (a string field may be read, not
// set), or, should a later SDK rename or retype the field, from the SDK's
// own encoding of the result stripped of everything else (which costs a
// marshal and an unmarshal per call: about 5 µs).
type resultTypeOf struct{ r *mcp.CallToolResult }

// resultTypeField is the index of CallToolResult's resultType field, or -1.
var resultTypeField = func() int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.String {
		return -1
	}
	return f.Index[0]
}()

func (t resultTypeOf) get() string {
	if resultTypeField >= 0 {
		return reflect.ValueOf(t.r).Elem().Field(resultTypeField).String()
	}
	return encodedResultType(t.r)
}

func encodedResultType(r *mcp.CallToolResult) string {
	bare := *r
	bare.Meta, bare.Content, bare.StructuredContent, bare.IsError = nil, nil, nil, false
	b, err := bare.MarshalJSON()
	if err != nil {
		return ""
	}
	var v struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.ResultType
}

func (t resultTypeOf) IsZero() bool                 { return t.get() == "" }
func (t resultTypeOf) MarshalJSON() ([]byte, error) { return json.Marshal(t.get()) }

// plain returns r as a plainResult if it holds only plain text content,
// structured content that is not a json.Marshaler (a Marshaler's output
// would be re-scanned), the error flag, _meta and a result type; ok is
// false for anything else (annotations, other content, input requests),
// which the SDK then encodes as usual.
func plain(r *mcp.CallToolResult) (_ *plainResult, ok bool) {
	if r.InputRequests != nil || r.RequestState != "" || r.NeedsInput() {
		return nil, false
	}
	// A Marshaler's output is re-scanned, except json.RawMessage's, which
	// encoding/json only compacts (one pass): the service engine's results
	// are JSON already.
	if _, ok := r.StructuredContent.(json.Marshaler); ok {
		if _, raw := r.StructuredContent.(json.RawMessage); !raw {
			return nil, false
		}
	}
	p := &plainResult{CallToolResult: r, Meta: metaOf{r}, Content: make([]plainText, len(r.Content)),
		StructuredContent: r.StructuredContent, IsError: r.IsError, ResultType: resultTypeOf{r}}
	for i, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			return nil, false
		}
		p.Content[i] = plainText{Type: "text", Text: t.Text}
	}
	return p, true
}
