package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/task"
)

// TestFifoFailsTheCriterion: a fifo the agent left where a file criterion
// or a CSV criterion reads fails the criterion at once, with the reason as
// evidence; before, the verifier blocked in open for ever and the rollout's
// verification with it. A sparse file past MaxFileBytes is refused from its
// size.
func TestFifoFailsTheCriterion(t *testing.T) {
	initial, final := testWorlds(t)
	for _, p := range []string{filepath.Join(final, "home", "pipe.csv"), filepath.Join(initial, "home", "notes.md")} {
		if err := unix.Mkfifo(p+".fifo", 0o644); err != nil {
			t.Fatal(err)
		}
		os.Rename(p+".fifo", p)
		t.Cleanup(func() {
			if fd, err := unix.Open(p, unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
		})
	}
	f, _ := os.Create(filepath.Join(final, "home", "huge.txt"))
	f.Truncate(MaxFileBytes + 1)
	f.Close()
	for _, c := range []struct {
		c      task.Criterion
		pass   bool
		ev, er string
	}{
		{task.Criterion{ID: "c", Kind: "file", Path: "pipe.csv", Contains: []string{"x"}}, false, "pipe.csv is a fifo, not a regular file", ""},
		{task.Criterion{ID: "c", Kind: "csv", Path: "pipe.csv", MinRows: 1}, false, "pipe.csv is a fifo", ""},
		// A fifo in the initial world counts as no file there.
		{task.Criterion{ID: "c", Kind: "file", Path: "notes.md", Changed: true}, true, "is new", ""},
		{task.Criterion{ID: "c", Kind: "file", Path: "huge.txt", Contains: []string{"x"}}, false, "", "larger than 16 MiB"},
	} {
		done := make(chan CriterionResult, 1)
		go func() { done <- verifyOne(t, Input{Initial: initial, Final: final}, c.c) }()
		select {
		case got := <-done:
			if got.Pass != c.pass || !strings.Contains(got.Evidence, c.ev) || !strings.Contains(got.Error, c.er) || c.er == "" && got.Error != "" {
				t.Errorf("%s %s: %+v", c.c.Kind, c.c.Path, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %s: the verifier is still blocked after 5s", c.c.Kind, c.c.Path)
		}
	}
}
