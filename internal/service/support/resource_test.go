package support

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/world"
)

func TestTicketResource(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "support://ticket/{ticket}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	if rt := tmpl.ResourceTemplates[0]; rt.Name == "" || rt.Title == "" || rt.Description == "" || rt.MIMEType != "text/plain" {
		t.Errorf("template %+v: name, title, description or MIME type missing", rt)
	}
	// The ticket resource needs no shop database.
	if err := os.Remove(world.DBPath(dir, shop.DBName)); err != nil {
		t.Fatal(err)
	}
	before := servicetest.HashDB(t, dbPath(dir))
	uri := TicketURI("T-1001")
	text := servicetest.ReadResource(t, cs, uri, "text/plain")
	want := "Lamp flickers (ticket T-1001)\n" +
		"Kind: warranty · Status: waiting (on the customer)\n" +
		"Order: SO-0950 · Item (sku): LAMP-2\n" +
		"Opened: 2026-02-25 08:00:00 · Updated: 2026-02-26 12:00:00\n\n" +
		"History, oldest first:\n" +
		"1. customer (2026-02-25 08:00:00) [open]: The lamp flickers since last week.\n" +
		"2. support (2026-02-26 12:00:00) [waiting]: Could you send a photo of the label?\n"
	if text != want {
		t.Errorf("%s =\n%s\nwant\n%s", uri, text, want)
	}
	for _, uri := range []string{
		TicketURI("T-9999"), TicketURI("t-1001"), TicketURI("1001"), // unknown
		"support://ticket/", "support://ticket/a/b", "support://ticket/%zz", "support://tickets/T-1001", "support://order/SO-0950", // malformed
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != mcp.CodeResourceNotFound {
			t.Errorf("read %s: %v, want resource not found", uri, err)
		}
	}
	if after := servicetest.HashDB(t, dbPath(dir)); after != before {
		t.Errorf("reading resources changed the database: %s -> %s", before, after)
	}

	// A comment on several lines stays under its event.
	servicetest.Call[TicketOut](t, cs, "add_comment", AddCommentIn{Ticket: "T-1001", Body: "Photo attached.\nLabel: LMP-2/EU"})
	if text := servicetest.ReadResource(t, cs, uri, "text/plain"); !strings.Contains(text, "Status: open\n") || !strings.HasSuffix(text, "3. customer (2026-03-01 09:00:00) [open]: Photo attached.\n   Label: LMP-2/EU\n") {
		t.Errorf("%s after a comment:\n%s", uri, text)
	}
}

func TestTicketResourceInternalError(t *testing.T) {
	dir := newWorld(t)
	var logs bytes.Buffer
	s, err := New(Options{DBPath: dbPath(dir), WorldDir: dir, Clock: TestClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	if err := os.Remove(dbPath(dir)); err != nil {
		t.Fatal(err)
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: TicketURI("T-1001")})
	if err == nil || !strings.Contains(err.Error(), "internal error in the support service") || strings.Contains(err.Error(), dir) {
		t.Errorf("read with the database gone: %v", err)
	}
	if !strings.Contains(logs.String(), "support resource failed") || !strings.Contains(logs.String(), "db="+dbPath(dir)) {
		t.Errorf("logs = %s", logs.String())
	}
}
