package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/vision"
)

// promptly runs a tool call and fails the test when it has not returned
// after 5 s: a call blocked in open would hold a host thread for ever.
func promptly(t *testing.T, env *Env, tool, args string) (string, error) {
	t.Helper()
	type result struct {
		obs string
		err error
	}
	done := make(chan result, 1)
	go func() {
		obs, err := env.Call(context.Background(), tool, args)
		done <- result{obs, err}
	}()
	select {
	case r := <-done:
		return r.obs, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s %s: still blocked after 5s", tool, args)
		return "", nil
	}
}

// mkfifo makes a fifo of the home and, when the test ends, opens it
// read-write so that nothing stays blocked on it.
func mkfifo(t *testing.T, home, rel string) {
	t.Helper()
	p := filepath.Join(home, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fd, err := unix.Open(p, unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
}

// TestFileToolsFifo: read_file and describe_image on a fifo answer at once
// with a tool error naming it (before, each blocked a host thread in open
// for ever, past every timeout); write_file over a fifo replaces it with
// the file, and a fifo at a temporary name it could use holds nothing.
// None is an infrastructure failure: the agent goes on.
func TestFileToolsFifo(t *testing.T) {
	env, _, home := testEnv(t, nil)
	mkfifo(t, home, "photos/x.png")
	mkfifo(t, home, "notes/pipe")
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"notes/pipe"}`, "notes/pipe is a fifo, not a regular file"},
		{"describe_image", `{"path":"photos/x.png"}`, "photos/x.png is a fifo, not a regular file"},
	} {
		_, err := promptly(t, env, c.tool, c.args)
		if err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v", c.tool, c.args, err)
		}
	}
	// The temporary names the old write_file used, and likely new ones.
	mkfifo(t, home, "notes/.todo.md.wildawm-tmp")
	if err := os.Symlink("/etc/passwd", filepath.Join(home, "notes", ".todo.md.wildawm-AAAAAAAAAAAAAAAA")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"notes/todo.md", "notes/pipe"} {
		if _, err := promptly(t, env, "write_file", fmt.Sprintf(`{"path":%q,"content":"done"}`, p)); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
		if st, err := os.Lstat(filepath.Join(home, p)); err != nil || !st.Mode().IsRegular() {
			t.Fatalf("%s after the write: %v %v", p, st, err)
		}
		if b, _ := os.ReadFile(filepath.Join(home, p)); string(b) != "done" {
			t.Fatalf("%s holds %q", p, b)
		}
	}
	if env.Traj.Steps[len(env.Traj.Steps)-1].Error != "" {
		t.Fatalf("the last step failed: %+v", env.Traj.Steps[len(env.Traj.Steps)-1])
	}
}

// TestFileToolsFollowNoLink: no symlink is followed, to outside the home
// or inside it, as the file or as a parent directory, for reading,
// describing or writing; each refusal says what to do instead.
func TestFileToolsFollowNoLink(t *testing.T) {
	env, _, home := testEnv(t, nil)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644)
	os.MkdirAll(filepath.Join(home, "notes"), 0o755)
	os.WriteFile(filepath.Join(home, "notes", "a.md"), []byte("mine"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, "out"))
	os.Symlink("notes/a.md", filepath.Join(home, "in"))
	os.Symlink(outside, filepath.Join(home, "outdir"))
	os.Symlink("notes", filepath.Join(home, "indir"))
	for _, c := range []struct{ tool, path string }{
		{"read_file", "out"}, {"read_file", "in"}, {"read_file", "outdir/secret"}, {"read_file", "indir/a.md"},
		{"describe_image", "out"}, {"describe_image", "indir/a.md"},
	} {
		obs, err := promptly(t, env, c.tool, fmt.Sprintf(`{"path":%q}`, c.path))
		if err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "is a symlink") || strings.Contains(obs, "s3cret") {
			t.Errorf("%s %s: %q, %v", c.tool, c.path, obs, err)
		}
	}
	for _, p := range []string{"outdir/x", "indir/x", "indir/new/x"} {
		_, err := promptly(t, env, "write_file", fmt.Sprintf(`{"path":%q,"content":"pwned"}`, p))
		if err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("write %s: %v", p, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("a write left the home: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "notes")); len(entries) != 1 {
		t.Fatalf("a write went through a link inside the home: %v", entries)
	}
}

// TestFileToolsCaps: a file over MaxReadFile is refused from its size,
// before it is read (a sparse file claims a terabyte for nothing);
// write_file makes its parents as the sandbox user's.
func TestFileToolsCaps(t *testing.T) {
	env, _, home := testEnv(t, nil)
	f, err := os.Create(filepath.Join(home, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 40)
	f.Close()
	for _, tool := range []string{"read_file", "describe_image"} {
		_, err := promptly(t, env, tool, `{"path":"huge.log"}`)
		if err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "larger than 8 MiB") {
			t.Errorf("%s: %v", tool, err)
		}
	}
	if _, err := promptly(t, env, "write_file", `{"path":"a/b/c.md","content":"x"}`); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(home, "a/b"))
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 {
		t.Fatalf("a/b: %v %v", st, err)
	}
}

// TestDescribeImageBomb: a kilobyte PNG declaring 100000x100000 pixels is a
// tool error from its header, offline and with a vision model (which is
// never sent it); before, decoding it asked for 80 GB and the host
// process died ("fatal error: runtime: out of memory").
func TestDescribeImageBomb(t *testing.T) {
	env, b, home := testEnv(t, nil)
	os.MkdirAll(filepath.Join(home, "photos"), 0o755)
	os.WriteFile(filepath.Join(home, "photos", "bomb.png"), vision.BombPNG(100000, 100000), 0o644)
	_, err := promptly(t, env, "describe_image", `{"path":"photos/bomb.png"}`)
	if err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "photos/bomb.png") || !strings.Contains(err.Error(), "100000x100000") {
		t.Fatalf("offline: %v", err)
	}
	// The same bytes as an image of the page.
	b.images = map[string][]byte{Ref(1): vision.BombPNG(100000, 100000)}
	if _, err := promptly(t, env, "describe_image", `{"ref":1}`); err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "100000x100000") {
		t.Fatalf("page image: %v", err)
	}
	srv := fake.New(t, fake.Turn{Content: "a picture"})
	env.Describe = ModelVision(srv.Client(t, nil))
	if _, err := promptly(t, env, "describe_image", `{"path":"photos/bomb.png"}`); err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "100000x100000") {
		t.Fatalf("model vision: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the bomb went to the vision model (%d requests)", n)
	}
}

// TestFileToolsLease: a file the agent's process holds a write lease on is
// refused at once; before, read_file's open waited for the lease to be
// broken (45 s by default, beyond a step's budget).
func TestFileToolsLease(t *testing.T) {
	env, _, home := testEnv(t, nil)
	p := filepath.Join(home, "leased.md")
	os.WriteFile(p, []byte("x"), 0o644)
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		t.Skipf("this file system takes no lease: %v", err)
	}
	defer unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	if _, err := promptly(t, env, "read_file", `{"path":"leased.md"}`); err == nil || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "held by another process") {
		t.Fatalf("err = %v", err)
	}
}
