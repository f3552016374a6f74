package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	d, err := state.Compare(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() || len(d.Files) != 0 {
		t.Errorf("diff of the world and its checkout: %s", d.First())
	}
	if r := checkWithHash(t, s); !r.OK() || r.Hashed == 0 {
		t.Errorf("Check of the store: OK %v, hashed %d", r.OK(), r.Hashed)
	}
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

// tamperSnapshot stores a copy of snapshot id whose home tree edit changed
// (the record's other fields, world hash included, kept), as a tamperer
// or an encoder that loses names would: every object verifies.
func tamperSnapshot(t *testing.T, s *Store, id world.ID, edit func(*Tree)) world.ID {
	t.Helper()
	ctx := t.Context()
	sn, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	root, err := s.loadTree(ctx, sn.Tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.refreshIndex(ctx); err != nil {
		t.Fatal(err)
	}
	w := &packWriter{s: s, ctx: ctx, pending: make(map[world.ID]bool), known: s.hasBlob, onIndex: s.addIndex}
	for i, n := range root.Entries {
		if n.Name != "home" {
			continue
		}
		home, err := s.loadTree(ctx, n.Subtree)
		if err != nil {
			t.Fatal(err)
		}
		edit(home)
		b, err := json.Marshal(home)
		if err != nil {
			t.Fatal(err)
		}
		if root.Entries[i].Subtree, err = w.add(TreeBlob, b); err != nil {
			t.Fatal(err)
		}
	}
	if sn.Tree, err = w.addTree(root); err != nil {
		t.Fatal(err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	sn.Persona += "-tampered"
	b, err := json.Marshal(sn)
	if err != nil {
		t.Fatal(err)
	}
	forged := world.Hash(b)
	if err := s.be.Save(ctx, SnapshotFile, forged.String(), b); err != nil {
		t.Fatal(err)
	}
	return forged
}

func checkWithHash(t *testing.T, s *Store) *CheckReport {
	t.Helper()
	r, err := s.CheckWith(t.Context(), &CheckOptions{Hash: state.Hash})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("check report:\n%s", r)
	return r
}

// TestCheckRestoresAndHashes: Check restores and hashes every snapshot, so
// a snapshot whose objects all verify but whose tree restores to another
// world than its record's hash says (a renamed entry, as the encoding of
// names once did) is an error naming it, and one whose tree does not check
// out (a file whose chunks hold fewer bytes than the tree says) too.
func TestCheckRestoresAndHashes(t *testing.T) {
	s := newStore(t)
	src := hostileWorld(t)
	h, err := state.Hash(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	good := mustSnapshot(t, s, src, Meta{Kind: KindWorld, Persona: "p", WorldHash: h})
	r := checkWithHash(t, s)
	if !r.OK() || r.Restored != 1 || r.Hashed != 1 {
		t.Fatalf("sound store: OK %v, restored %d, hashed %d; want OK, 1, 1", r.OK(), r.Restored, r.Hashed)
	}

	renamed := tamperSnapshot(t, s, good, func(home *Tree) {
		for i := range home.Entries {
			if home.Entries[i].Name == "notes.txt" {
				home.Entries[i].Name = "notes.txu"
			}
		}
	})
	r = checkWithHash(t, s)
	if !hasProblem(r, "snapshot", renamed.String(), world.ID{}, ErrWorldHashMismatch) {
		t.Errorf("Check does not report the snapshot whose tree restores to another hash")
	}
	if hasProblem(r, "snapshot", good.String(), world.ID{}, nil) || len(r.Errors) != 1 {
		t.Errorf("Check reports %d errors, want the tampered snapshot's only", len(r.Errors))
	}
	if !mustCheckoutOK(t, s, renamed) {
		t.Errorf("the tampered snapshot no longer checks out: the test tampers the wrong way")
	}
	if r := mustCheck(t, s, &CheckOptions{NoRestore: true}); !r.OK() || r.Restored != 0 {
		t.Errorf("NoRestore: OK %v, restored %d; want the check of objects only", r.OK(), r.Restored)
	}

	short := tamperSnapshot(t, s, good, func(home *Tree) {
		for i := range home.Entries {
			if home.Entries[i].Type == NodeFile {
				home.Entries[i].Size++
			}
		}
	})
	r = mustCheck(t, s, nil)
	if !hasProblem(r, "snapshot", short.String(), world.ID{}, ErrRestore) {
		t.Errorf("Check does not report the snapshot that does not check out")
	}
	if hasProblem(r, "snapshot", renamed.String(), world.ID{}, nil) {
		t.Errorf("Check without a hash function reports a hash mismatch")
	}
	if err := s.Checkout(t.Context(), short, filepath.Join(t.TempDir(), "out")); err == nil {
		t.Errorf("the snapshot Check says does not restore checks out")
	}
}

func mustCheck(t *testing.T, s *Store, opts *CheckOptions) *CheckReport {
	t.Helper()
	r, err := s.CheckWith(t.Context(), opts)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("check report:\n%s", r)
	return r
}

func mustCheckoutOK(t *testing.T, s *Store, id world.ID) bool {
	t.Helper()
	return s.Checkout(t.Context(), id, filepath.Join(t.TempDir(), "out")) == nil
}

// TestCheckReportsInvalidTree: a tree whose entries are not unique (two
// names stored as one, as the encoding of names once did) or not JSON is an
// error of the walk itself, even without restoring: the walk dropped
// validate's error (a shadowed err), so store check said "no errors" of a
// snapshot that could not check out.
func TestCheckReportsInvalidTree(t *testing.T) {
	s := newStore(t)
	good := mustSnapshot(t, s, hostileWorld(t), Meta{Kind: KindWorld, Persona: "p"})
	dup := tamperSnapshot(t, s, good, func(home *Tree) {
		home.Entries = append(home.Entries, home.Entries[len(home.Entries)-1])
	})
	r := mustCheck(t, s, &CheckOptions{NoRestore: true})
	if !slices.ContainsFunc(r.Errors, func(p Problem) bool {
		return p.Object == "tree" && strings.Contains(p.Err.Error(), "snapshot "+dup.Short()) && strings.Contains(p.Err.Error(), "not unique")
	}) {
		t.Errorf("Check does not report the tree with a duplicated name")
	}
	if err := s.Checkout(t.Context(), dup, filepath.Join(t.TempDir(), "out")); err == nil {
		t.Errorf("the snapshot with a duplicated name checks out")
	}
}
