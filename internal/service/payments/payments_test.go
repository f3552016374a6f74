package payments

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The tools' and resources' behaviour over the test world is the golden
// transcript's (internal/service/testdata/scripts/payments.json, run by the
// shared suite); these tests cover the money hooks, transfers racing, the
// account resource's bound and the synthesis builders.

// newWorld writes a world whose payments database holds TestSQL and returns
// the world's directory.
func newWorld(t testing.TB) string {
	t.Helper()
	return state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{SQL: map[string][]string{DBName: TestSQL()}})
}

func newService(t testing.TB, dir string) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{WorldDir: dir, Clock: TestClock(), Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Just enough of the tools' results to check them.
type (
	account struct {
		BalanceCents int64 `json:"balance_cents"`
	}
	transaction struct {
		Transaction string `json:"transaction"`
		Payee       string `json:"payee"`
	}
	statementOut struct {
		OpeningCents int64  `json:"opening_cents"`
		ClosingCents int64  `json:"closing_cents"`
		Source       string `json:"source"`
	}
)

func balance(t *testing.T, cs *mcp.ClientSession, id string) int64 {
	t.Helper()
	return servicetest.Call[struct{ Account account }](t, cs, "get_balance", map[string]any{"account": id}).Account.BalanceCents
}

// TestConcurrentTransfers: concurrent transfers never overdraw: of n
// transfers of 500.00 from 1250.00, exactly two succeed.
func TestConcurrentTransfers(t *testing.T) {
	s := newService(t, newWorld(t))
	const n = 6
	var wg sync.WaitGroup
	ok := make([]bool, n)
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "transfer", Arguments: map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "500"}})
			ok[i] = err == nil && !res.IsError
		})
	}
	wg.Wait()
	var succeeded int
	for _, o := range ok {
		if o {
			succeeded++
		}
	}
	if b := balance(t, servicetest.ConnectMemory(t, s), "chk-main"); succeeded != 2 || b != 25000 {
		t.Errorf("%d transfers succeeded, balance %d", succeeded, b)
	}
}

// TestAccountResourceBound: the account resource lists the latest 50
// transactions of a longer history and says so.
func TestAccountResourceBound(t *testing.T) {
	dir := newWorld(t)
	state.ExecTest(t, world.DBPath(dir, DBName), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80)
INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee) SELECT 100 + i, 'bulk-' || i, 4, printf('2026-02-%02d 12:00:00', 1 + i % 28), -1, 'Coffee ' || i FROM n`)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	uri := "payments://account/chk-usd"
	text := servicetest.ReadResource(t, cs, uri, "text/plain")
	servicetest.WantText(t, uri, text, "Transactions, newest first: the latest 50 of 81 (this view shows the latest 50 at most; list_transactions pages through them all):\n")
	if n := strings.Count(text, "\n2026-"); n != 50 {
		t.Errorf("%d transactions listed, want 50:\n%s", n, text)
	}
	if strings.Contains(text, "(tx-9)") {
		t.Errorf("the oldest transaction tx-9 listed past the bound")
	}
}

// TestSynthesis seeds a world with the god-mode API through a delta and reads
// it back through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	t0 := time.Date(2026, 2, 3, 10, 0, 0, 0, time.UTC)
	ops := []delta.Op{CreateOp()}
	add := func(more ...delta.Op) { ops = append(ops, more...) }
	must := func(op delta.Op, err error) delta.Op {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	mustAll := func(o []delta.Op, err error) []delta.Op {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	add(must(AccountOp(SeedAccount{ID: "chk", Name: "Checking", Kind: KindChecking, Currency: "EUR"})))
	add(must(AccountOp(SeedAccount{ID: "sav", Name: "Savings", Kind: KindSavings, Currency: "EUR", BalanceCents: 1000})))
	add(mustAll(BookOps(SeedTransaction{ID: "s-1", Account: "chk", BookedAt: t0, AmountCents: 300000, Payee: "Employer", Category: "income"}))...)
	add(mustAll(BookOps(SeedTransaction{ID: "s-2", Account: "chk", BookedAt: t0.Add(time.Hour), AmountCents: -2599, Payee: "Grocer"}))...)
	add(mustAll(TransferOps(SeedTransfer{ID: "st-1", From: "chk", To: "sav", AmountCents: 50000, BookedAt: t0.Add(2 * time.Hour), ToName: "Savings"}))...)
	add(must(StatementOp(SeedStatement{Account: "sav", Period: "2026-01", OpeningCents: 0, ClosingCents: 1000})))
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-01T09:00:00Z", Ops: ops}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, newService(t, dst))
	chk, sav := balance(t, cs, "chk"), balance(t, cs, "sav")
	if chk != 300000-2599-50000 || sav != 51000 {
		t.Errorf("balances %d %d", chk, sav)
	}
	list := servicetest.Call[struct{ Transactions []transaction }](t, cs, "list_transactions", map[string]any{"account": "chk"})
	var ids []string
	for _, x := range list.Transactions {
		ids = append(ids, x.Transaction)
	}
	if !slices.Equal(ids, []string{"st-1-out", "s-2", "s-1"}) || list.Transactions[0].Payee != "Transfer to Savings" {
		t.Errorf("seeded transactions = %+v", list.Transactions)
	}
	feb := servicetest.Call[statementOut](t, cs, "get_statement", map[string]any{"account": "chk", "period": "2026-02"})
	if feb.OpeningCents != 0 || feb.ClosingCents != chk || feb.Source != "computed" {
		t.Errorf("february = %+v", feb)
	}
	if jan := servicetest.Call[statementOut](t, cs, "get_statement", map[string]any{"account": "sav", "period": "2026-01"}); jan.Source != "stored" || jan.ClosingCents != 1000 {
		t.Errorf("stored january = %+v", jan)
	}
	// The tool can now transfer on the synthesized world.
	servicetest.Call[map[string]any](t, cs, "transfer", map[string]any{"from": "sav", "to": "chk", "amount": "510.00"})

	if _, err := AccountOp(SeedAccount{ID: "x", Name: "X", Kind: "brokerage", Currency: "EUR"}); err == nil {
		t.Error("bad kind: no error")
	}
	if _, err := AccountOp(SeedAccount{ID: "x", Name: "X", Kind: KindSavings, Currency: "EUR", BalanceCents: -1}); err == nil {
		t.Error("negative savings: no error")
	}
	if _, err := TransactionOp(SeedTransaction{ID: "x", Account: "a", BookedAt: t0}); err == nil {
		t.Error("zero amount: no error")
	}
	if _, err := TransferOps(SeedTransfer{ID: "x", From: "a", To: "a", AmountCents: 1, BookedAt: t0}); err == nil {
		t.Error("same account: no error")
	}
	if _, err := StatementOp(SeedStatement{Account: "a", Period: "2026-1"}); err == nil {
		t.Error("bad period: no error")
	}
}

// TestMoney checks the money hooks: the amounts a model may write and how
// cents read.
func TestMoney(t *testing.T) {
	for in, want := range map[string]int64{"12.50": 1250, "12.5": 1250, "12": 1200, "0.01": 1, "007.10": 710, "100000000000": MaxAmountCents} {
		if got, ok := ParseAmount(in); !ok || got != want {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "0", "0.0", "-1", "+1", "1.", ".5", "1.234", "1e2", "1,5", " 1", "1 ", "NaN", "Inf", "0x10", "100000000000.01", "١٢"} {
		if c, ok := ParseAmount(bad); ok {
			t.Errorf("ParseAmount(%q) = %d, ok", bad, c)
		}
	}
	for c, want := range map[int64]string{0: "0.00", 5: "0.05", -5: "-0.05", 123456: "1234.56", -100: "-1.00", -9223372036854775808: "-92233720368547758.08"} {
		if got := FormatCents(c); got != want {
			t.Errorf("FormatCents(%d) = %q, want %q", c, got, want)
		}
	}
	// As SQL functions: a BLOB (an argument holding NUL) is text, NULL
	// stays NULL.
	amount, cents := Hooks.Funcs["payments_amount"].Fn, Hooks.Funcs["payments_cents"].Fn
	if v, _ := amount([]driver.Value{[]byte("12.5")}); v != int64(1250) {
		t.Errorf("payments_amount(blob 12.5) = %v", v)
	}
	if v, _ := amount([]driver.Value{"1\x002"}); v != nil {
		t.Errorf("payments_amount(1 NUL 2) = %v, want NULL", v)
	}
	if v, _ := cents([]driver.Value{nil}); v != nil {
		t.Errorf("payments_cents(NULL) = %v, want NULL", v)
	}
}

// TestNULInArguments: an argument holding NUL is quoted whole in the
// error (the engine binds it as a BLOB; a Go function's TEXT result would
// be cut at the NUL on its way into format).
func TestNULInArguments(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	msg := servicetest.CallError(t, cs, "transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1\x002"})
	if !strings.Contains(msg, `amount "1\x002" is not a positive amount`) {
		t.Errorf("message = %q", msg)
	}
	msg = servicetest.CallError(t, cs, "get_balance", map[string]any{"account": "chk\x00main"})
	if !strings.Contains(msg, `no account "chk\x00main"`) {
		t.Errorf("message = %q", msg)
	}
}
