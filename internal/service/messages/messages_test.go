package messages

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The shared suite (servicetest.Suite, run by internal/service's
// TestSuite) and the golden transcript (testdata/scripts/messages.json)
// test the tools; these test what is the package's own.

// newWorld writes a world whose messages database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *engine.Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSameName: send_message's check that to is not the persona folds
// case as Unicode does, where SQLite's lower() folds ASCII only.
func TestSameName(t *testing.T) {
	same := Hooks.Funcs["messages_same_name"].Fn
	for _, c := range []struct {
		a, b driver.Value
		want int64
	}{
		{"alex", "Alex", 1},
		{"ZOË", "Zoë", 1},
		{[]byte("ÅSA"), "åsa", 1},
		{"Alex ", "Alex", 0},
		{"Alexa", "Alex", 0},
		{nil, "Alex", 0},
	} {
		got, err := same([]driver.Value{c.a, c.b})
		if err != nil || got != c.want {
			t.Errorf("messages_same_name(%v, %v) = %v, %v; want %d", c.a, c.b, got, err, c.want)
		}
	}
	// Through the tool: a non-ASCII persona's own name in another case.
	path := newWorld(t)
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: "Zoë"})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	if msg := servicetest.CallError(t, cs, "send_message", map[string]any{"to": "ZOË", "body": "hi"}); msg != `to is "ZOË", which is you; pass the name of the person to message` {
		t.Errorf("message to yourself: %q", msg)
	}
}

// TestNew: New serves a database file outside a world (as the conformance
// suite and mcpbench open it) and names what is missing.
func TestNew(t *testing.T) {
	lone := filepath.Join(t.TempDir(), "messages.sqlite")
	MakeTestDB(t, lone)
	cs := servicetest.ConnectMemory(t, newService(t, lone))
	type list struct {
		Threads []struct{ Thread string } `json:"threads"`
	}
	if got := servicetest.Call[list](t, cs, "list_threads", nil); len(got.Threads) != 3 {
		t.Errorf("list_threads = %+v", got)
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock(), Self: "A"}, "DBPath is required"},
		{Options{DBPath: lone, Self: "A"}, "Clock is required"},
		{Options{DBPath: lone, Clock: TestClock()}, "Self is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock(), Self: "A"}, "no such file"},
	} {
		if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.opts, err, c.want)
		}
	}
}

// TestConcurrentSends: sends from many sessions at once, in memory and
// over HTTP, each get their own seq.
func TestConcurrentSends(t *testing.T) {
	s := newService(t, newWorld(t))
	const n = 8
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		if i%2 == 0 {
			sessions[i] = servicetest.ConnectMemory(t, s)
		} else {
			sessions[i] = servicetest.ConnectHTTP(t, s)
		}
	}
	type sent struct {
		Seq int `json:"seq"`
	}
	var wg sync.WaitGroup
	seqs := make([]int, n)
	for i, cs := range sessions {
		wg.Go(func() {
			seqs[i] = servicetest.Call[sent](t, cs, "send_message", map[string]any{"thread": "grp-lisbon", "body": fmt.Sprint("msg ", i)}).Seq
		})
	}
	wg.Wait()
	slices.Sort(seqs)
	for i, seq := range seqs {
		if seq != 5+i {
			t.Fatalf("seqs = %v, want 5..%d", seqs, 4+n)
		}
	}
}

// TestLint: every SQL text of the tools and the resource prepares against
// the schema, and the example calls run.
func TestLint(t *testing.T) {
	r, err := engine.Lint(t.Context(), Compiled())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		t.Error(p)
	}
}

// TestOps: the synthesis operations write a conversation as a world
// synthesizer's direct messages do (internal/synth's dm_conversation), and
// the tools read it back.
func TestOps(t *testing.T) {
	thread, err := Compiled().Op("add_thread", map[string]any{"ext_id": "dm-kim", "title": "Kim Lee", "kind": "dm",
		"created_at": "2026-03-02 08:00:00", "participants": []string{"Alex", "Kim Lee"}})
	if err != nil {
		t.Fatal(err)
	}
	var ops []delta.Op
	ops = append(ops, thread...)
	for i, m := range []struct {
		from string
		read int
	}{{"Kim Lee", 0}, {"Alex", 1}} {
		msg, err := Compiled().Op("add_message", map[string]any{"thread": "dm-kim", "seq": i + 1, "sender": m.from,
			"body": fmt.Sprint("hello ", i), "sent_at": "2026-03-02 08:0" + fmt.Sprint(i) + ":00", "is_read": m.read})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, msg...)
	}
	key := map[string]delta.Value{"ext_id": delta.Lit("dm-kim")}
	want := []delta.Op{
		{Op: delta.OpDBInsert, DB: DBName, Table: "threads", Key: key,
			Values: map[string]delta.Value{"title": delta.Lit("Kim Lee"), "kind": delta.Lit("dm"), "created_at": delta.Lit("2026-03-02 08:00:00")}},
	}
	for _, name := range []string{"Alex", "Kim Lee"} {
		want = append(want, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "participants",
			Key: map[string]delta.Value{"thread_id": delta.RefTo("threads", key, "id"), "name": delta.Lit(name)}})
	}
	for i, from := range []string{"Kim Lee", "Alex"} {
		want = append(want, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "messages",
			Key: map[string]delta.Value{"thread_id": delta.RefTo("threads", key, "id"), "seq": delta.Lit(i + 1)},
			Values: map[string]delta.Value{"sender": delta.Lit(from), "body": delta.Lit(fmt.Sprint("hello ", i)),
				"sent_at": delta.Lit("2026-03-02 08:0" + fmt.Sprint(i) + ":00"), "is_read": delta.Lit(i)}})
	}
	got, _ := json.Marshal(ops)
	if w, _ := json.Marshal(want); string(got) != string(w) {
		t.Errorf("delta operations:\n got  %s\n want %s", got, w)
	}

	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z",
		Ops: append([]delta.Op{Compiled().Def.CreateOp()}, ops...)}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(context.Background(), parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst, DBName)))
	if got := servicetest.ReadResource(t, cs, "messages://thread/dm-kim", "text/plain"); got != "Kim Lee (dm, thread dm-kim)\nParticipants: Alex, Kim Lee\n\n1. Kim Lee (2026-03-02 08:00:00): hello 0\n2. Alex (2026-03-02 08:01:00): hello 1\n" {
		t.Errorf("thread = %q", got)
	}

	for _, bad := range []struct {
		op     string
		params map[string]any
	}{
		{"add_thread", map[string]any{"ext_id": "x", "title": "X", "kind": "chat", "created_at": "2026-03-02 08:00:00", "participants": []string{"Alex"}}},
		{"add_thread", map[string]any{"ext_id": "x", "title": " ", "kind": "dm", "created_at": "2026-03-02 08:00:00", "participants": []string{"Alex"}}},
		{"add_thread", map[string]any{"ext_id": "x", "title": "X", "kind": "dm", "created_at": "2026-03-02T08:00:00Z", "participants": []string{"Alex"}}},
		{"add_thread", map[string]any{"ext_id": "x", "title": "X", "kind": "dm", "created_at": "2026-03-02 08:00:00", "participants": []string{"Alex", ""}}},
		{"add_message", map[string]any{"thread": "x", "seq": 0, "sender": "Alex", "body": "b", "sent_at": "2026-03-02 08:00:00", "is_read": 1}},
		{"add_message", map[string]any{"thread": "x", "seq": 1, "sender": "", "body": "b", "sent_at": "2026-03-02 08:00:00", "is_read": 1}},
		{"add_message", map[string]any{"thread": "x", "seq": 1, "sender": "Alex", "body": "b", "sent_at": "yesterday", "is_read": 1}},
	} {
		if _, err := Compiled().Op(bad.op, bad.params); err == nil {
			t.Errorf("%s(%v): no error", bad.op, bad.params)
		}
	}
}
