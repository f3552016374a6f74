package dbtool

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainResult must be a Result without a MarshalJSON of its own: the
// embedded result's is hidden by noMarshal's at the same depth.
var _ mcp.Result = (*plainResult)(nil)

func TestPlainResultHasNoMarshalJSON(t *testing.T) {
	if _, ok := any(&plainResult{}).(json.Marshaler); ok {
		t.Fatal("plainResult is a json.Marshaler: encoding/json would call the embedded result's MarshalJSON")
	}
}

// TestPlainResultEncodesAsTheSDK checks that a plain result decodes to the
// same JSON value as the SDK's own encoding of the result, for results and
// errors, and that results it cannot write are left to the SDK.
func TestPlainResultEncodesAsTheSDK(t *testing.T) {
	type inner struct {
		Seq  int      `json:"seq"`
		Tags []string `json:"tags"`
	}
	out := struct {
		Text  string  `json:"text"`
		Items []inner `json:"items"`
	}{Text: "a <b> & \"c\"\n\u2028", Items: []inner{{1, []string{"x"}}, {2, nil}}}
	text, _ := json.Marshal(out)
	var errRes mcp.CallToolResult
	errRes.SetError(BadCall("no thread %q; call list_threads", "t-9<"))
	for name, r := range map[string]*mcp.CallToolResult{
		"result":   {Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: out},
		"meta":     {Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "a"}}},
		"error":    &errRes,
		"no text":  {Content: []mcp.Content{}},
		"two text": {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"raw json": {Content: []mcp.Content{&mcp.TextContent{Text: `{"a":[1,true]}`}}, StructuredContent: json.RawMessage(`{"a":[1,true]}`)},
	} {
		p, ok := plain(r)
		if !ok {
			t.Errorf("%s: not plain", name)
			continue
		}
		got, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %s: %v", name, got, err)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n plain %s\n   sdk %s", name, got, want)
		}
	}
	for name, r := range map[string]*mcp.CallToolResult{
		"annotations": {Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
		"image":       {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		"marshaler":   {Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}, StructuredContent: marshaler{}},
	} {
		if _, ok := plain(r); ok {
			t.Errorf("%s: written plain, want it left to the SDK", name)
		}
	}
}

// TestNewServerEncodesToolResults calls a tool through a server of
// NewServer with the go-sdk client and checks what the client decodes.
func TestNewServerEncodesToolResults(t *testing.T) {
	srv := NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	addGreet(t, srv)
	cs := connectMemory(t, serverOf(func() *mcp.Server { return srv }))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "<bo>"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `{"text":"hi <bo>\nbye"}` {
		t.Errorf("text = %s", got)
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"text":"hi \u003cbo\u003e\nbye"}` {
		t.Errorf("structured = %s", b)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "bad"}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != `name "bad" is bad; pick another` {
		t.Fatalf("error result: %v %+v", err, res)
	}
}

// marshaler is a json.Marshaler other than json.RawMessage.
type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

// TestResultTypeByReflection holds the reflective read of the SDK's
// unexported resultType to what the SDK itself encodes.
func TestResultTypeByReflection(t *testing.T) {
	if resultTypeField < 0 {
		t.Fatal("mcp.CallToolResult has no string field resultType: the SDK changed; resultTypeOf now encodes the result per call (slow but right): update resultTypeField")
	}
	for _, wire := range []string{`{"content":[]}`, `{"content":[],"resultType":"complete"}`, `{"content":[],"resultType":"input_required"}`} {
		var r mcp.CallToolResult
		if err := json.Unmarshal([]byte(wire), &r); err != nil {
			t.Fatal(err)
		}
		if got, want := (resultTypeOf{&r}).get(), encodedResultType(&r); got != want {
			t.Errorf("%s: resultType by reflection %q, as the SDK encodes it %q", wire, got, want)
		}
	}
}
