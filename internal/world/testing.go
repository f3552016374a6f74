package world

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// SwapLoop starts goroutines that keep exchanging 8 files of home (named
// SwapName(0..7)) between a regular file holding public, a symlink to
// outside and (withFifo) a fifo, each exchange one renameat2 call; it
// returns the function that stops them (safe to call twice). The tests of
// every reader of a live world race it against an agent's swaps this way.
func SwapLoop(t testing.TB, home, outside, public string, withFifo bool) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	// The swapped-in entries are made outside the world, on the same file
	// system, and renamed in.
	tmp := t.TempDir()
	for i := range 8 {
		name := filepath.Join(home, SwapName(i))
		if err := os.WriteFile(name, []byte(public), 0o644); err != nil {
			t.Fatal(err)
		}
		// Exchanging entries atomically, one system call each, swaps fast.
		base := filepath.Join(tmp, filepath.Base(name))
		others := []string{base + ".link"}
		if err := os.Symlink(outside, others[0]); err != nil {
			t.Fatal(err)
		}
		if withFifo {
			others = append(others, base+".fifo")
			if err := unix.Mkfifo(others[1], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !done.Load(); k++ {
				other := others[k/2%len(others)]
				unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
			}
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { done.Store(true); wg.Wait() }) }
}

// SwapName is the name of SwapLoop's i-th file.
func SwapName(i int) string { return "swap" + string(rune('0'+i)) }

// MakeDeep creates n directories named "d", each inside the last, below
// dir, through directory descriptors: the path soon exceeds PATH_MAX, as an
// agent's `mkdir` loop makes it. Tests of every reader of a live world use it.
func MakeDeep(t testing.TB, dir string, n int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
}

// NastyNames returns names a Linux file name can hold that a careless encoder
// loses or confuses: invalid UTF-8 (and names differing only in it), the
// replacement character itself, newlines, backslashes, quotes, control
// characters, leading dashes, bidi overrides, the longest name. All are
// different, so they can live in one directory; the tests of everything
// that stores, hashes, compares or prints names use them.
func NastyNames() []string {
	return []string{
		"x\xff", "x\xfe", "x\ufffd", "\xff", "\xc3", "\xc3\xa9", "e\u0301", "a\nb", "a\\nb", `a\xffb`, `"x\xff"`,
		"tab\there", "\x01\x7f", "cr\r", "-rf", "--", " lead", "trail ", "\u202egnp.exe", strings.Repeat("\xff", MaxNameLen),
	}
}
