package payments

import (
	"context"
	"encoding/json"
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

// newWorld writes a world whose payments database holds TestSQL and returns the
// database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func txIDs(ts []Transaction) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Transaction)
	}
	return out
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			accts := servicetest.Call[ListAccountsOut](t, cs, "list_accounts", nil)
			var names []string
			for _, a := range accts.Accounts {
				names = append(names, a.Account)
			}
			if !slices.Equal(names, []string{"chk-main", "sav-rainy", "chk-usd", "cc-visa"}) {
				t.Fatalf("accounts = %v", names)
			}
			visa := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "cc-visa"}).Account
			if visa.BalanceCents != -23050 || visa.Balance != "-230.50" || visa.AvailableCents != nil || visa.Kind != "credit" {
				t.Errorf("visa = %+v", visa)
			}
			main := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "chk-main"}).Account
			if main.BalanceCents != 125000 || main.Balance != "1250.00" || main.AvailableCents == nil || *main.AvailableCents != 125000 {
				t.Errorf("main = %+v", main)
			}

			// list_transactions: newest first, date range inclusive, pages.
			all := servicetest.Call[ListTransactionsOut](t, cs, "list_transactions", map[string]any{"account": "chk-main"})
			if got := txIDs(all.Transactions); !slices.Equal(got, []string{"tx-5", "tx-4", "tx-3", "tx-2", "tx-1"}) || all.NextCursor != "" {
				t.Fatalf("transactions = %v %q", got, all.NextCursor)
			}
			if tx := all.Transactions[2]; tx.AmountCents != -4550 || tx.Amount != "-45.50" || tx.Payee != "Lucia's" || tx.Category != "dining" {
				t.Errorf("tx-3 = %+v", tx)
			}
			feb := servicetest.Call[ListTransactionsOut](t, cs, "list_transactions", map[string]any{"account": "chk-main", "from": "2026-02-01", "to": "2026-02-28"})
			if got := txIDs(feb.Transactions); !slices.Equal(got, []string{"tx-4", "tx-3", "tx-2"}) {
				t.Errorf("february = %v", got)
			}
			var paged []string
			cur := ""
			for range 10 {
				p := servicetest.Call[ListTransactionsOut](t, cs, "list_transactions", map[string]any{"account": "chk-main", "limit": 2, "cursor": cur})
				paged = append(paged, txIDs(p.Transactions)...)
				if cur = p.NextCursor; cur == "" {
					break
				}
			}
			if !slices.Equal(paged, txIDs(all.Transactions)) {
				t.Errorf("pages = %v", paged)
			}

			// search_transactions: payee, memo, category; plain text.
			if got := txIDs(servicetest.Call[SearchTransactionsOut](t, cs, "search_transactions", map[string]any{"query": "RENT"}).Transactions); !slices.Equal(got, []string{"tx-5", "tx-2"}) {
				t.Errorf("search rent = %v", got)
			}
			if got := txIDs(servicetest.Call[SearchTransactionsOut](t, cs, "search_transactions", map[string]any{"query": "50%"}).Transactions); !slices.Equal(got, []string{"tx-3"}) {
				t.Errorf("search 50%% = %v", got)
			}
			if got := txIDs(servicetest.Call[SearchTransactionsOut](t, cs, "search_transactions", map[string]any{"query": "income", "account": "chk-usd"}).Transactions); !slices.Equal(got, []string{"tx-9"}) {
				t.Errorf("search income in chk-usd = %v", got)
			}
			if got := servicetest.Call[SearchTransactionsOut](t, cs, "search_transactions", map[string]any{"query": "' OR 1=1 --"}); len(got.Transactions) != 0 {
				t.Errorf("SQL-looking search = %v", got)
			}
			if got := servicetest.Call[SearchTransactionsOut](t, cs, "search_transactions", map[string]any{"query": "a", "limit": 2}); len(got.Transactions) != 2 || !got.More {
				t.Errorf("limited search = %+v", got)
			}

			// get_statement: computed from the balance, or stored.
			st := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "chk-main", "period": "2026-02"})
			if st.Source != "computed" || st.OpeningCents != 119550 || st.ClosingCents != 245000 || st.InCents != 250000 || st.OutCents != -124550 ||
				st.Opening != "1195.50" || !slices.Equal(txIDs(st.Transactions), []string{"tx-2", "tx-3", "tx-4"}) {
				t.Errorf("statement = %+v", st)
			}
			jan := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "chk-main", "period": "2026-01"})
			if jan.OpeningCents != -130450 || jan.ClosingCents != 119550 {
				t.Errorf("january = %+v", jan)
			}
			stored := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "sav-rainy", "period": "2026-01"})
			if stored.Source != "stored" || stored.OpeningCents != 0 || stored.ClosingCents != 500000 || len(stored.Transactions) != 1 {
				t.Errorf("stored = %+v", stored)
			}

			// transfer: both balances, two transactions, one transfer row.
			out := servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "250.5", "memo": "save"})
			if out.Transfer != "tr-1" || out.AmountCents != 25050 || out.Amount != "250.50" || out.BookedAt != "2026-03-01 09:00:00" ||
				out.From.BalanceCents != 99950 || out.To.BalanceCents != 525050 {
				t.Errorf("transfer = %+v", out)
			}
			if out.Debit.Transaction != "tx-9-2" || out.Debit.AmountCents != -25050 || out.Debit.Payee != "Transfer to Rainy Day Savings" ||
				out.Credit.Transaction != "tx-10" || out.Credit.AmountCents != 25050 || out.Credit.Account != "sav-rainy" {
				t.Errorf("transactions = %+v %+v", out.Debit, out.Credit)
			}
			// The whole balance may go; a credit account may go further below 0.
			servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "chk-main", "to": "cc-visa", "amount": "999.50"})
			servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "cc-visa", "to": "chk-main", "amount": "1000"})
			if b := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "cc-visa"}).Account; b.BalanceCents != -23050+99950-100000 {
				t.Errorf("visa after = %+v", b)
			}
			mar := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "chk-main", "period": "2026-03"})
			if mar.OpeningCents != 245000 || mar.ClosingCents != 100000 || len(mar.Transactions) != 4 {
				t.Errorf("march = %+v", mar)
			}
		})
	}
}

func TestBadInputsChangeNothing(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_balance", map[string]any{"account": "nope"}, "call list_accounts"},
		{"get_balance", map[string]any{"account": "CHK-MAIN"}, `did you mean account "chk-main"`},
		{"get_balance", map[string]any{"account": "visa card"}, `did you mean account "cc-visa"`},
		{"get_balance", map[string]any{"account": ""}, "account is required"},
		{"get_balance", map[string]any{"account": 1}, "account"},
		{"get_balance", map[string]any{"account": strings.Repeat("a", 100000)}, "call list_accounts"},
		{"list_accounts", map[string]any{"x": 1}, "x"},
		{"list_transactions", map[string]any{"account": "chk-main", "from": "2026-02-30"}, "YYYY-MM-DD"},
		{"list_transactions", map[string]any{"account": "chk-main", "to": "yesterday"}, "YYYY-MM-DD"},
		{"list_transactions", map[string]any{"account": "chk-main", "from": "2026-03-01", "to": "2026-02-01"}, "swap"},
		{"list_transactions", map[string]any{"account": "chk-main", "limit": 500}, "between 1 and 100"},
		{"list_transactions", map[string]any{"account": "chk-main", "cursor": "zzz"}, "pass next_cursor"},
		{"list_transactions", map[string]any{"account": "x'; DROP TABLE accounts; --"}, "call list_accounts"},
		{"search_transactions", map[string]any{"query": ""}, "query is empty"},
		{"search_transactions", map[string]any{"query": strings.Repeat("q", 201)}, "at most 200"},
		{"search_transactions", map[string]any{"query": "rent", "account": "nope"}, "call list_accounts"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "0"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "0.00"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "-5"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1.234"}, "at most 2 decimals"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1e3"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1,000"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": " 5"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "€5"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "99999999999999999999"}, "not a positive amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": 12.5}, "amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy"}, "amount"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1250.01"}, "1250.00 EUR available"},
		{"transfer", map[string]any{"from": "chk-main", "to": "chk-main", "amount": "1"}, "two different accounts"},
		{"transfer", map[string]any{"from": "chk-main", "to": "chk-usd", "amount": "1"}, "same currency"},
		{"transfer", map[string]any{"from": "nope", "to": "chk-main", "amount": "1"}, "from: no account"},
		{"transfer", map[string]any{"from": "chk-main", "to": "nope", "amount": "1"}, "to: no account"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1", "memo": strings.Repeat("m", 201)}, "at most 200"},
		{"transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1", "memo": "a\x00b"}, "invalid characters"},
		{"get_statement", map[string]any{"account": "chk-main", "period": "2026-13"}, "YYYY-MM"},
		{"get_statement", map[string]any{"account": "chk-main", "period": "2026-2"}, "YYYY-MM"},
		{"get_statement", map[string]any{"account": "chk-main", "period": "2026-04"}, "after the current month"},
		{"get_statement", map[string]any{"account": "nope", "period": "2026-02"}, "call list_accounts"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.200v): message %q does not mention %q", c.tool, c.args, msg, c.want)
				}
				if servicetest.HashDB(t, path) != before {
					t.Fatalf("%s(%.200v) changed the database", c.tool, c.args)
				}
			}
		})
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "100"})
	servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "sav-rainy", "to": "cc-visa", "amount": "230.50", "memo": "pay card"})
	servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "cc-visa", "period": "2026-03"})
	servicetest.Call[ListTransactionsOut](t, cs, "list_transactions", map[string]any{"account": "sav-rainy"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	orig := servicetest.HashDB(t, a)
	if orig != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b)
	if ha != hb {
		if d, err := state.Compare(context.Background(), filepath.Dir(filepath.Dir(a)), filepath.Dir(filepath.Dir(b))); err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases")
	}
	if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

// TestConcurrentTransfers: concurrent transfers never overdraw: of n
// transfers of 500.00 from 1250.00, exactly two succeed.
func TestConcurrentTransfers(t *testing.T) {
	path := newWorld(t)
	s := newService(t, path)
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
	cs := servicetest.ConnectMemory(t, s)
	b := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "chk-main"}).Account
	if succeeded != 2 || b.BalanceCents != 25000 {
		t.Errorf("%d transfers succeeded, balance %d", succeeded, b.BalanceCents)
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct{ Type, Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for p, prop := range schema.Properties {
			if prop.Description == "" {
				t.Errorf("%s: property %s has no description", tool.Name, p)
			}
		}
		if ro := tool.Annotations.ReadOnlyHint; ro != (tool.Name != "transfer") {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
		if tool.Name == "transfer" && schema.Properties["amount"].Type != "string" {
			t.Errorf("transfer amount type = %q, want string", schema.Properties["amount"].Type)
		}
	}
	slices.Sort(names)
	if want := []string{"get_balance", "get_statement", "list_accounts", "list_transactions", "search_transactions", "transfer"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v", names)
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
	cs := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst, DBName)))
	chk := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "chk"}).Account
	sav := servicetest.Call[BalanceOut](t, cs, "get_balance", map[string]any{"account": "sav"}).Account
	if chk.BalanceCents != 300000-2599-50000 || sav.BalanceCents != 51000 {
		t.Errorf("balances %d %d", chk.BalanceCents, sav.BalanceCents)
	}
	list := servicetest.Call[ListTransactionsOut](t, cs, "list_transactions", map[string]any{"account": "chk"})
	if got := txIDs(list.Transactions); !slices.Equal(got, []string{"st-1-out", "s-2", "s-1"}) || list.Transactions[0].Payee != "Transfer to Savings" {
		t.Errorf("seeded transactions = %+v", list.Transactions)
	}
	feb := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "chk", "period": "2026-02"})
	if feb.OpeningCents != 0 || feb.ClosingCents != chk.BalanceCents || feb.Source != "computed" {
		t.Errorf("february = %+v", feb)
	}
	if jan := servicetest.Call[StatementOut](t, cs, "get_statement", map[string]any{"account": "sav", "period": "2026-01"}); jan.Source != "stored" || jan.ClosingCents != 1000 {
		t.Errorf("stored january = %+v", jan)
	}
	// The tool can now transfer on the synthesized world.
	servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "sav", "to": "chk", "amount": "510.00"})

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

func TestReplacedAndMissingDatabase(t *testing.T) {
	path := newWorld(t)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	MakeTestDB(t, pristine)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1250"})
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.WriteFileAtomic(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := servicetest.Call[TransferOut](t, cs, "transfer", map[string]any{"from": "chk-main", "to": "sav-rainy", "amount": "1250"}); out.Transfer != "tr-1" {
		t.Errorf("after reset: %+v", out)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "list_accounts", nil); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}

func TestNew(t *testing.T) {
	path := newWorld(t)
	partial := filepath.Join(t.TempDir(), "p.sqlite")
	state.ExecTest(t, partial, Schema()[:3]...)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock()}, "DBPath is required"},
		{Options{DBPath: path}, "Clock is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock()}, "no such file"},
		{Options{DBPath: partial, Clock: TestClock()}, "statements"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.sqlite")
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
	want := map[string][]string{"accounts": {"ext_id"}, "transactions": {"ext_id"}, "transfers": {"ext_id"}, "statements": {"account_id", "period"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

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
	for c, want := range map[int64]string{0: "0.00", 5: "0.05", -5: "-0.05", 123456: "1234.56", -100: "-1.00"} {
		if got := FormatCents(c); got != want {
			t.Errorf("FormatCents(%d) = %q, want %q", c, got, want)
		}
	}
	c := cursor{at: "2026-03-01 09:00:00", id: 4}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip %+v %v", back, ok)
	}
}
