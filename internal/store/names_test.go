package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// snapshotRoundTrip snapshots the world at src with its hash, checks it out
// and returns the checkout, failing unless it hashes as src did and holds
// the same names, modes, contents and targets.
func snapshotRoundTrip(t *testing.T, s *Store, src string) string {
	t.Helper()
	ctx := context.Background()
	sum, err := state.Summarize(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Snapshot(ctx, src, Meta{Kind: KindWorld, Persona: "p", WorldHash: sum.Hash})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	sn, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if !sn.Skipped.Empty() {
		t.Errorf("snapshot skipped %+v", sn.Skipped)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := s.Checkout(ctx, id, dst); err != nil {
		t.Fatalf("Checkout of a snapshot that succeeded: %v", err)
	}
	got, err := state.Hash(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got != sn.WorldHash {
		t.Errorf("checkout hashes to %s, the snapshot recorded %s", got.Short(), sn.WorldHash.Short())
	}
	assertTreesEqual(t, src, dst)
	return dst
}

// TestSnapshotNamesDifferingInInvalidBytes: two home files named x\xff and
// x\xfe were once stored under one name x\ufffd, so the snapshot succeeded
// and its checkout failed ("entries not sorted or not unique").
func TestSnapshotNamesDifferingInInvalidBytes(t *testing.T) {
	s := newStore(t)
	src := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), state.TestWorld{
		Files: map[string]string{"x\xff": "one\n", "x\xfe": "two\n", "x\ufffd": "three\n"},
	})
	dst := snapshotRoundTrip(t, s, src)
	for name, want := range map[string]string{"x\xff": "one\n", "x\xfe": "two\n", "x\ufffd": "three\n"} {
		if b, err := os.ReadFile(filepath.Join(dst, "home", name)); err != nil || string(b) != want {
			t.Errorf("checkout's %q = %q, %v; want %q", name, b, err, want)
		}
	}
	mustCheckOK(t, s)
}

// TestSnapshotInvalidNameKeepsHash: a single file whose name is not UTF-8
// was once renamed by the snapshot, so its checkout hashed differently.
func TestSnapshotInvalidNameKeepsHash(t *testing.T) {
	s := newStore(t)
	src := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), state.TestWorld{
		Files: map[string]string{"dir\xc3/x\xff": "data\n"},
	})
	snapshotRoundTrip(t, s, src)
}

// TestSnapshotNastyNames: every name of world.NastyNames, as a file, a
// directory and a symlink whose target is the name, round-trips through
// snapshot and checkout with the world's hash.
func TestSnapshotNastyNames(t *testing.T) {
	s := newStore(t)
	src := nastyWorld(t)
	snapshotRoundTrip(t, s, src)
	mustCheckOK(t, s)
}

func nastyWorld(t *testing.T) string {
	files := map[string]string{}
	for _, n := range world.NastyNames() {
		files["f/"+n] = n
		files["d/"+n+"/"+n] = "in " + n
	}
	src := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), state.TestWorld{Files: files})
	for _, n := range world.NastyNames() {
		if err := os.MkdirAll(filepath.Join(src, "home", "l"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(n, filepath.Join(src, "home", "l", n)); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// TestTreeJSONOfUTF8NamesUnchanged: a tree whose names and targets are
// valid UTF-8 encodes as trees did before names were encoded (so old trees
// keep their IDs and dedup with new ones), and old trees decode.
func TestTreeJSONOfUTF8NamesUnchanged(t *testing.T) {
	old := `{"entries":[{"name":"a\u003cb","type":"file","mode":420,"size":0},{"name":"d","type":"dir","mode":493,"size":0,"subtree":"` + world.Hash(nil).String() + `"},{"name":"l","type":"symlink","mode":0,"size":3,"target":"é\n"}]}`
	var tr Tree
	if err := json.Unmarshal([]byte(old), &tr); err != nil {
		t.Fatal(err)
	}
	if err := tr.validate(); err != nil {
		t.Fatal(err)
	}
	if tr.Entries[0].Name != "a<b" || tr.Entries[2].Target != "é\n" {
		t.Errorf("decoded %+v", tr)
	}
	b, err := json.Marshal(&tr)
	if err != nil || string(b) != old {
		t.Errorf("re-encoded:\n%s\nwant\n%s (%v)", b, old, err)
	}
	tr.Entries[0].Name = "a\xff"
	tr.Entries[2].Target = "\xfe"
	b, err = json.Marshal(&tr)
	if err != nil {
		t.Fatal(err)
	}
	var back Tree
	if err := json.Unmarshal(b, &back); err != nil || back.Entries[0].Name != "a\xff" || back.Entries[2].Target != "\xfe" {
		t.Errorf("%s decodes to %+v, %v", b, back, err)
	}
}
