package runtime

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/sandbox"
)

func TestPanicStaysInItsRequest(t *testing.T) {
	m := &Manager{log: slog.New(slog.DiscardHandler), insts: map[string]*managed{}, byToken: map[string]*managed{}}
	tok := strings.Repeat("ab", 16)
	mi := &managed{id: "i1", token: tok}
	m.insts["i1"], m.byToken[tok] = mi, mi
	rec := httptest.NewRecorder()
	m.serve(rec, httptest.NewRequest("GET", "/", nil), tok, func(*managed) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	})
	if rec.Code != http.StatusInternalServerError || mi.crashes.Load() != 1 {
		t.Fatalf("code %d, crashes %d", rec.Code, mi.crashes.Load())
	}
	rec = httptest.NewRecorder()
	m.serve(rec, httptest.NewRequest("GET", "/", nil), strings.Repeat("cd", 16), nil)
	if rec.Code != http.StatusNotFound {
		t.Fatalf("unknown token: %d", rec.Code)
	}
}

func TestUnsafeShellOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := &Instance{opts: Options{ShellTimeout: 2 * time.Second, SandboxUID: 65534}, sandboxAvailable: func() error { return errors.New("no bwrap") }}
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o777)
	os.Chmod(filepath.Join(dir, "home"), 0o777)
	in.inst = &fakeInstance{dir: dir}
	if _, err := in.Shell(context.Background(), "echo hi"); !errors.Is(err, ErrNoSandbox) {
		t.Fatalf("without the sandbox and without UnsafeShell: %v", err)
	}
	in.opts.UnsafeShell = true
	res, err := in.Shell(context.Background(), "echo hi; exit 3")
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "hi" || res.ExitCode != 3 {
		t.Fatalf("unsafe shell: %v %+v", err, res)
	}
	start := time.Now()
	res, err = in.Shell(context.Background(), "sleep 100 & echo started")
	if err != nil || !res.TimedOut || time.Since(start) > 6*time.Second {
		t.Fatalf("unsafe shell timeout with a background child: %v %+v after %s", err, res, time.Since(start))
	}
	if os.Geteuid() == 0 {
		res, err = in.Shell(context.Background(), "id -u")
		if err != nil || strings.TrimSpace(string(res.Stdout)) != "65534" {
			t.Fatalf("unsafe shell runs as %q, want the instance's uid", res.Stdout)
		}
	}
}

// fakeInstance is a reset.Instance over a plain directory.
type fakeInstance struct{ dir string }

func (f *fakeInstance) Dir() string                 { return f.dir }
func (f *fakeInstance) Reset(context.Context) error { return nil }
func (f *fakeInstance) Close(context.Context) error { return nil }

// TestSandboxCheckedOnce: the trial sandbox runs until the sandbox is found
// to work, then never again; a failing check is repeated.
func TestSandboxCheckedOnce(t *testing.T) {
	SkipUnlessInstancesRun(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	if err := sandbox.PrepareHome(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	checks, fail := 0, true
	in := &Instance{opts: Options{ShellTimeout: 10 * time.Second, SandboxUID: 65534, SandboxGID: 65534}, inst: &fakeInstance{dir: dir},
		sandboxAvailable: func() error {
			checks++
			if fail {
				return errors.New("not yet")
			}
			return nil
		}}
	in.clock = &Clock{}
	in.clock.set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	for range 2 {
		if _, err := in.Shell(context.Background(), "true"); !errors.Is(err, ErrNoSandbox) {
			t.Fatalf("with a failing check: %v", err)
		}
	}
	fail = false
	for range 3 {
		res, err := in.Shell(context.Background(), "echo ok")
		if err != nil || strings.TrimSpace(string(res.Stdout)) != "ok" {
			t.Fatalf("shell: %v %+v", err, res)
		}
	}
	if checks != 3 {
		t.Fatalf("%d checks, want 3 (two failing, then one that succeeded)", checks)
	}
}
