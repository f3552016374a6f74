package world

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// within runs fn and fails the test when it has not returned after d: a
// call that blocks in open must not hang the test binary with it.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %s", what, d)
	}
}

// TestOpenHomeFileRefusesWhatIsNotAFile: a fifo, a socket, a directory, a
// symlink (to outside, to inside, as a parent directory) and a file over
// the bound are refused promptly, each with the reason in words and the
// sentinel a caller branches on; a regular file reads.
func TestOpenHomeFileRefusesWhatIsNotAFile(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644)
	os.MkdirAll(filepath.Join(home, "notes"), 0o755)
	os.WriteFile(filepath.Join(home, "notes", "a.md"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(home, "big"), make([]byte, 2000), 0o644)
	if err := unix.Mkfifo(filepath.Join(home, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(home, "notes", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sock)
	if err := unix.Bind(sock, &unix.SockaddrUnix{Name: filepath.Join(home, "sock")}); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, "out"))
	os.Symlink("notes/a.md", filepath.Join(home, "in"))
	os.Symlink(outside, filepath.Join(home, "outdir"))
	os.Symlink("notes", filepath.Join(home, "indir"))
	// Release whatever a broken opener left blocked on the fifos.
	defer func() {
		for _, p := range []string{"fifo", "notes/fifo"} {
			if fd, err := unix.Open(filepath.Join(home, p), unix.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
		}
	}()

	for _, c := range []struct {
		rel    string
		follow bool
		err    error
		what   string
	}{
		{"fifo", false, ErrNotRegular, "fifo is a fifo, not a regular file"},
		{"fifo", true, ErrNotRegular, "fifo is a fifo, not a regular file"},
		{"notes/fifo", true, ErrNotRegular, "notes/fifo is a fifo"},
		{"sock", false, ErrNotRegular, "sock is a socket"},
		{"notes", false, ErrNotRegular, "notes is a directory, not a regular file"},
		{"out", false, ErrLink, "out is a symlink"},
		{"out", true, ErrLink, "leaves the home directory"},
		{"in", false, ErrLink, "in is a symlink"},
		{"outdir/secret", false, ErrLink, "outdir is a symlink"},
		{"outdir/secret", true, ErrLink, "leaves the home directory"},
		{"indir/a.md", false, ErrLink, "indir is a symlink"},
		{"fifo/x", false, ErrNotRegular, "fifo is a fifo, not a directory"},
		{"notes/a.md/x", false, ErrNotRegular, "notes/a.md is a regular file, not a directory"},
		{"big", false, ErrTooLarge, "big is larger than 1000 bytes (2000 bytes)"},
		{"missing", false, fs.ErrNotExist, "missing does not exist"},
		{"notes/missing/x", false, fs.ErrNotExist, "notes/missing does not exist"},
	} {
		var b []byte
		var err error
		within(t, 5*time.Second, c.rel, func() {
			b, err = ReadHomeFile(home, c.rel, HomeOpen{MaxSize: 1000, FollowInside: c.follow})
		})
		var he *HomeFileError
		if !errors.Is(err, c.err) || !errors.As(err, &he) || !strings.Contains(err.Error(), c.what) || b != nil {
			t.Errorf("%s (follow %v): %q, %v; want %v %q", c.rel, c.follow, b, err, c.err, c.what)
		}
		agent := c.err != fs.ErrNotExist
		if errors.Is(err, ErrAgentFault) != agent {
			t.Errorf("%s: %v is ErrAgentFault %v, want %v", c.rel, err, !agent, agent)
		}
	}
	for _, c := range []struct {
		rel    string
		follow bool
	}{{"notes/a.md", false}, {"notes/a.md", true}, {"in", true}, {"indir/a.md", true}} {
		b, err := ReadHomeFile(home, c.rel, HomeOpen{MaxSize: 1000, FollowInside: c.follow})
		if err != nil || string(b) != "hello" {
			t.Errorf("%s (follow %v): %q, %v", c.rel, c.follow, b, err)
		}
	}
	if _, err := ReadHomeFile(home, "../x", HomeOpen{MaxSize: 10}); err == nil {
		t.Error("../x read")
	}
}

// TestOpenHomeFileLease: a file another process holds a write lease on is
// refused at once (ErrBusy) instead of waiting the lease-break time
// (45 s by default) in open.
func TestOpenHomeFileLease(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, "leased")
	os.WriteFile(p, []byte("x"), 0o644)
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		t.Skipf("this file system takes no lease: %v", err)
	}
	var rerr error
	within(t, 5*time.Second, "open a leased file", func() { _, rerr = ReadHomeFile(home, "leased", HomeOpen{MaxSize: 10}) })
	if !errors.Is(rerr, ErrBusy) || !errors.Is(rerr, ErrAgentFault) {
		t.Fatalf("err = %v", rerr)
	}
}

// TestOpenHomeFileRace: while an agent keeps swapping files of its home
// between a regular file, a symlink to outside and a fifo, every read
// returns the public content or a refusal, promptly, never the outside
// file's.
func TestOpenHomeFileRace(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o644)
	stop := SwapLoop(t, home, secret, "public", true)
	defer stop()
	deadline := time.Now().Add(time.Second)
	reads := 0
	within(t, 20*time.Second, "reads under swaps", func() {
		for time.Now().Before(deadline) {
			for i := range 8 {
				for _, follow := range []bool{false, true} {
					b, err := ReadHomeFile(home, SwapName(i), HomeOpen{MaxSize: 100, FollowInside: follow})
					if err == nil && string(b) != "public" {
						t.Errorf("read %q through a swap", b)
						return
					}
					reads++
				}
			}
		}
	})
	stop()
	if reads == 0 {
		t.Fatal("no read")
	}
}

// TestOpenHomeDirMakesParents: OpenHomeDir makes what is missing, hands each
// new directory to mkdir, and refuses a symlinked or non-directory parent.
func TestOpenHomeDirMakesParents(t *testing.T) {
	home, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(home, "link"))
	os.WriteFile(filepath.Join(home, "file"), nil, 0o644)
	var made int
	fd, err := OpenHomeDir(home, "a/b/c", func(int) error { made++; return nil })
	if err != nil || made != 3 {
		t.Fatalf("%v, made %d", err, made)
	}
	unix.Close(fd)
	if st, err := os.Stat(filepath.Join(home, "a/b/c")); err != nil || !st.IsDir() {
		t.Fatal(err)
	}
	for rel, want := range map[string]error{"link/x": ErrLink, "file/x": ErrNotRegular, "../x": nil} {
		fd, err := OpenHomeDir(home, rel, func(int) error { return nil })
		if err == nil || want != nil && !errors.Is(err, want) {
			unix.Close(fd)
			t.Errorf("%s: %v, want %v", rel, err, want)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("made %v outside home", entries)
	}
}
