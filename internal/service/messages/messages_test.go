package messages

import (
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
