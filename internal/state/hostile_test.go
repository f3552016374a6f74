package state

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// addSpecialFiles puts a fifo, a socket and a character device into dir.
func addSpecialFiles(t testing.TB, dir string) {
	t.Helper()
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(filepath.Join(dir, "sock"), unix.S_IFSOCK|0o644, 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Logf("no character device (mknod: %v)", err)
	}
}

// TestHashDeepHome: 3,000 nested directories (deeper than PATH_MAX allows
// to name) neither fail the hash nor the diff; the part below the depth limit
// is left out and recorded, and the error-free result carries no host path.
func TestHashDeepHome(t *testing.T) {
	ctx := context.Background()
	plain := newWorld(t)
	deep := newWorld(t)
	world.MakeDeep(t, filepath.Join(deep, "home"), 3000)
	sum, err := Summarize(ctx, deep)
	if err != nil {
		t.Fatalf("Summarize of a world with 3,000 nested directories: %v", err)
	}
	if sum.Skipped.Count != 1 || len(sum.Skipped.Entries) != 1 {
		t.Fatalf("skipped = %+v, want the one directory past the limit", sum.Skipped)
	}
	sk := sum.Skipped.Entries[0]
	want := "home" + strings.Repeat("/d", world.MaxWalkDepth)
	if sk.Path != want || !strings.Contains(sk.Reason, "levels deep") {
		t.Errorf("skipped %q (%s), want %q for depth", sk.Path, sk.Reason, want)
	}
	// The hash covers exactly the part above the limit.
	trunc := newWorld(t)
	world.MakeDeep(t, filepath.Join(trunc, "home"), world.MaxWalkDepth-1)
	if h := mustHash(t, trunc); h != sum.Hash {
		t.Errorf("hash of the deep world %s != hash of the world cut at the limit %s", sum.Hash.Short(), h.Short())
	}
	d, err := Compare(ctx, plain, deep)
	if err != nil {
		t.Fatalf("Compare with a deep world: %v", err)
	}
	if got := d.Summary["files_added"]; got != world.MaxWalkDepth-1 {
		t.Errorf("files_added = %d, want %d", got, world.MaxWalkDepth-1)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].World != "b" || d.Skipped[0].Path != want {
		t.Errorf("diff skipped = %+v, want %s in world b", d.Skipped, want)
	}
}

// TestHashSkipsSpecialFiles: fifos, sockets and devices in home are left
// out of the hash and the diff with a recorded reason, never opened.
func TestHashSkipsSpecialFiles(t *testing.T) {
	ctx := context.Background()
	dir := newWorld(t)
	h0 := mustHash(t, dir)
	addSpecialFiles(t, filepath.Join(dir, "home"))
	addSpecialFiles(t, filepath.Join(dir, "home", "docs"))
	done := make(chan struct{})
	var sum *Summary
	var err error
	go func() { defer close(done); sum, err = Summarize(ctx, dir) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Summarize hangs on a world with a fifo")
	}
	if err != nil {
		t.Fatalf("Summarize of a world with a fifo, a socket and a device: %v", err)
	}
	if sum.Hash != h0 {
		t.Errorf("special files changed the hash")
	}
	reasons := map[string]string{}
	for _, s := range sum.Skipped.Entries {
		reasons[s.Path] = s.Reason
	}
	for _, p := range []string{"home/pipe", "home/sock", "home/docs/pipe", "home/docs/sock"} {
		if !strings.Contains(reasons[p], "only regular files, directories and symlinks") {
			t.Errorf("skipped[%s] = %q, want a reason", p, reasons[p])
		}
	}
	if !strings.HasPrefix(reasons["home/pipe"], "fifo") || !strings.HasPrefix(reasons["home/sock"], "socket") {
		t.Errorf("reasons do not name the kind: %v", reasons)
	}
	d, err := Compare(ctx, newWorld(t), dir)
	if err != nil {
		t.Fatalf("Compare with special files: %v", err)
	}
	if !d.Empty() || len(d.Files) != 0 || len(d.Skipped) < 4 {
		t.Errorf("diff = files %+v skipped %+v, want no change and the skipped entries", d.Files, d.Skipped)
	}
	var text strings.Builder
	d.WriteText(&text)
	if !strings.Contains(text.String(), "skipped in B: home/docs/pipe: fifo: ") {
		t.Errorf("diff text does not list the skipped entries:\n%s", text.String())
	}
}

// TestErrorsCarryNoHostPath: errors name paths relative to the world root;
// the runtime returns them to agents.
func TestErrorsCarryNoHostPath(t *testing.T) {
	ctx := context.Background()
	for name, mutate := range map[string]func(dir string){
		"stray top-level": func(dir string) { os.WriteFile(filepath.Join(dir, "x.txt"), nil, 0o644) },
		"home not a dir": func(dir string) {
			os.RemoveAll(filepath.Join(dir, "home"))
			os.WriteFile(filepath.Join(dir, "home"), nil, 0o644)
		},
		"bad manifest": func(dir string) { os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{"), 0o644) },
		"manifest is a dir": func(dir string) {
			os.Remove(filepath.Join(dir, "manifest.json"))
			os.Mkdir(filepath.Join(dir, "manifest.json"), 0o755)
		},
		"bad accounts": func(dir string) { os.WriteFile(filepath.Join(dir, "accounts.json"), []byte("[{]"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := newWorld(t)
			mutate(dir)
			_, err := Summarize(ctx, dir)
			if err == nil {
				t.Fatal("Summarize succeeded")
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("Summarize error carries the host path: %v", err)
			}
			_, err = Compare(ctx, newWorld(t), dir)
			if err == nil || strings.Contains(err.Error(), dir) {
				t.Errorf("Compare error = %v, want an error without the host path", err)
			}
		})
	}
}

// spy records a hash's input; it saves and restores its state as the
// hash does (hashState), and keeps in all whatever was ever written.
type spy struct{ b, all []byte }

func (s *spy) Write(p []byte) (int, error) {
	s.b, s.all = append(s.b, p...), append(s.all, p...)
	return len(p), nil
}
func (s *spy) MarshalBinary() ([]byte, error) { return []byte(strconv.Itoa(len(s.b))), nil }
func (s *spy) UnmarshalBinary(state []byte) error {
	n, err := strconv.Atoi(string(state))
	s.b = s.b[:n]
	return err
}

// TestHashSwapRace swaps home files for symlinks to a secret outside the
// world (and for fifos) while home is hashed: the secret's bytes never reach
// the hash's input, and a fifo never blocks it.
func TestHashSwapRace(t *testing.T) {
	ctx := context.Background()
	const public, secret = "public-content-0123456789", "TOPSECRET-host-9876543210"
	outside := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := newWorld(t)
	defer world.SwapLoop(t, filepath.Join(dir, "home"), outside, public, true)()

	deadline := time.Now().Add(3 * time.Second)
	runs, fails := 0, 0
	for time.Now().Before(deadline) {
		done := make(chan struct{})
		in := &spy{}
		var err error
		go func() { defer close(done); _, _, err = hashHome(ctx, dir, in) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("hashing home hangs (a fifo swapped in was opened)")
		}
		runs++
		if err != nil {
			t.Errorf("hash during swaps: %v", err)
			fails++
			if fails > 3 {
				break
			}
		}
		if strings.Contains(string(in.all), secret) {
			t.Fatalf("run %d: the secret outside the world reached the hash input", runs)
		}
	}
	t.Logf("%d hashes during swaps", runs)
}

// TestCopySwapRace: Copy of a world whose files are swapped for symlinks to
// a secret never copies the secret's bytes.
func TestCopySwapRace(t *testing.T) {
	const public, secret = "public-content-0123456789", "TOPSECRET-host-9876543210"
	outside := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := newWorld(t)
	defer world.SwapLoop(t, filepath.Join(dir, "home"), outside, public, false)()
	out := t.TempDir()
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		dst := filepath.Join(out, strconv.Itoa(n))
		Copy(context.Background(), dir, dst) // may fail: a file that keeps changing is refused
		for i := range 8 {
			p := filepath.Join(dst, "home", world.SwapName(i))
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					t.Fatalf("copy %d: %s holds the secret from outside the world", n, p)
				}
			}
		}
		os.RemoveAll(dst)
	}
}
