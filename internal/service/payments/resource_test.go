package payments

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

func TestResources(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.WantTemplates(t, cs, "text/plain", "payments://account/{account}", "payments://statement/{account}/{period}")
	before := servicetest.HashDB(t, path)

	uri := AccountURI("chk-main")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/plain"),
		"Everyday Checking (account chk-main, checking, EUR)\nBalance: 1250.00 EUR · Available for transfers: 1250.00 EUR\n",
		"Transactions, newest first: all 5 (this view shows the latest 50 at most):\n"+
			"2026-03-01 08:00:00  -1200.00  Landlord — March rent [housing] (tx-5)\n"+
			"2026-02-28 09:00:00  2500.00  ACME Corp — February salary [income] (tx-4)\n",
		"2026-01-31 09:00:00  2500.00  ACME Corp — January salary [income] (tx-1)\n")
	uri = AccountURI("cc-visa")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/plain"), "Balance: -230.50 EUR (230.50 EUR owed)\n", "Bookshop [shopping] (tx-6)")
	uri = StatementURI("chk-main", "2026-02")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/plain"),
		"Statement of account chk-main for 2026-02, EUR (computed from the balance and the transactions)\n",
		"Opening: 1195.50 · In: 2500.00 · Out: -1245.50 · Closing: 2450.00\n",
		"Transactions of the month, oldest first (3):\n2026-02-01 08:00:00  -1200.00  Landlord — February rent [housing] (tx-2)\n")
	uri = StatementURI("sav-rainy", "2026-01")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/plain"), "(as issued)", "Opening: 0.00 · In: 5000.00 · Out: 0.00 · Closing: 5000.00\n", "Initial deposit [savings] (tx-7)")
	uri = StatementURI("chk-usd", "2025-06")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/plain"), "No transactions in the month.\n")

	for _, uri := range []string{
		AccountURI("nope"), AccountURI("CHK-MAIN"), StatementURI("nope", "2026-02"), // unknown
		StatementURI("chk-main", "2026-04"), StatementURI("chk-main", "2026-2"), StatementURI("chk-main", "Feb"), // future or bad period
		"payments://account/", "payments://account/a/b", "payments://account/%zz", "payments://statement/chk-main",
		"payments://statement/chk-main/", "payments://statement//2026-02", "payments://statement/chk-main/2026-02/x", "payments://transfer/tr-1", // malformed
	} {
		servicetest.WantNotFound(t, cs, uri)
	}
	if after := servicetest.HashDB(t, path); after != before {
		t.Errorf("reading resources changed the database: %s -> %s", before, after)
	}
}

func TestAccountResourceBound(t *testing.T) {
	path := newWorld(t)
	state.ExecTest(t, path, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80)
INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee) SELECT 100 + i, 'bulk-' || i, 4, printf('2026-02-%02d 12:00:00', 1 + i % 28), -1, 'Coffee ' || i FROM n`)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	uri := AccountURI("chk-usd")
	text := servicetest.ReadResource(t, cs, uri, "text/plain")
	servicetest.WantText(t, uri, text, "Transactions, newest first: the latest 50 of 81 (this view shows the latest 50 at most; list_transactions pages through them all):\n")
	if n := strings.Count(text, "\n2026-"); n != ResourceTransactions {
		t.Errorf("%d transactions listed, want %d:\n%s", n, ResourceTransactions, text)
	}
	if strings.Contains(text, "(tx-9)") {
		t.Errorf("the oldest transaction tx-9 listed past the bound")
	}
}

func TestResourceInternalError(t *testing.T) {
	path := newWorld(t)
	var logs bytes.Buffer
	s, err := New(Options{DBPath: path, Clock: TestClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{AccountURI("chk-main"), StatementURI("chk-main", "2026-02")} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "internal error in the payments service") || strings.Contains(err.Error(), path) {
			t.Errorf("read %s with the database gone: %v", uri, err)
		}
	}
	if !strings.Contains(logs.String(), "payments resource failed") || !strings.Contains(logs.String(), "db="+path) {
		t.Errorf("logs = %s", logs.String())
	}
}
