package taskgen

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
)

// TestSynthRunIsTheSameWithAnyWorkers: a run with one worker and one with
// four write the same tasks (the diversity gate takes jobs in their
// order), a rerun resumes with them, and the gate drops duplicates.
func TestSynthRunIsTheSameWithAnyWorkers(t *testing.T) {
	s := openSource(t)
	ctx := context.Background()
	run := func(out string, parallel int) ([]string, int) {
		sy := &Synth{Source: s, Out: out, Diversity: &Diversity{}}
		if _, err := sy.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		rs, err := sy.Run(ctx, sy.Jobs(All(), nil, 7), parallel, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		dropped := 0
		for _, r := range rs {
			for _, p := range r.Tasks {
				ids = append(ids, p.ID)
			}
			dropped += len(r.Dropped)
		}
		return ids, dropped
	}
	out1, out4 := t.TempDir(), t.TempDir()
	one, dropped := run(out1, 1)
	four, _ := run(out4, 4)
	if len(one) == 0 || !reflect.DeepEqual(one, four) {
		t.Fatalf("one worker wrote %v, four wrote %v", one, four)
	}
	if dropped == 0 {
		t.Fatalf("the gate dropped nothing over %d tasks of every state: the same tasks recur day after day", len(one))
	}
	for _, id := range one {
		a, _ := os.ReadFile(filepath.Join(out1, id, "task.json"))
		b, _ := os.ReadFile(filepath.Join(out4, id, "task.json"))
		if len(a) == 0 || string(a) != string(b) {
			t.Fatalf("%s differs between the runs", id)
		}
	}
	// What later stages leave beside a task survives a rerun.
	marker := filepath.Join(out1, one[0], "gate", "outcome.json")
	os.MkdirAll(filepath.Dir(marker), 0o755)
	if err := os.WriteFile(marker, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _ := run(out1, 2)
	if !reflect.DeepEqual(again, one) {
		t.Fatalf("a rerun wrote %v, want %v", again, one)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("a rerun wrote %s over again: %v", one[0], err)
	}
}

// TestSynthSelfCheck: with Check set, every task written passed the
// self-check on a live instance, and says so in check.json.
func TestSynthSelfCheck(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	fam, _ := Lookup("wishlist-balance")
	env := liveEnv(t, s, s.States[0])
	sy := &Synth{Source: s, Out: t.TempDir(), Diversity: &Diversity{}, Check: func(*persona.Persona) *rollout.Env { return env }}
	rs, err := sy.Run(context.Background(), sy.Jobs([]Family{fam}, func(st State) bool { return st.Day == st.Persona.Days-1 }, 1), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rs {
		for _, p := range r.Tasks {
			n++
			if p.Check == nil || !p.Check.OK {
				t.Fatalf("%s: check %+v", p.ID, p.Check)
			}
			if b, err := os.ReadFile(filepath.Join(p.Dir, CheckFile)); err != nil || !strings.Contains(string(b), `"ok": true`) {
				t.Fatalf("%s: check.json %s %v", p.ID, b, err)
			}
		}
		if len(r.Rejected) > 0 {
			t.Fatalf("rejected: %+v", r.Rejected)
		}
	}
	if n == 0 {
		t.Fatal("no task written")
	}
}
