package servicetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// SuiteOptions are the files a service's suite compares with.
type SuiteOptions struct {
	// Script is a JSON script of steps (LoadSteps); empty runs the
	// definition's test calls.
	Script string
	// Golden is the golden transcript of the script; empty compares none.
	Golden string
}

// Suite is the one test every service passes, whoever wrote it: it runs
// over the definition's test world and checks the tools list, the natural
// keys, the same answers over memory and HTTP (and the golden transcript),
// that bad arguments change nothing, a missing and a replaced database,
// and that read-only tools never write.
func Suite(t *testing.T, c *engine.Compiled, opts SuiteOptions) {
	d := c.Def
	if d.Test == nil {
		t.Fatalf("%s: the definition has no test world (test:); the suite needs one", d.Name)
	}
	steps := examples(d)
	if opts.Script != "" {
		steps = LoadSteps(t, opts.Script)
	}
	t.Run("tools", func(t *testing.T) {
		dir := NewWorld(t, d)
		cs := ConnectMemory(t, Open(t, c, dir))
		for _, p := range ToolProblems(cs, d) {
			t.Error(p)
		}
	})
	t.Run("natural_keys", func(t *testing.T) {
		for _, p := range KeyProblems(t, d) {
			t.Error(p)
		}
	})
	t.Run("transports", func(t *testing.T) {
		var first Transcript
		for i, tr := range Transports() {
			dir := NewWorld(t, d)
			got := Record(t, Open(t, c, dir), tr.Connect, world.DBPath(dir, d.Name), steps)
			if i == 0 {
				first = got
				continue
			}
			a, _ := json.Marshal(first)
			b, _ := json.Marshal(got)
			if !sameJSON(a, b) {
				t.Errorf("%s answers differently over %s than over %s: %s", d.Name, tr.Name, Transports()[0].Name, firstDifference(got, first))
			}
		}
		if opts.Golden != "" {
			Golden(t, opts.Golden, first)
		}
	})
	t.Run("bad_inputs", func(t *testing.T) {
		dir := NewWorld(t, d)
		cs := ConnectMemory(t, Open(t, c, dir))
		for _, p := range BadInputProblems(cs, world.DBPath(dir, d.Name)) {
			t.Error(p)
		}
	})
	t.Run("read_only", func(t *testing.T) {
		dir := NewWorld(t, d)
		cs := ConnectMemory(t, Open(t, c, dir))
		for _, p := range ReadOnlyProblems(cs, world.DBPath(dir, d.Name), steps) {
			t.Error(p)
		}
	})
	t.Run("ops", func(t *testing.T) {
		for _, p := range OpProblems(t, c) {
			t.Error(p)
		}
	})
	t.Run("missing_database", func(t *testing.T) {
		dir := NewWorld(t, d)
		path := world.DBPath(dir, d.Name)
		svc := Open(t, c, dir)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.New(c, options(d, dir)); err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("New over a world without db/%s.sqlite = %v, want an error naming the missing file", d.Name, err)
		}
		cs := ConnectMemory(t, svc)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: d.HealthTool, Arguments: map[string]any{}})
		switch {
		case err != nil:
			t.Errorf("%s with the database gone: protocol error %v, want a tool error", d.HealthTool, err)
		case !res.IsError || !strings.Contains(ResultText(res), "internal error"):
			t.Errorf("%s with the database gone: %s, want an internal-error tool error", d.HealthTool, ResultText(res))
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the service recreated db/%s.sqlite (stat: %v)", d.Name, err)
		}
	})
	t.Run("replaced_database", func(t *testing.T) {
		dir := NewWorld(t, d)
		path := world.DBPath(dir, d.Name)
		cs := ConnectMemory(t, Open(t, c, dir))
		before := callText(t, cs, d.HealthTool)
		// The same schema without the test rows, put in place by rename
		// (as a reset does), must be what the next call reads.
		empty := filepath.Join(t.TempDir(), "empty.sqlite")
		state.ExecTest(t, empty, d.Schema()...)
		if err := os.Rename(empty, path); err != nil {
			t.Fatal(err)
		}
		after := callText(t, cs, d.HealthTool)
		fresh := callText(t, ConnectMemory(t, Open(t, c, dir)), d.HealthTool)
		if after != fresh {
			t.Errorf("after the database was replaced %s answers %s, but a fresh service %s", d.HealthTool, after, fresh)
		}
		if before == after && len(d.Test.SQL) > 0 {
			t.Logf("note: %s answers the same over the test world and the empty one (%s)", d.HealthTool, after)
		}
	})
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", tool, ResultText(res))
	}
	return ResultText(res)
}

// examples are the definition's test calls as script steps.
func examples(d *engine.Definition) []Step {
	var steps []Step
	for _, c := range d.Test.Calls {
		steps = append(steps, Step{Tool: c.Tool, Args: c.Args, Resource: c.Resource})
	}
	if len(steps) == 0 {
		steps = append(steps, Step{Tool: d.HealthTool})
	}
	return steps
}

// NewWorld writes the definition's test world into a new directory and
// returns it.
func NewWorld(t testing.TB, d *engine.Definition) string {
	t.Helper()
	sqls := map[string][]string{d.Name: append(d.Schema(), d.Test.SQL...)}
	for db, s := range d.Test.Other {
		sqls[db] = s
	}
	return state.MakeTestWorld(t, t.TempDir(), state.TestWorld{SQL: sqls, Files: d.Test.Files})
}

func options(d *engine.Definition, dir string) engine.Options {
	now, err := time.Parse(time.RFC3339, d.Test.Now)
	if err != nil {
		panic(err) // Validate checked it
	}
	return engine.Options{WorldDir: dir, Clock: world.FixedClock(now), Self: d.Test.Self, SelfAddress: d.Test.SelfAddress}
}

// Open serves the definition over the world at dir with its test persona
// and clock.
func Open(t testing.TB, c *engine.Compiled, dir string) *engine.Service {
	t.Helper()
	s, err := engine.New(c, options(c.Def, dir))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ToolProblems lists what is wrong with the tools cs lists against the
// definition d: a tool missing or extra, one without a description,
// annotations or output schema, a schema a model API's adapter refuses.
func ToolProblems(cs *mcp.ClientSession, d *engine.Definition) []string {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return []string{fmt.Sprintf("tools/list: %v", err)}
	}
	var p []string
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		switch {
		case tool.Description == "":
			p = append(p, tool.Name+": no description")
		case tool.Annotations == nil:
			p = append(p, tool.Name+": no annotations (say readOnlyHint)")
		case tool.OutputSchema == nil:
			p = append(p, tool.Name+": no output schema")
		}
		p = append(p, SchemaProblems(tool)...)
	}
	var want []string
	for _, tool := range d.Tools {
		want = append(want, tool.Name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		p = append(p, fmt.Sprintf("tools/list names %v, the definition %v", names, want))
	}
	return p
}

// KeyProblems creates the definition's schema and lists every table whose
// natural key (state.Tables: its first UNIQUE constraint) is not the one
// the definition declares.
func KeyProblems(t testing.TB, d *engine.Definition) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.sqlite")
	state.ExecTest(t, path, d.Schema()...)
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := state.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var p []string
	for _, want := range d.Tables {
		i := slices.IndexFunc(tables, func(tb state.Table) bool { return tb.Name == want.Name })
		if i < 0 {
			p = append(p, fmt.Sprintf("table %s: not created by the schema", want.Name))
			continue
		}
		got := slices.Sorted(slices.Values(tables[i].NaturalKey))
		if !slices.Equal(got, slices.Sorted(slices.Values(want.Key))) {
			p = append(p, fmt.Sprintf("table %s: natural key %v in the database, %v in the definition", want.Name, tables[i].NaturalKey, want.Key))
		}
	}
	if len(tables) != len(d.Tables) {
		p = append(p, fmt.Sprintf("the schema creates %d tables, the definition declares %d", len(tables), len(d.Tables)))
	}
	return p
}

// badArguments returns argument sets every tool must refuse with a tool
// error that names the problem: not an object, an unknown argument, each
// argument of the wrong JSON type.
func badArguments(tool *mcp.Tool) []struct {
	args any
	want string
} {
	out := []struct {
		args any
		want string
	}{
		{[]any{1}, "JSON object"},
		{"text", "JSON object"},
		{map[string]any{"no_such_argument": 1}, "no_such_argument"},
	}
	schema, _ := json.Marshal(tool.InputSchema)
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.Properties {
			if !yield(n) {
				return
			}
		}
	}) {
		var wrong any
		switch s.Properties[name].Type {
		case "string":
			wrong = 12345
		case "integer", "number":
			wrong = "many"
		case "boolean":
			wrong = "yes"
		case "array":
			wrong = map[string]any{"x": 1}
		case "object":
			wrong = 7
		default:
			continue
		}
		args := map[string]any{name: wrong}
		out = append(out, struct {
			args any
			want string
		}{args, name})
	}
	if len(s.Required) > 0 {
		out = append(out, struct {
			args any
			want string
		}{map[string]any{}, "required"})
	}
	return out
}

// BadInputProblems calls every tool cs lists with bad arguments and lists
// each call that was not a tool error naming the problem, or that changed
// the database at dbPath.
func BadInputProblems(cs *mcp.ClientSession, dbPath string) []string {
	ctx := context.Background()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return []string{fmt.Sprintf("tools/list: %v", err)}
	}
	before, _, err := state.HashDB(ctx, dbPath)
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	for _, tool := range res.Tools {
		for _, bad := range badArguments(tool) {
			raw, _ := json.Marshal(bad.args)
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: json.RawMessage(raw)})
			switch {
			case err != nil:
				p = append(p, fmt.Sprintf("%s(%s): protocol error %v, want a tool error", tool.Name, raw, err))
			case !r.IsError:
				p = append(p, fmt.Sprintf("%s(%s): succeeded, want a tool error", tool.Name, raw))
			case !strings.Contains(ResultText(r), bad.want):
				p = append(p, fmt.Sprintf("%s(%s): error %q does not say %q", tool.Name, raw, ResultText(r), bad.want))
			}
		}
	}
	after, _, err := state.HashDB(ctx, dbPath)
	if err != nil {
		return append(p, err.Error())
	}
	if after != before {
		p = append(p, "bad calls changed the database")
	}
	return p
}

// ReadOnlyProblems calls every read-only tool (readOnlyHint) with no
// arguments and with the arguments steps give it, and lists each call
// after which the database at dbPath changed.
func ReadOnlyProblems(cs *mcp.ClientSession, dbPath string, steps []Step) []string {
	ctx := context.Background()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return []string{fmt.Sprintf("tools/list: %v", err)}
	}
	var p []string
	n := 0
	for _, tool := range res.Tools {
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			continue
		}
		calls := []map[string]any{{}}
		for _, st := range steps {
			if st.Tool == tool.Name && st.Args != nil {
				calls = append(calls, st.Args)
			}
		}
		for _, args := range calls {
			before, _, err := state.HashDB(ctx, dbPath)
			if err != nil {
				return append(p, err.Error())
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args}); err != nil {
				p = append(p, fmt.Sprintf("%s(%v): %v", tool.Name, args, err))
				continue
			}
			n++
			after, _, err := state.HashDB(ctx, dbPath)
			if err != nil {
				return append(p, err.Error())
			}
			if after != before {
				p = append(p, fmt.Sprintf("%s(%v) is read-only (readOnlyHint) but changed the database", tool.Name, args))
			}
		}
	}
	if n == 0 {
		p = append(p, "no read-only tool was called (a service needs at least its health tool)")
	}
	return p
}

// OpProblems applies the example of every synthesis operation, in order,
// as one day's delta on top of the test world, and lists what went wrong:
// an operation without an example, an example the operation refuses, a
// delta that does not apply (a table, a key or a reference that does not
// resolve), or a health tool that fails on the world it made.
func OpProblems(t testing.TB, c *engine.Compiled) []string {
	t.Helper()
	d := c.Def
	if len(d.Ops) == 0 {
		return nil
	}
	var p []string
	var ops []delta.Op
	for i, o := range d.Ops {
		if o.Example == nil {
			p = append(p, fmt.Sprintf("ops[%d] (%s): no example; give one (example:) so the suite can apply it", i, o.Name))
			continue
		}
		got, err := c.Op(o.Name, o.Example)
		if err != nil {
			p = append(p, fmt.Sprintf("ops[%d] (%s): its example: %v", i, o.Name, err))
			continue
		}
		if len(got) == 0 {
			p = append(p, fmt.Sprintf("ops[%d] (%s): its example emits nothing", i, o.Name))
		}
		ops = append(ops, got...)
	}
	if len(p) > 0 {
		return p
	}
	parent := NewWorld(t, d)
	m, err := world.ReadManifest(parent)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := m.Time()
	day := &delta.Delta{Version: delta.Version, Persona: m.Persona, Day: m.Day + 1, Clock: now.Add(24 * time.Hour).Format(time.RFC3339), Ops: ops}
	dst := filepath.Join(t.TempDir(), "after-ops")
	if err := delta.ApplyCopy(context.Background(), parent, dst, day, nil); err != nil {
		return []string{fmt.Sprintf("the ops' examples do not apply to the test world: %v", err)}
	}
	cs := ConnectMemory(t, Open(t, c, dst))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: d.HealthTool, Arguments: map[string]any{}})
	switch {
	case err != nil:
		return []string{fmt.Sprintf("after the ops' examples %s fails: %v", d.HealthTool, err)}
	case res.IsError:
		return []string{fmt.Sprintf("after the ops' examples %s fails: %s", d.HealthTool, ResultText(res))}
	}
	return nil
}

// PageCase is one call BenchPages times: a tool call (Tool, Args) or a
// resource read (URI), whose answer must hold Want (e.g. "next_cursor":
// a full page, which proves the grown world is what it read).
type PageCase struct {
	Name, Tool string
	Args       map[string]any
	URI, Want  string
}

// BenchPages times cases in process on the definition's test world grown
// by the statements grow (run on the service's database after its rows),
// so that a page costs what its own rows cost, not what the rows it leaves
// out would.
func BenchPages(b *testing.B, c *engine.Compiled, grow []string, cases []PageCase) {
	d := c.Def
	dir := NewWorld(b, d)
	state.ExecTest(b, world.DBPath(dir, d.Name), grow...)
	opts := options(d, dir)
	opts.Ephemeral = true
	svc, err := engine.New(c, opts)
	if err != nil {
		b.Fatal(err)
	}
	cs := ConnectMemory(b, svc)
	ctx := context.Background()
	for _, pc := range cases {
		b.Run(pc.Name, func(b *testing.B) {
			for b.Loop() {
				var text string
				if pc.URI != "" {
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: pc.URI})
					if err != nil {
						b.Fatal(err)
					}
					text = res.Contents[0].Text
				} else {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: pc.Tool, Arguments: pc.Args})
					if err != nil {
						b.Fatal(err)
					}
					text = ResultText(res)
					if res.IsError {
						b.Fatalf("%s: %s", pc.Tool, text)
					}
				}
				if !strings.Contains(text, pc.Want) {
					b.Fatalf("%s: %.300s has no %q", pc.Name, text, pc.Want)
				}
			}
		})
	}
}
