package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose messages database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func threadIDs(ts []ThreadSummary) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.Thread)
	}
	return ids
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			// list_threads: most recently active first, with unread counts.
			list := servicetest.Call[ListThreadsOut](t, cs, "list_threads", map[string]any{})
			if got, want := threadIDs(list.Threads), []string{"dm-maya-chen", "grp-lisbon", "t-bob"}; !slices.Equal(got, want) {
				t.Fatalf("threads = %v, want %v", got, want)
			}
			grp := list.Threads[1]
			if grp.Kind != "group" || grp.Unread != 2 || grp.Messages != 4 || len(grp.Participants) != 4 ||
				grp.LastMessage == nil || grp.LastMessage.Sender != "Maya Chen" || grp.LastMessage.SentAt != "2026-02-28 12:00:00" {
				t.Errorf("group summary = %+v", grp)
			}
			if list.NextCursor != "" {
				t.Errorf("next_cursor = %q on the only page", list.NextCursor)
			}

			// Pagination.
			page1 := servicetest.Call[ListThreadsOut](t, cs, "list_threads", map[string]any{"limit": 2})
			if got := threadIDs(page1.Threads); !slices.Equal(got, []string{"dm-maya-chen", "grp-lisbon"}) || page1.NextCursor == "" {
				t.Fatalf("page 1 = %v, cursor %q", got, page1.NextCursor)
			}
			page2 := servicetest.Call[ListThreadsOut](t, cs, "list_threads", map[string]any{"limit": 2, "cursor": page1.NextCursor})
			if got := threadIDs(page2.Threads); !slices.Equal(got, []string{"t-bob"}) || page2.NextCursor != "" {
				t.Fatalf("page 2 = %v, cursor %q", got, page2.NextCursor)
			}

			// read_thread returns messages in order and marks them read.
			read := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread": "grp-lisbon"})
			if len(read.Messages) != 4 || read.Title != "Lisbon trip" {
				t.Fatalf("read = %+v", read)
			}
			for i, m := range read.Messages {
				if m.Seq != i+1 {
					t.Errorf("message %d has seq %d", i, m.Seq)
				}
				if want := i >= 2; m.New != want {
					t.Errorf("message %d new = %v, want %v", m.Seq, m.New, want)
				}
			}
			again := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread": "grp-lisbon"})
			for _, m := range again.Messages {
				if m.New {
					t.Errorf("message %d still new after reading", m.Seq)
				}
			}
			list = servicetest.Call[ListThreadsOut](t, cs, "list_threads", nil)
			if list.Threads[1].Unread != 0 {
				t.Errorf("unread after read_thread = %d", list.Threads[1].Unread)
			}

			// search_messages: body and sender, case-insensitive, newest first;
			// SQL wildcards are plain characters.
			found := servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "DINNER"})
			if len(found.Matches) != 2 || found.Matches[0].Thread != "grp-lisbon" || found.Matches[1].Thread != "dm-maya-chen" || found.Matches[1].Seq != 1 {
				t.Fatalf("search dinner = %+v", found.Matches)
			}
			if !strings.Contains(found.Matches[0].Snippet, "Dinner on us") {
				t.Errorf("snippet = %q", found.Matches[0].Snippet)
			}
			bySender := servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "bob weller"})
			if len(bySender.Matches) != 1 || bySender.Matches[0].Thread != "t-bob" {
				t.Errorf("search by sender = %+v", bySender.Matches)
			}
			pct := servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "50%"})
			if len(pct.Matches) != 1 || pct.Matches[0].Seq != 1 {
				t.Errorf("search 50%% = %+v", pct.Matches)
			}
			if none := servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "_"}); len(none.Matches) != 0 {
				t.Errorf("search _ = %+v, want none", none.Matches)
			}
			limited := servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "a", "limit": 3})
			if len(limited.Matches) != 3 || !limited.More {
				t.Errorf("limited search: %d matches, more=%v", len(limited.Matches), limited.More)
			}

			// send_message to a thread.
			sent := servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"thread": "grp-lisbon", "body": "Booked!"})
			want := SendMessageOut{Thread: "grp-lisbon", Title: "Lisbon trip", Seq: 5, Sender: TestSelf, Body: "Booked!", SentAt: "2026-03-01 09:00:00"}
			if sent != want {
				t.Errorf("sent = %+v, want %+v", sent, want)
			}
			// to an existing DM whose id is not dm-<slug>, matched by name.
			sent = servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "bob weller", "body": "Ping"})
			if sent.Thread != "t-bob" || sent.Seq != 3 || sent.CreatedThread {
				t.Errorf("sent to Bob = %+v", sent)
			}
			// to a new person: a DM thread is created, then reused.
			sent = servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Zoë Park", "body": "Hi Zoë"})
			if sent.Thread != "dm-zo-park" || sent.Seq != 1 || !sent.CreatedThread || sent.Title != "Zoë Park" {
				t.Errorf("sent to Zoë = %+v", sent)
			}
			sent = servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Zoë Park", "body": "Are you free?"})
			if sent.Thread != "dm-zo-park" || sent.Seq != 2 || sent.CreatedThread {
				t.Errorf("second message to Zoë = %+v", sent)
			}
			list = servicetest.Call[ListThreadsOut](t, cs, "list_threads", nil)
			if got, want := threadIDs(list.Threads), []string{"dm-zo-park", "grp-lisbon", "t-bob", "dm-maya-chen"}; !slices.Equal(got, want) {
				t.Errorf("threads after sending = %v, want %v", got, want)
			}
			if z := list.Threads[0]; !slices.Equal(z.Participants, []string{TestSelf, "Zoë Park"}) || z.Unread != 0 || z.Kind != "dm" {
				t.Errorf("new DM summary = %+v", z)
			}
			zoe := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread": "dm-zo-park"})
			if len(zoe.Messages) != 2 || zoe.Messages[1].Body != "Are you free?" || zoe.Messages[0].Sender != TestSelf {
				t.Errorf("new DM = %+v", zoe)
			}
		})
	}
}

func TestBadInputsChangeNothing(t *testing.T) {
	long := strings.Repeat("x", MaxBodyChars+1)
	cases := []struct {
		tool string
		args map[string]any
		want string // part of the message
	}{
		{"read_thread", map[string]any{"thread": "nope"}, "call list_threads"},
		{"read_thread", map[string]any{"thread": "DM-MAYA-CHEN"}, `did you mean thread "dm-maya-chen"`},
		{"read_thread", map[string]any{"thread": "lisbon trip"}, `did you mean thread "grp-lisbon"`},
		{"read_thread", map[string]any{"thread": ""}, "thread is required"},
		{"read_thread", map[string]any{}, "thread"},
		{"read_thread", map[string]any{"thread": 7}, "thread"},
		{"read_thread", map[string]any{"thread": "t-bob", "extra": 1}, "extra"},
		{"list_threads", map[string]any{"limit": 101}, "between 1 and 100"},
		{"list_threads", map[string]any{"limit": -1}, "between 1 and 100"},
		{"list_threads", map[string]any{"limit": "ten"}, "limit"},
		{"list_threads", map[string]any{"cursor": "not a cursor"}, "pass next_cursor"},
		{"list_threads", map[string]any{"cursor": cursor{"x", ""}.String()}, "pass next_cursor"},
		{"search_messages", map[string]any{"query": "  "}, "query is empty"},
		{"search_messages", map[string]any{"query": strings.Repeat("q", MaxQueryChars+1)}, "at most 200"},
		{"search_messages", map[string]any{"query": "x", "limit": 1000}, "between 1 and 100"},
		{"send_message", map[string]any{"thread": "t-bob", "to": "Bob Weller", "body": "hi"}, "not both"},
		{"send_message", map[string]any{"body": "hi"}, "give thread"},
		{"send_message", map[string]any{"thread": "t-bob", "body": ""}, "body is empty"},
		{"send_message", map[string]any{"thread": "t-bob", "body": " \n\t"}, "body is empty"},
		{"send_message", map[string]any{"thread": "t-bob", "body": long}, "limit is 10000"},
		{"send_message", map[string]any{"thread": "nope", "body": "hi"}, "call list_threads"},
		{"send_message", map[string]any{"to": "alex", "body": "hi"}, "which is you"},
		{"send_message", map[string]any{"to": strings.Repeat("n", MaxNameChars+1), "body": "hi"}, "at most 200"},
		{"no_such_tool", map[string]any{}, ""},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				if c.tool == "no_such_tool" {
					// An unknown tool is the one protocol-level error.
					if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err == nil {
						t.Errorf("unknown tool: no error")
					}
					continue
				}
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%v): message %q does not mention %q", c.tool, c.args, msg, c.want)
				}
				if after := servicetest.HashDB(t, path); after != before {
					t.Fatalf("%s(%v) changed the database", c.tool, c.args)
				}
			}
		})
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread": "dm-maya-chen"})
	servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"thread": "dm-maya-chen", "body": "Great, see you then."})
	servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Priya Nair", "body": "Can you share the flight numbers?"})
	servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Priya Nair", "body": "Thanks!"})
	servicetest.Call[SearchMessagesOut](t, cs, "search_messages", map[string]any{"query": "flight"})
	servicetest.Call[ListThreadsOut](t, cs, "list_threads", nil)
	servicetest.CallError(t, cs, "send_message", map[string]any{"thread": "missing", "body": "x"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	if servicetest.HashDB(t, a) != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	orig := servicetest.HashDB(t, a)
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b)
	if ha != hb {
		d, err := state.Compare(context.Background(), filepath.Dir(filepath.Dir(a)), filepath.Dir(filepath.Dir(b)))
		if err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases: %s vs %s", ha, hb)
	}
	if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // tool -> its input properties
		"list_threads":    {"limit", "cursor"},
		"read_thread":     {"thread"},
		"search_messages": {"query", "limit"},
		"send_message":    {"thread", "to", "body"},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string
			Properties map[string]struct{ Type, Description string }
			Required   []string
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		if schema.Type != "object" {
			t.Errorf("%s: schema type %q", tool.Name, schema.Type)
		}
		for _, p := range want[tool.Name] {
			prop, ok := schema.Properties[p]
			if !ok || prop.Description == "" {
				t.Errorf("%s: property %s missing or without description: %s", tool.Name, p, raw)
			}
		}
		if len(schema.Properties) != len(want[tool.Name]) {
			t.Errorf("%s: properties %v", tool.Name, schema.Properties)
		}
		if tool.Name == "send_message" && !slices.Equal(schema.Required, []string{"body"}) {
			t.Errorf("send_message required = %v", schema.Required)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"list_threads", "read_thread", "search_messages", "send_message"}) {
		t.Errorf("tools = %v", names)
	}
	if res.Tools[0].Annotations == nil {
		t.Fatal("no annotations")
	}
	for _, tool := range res.Tools {
		if ro := tool.Annotations.ReadOnlyHint; ro != (tool.Name == "list_threads" || tool.Name == "search_messages") {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
	}
}

func TestThreadResource(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "messages://thread/{thread}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	before := servicetest.HashDB(t, path)
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ThreadURI("grp-lisbon")})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	for _, want := range []string{"Lisbon trip (group, thread grp-lisbon)", "Participants: Alex, Maya Chen, Sam Ortiz, Priya Nair", "4. Maya Chen (2026-02-28 12:00:00): I can."} {
		if !strings.Contains(text, want) {
			t.Errorf("resource text lacks %q:\n%s", want, text)
		}
	}
	if res.Contents[0].MIMEType != "text/plain" {
		t.Errorf("mime = %q", res.Contents[0].MIMEType)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ThreadURI("nope")}); err == nil {
		t.Error("unknown thread resource: no error")
	}
	if servicetest.HashDB(t, path) != before {
		t.Error("reading a resource changed the database")
	}
}

// TestReplacedDatabase: an instance reset replaces the file between calls;
// the next call sees the new file.
func TestReplacedDatabase(t *testing.T) {
	path := newWorld(t)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	MakeTestDB(t, pristine)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Zed", "body": "one"})
	if got := servicetest.Call[ListThreadsOut](t, cs, "list_threads", nil); len(got.Threads) != 4 {
		t.Fatalf("%d threads after sending", len(got.Threads))
	}
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.WriteFileAtomic(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := servicetest.Call[ListThreadsOut](t, cs, "list_threads", nil); len(got.Threads) != 3 {
		t.Fatalf("%d threads after the reset, want 3", len(got.Threads))
	}
	sent := servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"to": "Zed", "body": "two"})
	if sent.Seq != 1 || !sent.CreatedThread {
		t.Errorf("after reset: %+v", sent)
	}
}

// TestMissingDatabase: a vanished file is an internal tool error, and the
// service does not create an empty database in its place.
func TestMissingDatabase(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	msg := servicetest.CallError(t, cs, "send_message", map[string]any{"thread": "t-bob", "body": "hi"})
	if !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_threads", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}

func TestConcurrentSends(t *testing.T) {
	path := newWorld(t)
	s := newService(t, path)
	const n = 8
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		if i%2 == 0 {
			sessions[i] = servicetest.ConnectMemory(t, s)
		} else {
			sessions[i] = servicetest.ConnectHTTP(t, s)
		}
	}
	var wg sync.WaitGroup
	seqs := make([]int, n)
	for i, cs := range sessions {
		wg.Go(func() {
			seqs[i] = servicetest.Call[SendMessageOut](t, cs, "send_message", map[string]any{"thread": "grp-lisbon", "body": fmt.Sprint("msg ", i)}).Seq
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

// TestHTTPRejectsForeignHost: the SDK's DNS-rebinding protection is on.
func TestHTTPRejectsForeignHost(t *testing.T) {
	ts := httptest.NewServer(newService(t, newWorld(t)).HTTPHandler())
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		host string
		want int
	}{{"evil.example", http.StatusForbidden}, {"", http.StatusOK}} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: status %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	path := newWorld(t)
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	state.ExecTest(t, empty, "CREATE TABLE threads (id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock(), Self: "A"}, "DBPath is required"},
		{Options{DBPath: path, Self: "A"}, "Clock is required"},
		{Options{DBPath: path, Clock: TestClock()}, "Self is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock(), Self: "A"}, "no such file"},
		{Options{DBPath: empty, Clock: TestClock(), Self: "A"}, "no column title"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestSchemaNaturalKeys: every table of Schema has a natural key.
func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.sqlite")
	state.ExecTest(t, path, Schema()...)
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := state.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"messages": {"thread_id", "seq"}, "participants": {"thread_id", "name"}, "threads": {"ext_id"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Maya Chen":               "maya-chen",
		"  O'Neil, Ann ":          "o-neil-ann",
		"Zoë Park":                "zo-park",
		"R2-D2":                   "r2-d2",
		"李雷":                      slug("李雷"),
		strings.Repeat("ab ", 30): strings.TrimRight(strings.Repeat("ab-", 16), "-"),
	} {
		if got := slug(in); got != want || got == "" {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	if s := slug("李雷"); len(s) != 8 || s == slug("韩梅梅") {
		t.Errorf("hash slug = %q", s)
	}
}

func TestSnippetAndCursor(t *testing.T) {
	body := strings.Repeat("a", 100) + " Needle " + strings.Repeat("b", 100)
	got := snippet(body, "needle", 10)
	if got != "…aaaaaaaaa Needle bbbbbbbbb…" {
		t.Errorf("snippet = %q", got)
	}
	if got := snippet("short text", "zzz", 60); got != "short text" {
		t.Errorf("no-match snippet = %q", got)
	}
	if got := preview("line one\nline two", 8); got != "line one…" {
		t.Errorf("preview = %q", got)
	}
	c := cursor{activeAt: "2026-03-01 09:00:00", thread: "dm-x"}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
	for _, bad := range []string{"", "!!", "YWJj"} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) ok", bad)
		}
	}
}
