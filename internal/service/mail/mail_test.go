package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func mailIDs[T any](ms []T, id func(T) string) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, id(m))
	}
	return ids
}

func summaryID(m MailSummary) string { return m.Mail }
func matchID(m Match) string         { return m.Mail }
func viewID(m MailView) string       { return m.Mail }

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			dir := newWorld(t)
			cs := tr.Connect(t, NewTestService(t, dir))

			folders := servicetest.Call[ListFoldersOut](t, cs, "list_folders", map[string]any{})
			want := []Folder{{"inbox", 3, 1 + 1}, {"sent", 1, 0}, {"archive", 1, 0}, {"drafts", 0, 0}, {"trash", 1, 1}, {"receipts", 1, 0}}
			if !slices.Equal(folders.Folders, want) {
				t.Fatalf("folders = %+v, want %+v", folders.Folders, want)
			}

			// list_mails: inbox by default, newest first, pagination.
			inbox := servicetest.Call[ListMailsOut](t, cs, "list_mails", nil)
			if got := mailIDs(inbox.Mails, summaryID); !slices.Equal(got, []string{"m-000003", "m-000001", "m-000004"}) || inbox.Folder != Inbox || inbox.NextCursor != "" {
				t.Fatalf("inbox = %v %+v", got, inbox)
			}
			if m := inbox.Mails[1]; m.Attachments != 1 || !m.Read || m.ThreadKey != "t-lisbon" || !slices.Equal(m.To, []string{TestSelfAddress}) {
				t.Errorf("m-000001 summary = %+v", m)
			}
			if m := inbox.Mails[0]; m.Read || !m.Starred {
				t.Errorf("m-000003 summary = %+v", m)
			}
			p1 := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"folder": "inbox", "limit": 2})
			if got := mailIDs(p1.Mails, summaryID); !slices.Equal(got, []string{"m-000003", "m-000001"}) || p1.NextCursor == "" {
				t.Fatalf("page 1 = %v %q", got, p1.NextCursor)
			}
			p2 := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"folder": "inbox", "limit": 2, "cursor": p1.NextCursor})
			if got := mailIDs(p2.Mails, summaryID); !slices.Equal(got, []string{"m-000004"}) || p2.NextCursor != "" {
				t.Fatalf("page 2 = %v %q", got, p2.NextCursor)
			}
			unread := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"unread_only": true})
			if got := mailIDs(unread.Mails, summaryID); !slices.Equal(got, []string{"m-000003", "m-000004"}) {
				t.Errorf("unread = %v", got)
			}
			if r := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"folder": "receipts"}); len(r.Mails) != 1 {
				t.Errorf("receipts = %+v", r)
			}

			// search_mails: subject, body, sender; wildcards are plain; dates.
			if got := mailIDs(servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "LISBON"}).Matches, matchID); !slices.Equal(got, []string{"m-000003", "m-000002", "m-000001"}) {
				t.Errorf("search lisbon = %v", got)
			}
			if got := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "weller.example"}).Matches; len(got) != 1 || got[0].Mail != "m-000004" || got[0].Folder != Inbox {
				t.Errorf("search sender = %+v", got)
			}
			if got := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "50%"}).Matches; len(got) != 1 || !strings.Contains(got[0].Snippet, "50% off") {
				t.Errorf("search 50%% = %+v", got)
			}
			if got := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "_"}).Matches; len(got) != 0 {
				t.Errorf("search _ = %+v", got)
			}
			if got := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "' OR 1=1 --"}).Matches; len(got) != 0 {
				t.Errorf("search sql = %+v", got)
			}
			dated := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "lisbon", "since": "2026-02-26", "until": "2026-02-26"})
			if got := mailIDs(dated.Matches, matchID); !slices.Equal(got, []string{"m-000002", "m-000001"}) {
				t.Errorf("dated search = %v", got)
			}
			lim := servicetest.Call[SearchMailsOut](t, cs, "search_mails", map[string]any{"query": "e", "limit": 2})
			if len(lim.Matches) != 2 || !lim.More {
				t.Errorf("limited search = %+v", lim)
			}

			// read_mail marks read and returns attachments.
			m1 := servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "m-000004"})
			if !m1.New || !m1.Read || m1.Subject != "Invoice for January" || len(m1.Attachments) != 0 {
				t.Errorf("read m-000004 = %+v", m1)
			}
			if again := servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "m-000004"}); again.New {
				t.Errorf("still new after reading")
			}
			m1 = servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "m-000001"})
			if !slices.Equal(m1.Attachments, []AttachmentView{{"itinerary.pdf", "docs/itinerary.pdf"}}) || !slices.Equal(m1.Cc, []string{"sam@example.com"}) {
				t.Errorf("read m-000001 = %+v", m1)
			}

			// read_thread: every folder, oldest first, marks read.
			th := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread_key": "t-lisbon"})
			if got := mailIDs(th.Mails, viewID); !slices.Equal(got, []string{"m-000001", "m-000002", "m-000003"}) || !th.Mails[2].New || th.Mails[1].Folder != Sent {
				t.Fatalf("thread = %v %+v", got, th)
			}
			if f := servicetest.Call[ListFoldersOut](t, cs, "list_folders", nil); f.Folders[0].Unread != 0 {
				t.Errorf("inbox unread after reading = %d", f.Folders[0].Unread)
			}

			// send_mail: a new mail with attachments.
			sent := servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"to": []string{"bob@weller.example"}, "cc": []string{"maya@example.com"},
				"subject": "January invoice", "body": "Here it is.", "attachments": []string{"docs/invoice-jan.pdf", "./docs/report.md"}})
			wantSent := MailView{Mail: "m-000008", Folder: Sent, ThreadKey: "m-000008", From: TestSelfAddress, To: []string{"bob@weller.example"},
				Cc: []string{"maya@example.com"}, Subject: "January invoice", Body: "Here it is.", SentAt: "2026-03-01 09:00:00", Read: true,
				Attachments: []AttachmentView{{"invoice-jan.pdf", "docs/invoice-jan.pdf"}, {"report.md", "docs/report.md"}}}
			if a, b := jsonOf(t, sent), jsonOf(t, wantSent); a != b {
				t.Errorf("sent = %s\nwant %s", a, b)
			}
			if back := servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "m-000008"}); jsonOf(t, back) != jsonOf(t, wantSent) {
				t.Errorf("stored = %s", jsonOf(t, back))
			}
			// a reply: thread, recipient and subject from the parent.
			reply := servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"in_reply_to": "m-000003", "body": "Thanks!"})
			if reply.Mail != "m-000009" || reply.ThreadKey != "t-lisbon" || reply.Subject != "Re: Lisbon flights" || !slices.Equal(reply.To, []string{"maya@example.com"}) {
				t.Errorf("reply = %+v", reply)
			}
			reply = servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"in_reply_to": "m-000004", "body": "Sent.", "subject": "Invoice"})
			if reply.ThreadKey != "t-invoice" || reply.Subject != "Invoice" || !slices.Equal(reply.To, []string{"bob@weller.example"}) {
				t.Errorf("reply 2 = %+v", reply)
			}
			if th := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread_key": "t-lisbon"}); len(th.Mails) != 4 {
				t.Errorf("thread after reply has %d mails", len(th.Mails))
			}

			// move, star, delete.
			mv := servicetest.Call[MoveMailOut](t, cs, "move_mail", map[string]any{"mail": "m-000004", "folder": "archive"})
			if mv != (MoveMailOut{Mail: "m-000004", From: Inbox, Folder: Archive}) {
				t.Errorf("move = %+v", mv)
			}
			if st := servicetest.Call[StarMailOut](t, cs, "star_mail", map[string]any{"mail": "m-000004", "starred": true}); !st.Starred {
				t.Errorf("star = %+v", st)
			}
			if got := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"folder": "archive"}); got.Mails[0].Mail != "m-000004" || !got.Mails[0].Starred {
				t.Errorf("archive = %+v", got.Mails)
			}
			servicetest.Call[StarMailOut](t, cs, "star_mail", map[string]any{"mail": "m-000004", "starred": false})
			del := servicetest.Call[DeleteMailOut](t, cs, "delete_mail", map[string]any{"mail": "m-000001"})
			if del != (DeleteMailOut{Mail: "m-000001", Folder: Trash}) {
				t.Errorf("delete = %+v", del)
			}
			del = servicetest.Call[DeleteMailOut](t, cs, "delete_mail", map[string]any{"mail": "m-000001"})
			if del != (DeleteMailOut{Mail: "m-000001", Deleted: true}) {
				t.Errorf("delete from trash = %+v", del)
			}
			if msg := servicetest.CallError(t, cs, "read_mail", map[string]any{"mail": "m-000001"}); !strings.Contains(msg, "no mail") {
				t.Errorf("deleted mail read: %q", msg)
			}
			if n := queryInt(t, dbPath(dir), `SELECT COUNT(*) FROM attachments WHERE home_path = 'docs/itinerary.pdf'`); n != 0 {
				t.Errorf("%d attachment rows left", n)
			}
			if _, err := os.Stat(filepath.Join(dir, "home", "docs", "itinerary.pdf")); err != nil {
				t.Errorf("home file removed: %v", err)
			}
		})
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func queryInt(t testing.TB, path, q string) int {
	t.Helper()
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBadInputsChangeNothing(t *testing.T) {
	dir := newWorld(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, world.HomeDir)
	if err := os.Symlink(outside, filepath.Join(home, "docs", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(home, "out")); err != nil {
		t.Fatal(err)
	}
	send := func(extra map[string]any) map[string]any {
		args := map[string]any{"to": []string{"bob@weller.example"}, "subject": "Hi", "body": "Hello"}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	long := strings.Repeat("x", MaxBodyChars+1)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_folders", map[string]any{"extra": 1}, "extra"},
		{"list_mails", map[string]any{"folder": "nope"}, "no folder \"nope\"; the folders are inbox, sent, archive, drafts, trash, receipts"},
		{"list_mails", map[string]any{"folder": strings.Repeat("f", MaxNameChars+1)}, "at most 200"},
		{"list_mails", map[string]any{"limit": 101}, "between 1 and 100"},
		{"list_mails", map[string]any{"limit": "ten"}, "limit"},
		{"list_mails", map[string]any{"unread_only": "yes"}, "unread_only"},
		{"list_mails", map[string]any{"cursor": "garbage"}, "pass next_cursor"},
		{"list_mails", map[string]any{"folder": "sent", "cursor": cursor{Inbox, "2026-02-28 12:00:00", "m-000003"}.String()}, "same folder"},
		{"search_mails", map[string]any{"query": " "}, "query is empty"},
		{"search_mails", map[string]any{"query": strings.Repeat("q", MaxQueryChars+1)}, "at most 200"},
		{"search_mails", map[string]any{"query": "x", "since": "2026-02-30"}, "not a date"},
		{"search_mails", map[string]any{"query": "x", "until": "yesterday"}, "YYYY-MM-DD"},
		{"search_mails", map[string]any{"query": "x", "since": "2026-03-01", "until": "2026-02-01"}, "before since"},
		{"search_mails", map[string]any{"query": 5}, "query"},
		{"read_mail", map[string]any{"mail": "nope"}, "list_mails or search_mails"},
		{"read_mail", map[string]any{"mail": "M-000004"}, `did you mean mail "m-000004"`},
		{"read_mail", map[string]any{"mail": "000004"}, `did you mean mail "m-000004"`},
		{"read_mail", map[string]any{"mail": "'; DROP TABLE mails; --"}, "no mail"},
		{"read_mail", map[string]any{"mail": ""}, "mail is required"},
		{"read_mail", map[string]any{}, "mail"},
		{"read_mail", map[string]any{"mail": strings.Repeat("m", 1000)}, "at most 200"},
		{"read_thread", map[string]any{"thread_key": "t-none"}, "no conversation"},
		{"read_thread", map[string]any{"thread_key": []string{"t-lisbon"}}, "thread_key"},
		{"send_mail", send(map[string]any{"body": ""}), "body is empty"},
		{"send_mail", send(map[string]any{"body": long}), "limit is 50000"},
		{"send_mail", send(map[string]any{"subject": strings.Repeat("s", MaxSubjectChars+1)}), "at most 500"},
		{"send_mail", send(map[string]any{"subject": "a\nb"}), "line break"},
		{"send_mail", send(map[string]any{"subject": ""}), "subject is empty"},
		{"send_mail", send(map[string]any{"to": []string{}}), "to is empty"},
		{"send_mail", send(map[string]any{"to": []string{"Bob Weller <bob@weller.example>"}}), "not a plain address"},
		{"send_mail", send(map[string]any{"to": []string{"bob"}}), "not a mail address"},
		{"send_mail", send(map[string]any{"to": "bob@weller.example"}), "to"},
		{"send_mail", send(map[string]any{"cc": []string{"x@y"}}), "cc"},
		{"send_mail", send(map[string]any{"to": slices.Repeat([]string{"a@b.example"}, MaxRecipients+1)}), "at most 50"},
		{"send_mail", send(map[string]any{"in_reply_to": "m-999999"}), "no mail"},
		{"send_mail", send(map[string]any{"attachments": []string{"../secret.txt"}}), "leaves the home directory"},
		{"send_mail", send(map[string]any{"attachments": []string{"/etc/passwd"}}), "absolute"},
		{"send_mail", send(map[string]any{"attachments": []string{"docs/link.txt"}}), "leaves your home directory through a symlink"},
		{"send_mail", send(map[string]any{"attachments": []string{"out/secret.txt"}}), "leaves your home directory through a symlink"},
		{"send_mail", send(map[string]any{"attachments": []string{"docs/missing.pdf"}}), "does not exist"},
		{"send_mail", send(map[string]any{"attachments": []string{"docs"}}), "not a regular file"},
		{"send_mail", send(map[string]any{"attachments": []string{"docs/report.md", "docs/report.md"}}), "same file name"},
		{"send_mail", send(map[string]any{"attachments": slices.Repeat([]string{"docs/report.md"}, MaxAttachments+1)}), "at most 10"},
		{"send_mail", send(map[string]any{"bcc": []string{"x@y.example"}}), "bcc"},
		{"move_mail", map[string]any{"mail": "m-000004", "folder": "Archive"}, "no folder"},
		{"move_mail", map[string]any{"mail": "m-404", "folder": "archive"}, "no mail"},
		{"move_mail", map[string]any{"mail": "m-000004"}, "folder"},
		{"star_mail", map[string]any{"mail": "m-000004"}, "starred"},
		{"star_mail", map[string]any{"mail": "m-000004", "starred": "yes"}, "starred"},
		{"delete_mail", map[string]any{"mail": "nope"}, "no mail"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			cs := tr.Connect(t, NewTestService(t, dir))
			before := servicetest.HashDB(t, dbPath(dir))
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.200v): message %q does not mention %q", c.tool, c.args, msg, c.want)
				}
				if strings.Contains(msg, dir) {
					t.Errorf("%s: message %q reveals the world path", c.tool, msg)
				}
				if after := servicetest.HashDB(t, dbPath(dir)); after != before {
					t.Fatalf("%s(%v) changed the database", c.tool, c.args)
				}
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "m-000003"})
	servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"in_reply_to": "m-000003", "body": "See you there.", "attachments": []string{"docs/report.md"}})
	servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"to": []string{"priya@example.com"}, "subject": "Flights", "body": "Numbers?"})
	servicetest.Call[MoveMailOut](t, cs, "move_mail", map[string]any{"mail": "m-000005", "folder": "receipts"})
	servicetest.Call[StarMailOut](t, cs, "star_mail", map[string]any{"mail": "m-000001", "starred": true})
	servicetest.Call[DeleteMailOut](t, cs, "delete_mail", map[string]any{"mail": "m-000007"})
	servicetest.Call[DeleteMailOut](t, cs, "delete_mail", map[string]any{"mail": "m-000004"})
	servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread_key": "t-lisbon"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	if servicetest.HashDB(t, dbPath(a)) != servicetest.HashDB(t, dbPath(b)) {
		t.Fatal("fresh worlds differ")
	}
	orig := servicetest.HashDB(t, dbPath(a))
	script(t, servicetest.ConnectMemory(t, NewTestService(t, a)))
	script(t, servicetest.ConnectHTTP(t, NewTestService(t, b)))
	ha, hb := servicetest.HashDB(t, dbPath(a)), servicetest.HashDB(t, dbPath(b))
	if ha != hb {
		if d, err := state.Compare(context.Background(), a, b); err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases")
	}
	if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, NewTestService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"list_folders": {},
		"list_mails":   {"folder", "limit", "cursor", "unread_only"},
		"search_mails": {"query", "since", "until", "limit"},
		"read_mail":    {"mail"},
		"read_thread":  {"thread_key"},
		"send_mail":    {"to", "cc", "subject", "body", "attachments", "in_reply_to"},
		"move_mail":    {"mail", "folder"},
		"star_mail":    {"mail", "starred"},
		"delete_mail":  {"mail"},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools", len(res.Tools))
	}
	for _, tool := range res.Tools {
		props, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if prop, ok := schema.Properties[p]; !ok || prop.Description == "" {
				t.Errorf("%s: property %s missing or without description", tool.Name, p)
			}
		}
		if len(schema.Properties) != len(props) {
			t.Errorf("%s: properties %v", tool.Name, schema.Properties)
		}
		ro := tool.Name == "list_folders" || tool.Name == "list_mails" || tool.Name == "search_mails"
		if tool.Annotations.ReadOnlyHint != ro {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, tool.Annotations.ReadOnlyHint)
		}
	}
}

func TestMailboxResource(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, NewTestService(t, dir))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "mail://mailbox/{folder}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	before := servicetest.HashDB(t, dbPath(dir))
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: MailboxURI("inbox")})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	for _, want := range []string{"Folder inbox: 3 mails", "m-000003  2026-02-28 12:00:00  maya@example.com  Re: Lisbon flights [unread] [starred]"} {
		if !strings.Contains(text, want) {
			t.Errorf("resource lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "m-000003") > strings.Index(text, "m-000001") {
		t.Errorf("not newest first:\n%s", text)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: MailboxURI("nope")}); err == nil {
		t.Error("unknown folder resource: no error")
	}
	if servicetest.HashDB(t, dbPath(dir)) != before {
		t.Error("reading a resource changed the database")
	}
}

// TestOps applies the synthesis builders to a world and reads the result
// through the tools.
func TestOps(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{Files: map[string]string{"docs/old.txt": "old"}})
	at := time.Date(2026, 3, 2, 8, 30, 0, 0, time.FixedZone("CET", 3600))
	deliver := Mail{ExtID: "x-100", From: "maya@example.com", To: []string{TestSelfAddress}, Cc: []string{"sam@example.com", "priya@example.com"},
		Subject: "Plans", Body: "Agenda attached.", SentAt: at, ThreadKey: "t-plans",
		Attachments: []Attachment{{HomePath: "mail/agenda.txt", Content: []byte("agenda")}, {HomePath: "docs/old.txt", Filename: "notes.txt"}}}
	sent := Mail{ExtID: "x-101", ThreadKey: "t-plans", From: TestSelfAddress, To: []string{"maya@example.com"}, Subject: "Re: Plans", Body: "OK", SentAt: at.Add(time.Hour)}
	custom := Mail{ExtID: "m-000003", Folder: "projects", From: "boss@corp.example", To: []string{TestSelfAddress}, Subject: "Project", Body: "Go.", SentAt: at, Starred: true}
	for _, m := range []Mail{deliver, sent, custom} {
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
	}
	ops := CreateOps()
	ops = append(ops, FolderOps("projects")...)
	ops = append(ops, DeliverOps(deliver)...)
	ops = append(ops, SentOps(sent)...)
	ops = append(ops, DeliverOps(custom)...)
	ops = append(ops, DeliverOps(deliver)...) // idempotent
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z", Ops: ops,
		Produces: world.Produces{Rows: []world.RowRef{MailRow("x-100"), MailRow("x-101")}, Files: []string{"mail/agenda.txt"}}}
	// The delta survives its JSON form.
	raw, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if d, err = delta.ParseBytes(raw); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "day1")
	if err := delta.ApplyCopy(ctx, parent, out, d, nil); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "day1b")
	if err := delta.ApplyCopy(ctx, parent, out2, d, nil); err != nil {
		t.Fatal(err)
	}
	if servicetest.HashDB(t, dbPath(out)) != servicetest.HashDB(t, dbPath(out2)) {
		t.Error("applying the ops twice gave different databases")
	}

	cs := servicetest.ConnectMemory(t, NewTestService(t, out))
	folders := servicetest.Call[ListFoldersOut](t, cs, "list_folders", nil)
	if want := []Folder{{"inbox", 1, 1}, {"sent", 1, 0}, {"archive", 0, 0}, {"drafts", 0, 0}, {"trash", 0, 0}, {"projects", 1, 1}}; !slices.Equal(folders.Folders, want) {
		t.Errorf("folders = %+v", folders.Folders)
	}
	got := servicetest.Call[MailView](t, cs, "read_mail", map[string]any{"mail": "x-100"})
	want := MailView{Mail: "x-100", Folder: Inbox, ThreadKey: "t-plans", From: "maya@example.com", To: []string{TestSelfAddress},
		Cc: []string{"sam@example.com", "priya@example.com"}, Subject: "Plans", Body: "Agenda attached.", SentAt: "2026-03-02 07:30:00",
		Read: true, New: true, Attachments: []AttachmentView{{"agenda.txt", "mail/agenda.txt"}, {"notes.txt", "docs/old.txt"}}}
	if jsonOf(t, got) != jsonOf(t, want) {
		t.Errorf("delivered = %s\nwant %s", jsonOf(t, got), jsonOf(t, want))
	}
	if b, err := os.ReadFile(filepath.Join(out, world.HomeDir, "mail", "agenda.txt")); err != nil || string(b) != "agenda" {
		t.Errorf("attachment file: %q %v", b, err)
	}
	th := servicetest.Call[ReadThreadOut](t, cs, "read_thread", map[string]any{"thread_key": "t-plans"})
	if ids := mailIDs(th.Mails, viewID); !slices.Equal(ids, []string{"x-100", "x-101"}) || th.Mails[1].Folder != Sent || !th.Mails[1].Read {
		t.Errorf("thread = %+v", th)
	}
	if p := servicetest.Call[ListMailsOut](t, cs, "list_mails", map[string]any{"folder": "projects"}); len(p.Mails) != 1 || !p.Mails[0].Starred {
		t.Errorf("projects = %+v", p)
	}
	// The service's own numbering skips an ext_id a delta already used.
	s := servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"to": []string{"maya@example.com"}, "subject": "x", "body": "y", "attachments": []string{"mail/agenda.txt"}})
	if s.Mail != "m-000004" {
		t.Errorf("sent id = %s, want m-000004 (m-000003 is taken)", s.Mail)
	}

	bad := Mail{From: "nobody", SentAt: at, Attachments: []Attachment{{HomePath: "../x"}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "ExtID") || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("Check = %v", err)
	}
}

func TestNew(t *testing.T) {
	dir := newWorld(t)
	path := dbPath(dir)
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	state.ExecTest(t, empty, "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)", "CREATE TABLE mails (id INTEGER PRIMARY KEY)")
	ok := Options{DBPath: path, WorldDir: dir, Clock: TestClock(), Self: "A", SelfAddress: "a@b.example"}
	with := func(f func(*Options)) Options { o := ok; f(&o); return o }
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{with(func(o *Options) { o.DBPath = "" }), "DBPath is required"},
		{with(func(o *Options) { o.WorldDir = "" }), "WorldDir is required"},
		{with(func(o *Options) { o.Clock = nil }), "Clock is required"},
		{with(func(o *Options) { o.Self = "" }), "Self is required"},
		{with(func(o *Options) { o.SelfAddress = "" }), "SelfAddress is required"},
		{with(func(o *Options) { o.SelfAddress = "alex" }), "not a mail address"},
		{with(func(o *Options) { o.DBPath = filepath.Join(t.TempDir(), "none.sqlite") }), "no such file"},
		{with(func(o *Options) { o.DBPath = empty }), "no column ext_id"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := New(ok); err != nil {
		t.Error(err)
	}
}

// TestMissingDatabase: a vanished file is an internal tool error, and the
// service does not create an empty database in its place.
func TestMissingDatabase(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, NewTestService(t, dir))
	if err := os.Remove(dbPath(dir)); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "read_mail", map[string]any{"mail": "m-000001"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_folders", nil)
	if _, err := os.Stat(dbPath(dir)); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
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
	want := map[string][]string{"folders": {"name"}, "mails": {"ext_id"}, "attachments": {"mail_id", "filename"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

func TestAddressAndCursor(t *testing.T) {
	for addr, ok := range map[string]bool{"a@b.example": true, "a.b+c@d-e.example": true, "a@b": false, "@b.example": false,
		"a b@c.example": false, "a@b.example,c@d.example": false, "a@@b.example": false, "a@.example": false, "": false} {
		if got := checkAddress(addr) == ""; got != ok {
			t.Errorf("checkAddress(%q) ok = %v", addr, got)
		}
	}
	c := cursor{folder: "inbox", sentAt: "2026-03-01 09:00:00", mail: "m-1"}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
	if got := splitAddrs(" a@b.example, ,c@d.example "); !slices.Equal(got, []string{"a@b.example", "c@d.example"}) {
		t.Errorf("splitAddrs = %v", got)
	}
}

func TestConcurrentSends(t *testing.T) {
	dir := newWorld(t)
	s := NewTestService(t, dir)
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			ids[i] = servicetest.Call[MailView](t, cs, "send_mail", map[string]any{"to": []string{"a@b.example"}, "subject": fmt.Sprint("n", i), "body": "x"}).Mail
		})
	}
	wg.Wait()
	slices.Sort(ids)
	for i, id := range ids {
		if want := fmt.Sprintf("m-%06d", 8+i); id != want {
			t.Fatalf("ids = %v", ids)
		}
	}
}
