package reset

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// small keeps -race runs quick; the benchmarks use the default fixture.
var small = &FixtureOptions{DBs: 3, Rows: 200, HomeFiles: 15, Binaries: 2}

// newLower writes a sealed fixture (read-only home files, as the hardlink
// strategy requires; the other strategies do not care) and returns its path.
func newLower(t testing.TB, opts *FixtureOptions) string {
	t.Helper()
	lower := filepath.Join(t.TempDir(), "lower")
	if err := WriteFixture(t.Context(), lower, opts); err != nil {
		t.Fatal(err)
	}
	if err := (&Hardlink{}).Seal(t.Context(), lower); err != nil {
		t.Fatal(err)
	}
	return lower
}

func hashTree(t testing.TB, dir string) string {
	t.Helper()
	h, err := HashTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func allStrategies() []Strategy {
	return []Strategy{
		&Copy{}, &Copy{Workers: 1}, CP{}, &Hardlink{}, &Overlay{}, &Overlay{Reset: ResetRemount},
	}
}

// newInstance calls s.New and skips the test when the strategy is
// unavailable here (overlay when not root).
func newInstance(t *testing.T, s Strategy, lower, dir string) Instance {
	t.Helper()
	in, err := s.New(t.Context(), lower, dir)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("%s strategy unavailable on this machine: %v", s.Name(), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return in
}

// TestStrategies is the suite every directory strategy must pass.
func TestStrategies(t *testing.T) {
	for _, s := range allStrategies() {
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			lower := newLower(t, small)
			before := hashTree(t, lower)
			dir := filepath.Join(t.TempDir(), "inst")
			in := newInstance(t, s, lower, dir)
			if in.Dir() != dir {
				t.Fatalf("Dir() = %q, want %q", in.Dir(), dir)
			}
			if err := Diff(lower, dir); err != nil {
				t.Fatalf("after New: %v", err)
			}
			for round := range 3 {
				mutate(t, in)
				if err := Diff(lower, dir); err == nil {
					t.Fatalf("round %d: instance still equals lower after writes", round)
				}
				if got := hashTree(t, lower); got != before {
					t.Fatalf("round %d: lower changed by writes to the instance", round)
				}
				if err := in.Reset(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := Diff(lower, dir); err != nil {
					t.Fatalf("round %d: after Reset: %v", round, err)
				}
			}
			if err := in.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Close, %s: %v, want not exist", dir, err)
			}
			if err := in.Reset(t.Context()); !errors.Is(err, ErrClosed) {
				t.Errorf("Reset after Close = %v, want ErrClosed", err)
			}
			if got := hashTree(t, lower); got != before {
				t.Fatal("lower changed")
			}
		})
	}
}

// mutate writes through the instance API the way worlds are written: an
// in-place edit of a home file, a new file, a deletion, a chmod, and a row
// inserted into a SQLite database that is then read back.
func mutate(t *testing.T, in Instance) {
	t.Helper()
	f, err := OpenWritable(in, "home/note07.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("EDITED IN PLACE"), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("appended\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err == nil {
		t.Fatal("double close succeeded")
	}
	dir := in.Dir()
	if err := os.WriteFile(filepath.Join(dir, "home/docs/new.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "home/blob00.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "home/mail"), 0o700); err != nil {
		t.Fatal(err)
	}
	sqliteWrite(t, in, "db/site01.sqlite")
}

func sqliteWrite(t *testing.T, in Instance, rel string) {
	t.Helper()
	p, err := Writable(in, rel)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before, after int
	if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO items (title, body, price) VALUES ('written', 'by test', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE items SET price = price + 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Fatalf("rows: %d after insert, want %d", after, before+1)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRefusesExistingDir(t *testing.T) {
	lower := newLower(t, small)
	for _, s := range allStrategies() {
		_, err := s.New(t.Context(), lower, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("%s: New on an existing dir = %v, want an 'already exists' error", s.Name(), err)
		}
	}
}

func TestWritableRejectsEscapes(t *testing.T) {
	lower := newLower(t, small)
	in := newInstance(t, &Copy{}, lower, filepath.Join(t.TempDir(), "i"))
	for _, rel := range []string{"", "/etc/passwd", "../x", "home/../../x", `home\x`} {
		if _, err := Writable(in, rel); err == nil {
			t.Errorf("Writable(%q) succeeded", rel)
		}
	}
}

func TestHardlinkRefusesUnsealedLower(t *testing.T) {
	lower := filepath.Join(t.TempDir(), "lower")
	if err := WriteFixture(t.Context(), lower, small); err != nil {
		t.Fatal(err)
	}
	_, err := (&Hardlink{}).New(t.Context(), lower, filepath.Join(t.TempDir(), "i"))
	if !errors.Is(err, ErrNotSealed) {
		t.Fatalf("New on unsealed lower = %v, want ErrNotSealed", err)
	}
}

// TestHardlinkCopyOnWrite proves that writes through the instance API never
// reach lower, that databases are private from the start and that linked
// files really are shared until written.
func TestHardlinkCopyOnWrite(t *testing.T) {
	lower := newLower(t, small)
	before := hashTree(t, lower)
	dir := filepath.Join(t.TempDir(), "i")
	in := newInstance(t, &Hardlink{}, lower, dir).(*HardlinkInstance)

	same := func(rel string) bool {
		a, err := os.Stat(filepath.Join(lower, rel))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return os.SameFile(a, b)
	}
	if !same("home/note14.md") || !same("manifest.json") {
		t.Fatal("home files and manifest should be hard links to lower")
	}
	if same("db/site00.sqlite") {
		t.Fatal("databases must be copies, never links")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "db/site00.sqlite")); fi.Mode().Perm()&0o200 == 0 {
		t.Fatalf("database copy has mode %v, want writable", fi.Mode())
	}

	// Through the API: the link is broken before the write.
	f, err := in.OpenWritable("home/note14.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("CLOBBER"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if same("home/note14.md") {
		t.Fatal("OpenWritable left the file linked to lower")
	}
	fi, err := os.Stat(filepath.Join(dir, "home/note14.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("private copy mode %v, want 0644 (lower's 0444 + u+w)", fi.Mode().Perm())
	}
	// A second BreakLink of a private file is a no-op.
	if err := in.BreakLink("home/note14.md"); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(filepath.Join(dir, "home/note14.md"))
	if !os.SameFile(fi, fi2) {
		t.Error("BreakLink copied an already private file")
	}
	// Missing files, directories and symlinks are left alone.
	for _, rel := range []string{"home/none", "home/docs", "home/current"} {
		if err := in.BreakLink(rel); err != nil {
			t.Errorf("BreakLink(%q) = %v", rel, err)
		}
	}
	// The script keeps its x bits when broken.
	if err := in.BreakLink("home/docs/2026/script09.sh"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "home/docs/2026/script09.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("broken script mode %v, want 0755", fi.Mode().Perm())
	}
	// Atomic replacement (temp + rename) needs no API.
	tmp := filepath.Join(dir, "manifest.json.tmp")
	if err := os.WriteFile(tmp, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	sqliteWrite(t, in, "db/site00.sqlite")

	if got := hashTree(t, lower); got != before {
		t.Fatal("lower changed by writes through the API")
	}
	if err := in.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := Diff(lower, dir); err != nil {
		t.Fatal(err)
	}
	if !same("home/note14.md") {
		t.Error("after Reset the file should be a link again")
	}
}

// TestHardlinkUnprivilegedWriteRefused shows the permission half of the
// protection: a process without CAP_DAC_OVERRIDE cannot append to a linked
// file (EACCES), so lower stays intact — and a legitimate append fails.
func TestHardlinkUnprivilegedWriteRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as uid 65534 (nobody)")
	}
	lower := newLower(t, small)
	before := hashTree(t, lower)
	base := t.TempDir()
	dir := filepath.Join(base, "i")
	newInstance(t, &Hardlink{}, lower, dir)
	for _, d := range []string{filepath.Dir(base), base} { // let nobody traverse
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", `echo pwned >> "$1"`, "sh", filepath.Join(dir, "home/note07.md"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("unprivileged append to a linked file succeeded: %s", out)
	}
	if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("want EACCES, got %v: %s", err, out)
	}
	if got := hashTree(t, lower); got != before {
		t.Fatal("lower changed")
	}
}

// TestHardlinkRootWriteReachesLower documents the limit of the hardlink
// strategy: root ignores 0444, so an in-place write that bypasses the API
// lands in lower. This is why every write must go through OpenWritable, or
// the overlay strategy must be used for root-privileged writers.
func TestHardlinkRootWriteReachesLower(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root bypasses the 0444 mode")
	}
	lower := newLower(t, small)
	dir := filepath.Join(t.TempDir(), "i")
	newInstance(t, &Hardlink{}, lower, dir)
	f, err := os.OpenFile(filepath.Join(dir, "home/note07.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("bypass\n")
	f.Close()
	b, err := os.ReadFile(filepath.Join(lower, "home/note07.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), "bypass\n") {
		t.Fatal("expected the documented hazard: a root write through a link reaches lower")
	}
}

// TestOverlayDirectWritesAreSafe: with overlayfs even writes that bypass
// the API (appends by root) never reach lower, and Close unmounts.
func TestOverlayDirectWritesAreSafe(t *testing.T) {
	for _, s := range []*Overlay{{}, {Reset: ResetRemount}} {
		lower := newLower(t, small)
		before := hashTree(t, lower)
		dir := filepath.Join(t.TempDir(), "i")
		in := newInstance(t, s, lower, dir)
		if !isMountPoint(dir) || !isMountPoint(dir+".rw") {
			t.Fatal("overlay and tmpfs should be mounted")
		}
		for _, rel := range []string{"home/note07.md", "db/site00.sqlite", "manifest.json"} {
			f, err := os.OpenFile(filepath.Join(dir, rel), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("bypass\n")
			f.Close()
		}
		if err := os.RemoveAll(filepath.Join(dir, "home/docs")); err != nil {
			t.Fatal(err)
		}
		if got := hashTree(t, lower); got != before {
			t.Fatal("lower changed")
		}
		if err := in.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := Diff(lower, dir); err != nil {
			t.Fatal(err)
		}
		if err := in.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{dir, dir + ".rw"} {
			if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after Close %s: %v", d, err)
			}
		}
	}
}

func TestSQLiteDeserialize(t *testing.T) {
	lower := newLower(t, small)
	inst, err := SQLiteDeserialize{}.New(t.Context(), lower, "")
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(t.Context())
	in := inst.(*SQLiteInstance)
	if got := strings.Join(in.Names(), ","); got != "site00,site01,site02" {
		t.Fatalf("Names() = %s", got)
	}
	count := func() int {
		var n int
		if err := in.Conn("site01").QueryRowContext(t.Context(), `SELECT count(*) FROM items`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != small.Rows {
		t.Fatalf("rows = %d, want %d", n, small.Rows)
	}
	for range 3 {
		if _, err := in.Conn("site01").ExecContext(t.Context(), `DELETE FROM items WHERE id > 10`); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 10 {
			t.Fatalf("rows after delete = %d", n)
		}
		if err := in.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != small.Rows {
			t.Fatalf("rows after Reset = %d, want %d", n, small.Rows)
		}
	}
	if err := in.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := in.Reset(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Reset after Close = %v", err)
	}
}

func TestBench(t *testing.T) {
	lower := newLower(t, small)
	before := hashTree(t, lower)
	var ss []Strategy
	for _, s := range []Strategy{CP{}, &Copy{}, &Hardlink{}, &Overlay{}, SQLiteDeserialize{}} {
		if _, ok := s.(*Overlay); ok && os.Geteuid() != 0 {
			t.Log("overlay left out: not root")
			continue
		}
		ss = append(ss, s)
	}
	rep, err := Bench(t.Context(), lower, ss, 3)
	if err != nil {
		t.Fatal(err)
	}
	md := rep.Markdown()
	t.Log("\n" + md)
	for _, s := range ss {
		if !strings.Contains(md, "| "+s.Name()+" |") {
			t.Errorf("report lacks %s", s.Name())
		}
	}
	if rep.Results[0].Speedup != 1 {
		t.Errorf("cp speedup vs itself = %v", rep.Results[0].Speedup)
	}
	if got := hashTree(t, lower); got != before {
		t.Fatal("lower changed by Bench")
	}
}

// TestReport runs Bench on the default (~15 MiB) fixture and prints the
// table. It is slow under -race; enable it with RESET_REPORT=N (iterations).
func TestReport(t *testing.T) {
	n := 0
	if v := os.Getenv("RESET_REPORT"); v != "" {
		for _, c := range v {
			n = n*10 + int(c-'0')
		}
	}
	if n <= 0 {
		t.Skip("set RESET_REPORT=200 to measure the strategies on the default fixture")
	}
	lower := newLower(t, nil)
	ss := []Strategy{CP{}, &Copy{}, &Copy{Workers: 1}, &Hardlink{}, &Overlay{}, &Overlay{Reset: ResetRemount}, SQLiteDeserialize{}}
	rep, err := Bench(t.Context(), lower, ss, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Markdown())
}
