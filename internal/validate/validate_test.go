package validate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/validate"
	"github.com/wildawm/wildawm/internal/world"
)

const clock = "2026-03-01T18:00:00Z"

var robin = &persona.Persona{Version: 1, ID: "robin-vale", Name: "Robin Vale", Contacts: []persona.Contact{{Name: "Maya Okafor", Role: "colleague"}}}

func text(s string) *string { return &s }

// day0 writes a note and declares it; ops are extra operations.
func day0(ops ...delta.Op) *delta.Delta {
	return &delta.Delta{Version: delta.Version, Persona: robin.ID, Day: 0, Clock: clock,
		Ops:      append([]delta.Op{{Op: delta.OpFileWrite, Path: "notes/plan.md", Content: text("# Plan\nwater the plants\n")}}, ops...),
		Produces: world.Produces{Files: []string{"notes/plan.md"}}}
}

func checker(t *testing.T) (*validate.Checker, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &validate.Checker{Store: st, Skills: skill.All()}, dir
}

func layer(t *testing.T, rep *validate.Report, name string) validate.Layer {
	t.Helper()
	for _, l := range rep.Layers {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("report has no layer %s: %+v", name, rep.Layers)
	return validate.Layer{}
}

// TestGoodDayIsAccepted: a day that lints, replays, produces what it
// declares and matches its plan is accepted and snapshotted, with its
// statistics; without a runtime live health is skipped, never passed, so
// the report is not complete.
func TestGoodDayIsAccepted(t *testing.T) {
	c, dir := checker(t)
	out := filepath.Join(dir, "day-00")
	rep, err := c.Check(context.Background(), validate.Input{Persona: robin, Delta: day0(), Dir: out, Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Complete || rep.Snapshot.IsZero() || rep.Hash.IsZero() {
		t.Fatalf("report: ok %t, complete %t, snapshot %s: %v", rep.OK, rep.Complete, rep.Snapshot.Short(), rep.Problems())
	}
	for _, name := range validate.Layers {
		l := layer(t, rep, name)
		if name == validate.Health {
			if l.OK || !strings.Contains(l.Skipped, "no runtime") {
				t.Errorf("health without a runtime: ok %t, skipped %q", l.OK, l.Skipped)
			}
			continue
		}
		if !l.OK || l.Skipped != "" {
			t.Errorf("layer %s: ok %t, skipped %q, problems %v", name, l.OK, l.Skipped, l.Problems)
		}
	}
	sn, err := c.Store.Load(rep.Snapshot)
	if err != nil || sn.WorldHash != rep.Hash || sn.Persona != robin.ID {
		t.Errorf("the accepted state in the store: %+v, %v", sn, err)
	}
	if h, err := state.Hash(context.Background(), out); err != nil || h != rep.Hash {
		t.Errorf("the accepted world at %s hashes to %s (%v), the report says %s", out, h.Short(), err, rep.Hash.Short())
	}
	if rep.Stats == nil || rep.Stats.Files != 1 || rep.Stats.TextBytes != int64(len("# Plan\nwater the plants\n")) || rep.Stats.Tokens != rep.Stats.TextBytes/4 {
		t.Errorf("stats %+v", rep.Stats)
	}
}

// TestEachLayerRejects: a day that breaks one layer fails that layer with
// a problem naming what is wrong, skips the layers after it, leaves no
// world behind and no snapshot; the identity check and the review name
// the persona and the event at fault.
func TestEachLayerRejects(t *testing.T) {
	bad := func(mutate func(in *validate.Input)) validate.Input {
		in := validate.Input{Persona: robin, Delta: day0(), Day: 0}
		mutate(&in)
		return in
	}
	other := &persona.Persona{ID: "alex-rivera", Name: "Alex Rivera", Contacts: []persona.Contact{{Name: "Jonah Horvat", Role: "friend"}}}
	var calls atomic.Int64
	for _, c := range []struct {
		name, layer, want string
		in                validate.Input
		gens              delta.Generators
	}{
		{"lint", validate.Lint, "ops[1]", bad(func(in *validate.Input) {
			in.Delta.Ops = append(in.Delta.Ops, delta.Op{Op: delta.OpFileWrite, Path: "../escape.txt", Content: text("x")})
		}), nil},
		{"identity", validate.Lint, "Jonah Horvat (reserved by alex-rivera)", bad(func(in *validate.Input) {
			in.Delta.Ops[0].Content = text("lunch with Jonah Horvat\n")
		}), nil},
		{"replay", validate.Replay, "the two replays differ", bad(func(in *validate.Input) {
			in.Delta.Ops = append(in.Delta.Ops, delta.Op{Op: delta.OpFileWrite, Path: "notes/drift.txt", Generator: &delta.GeneratorRef{Name: "drift"}})
		}), driftGenerator{&calls}},
		{"produces", validate.Produces, "notes/missing.md", bad(func(in *validate.Input) {
			in.Delta.Produces.Files = append(in.Delta.Produces.Files, "notes/missing.md")
		}), nil},
		{"review", validate.Review, "event 0:", bad(func(in *validate.Input) {
			in.Events = []skill.Event{{Skill: "no-such-skill", Params: json.RawMessage(`{}`)}}
		}), nil},
		{"plan's day", validate.Review, "the plan robin-vale day 3", bad(func(in *validate.Input) { in.Day = 3 }), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			chk, dir := checker(t)
			chk.Identities = persona.NewIdentities([]*persona.Persona{robin, other})
			chk.Generators = c.gens
			c.in.Dir = filepath.Join(dir, "day-00")
			rep, err := chk.Check(context.Background(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK {
				t.Fatalf("a day that breaks %s was accepted", c.layer)
			}
			l := layer(t, rep, c.layer)
			if l.OK || !strings.Contains(strings.Join(l.Problems, "\n"), c.want) {
				t.Errorf("layer %s: ok %t, problems %q, want one naming %q", c.layer, l.OK, l.Problems, c.want)
			}
			after := false
			for _, x := range rep.Layers {
				if after && !strings.Contains(x.Skipped, c.layer+" failed") {
					t.Errorf("layer %s ran after %s failed: %+v", x.Name, c.layer, x)
				}
				after = after || x.Name == c.layer
			}
			if _, err := os.Stat(c.in.Dir); !os.IsNotExist(err) {
				t.Errorf("a rejected day left %s: %v", c.in.Dir, err)
			}
			if !rep.Snapshot.IsZero() {
				t.Errorf("a rejected day has snapshot %s", rep.Snapshot.Short())
			}
			if c.name == "review" && (len(rep.Events) != 1 || rep.Events[0] != 0) {
				t.Errorf("events implicated %v, want [0]", rep.Events)
			}
		})
	}
}

// driftGenerator makes different bytes on every call: a day that uses it
// does not replay.
type driftGenerator struct{ n *atomic.Int64 }

func (g driftGenerator) Generate(name string, _ json.RawMessage) ([]byte, error) {
	return []byte(strings.Repeat("x", int(g.n.Add(1)))), nil
}

// TestLiveHealthRejectsAndForgets: with a runtime, live health boots the
// day: an account whose password is nowhere in the home fails it; the
// rejected candidate's snapshot is dropped from the store. The same day
// with the credentials in a home file passes every layer, complete.
func TestLiveHealthRejectsAndForgets(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	root, err := os.MkdirTemp("", "wildawm-validate-test-") // the sandbox uids reach it
	if err != nil {
		t.Fatal(err)
	}
	defer reset.Remove(root)
	os.Chmod(root, 0o755)
	st, err := store.Init(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The shop's pages read the catalog (about 5 s to build).
	cat := filepath.Join(root, "catalog")
	if _, err := catalog.Build(context.Background(), cat, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	uids := sandbox.NewUIDs(620000, 0)
	var n atomic.Int64
	chk := &validate.Checker{Store: st, Skills: skill.All(),
		Env: func(p *persona.Persona) (*rollout.Env, func()) {
			dir := filepath.Join(root, "health", string(rune('a'+n.Add(1))))
			return &rollout.Env{Store: st, Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(dir, "cache")}, CatalogDir: cat,
				WorkDir: dir, Self: p.Name, UIDs: uids}, func() { reset.Remove(dir) }
		}}
	shopDB := delta.Op{Op: delta.OpDBCreate, DB: "shop", SQL: shop.Schema()}
	account := delta.Op{Op: delta.OpAccountCreate, Site: "shop", Username: "robin", Password: "tulip-42", Salt: "s1", Display: "Robin Vale"}
	missing := day0(shopDB, account)
	missing.Produces.Accounts = []world.AccountRef{{Site: "shop", Username: "robin"}}
	rep, err := chk.Check(context.Background(), validate.Input{Persona: robin, Delta: missing, Dir: filepath.Join(root, "a"), Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	l := layer(t, rep, validate.Health)
	if rep.OK || l.OK || !strings.Contains(strings.Join(l.Problems, "\n"), "account shop/robin") {
		t.Fatalf("a day whose credentials are nowhere in the home: ok %t, health %+v", rep.OK, l)
	}
	if !rep.Forgot {
		t.Errorf("the rejected candidate was not forgotten")
	}
	if ls, _ := st.List(); len(ls) != 0 {
		t.Errorf("the store keeps %d snapshots after a rejected day", len(ls))
	}

	found := day0(shopDB, account, delta.Op{Op: delta.OpFileWrite, Path: "Documents/passwords.txt", Content: text("shop: robin / tulip-42\n")})
	found.Produces.Accounts = missing.Produces.Accounts
	rep, err = chk.Check(context.Background(), validate.Input{Persona: robin, Delta: found, Dir: filepath.Join(root, "b"), Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || !rep.Complete {
		t.Errorf("the day with its credentials: ok %t, complete %t: %v", rep.OK, rep.Complete, rep.Problems())
	}
}
