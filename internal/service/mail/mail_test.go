package mail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The tools' behaviour over the test world is the golden transcript's
// (internal/service/testdata/scripts/mail.json, run by the shared suite);
// these tests cover the Go hooks and the synthesis builders.

func newService(t testing.TB, dir string) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{WorldDir: dir, Clock: TestClock(), Self: TestSelf, SelfAddress: TestSelfAddress})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Just enough of the tools' results to check them.
type (
	folder struct {
		Name          string
		Total, Unread int
	}
	mailOut struct {
		Mail        string       `json:"mail"`
		Folder      string       `json:"folder"`
		ThreadKey   string       `json:"thread_key"`
		SentAt      string       `json:"sent_at"`
		Cc          []string     `json:"cc"`
		Read        bool         `json:"read"`
		Starred     bool         `json:"starred"`
		New         bool         `json:"new"`
		Attachments []attachment `json:"attachments"`
	}
	summary struct {
		Mail    string `json:"mail"`
		Starred bool   `json:"starred"`
	}
)

// TestAttachmentsStayInHome sends mails whose attachments leave home
// through symlinks, or are not regular files: each is a tool error naming
// the problem, and nothing changes.
func TestAttachmentsStayInHome(t *testing.T) {
	dir := MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, world.HomeDir)
	for link, target := range map[string]string{
		"docs/link.txt":   outside,
		"out":             filepath.Dir(outside),
		"docs/inside.pdf": filepath.Join(home, "docs", "itinerary.pdf"),
		"docs/dangling":   filepath.Join(home, "gone.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	path := world.DBPath(dir, DBName)
	before := servicetest.HashDB(t, path)
	for attachment, want := range map[string]string{
		"docs/link.txt":                     "leaves your home directory through a symlink",
		"out/secret.txt":                    "leaves your home directory through a symlink",
		"docs/dangling":                     `"docs/dangling" does not exist`,
		"docs/missing.pdf":                  "does not exist",
		"docs":                              "not a regular file",
		"../secret.txt":                     "leaves the home directory",
		"/etc/passwd":                       "absolute",
		strings.Repeat("d", MaxPathChars+1): "paths have at most 1024",
	} {
		msg := servicetest.CallError(t, cs, "send_mail", map[string]any{"to": []string{"bob@weller.example"}, "subject": "Hi", "body": "Hello",
			"attachments": []string{attachment}})
		if !strings.Contains(msg, want) {
			t.Errorf("attachment %q: %q does not say %q", attachment, msg, want)
		}
		if strings.Contains(msg, dir) || strings.Contains(msg, outside) {
			t.Errorf("attachment %q: %q shows a path outside the world", attachment, msg)
		}
	}
	if servicetest.HashDB(t, path) != before {
		t.Error("a refused attachment changed the database")
	}
	// A symlink inside home to a file inside home is the file's link name.
	m := servicetest.Call[mailOut](t, cs, "send_mail", map[string]any{"to": []string{"bob@weller.example"}, "subject": "Hi", "body": "Hello",
		"attachments": []string{"docs/inside.pdf", "./docs/report.md"}})
	if len(m.Attachments) != 2 || m.Attachments[0].Filename != "inside.pdf" || m.Attachments[0].HomePath != "docs/inside.pdf" ||
		m.Attachments[1].HomePath != "docs/report.md" {
		t.Errorf("attachments = %+v", m.Attachments)
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
	if servicetest.HashDB(t, world.DBPath(out, DBName)) != servicetest.HashDB(t, world.DBPath(out2, DBName)) {
		t.Error("applying the ops twice gave different databases")
	}

	cs := servicetest.ConnectMemory(t, newService(t, out))
	folders := servicetest.Call[struct{ Folders []folder }](t, cs, "list_folders", nil)
	if want := []folder{{"inbox", 1, 1}, {"sent", 1, 0}, {"archive", 0, 0}, {"drafts", 0, 0}, {"trash", 0, 0}, {"projects", 1, 1}}; !slices.Equal(folders.Folders, want) {
		t.Errorf("folders = %+v", folders.Folders)
	}
	got := servicetest.Call[mailOut](t, cs, "read_mail", map[string]any{"mail": "x-100"})
	if got.Folder != Inbox || got.ThreadKey != "t-plans" || got.SentAt != "2026-03-02 07:30:00" || !got.New ||
		!slices.Equal(got.Cc, []string{"sam@example.com", "priya@example.com"}) ||
		fmt.Sprint(got.Attachments) != "[{agenda.txt mail/agenda.txt} {notes.txt docs/old.txt}]" {
		t.Errorf("delivered = %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(out, world.HomeDir, "mail", "agenda.txt")); err != nil || string(b) != "agenda" {
		t.Errorf("attachment file: %q %v", b, err)
	}
	th := servicetest.Call[struct{ Mails []mailOut }](t, cs, "read_thread", map[string]any{"thread_key": "t-plans"})
	if len(th.Mails) != 2 || th.Mails[0].Mail != "x-100" || th.Mails[1].Mail != "x-101" || th.Mails[1].Folder != Sent || !th.Mails[1].Read {
		t.Errorf("thread = %+v", th)
	}
	if p := servicetest.Call[struct{ Mails []summary }](t, cs, "list_mails", map[string]any{"folder": "projects"}); len(p.Mails) != 1 || !p.Mails[0].Starred {
		t.Errorf("projects = %+v", p)
	}
	// The service's own numbering skips an ext_id a delta already used.
	s := servicetest.Call[mailOut](t, cs, "send_mail", map[string]any{"to": []string{"maya@example.com"}, "subject": "x", "body": "y", "attachments": []string{"mail/agenda.txt"}})
	if s.Mail != "m-000004" {
		t.Errorf("sent id = %s, want m-000004 (m-000003 is taken)", s.Mail)
	}

	bad := Mail{From: "nobody", SentAt: at, Attachments: []Attachment{{HomePath: "../x"}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "ExtID") || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("Check = %v", err)
	}
}

// TestAddresses checks the address hooks: which addresses send_mail takes
// and how a stored list reads back.
func TestAddresses(t *testing.T) {
	for addr, ok := range map[string]bool{"a@b.example": true, "a.b+c@d-e.example": true, "a@b": false, "@b.example": false,
		"a b@c.example": false, "a@b.example,c@d.example": false, "a@@b.example": false, "a@.example": false, "a@b.example.": false,
		"": false, strings.Repeat("a", 250) + "@b.example": false} {
		if got := checkAddress(addr) == ""; got != ok {
			t.Errorf("checkAddress(%q) ok = %v", addr, got)
		}
	}
	if got := splitAddrs(" a@b.example, ,c@d.example "); !slices.Equal(got, []string{"a@b.example", "c@d.example"}) {
		t.Errorf("splitAddrs = %v", got)
	}
	if got := splitAddrs(""); got == nil || len(got) != 0 {
		t.Errorf("splitAddrs(\"\") = %#v, want an empty list", got)
	}
}

// TestConcurrentSends: sends racing over memory and HTTP each get their own
// id, in sequence.
func TestConcurrentSends(t *testing.T) {
	dir := MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	s := newService(t, dir)
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			ids[i] = servicetest.Call[mailOut](t, cs, "send_mail", map[string]any{"to": []string{"a@b.example"}, "subject": fmt.Sprint("n", i), "body": "x"}).Mail
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

// TestNULInText: text holding NUL reaches the database and the answers
// whole (the engine binds it as a BLOB, and SQLite would cut it at the NUL
// on its way into a Go function).
func TestNULInText(t *testing.T) {
	dir := MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	sent := servicetest.Call[struct {
		Mail string `json:"mail"`
		Body string `json:"body"`
	}](t, cs, "send_mail", map[string]any{"to": []string{"a@b.example"}, "subject": "H\x00i", "body": "He\x00llo"})
	if sent.Body != "He\x00llo" {
		t.Errorf("body = %q", sent.Body)
	}
	text := servicetest.ReadResource(t, cs, "mail://mailbox/sent", "text/plain")
	servicetest.WantText(t, "mail://mailbox/sent", text, sent.Mail+"  2026-03-01 09:00:00  alex@example.com  H\x00i\n")
}
