package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// fifo makes a fifo at p and releases whatever blocks on it when the test
// ends.
func fifo(t *testing.T, p string) {
	t.Helper()
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fd, err := unix.Open(p, unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
}

func promptly(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked after 5s", what)
	}
}

// TestJudgesReadTheAgentsHomeSafely: a fifo in the rollout's home, or a
// directory of it that is a symlink out, is a refusal for the judges,
// never a judge blocked in open (before: for ever) or a file read from
// outside the home.
func TestJudgesReadTheAgentsHomeSafely(t *testing.T) {
	ref, got, outside := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ref, "notes"), 0o755)
	os.WriteFile(filepath.Join(ref, "notes", "order.md"), []byte("ORDER 42"), 0o644)
	os.MkdirAll(filepath.Join(ref, "notes", "link"), 0o755)
	os.WriteFile(filepath.Join(ref, "notes", "link", "out.md"), []byte("ORDER 42"), 0o644)
	os.WriteFile(filepath.Join(outside, "out.md"), []byte("ORDER 42"), 0o644)
	os.MkdirAll(filepath.Join(got, "notes"), 0o755)
	fifo(t, filepath.Join(got, "notes", "order.md"))
	os.Symlink(outside, filepath.Join(got, "notes", "link"))
	for _, rel := range []string{"notes/order.md", "notes/link/out.md"} {
		var ok bool
		var why string
		promptly(t, "fileAlike "+rel, func() { ok, why = fileAlike(ref, got, rel) })
		if ok || why == "" {
			t.Errorf("%s: alike %v (%s)", rel, ok, why)
		}
	}

	initial := judgeWorld(t, 0, "")
	final := judgeWorld(t, 1, "")
	fifo(t, filepath.Join(final, world.HomeDir, "notes", "order.md"))
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if r.N == 1 {
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "a", Name: "read_file", Arguments: `{"world":"final","path":"notes/order.md"}`}}}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict":"failed","reason":"no note"}`)}}
	})
	promptly(t, "the agent judge's read_file", func() {
		if _, err := (&AgentJudge{Model: srv.Client(t, nil)}).Judge(context.Background(), judgedTask(), initial, final, "", &verify.Result{}, ""); err != nil {
			t.Error(err)
		}
	})
	for _, m := range srv.Requests()[1].Messages {
		if m.Role == "tool" && !strings.Contains(m.Content, "error: notes/order.md is a fifo") {
			t.Errorf("read_file of a fifo: %q", m.Content)
		}
	}
}
