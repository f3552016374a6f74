package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// update rewrites golden transcripts: go test ./internal/service/... -update.
var update = flag.Bool("update", false, "rewrite the services' golden MCP transcripts")

// Step is one request of a golden transcript: a tool call (Tool, Args) or a
// resource read (Resource).
type Step struct {
	Tool     string         `json:"tool,omitempty" yaml:"tool,omitempty"`
	Args     map[string]any `json:"args,omitempty" yaml:"args,omitempty"`
	Resource string         `json:"resource,omitempty" yaml:"resource,omitempty"`
}

// Transcript is what a service answered to a script, in a form compared by
// JSON value (not bytes): the server's instructions, its tools, resource
// templates and resources as listed, and for every step its result or
// error and the database's logical hash after it.
type Transcript struct {
	Instructions string            `json:"instructions"`
	Tools        []json.RawMessage `json:"tools"`
	Templates    []json.RawMessage `json:"templates"`
	Resources    []json.RawMessage `json:"resources"`
	Steps        []StepRecord      `json:"steps"`
}

// StepRecord is one step's answer.
type StepRecord struct {
	Step
	// Error is a tool error's text or a resource read's protocol error.
	Error string `json:"error,omitempty"`
	// Result is a tool's structured result.
	Result json.RawMessage `json:"result,omitempty"`
	// Text is a tool result's text when it is not the structured result's
	// JSON, or a resource's text.
	Text string `json:"text,omitempty"`
	MIME string `json:"mime,omitempty"`
	// DB is the database's logical hash after the step.
	DB string `json:"db"`
}

// Record runs steps against a session of s (connected with connect) over
// the database at dbPath and returns the transcript.
func Record(t testing.TB, s Server, connect func(testing.TB, Server) *mcp.ClientSession, dbPath string, steps []Step) Transcript {
	t.Helper()
	ctx := context.Background()
	cs := connect(t, s)
	var tr Transcript
	if ir := cs.InitializeResult(); ir != nil {
		tr.Instructions = ir.Instructions
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		tr.Tools = append(tr.Tools, mustJSON(t, tool))
	}
	if templates, err := cs.ListResourceTemplates(ctx, nil); err == nil {
		for _, rt := range templates.ResourceTemplates {
			tr.Templates = append(tr.Templates, mustJSON(t, rt))
		}
	}
	if resources, err := cs.ListResources(ctx, nil); err == nil {
		for _, r := range resources.Resources {
			tr.Resources = append(tr.Resources, mustJSON(t, r))
		}
	}
	for i, st := range steps {
		rec := StepRecord{Step: st}
		switch {
		case st.Tool != "" && st.Resource == "":
			args := st.Args
			if args == nil {
				args = map[string]any{}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: args})
			switch {
			case err != nil:
				rec.Error = "protocol: " + err.Error()
			case res.IsError:
				rec.Error = ResultText(res)
			default:
				rec.Result = mustJSON(t, res.StructuredContent)
				if text := ResultText(res); !sameJSON([]byte(text), rec.Result) {
					rec.Text = text
				}
			}
		case st.Resource != "" && st.Tool == "":
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: st.Resource})
			switch {
			case err != nil:
				rec.Error = "protocol: " + err.Error()
			case len(res.Contents) != 1:
				t.Fatalf("step %d: read %s: %d contents, want 1", i, st.Resource, len(res.Contents))
			default:
				rec.Text, rec.MIME = res.Contents[0].Text, res.Contents[0].MIMEType
			}
		default:
			t.Fatalf("step %d: give tool or resource, not both or neither", i)
		}
		rec.DB = HashDB(t, dbPath).String()
		tr.Steps = append(tr.Steps, rec)
	}
	return tr
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Golden compares tr with the transcript in the file path (JSON), or
// rewrites the file when the test runs with -update. The comparison is by
// JSON value, step by step, so a failure names the first step that
// differs.
func Golden(t testing.TB, path string, tr Transcript) {
	t.Helper()
	got, err := json.MarshalIndent(tr, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden transcript: %v (record it with go test -run %s -update)", err, t.Name())
	}
	if sameJSON(got, want) {
		return
	}
	var w Transcript
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("golden transcript %s: %v", path, err)
	}
	t.Errorf("transcript differs from %s (rewrite it with -update only if the change is intended):\n%s", path, firstDifference(tr, w))
}

// firstDifference describes where got first differs from want.
func firstDifference(got, want Transcript) string {
	if got.Instructions != want.Instructions {
		return fmt.Sprintf("instructions:\n got  %q\n want %q", got.Instructions, want.Instructions)
	}
	for _, part := range []struct {
		name      string
		got, want []json.RawMessage
	}{{"tools", got.Tools, want.Tools}, {"templates", got.Templates, want.Templates}, {"resources", got.Resources, want.Resources}} {
		for i := range max(len(part.got), len(part.want)) {
			if i >= len(part.got) || i >= len(part.want) || !sameJSON(part.got[i], part.want[i]) {
				return fmt.Sprintf("%s[%d]: %s\n got  %s\n want %s", part.name, i, valueDiff(part.got, part.want, i), at(part.got, i), at(part.want, i))
			}
		}
	}
	for i := range max(len(got.Steps), len(want.Steps)) {
		if i >= len(got.Steps) || i >= len(want.Steps) {
			return fmt.Sprintf("steps: got %d, want %d", len(got.Steps), len(want.Steps))
		}
		g, _ := json.Marshal(got.Steps[i])
		w, _ := json.Marshal(want.Steps[i])
		if !sameJSON(g, w) {
			return fmt.Sprintf("step %d: %s\n got  %s\n want %s", i, valueDiff([]json.RawMessage{g}, []json.RawMessage{w}, 0), g, w)
		}
	}
	return "(the files differ only in form)"
}

func at(list []json.RawMessage, i int) string {
	if i >= len(list) {
		return "(none)"
	}
	var b bytes.Buffer
	if json.Compact(&b, list[i]) != nil {
		return string(list[i])
	}
	return b.String()
}

// LoadSteps reads a script of steps (a JSON array) from path.
func LoadSteps(t testing.TB, path string) []Step {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&steps); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if i := slices.IndexFunc(steps, func(s Step) bool { return (s.Tool == "") == (s.Resource == "") }); i >= 0 {
		t.Fatalf("%s: step %d: give tool or resource", path, i)
	}
	return steps
}

// valueDiff names the paths where the JSON values got[i] and want[i]
// differ ("at /outputSchema/properties/note/description: got none, want
// \"the note\"").
func valueDiff(got, want []json.RawMessage, i int) string {
	if i >= len(got) || i >= len(want) {
		return ""
	}
	var g, w any
	if json.Unmarshal(got[i], &g) != nil || json.Unmarshal(want[i], &w) != nil {
		return ""
	}
	var out []string
	diffValues("", g, w, &out)
	if len(out) > 5 {
		out = append(out[:5], "...")
	}
	return "\n  " + strings.Join(out, "\n  ")
}

func diffValues(path string, g, w any, out *[]string) {
	short := func(v any) string {
		if v == nil {
			return "none"
		}
		b, _ := json.Marshal(v)
		if len(b) > 200 {
			return string(b[:200]) + "..."
		}
		return string(b)
	}
	switch gv := g.(type) {
	case map[string]any:
		if wv, ok := w.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(gv)) {
				diffValues(path+"/"+k, gv[k], wv[k], out)
			}
			for _, k := range slices.Sorted(maps.Keys(wv)) {
				if _, ok := gv[k]; !ok {
					diffValues(path+"/"+k, nil, wv[k], out)
				}
			}
			return
		}
	case []any:
		if wv, ok := w.([]any); ok && len(wv) == len(gv) {
			for j := range gv {
				diffValues(fmt.Sprintf("%s/%d", path, j), gv[j], wv[j], out)
			}
			return
		}
	}
	if !reflect.DeepEqual(g, w) {
		*out = append(*out, fmt.Sprintf("at %s: got %s, want %s", cmpOr(path, "/"), short(g), short(w)))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Updating reports whether the tests run with -update (golden transcripts
// are being rewritten).
func Updating() bool { return *update }
