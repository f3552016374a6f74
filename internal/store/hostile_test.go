package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func hostileWorld(t testing.TB) string {
	return state.MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), state.TestWorld{
		SQL:   map[string][]string{"shop": {`CREATE TABLE t (k TEXT PRIMARY KEY, v)`, `INSERT INTO t VALUES ('a', 1)`}},
		Files: map[string]string{"docs/a.md": "# A\n", "notes.txt": "n\n"},
	})
}

// TestSnapshotDeepAndSpecialFiles: a world holding 3,000 nested directories,
// a fifo, a socket and a device snapshots; what was left out is recorded in
// the snapshot record, and the checkout hashes as the world did.
func TestSnapshotDeepAndSpecialFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	src := hostileWorld(t)
	home := filepath.Join(src, "home")
	world.MakeDeep(t, home, 3000)
	if err := unix.Mkfifo(filepath.Join(home, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(filepath.Join(home, "docs", "sock"), unix.S_IFSOCK|0o644, 0); err != nil {
		t.Fatal(err)
	}
	unix.Mknod(filepath.Join(home, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
	sum, err := state.Summarize(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var id world.ID
	go func() {
		defer close(done)
		id, err = s.Snapshot(ctx, src, Meta{Kind: KindWorld, Persona: "p", WorldHash: sum.Hash})
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Snapshot hangs on a world with a fifo")
	}
	if err != nil {
		t.Fatalf("Snapshot of a world with deep directories and special files: %v", err)
	}
	sn, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, e := range sn.Skipped.Entries {
		reasons[e.Path] = e.Reason
	}
	deep := "home" + strings.Repeat("/d", world.MaxWalkDepth)
	if !strings.HasPrefix(reasons["home/pipe"], "fifo: ") || !strings.HasPrefix(reasons["home/docs/sock"], "socket: ") || !strings.Contains(reasons[deep], "levels deep") {
		t.Errorf("snapshot record skipped = %+v, want the fifo, the socket and %s", sn.Skipped, deep)
	}
	if sn.Skipped.Count != len(sn.Skipped.Entries) || sn.Skipped.Count < 3 {
		t.Errorf("skipped count %d, entries %d", sn.Skipped.Count, len(sn.Skipped.Entries))
	}
	dst := filepath.Join(t.TempDir(), "out")
	mustCheckout(t, s, id, dst)
	got, err := state.Summarize(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != sum.Hash || got.Hash != sn.WorldHash {
		t.Errorf("checkout hashes %s, the world hashed %s: snapshot and hash left out different entries", got.Hash.Short(), sum.Hash.Short())
	}
	if !got.Skipped.Empty() {
		t.Errorf("the checkout has entries the hash skips: %+v", got.Skipped)
	}
	mustCheckOK(t, s)
}

// TestSnapshotErrorsCarryNoHostPath: Snapshot's errors reach agents through
// the runtime; they name no host path.
func TestSnapshotErrorsCarryNoHostPath(t *testing.T) {
	s := newStore(t)
	src := hostileWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Snapshot(ctx, src, Meta{Kind: KindWorld, Persona: "p"})
	if err == nil || strings.Contains(err.Error(), src) {
		t.Errorf("Snapshot with a cancelled context: %v, want an error without %s", err, src)
	}
}

// TestSnapshotSwapRace swaps home files for symlinks to a secret outside the
// world, and for fifos, while snapshots run: no snapshot fails or hangs, and
// the secret's bytes never reach the store.
func TestSnapshotSwapRace(t *testing.T) {
	const public, secret = "public-content-0123456789", "TOPSECRET-host-9876543210"
	outside := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	// On tmpfs when there is one: the more snapshots, the likelier the race.
	dir := t.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "wildawm-store-test-"); err == nil {
		dir = shm
		t.Cleanup(func() { os.RemoveAll(shm) })
	}
	s, err := Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := hostileWorld(t)
	stop := world.SwapLoop(t, filepath.Join(src, "home"), outside, public, true)
	defer stop()
	deadline := time.Now().Add(4 * time.Second)
	runs := 0
	for ; time.Now().Before(deadline); runs++ {
		done := make(chan struct{})
		var err error
		go func() {
			defer close(done)
			_, err = s.Snapshot(context.Background(), src, Meta{Kind: KindWorld, Persona: "p", Day: runs})
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Snapshot hangs (a fifo swapped in was opened)")
		}
		if err != nil {
			t.Fatalf("Snapshot during swaps: %v", err)
		}
	}
	stop()
	t.Logf("%d snapshots during swaps", runs)
	for _, f := range storeFiles(t, s.Dir()) {
		b, err := os.ReadFile(filepath.Join(s.Dir(), f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("store file %s holds the secret from outside the world", f)
		}
	}
}
