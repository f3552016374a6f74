package dbtool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/state"
)

// newDB writes a database with one table t(n) holding value n at path.
func newDB(t *testing.T, path string, n int) {
	t.Helper()
	db, err := state.OpenDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t(n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (?)", n); err != nil {
		t.Fatal(err)
	}
}

func readN(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.Read(context.Background(), func(q Querier) error {
		return q.QueryRowContext(context.Background(), "SELECT n FROM t").Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func testDB(t *testing.T) (*DB, string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.sqlite")
	newDB(t, path, 1)
	d := &DB{Service: "x", Path: path, Log: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() { d.Close() })
	return d, dir
}

func TestReopensReplacedFile(t *testing.T) {
	d, dir := testDB(t)
	if n := readN(t, d); n != 1 {
		t.Fatalf("n = %d, want 1", n)
	}
	// Replace the file as a checkout would: a new file renamed over it.
	other := filepath.Join(dir, "y.sqlite")
	newDB(t, other, 2)
	if err := os.Rename(other, d.Path); err != nil {
		t.Fatal(err)
	}
	if n := readN(t, d); n != 2 {
		t.Fatalf("after replace n = %d, want 2 (the old file's connection was kept)", n)
	}
	// A write goes to the new file too.
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = n + 10")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := readN(t, d); n != 12 {
		t.Fatalf("after write n = %d, want 12", n)
	}
	// A removed file is an error, not a new empty database.
	os.Remove(d.Path)
	err := d.Read(context.Background(), func(Querier) error { return nil })
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read of a removed database: %v, want not-exist", err)
	}
	if _, err := os.Stat(d.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the read recreated the database: %v", err)
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	d, _ := testDB(t)
	boom := errors.New("boom")
	err := d.Write(context.Background(), func(q Querier) error {
		if _, err := q.ExecContext(context.Background(), "UPDATE t SET n = 99"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if n := readN(t, d); n != 1 {
		t.Fatalf("n = %d after a failed write, want 1", n)
	}
	// The connection is usable for the next write.
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 5")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := readN(t, d); n != 5 {
		t.Fatalf("n = %d, want 5", n)
	}
}

func TestReadCannotWrite(t *testing.T) {
	d, _ := testDB(t)
	err := d.Read(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 42")
		return err
	})
	if err == nil {
		t.Fatal("a write in Read succeeded")
	}
	if n := readN(t, d); n != 1 {
		t.Fatalf("n = %d, want 1", n)
	}
	// Writes still work, and reads after them are read-only again.
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 2")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Read(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "DELETE FROM t")
		return err
	}); err == nil {
		t.Fatal("a delete in Read after a Write succeeded")
	}
	if n := readN(t, d); n != 2 {
		t.Fatalf("n = %d, want 2", n)
	}
}

func TestEphemeralWritesNoJournalFile(t *testing.T) {
	d, dir := testDB(t)
	d.Ephemeral = true
	if err := d.Write(context.Background(), func(q Querier) error {
		if _, err := q.ExecContext(context.Background(), "UPDATE t SET n = 3"); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "x.sqlite-journal")); err == nil {
			return errors.New("a journal file exists mid-transaction")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := readN(t, d); n != 3 {
		t.Fatalf("n = %d, want 3", n)
	}
}

func TestMultiStatementExecRunsWhole(t *testing.T) {
	d, _ := testDB(t)
	// Prepare would keep only the first statement; the querier must not.
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 7; INSERT INTO t VALUES (8);")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var count int
	d.Read(context.Background(), func(q Querier) error {
		return q.QueryRowContext(context.Background(), "SELECT count(*) FROM t").Scan(&count)
	})
	if count != 2 {
		t.Fatalf("count = %d, want 2", count)
	}
}

func TestStatementCacheBounded(t *testing.T) {
	d, _ := testDB(t)
	for i := range maxStmts + 10 {
		d.Read(context.Background(), func(q Querier) error {
			var n int
			return q.QueryRowContext(context.Background(), "SELECT n + "+strings.Repeat("0+", i)+"0 FROM t").Scan(&n)
		})
	}
	if got := len(d.h.stmts); got > maxStmts || got == 0 {
		t.Fatalf("%d cached statements, want 1..%d", got, maxStmts)
	}
}

func TestSuspendFailsHeldCallsAndReopens(t *testing.T) {
	d, dir := testDB(t)
	readN(t, d)
	resume := d.Suspend()
	if d.h.conn != nil {
		t.Fatal("Suspend left the connection open")
	}
	held := make(chan error, 1)
	go func() {
		held <- d.Write(context.Background(), func(q Querier) error {
			_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 77")
			return err
		})
	}()
	select {
	case err := <-held:
		t.Fatalf("a call ran while suspended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	// Replace the file while suspended, as a reset does.
	other := filepath.Join(dir, "y.sqlite")
	newDB(t, other, 3)
	if err := os.Rename(other, d.Path); err != nil {
		t.Fatal(err)
	}
	resume()
	resume() // twice is harmless
	select {
	case err := <-held:
		if !errors.Is(err, ErrReset) {
			t.Fatalf("the held write: %v, want ErrReset", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held call never returned after resume")
	}
	if n := readN(t, d); n != 3 {
		t.Fatalf("n = %d after resume, want 3 (the held write must not land in the new world)", n)
	}
}

func TestHoldDelaysCallsWithoutFailingThem(t *testing.T) {
	d, _ := testDB(t)
	readN(t, d)
	release := d.Hold()
	held := make(chan error, 1)
	go func() {
		held <- d.Write(context.Background(), func(q Querier) error {
			_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 8")
			return err
		})
	}()
	select {
	case err := <-held:
		t.Fatalf("a call ran while held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	if n := readN(t, d); n != 8 {
		t.Fatalf("n = %d, want 8", n)
	}
}

func TestCancelledCallsLeaveNoTransaction(t *testing.T) {
	d, _ := testDB(t)
	// A statement that completes as its context ends reports the context's
	// error; BEGIN must not leave the connection inside a transaction.
	for i := range 400 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(i%50)*time.Microsecond, cancel)
		if i%2 == 0 {
			d.Write(ctx, func(q Querier) error {
				_, err := q.ExecContext(ctx, "UPDATE t SET n = n")
				return err
			})
		} else {
			d.Read(ctx, func(q Querier) error {
				var n int
				return q.QueryRowContext(ctx, "SELECT n FROM t").Scan(&n)
			})
		}
		cancel()
		if err := d.Write(context.Background(), func(q Querier) error {
			_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 1")
			return err
		}); err != nil {
			t.Fatalf("iteration %d: a write after a cancelled call: %v", i, err)
		}
	}
}

func TestSameQueryNestedInItsOwnRows(t *testing.T) {
	d, _ := testDB(t)
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "INSERT INTO t VALUES (2), (3)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const query = "SELECT n FROM t WHERE n >= ? ORDER BY n"
	var got []string
	err := d.Read(context.Background(), func(q Querier) error {
		rows, err := q.QueryContext(context.Background(), query, 1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				return err
			}
			inner, err := q.QueryContext(context.Background(), query, n+1)
			if err != nil {
				return err
			}
			var after []int
			for inner.Next() {
				var m int
				inner.Scan(&m)
				after = append(after, m)
			}
			inner.Close()
			got = append(got, fmt.Sprint(n, after))
			if len(got) > 10 {
				return errors.New("the outer rows never end")
			}
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[1 [2 3] 2 [3] 3 []]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

func TestFullCacheWithOpenRows(t *testing.T) {
	d, _ := testDB(t)
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "WITH RECURSIVE s(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM s WHERE x < 40) INSERT INTO t SELECT x FROM s")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Fill the cache, then run new statements while rows of a cached one
	// are open: nothing may close that statement under its rows.
	err := d.Read(context.Background(), func(q Querier) error {
		for i := range maxStmts - 1 {
			var n int
			if err := q.QueryRowContext(context.Background(), fmt.Sprintf("SELECT %d + n FROM t LIMIT 1", i)).Scan(&n); err != nil {
				return err
			}
		}
		rows, err := q.QueryContext(context.Background(), "SELECT n FROM t ORDER BY n")
		if err != nil {
			return err
		}
		defer rows.Close()
		count := 0
		for rows.Next() {
			count++
			var m int
			if err := q.QueryRowContext(context.Background(), fmt.Sprintf("SELECT n * %d FROM t LIMIT 1", count)).Scan(&m); err != nil {
				return err
			}
		}
		if count != 40 {
			return fmt.Errorf("%d rows, want 40", count)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	// The next call starts with the cache emptied.
	readN(t, d)
	// (total_changes, BEGIN, the query, ROLLBACK)
	if got := len(d.h.stmts); got > 4 {
		t.Fatalf("%d statements cached after the refill, want at most 4", got)
	}
}

func TestReadOnlyDB(t *testing.T) {
	d, _ := testDB(t)
	d.ReadOnly = true
	if n := readN(t, d); n != 1 {
		t.Fatalf("n = %d", n)
	}
	if err := d.Write(context.Background(), func(q Querier) error { return nil }); err == nil {
		t.Fatal("Write on a read-only DB succeeded")
	}
}

func TestURIEscape(t *testing.T) {
	for _, id := range []string{"dm-maya", "R&D + Ops's (2026)/Q1", "ünï cödé", "a b%20c"} {
		esc := URIEscape(id)
		for _, c := range esc {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%", c) {
				t.Errorf("URIEscape(%q) = %q keeps %q", id, esc, c)
			}
		}
		if back, err := url.PathUnescape(esc); err != nil || back != id {
			t.Errorf("URIEscape(%q) = %q unescapes to %q, %v", id, esc, back, err)
		}
	}
}

func TestResourceHandler(t *testing.T) {
	d, _ := testDB(t)
	var logs strings.Builder
	d.Log = slog.New(slog.NewTextHandler(&logs, nil))
	h := d.ResourceHandler("x://pair/", "text/plain", 2, func(ctx context.Context, q Querier, keys []string) (string, error) {
		switch keys[0] {
		case "missing":
			return "", BadCall("no such thing")
		case "norow":
			var n int
			return "", q.QueryRowContext(ctx, "SELECT n FROM t WHERE n = 999").Scan(&n)
		case "broken":
			return "", errors.New("disk on fire at /secret")
		case "write":
			_, err := q.ExecContext(ctx, "UPDATE t SET n = 50")
			return "", err
		}
		var n int
		err := q.QueryRowContext(ctx, "SELECT n FROM t").Scan(&n)
		return fmt.Sprintf("%s|%s|%d", keys[0], keys[1], n), err
	})
	read := func(uri string) (*mcp.ReadResourceResult, error) {
		return h(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
	}
	res, err := read("x://pair/" + URIEscape("a/b&c") + "/" + URIEscape("2026-03"))
	if err != nil || res.Contents[0].Text != "a/b&c|2026-03|1" || res.Contents[0].MIMEType != "text/plain" {
		t.Fatalf("read: %v %+v", err, res)
	}
	for _, uri := range []string{"x://pair/missing/1", "x://pair/norow/1", "x://pair/a", "x://pair/a/b/c", "x://pair//b", "x://pair/%zz/b", "y://pair/a/b"} {
		if _, err := read(uri); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: %v, want not found", uri, err)
		}
	}
	_, err = read("x://pair/broken/1")
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "internal error in the x service") {
		t.Errorf("internal failure: %v", err)
	}
	if !strings.Contains(logs.String(), "secret") {
		t.Errorf("the internal failure was not logged: %s", logs.String())
	}
	if _, err := read("x://pair/write/1"); err == nil {
		t.Error("a resource that writes succeeded")
	}
	if n := readN(t, d); n != 1 {
		t.Errorf("n = %d after resource reads, want 1", n)
	}
}

func TestPanicInWriteRollsBack(t *testing.T) {
	d, _ := testDB(t)
	func() {
		defer func() { recover() }()
		d.Write(context.Background(), func(q Querier) error {
			q.ExecContext(context.Background(), "UPDATE t SET n = 66")
			panic("tool bug")
		})
	}()
	if n := readN(t, d); n != 1 {
		t.Fatalf("n = %d after a panicking write, want 1", n)
	}
	if err := d.Write(context.Background(), func(q Querier) error {
		_, err := q.ExecContext(context.Background(), "UPDATE t SET n = 2")
		return err
	}); err != nil {
		t.Fatalf("the write after a panic: %v", err)
	}
}

func TestCursor(t *testing.T) {
	c := EncodeCursor("threads", "2026-03-01 09:00:00", "t-1")
	f, ok := DecodeCursor(c, "threads", 2)
	if !ok || f[0] != "2026-03-01 09:00:00" || f[1] != "t-1" {
		t.Fatalf("round trip: %v %v", f, ok)
	}
	for _, bad := range []struct {
		s, prefix string
		n         int
	}{{c, "mails", 2}, {c, "threads", 3}, {"not a cursor!", "threads", 2}, {c[:len(c)/2], "threads", 2}} {
		if _, ok := DecodeCursor(bad.s, bad.prefix, bad.n); ok {
			t.Errorf("DecodeCursor(%q, %q, %d) accepted", bad.s, bad.prefix, bad.n)
		}
	}
}

// TestAfterRunsPreFirst: ReadAfter and WriteAfter run pre before the
// transaction and fn only when pre succeeds.
func TestAfterRunsPreFirst(t *testing.T) {
	d, _ := testDB(t)
	ctx := context.Background()
	refuse := errors.New("refused")
	var ran []string
	pre := func(err error) func(q Querier) error {
		return func(q Querier) error {
			var n int
			if err := q.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
				return err
			}
			ran = append(ran, "pre")
			return err
		}
	}
	fn := func(q Querier) error {
		ran = append(ran, "fn")
		_, err := q.ExecContext(ctx, "INSERT INTO t (n) VALUES (99)")
		return err
	}
	count := func() int {
		var n int
		if err := d.Read(ctx, func(q Querier) error { return q.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	if err := d.WriteAfter(ctx, pre(refuse), fn); !errors.Is(err, refuse) {
		t.Fatalf("WriteAfter with a refusing pre = %v", err)
	}
	if err := d.ReadAfter(ctx, pre(refuse), func(Querier) error { ran = append(ran, "read"); return nil }); !errors.Is(err, refuse) {
		t.Fatalf("ReadAfter with a refusing pre = %v", err)
	}
	if got := strings.Join(ran, ","); got != "pre,pre" || count() != before {
		t.Fatalf("a refusing pre: ran %s, rows %d -> %d", got, before, count())
	}
	ran = nil
	if err := d.WriteAfter(ctx, pre(nil), fn); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, ","); got != "pre,fn" || count() != before+1 {
		t.Fatalf("pre then fn: ran %s, rows %d -> %d", got, before, count())
	}
}

// TestChangeCountSeesEveryWrite: Read's check counts changed rows with a
// pre-update hook instead of total_changes(); over writes of every kind
// (a WITHOUT ROWID table, a trigger's, an upsert, a REPLACE, a DELETE of
// all rows) the hook's count moves exactly when SQLite's does, and a Read
// that makes any of them fails and changes nothing.
func TestChangeCountSeesEveryWrite(t *testing.T) {
	d, _ := testDB(t)
	ctx := context.Background()
	if err := d.Write(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, `CREATE TABLE w(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
			CREATE TABLE log(n INTEGER);
			CREATE TRIGGER tl AFTER UPDATE ON t BEGIN INSERT INTO log VALUES (new.n); END;
			INSERT INTO w VALUES ('a', 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if d.h.changes == nil {
		t.Fatal("the connection has no pre-update hook: Read falls back to total_changes()")
	}
	writes := []string{
		"UPDATE w SET v = v + 1 WHERE k = 'a'",
		"INSERT INTO w VALUES ('b', 2) ON CONFLICT(k) DO UPDATE SET v = excluded.v",
		"INSERT INTO w VALUES ('b', 3) ON CONFLICT(k) DO UPDATE SET v = excluded.v",
		"REPLACE INTO w VALUES ('a', 9)",
		"UPDATE t SET n = n", // the trigger's insert too
		"DELETE FROM log",
		"DELETE FROM w",
	}
	for _, w := range writes {
		if err := d.Write(ctx, func(q Querier) error {
			sq := q.(*stmtQuerier)
			var before, after int64
			if err := sq.h.conn.QueryRowContext(ctx, "SELECT total_changes()").Scan(&before); err != nil {
				return err
			}
			hook := sq.h.changes.Load()
			if _, err := q.ExecContext(ctx, w); err != nil {
				return err
			}
			if err := sq.h.conn.QueryRowContext(ctx, "SELECT total_changes()").Scan(&after); err != nil {
				return err
			}
			if moved := sq.h.changes.Load() != hook; moved != (after != before) {
				t.Errorf("%s: the hook's count moved %v, total_changes() %d to %d", w, moved, before, after)
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if err := d.Read(ctx, func(q Querier) error {
			_, err := q.ExecContext(ctx, "INSERT INTO w VALUES ('r', 1)")
			return err
		}); err == nil || !strings.Contains(err.Error(), "must use Write") {
			t.Fatalf("after %s: a Read that inserts = %v, want the read-only error", w, err)
		}
	}
	var n int
	if err := d.Read(ctx, func(q Querier) error {
		return q.QueryRowContext(ctx, "SELECT count(*) FROM w WHERE k = 'r'").Scan(&n)
	}); err != nil || n != 0 {
		t.Fatalf("rows the failed reads inserted: %d (%v), want 0", n, err)
	}
}
