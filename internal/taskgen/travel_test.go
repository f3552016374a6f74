package taskgen

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

// TestTravelDrafts lists the travel families' sketches on the test
// states (or, with WILDAWM_TRAVEL_RUN, on another synthesis run's) and,
// with WILDAWM_TRAVEL_DUMP set to a directory, saves their drafts there
// for reading.
func TestTravelDrafts(t *testing.T) {
	s := openSource(t)
	if run := os.Getenv("WILDAWM_TRAVEL_RUN"); run != "" {
		other, closeSrc, err := OpenSource(context.Background(), run, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(closeSrc)
		s = other
	}
	dump := os.Getenv("WILDAWM_TRAVEL_DUMP")
	for _, fam := range travelFamilies() {
		ds := draftAll(t, s, fam)
		t.Logf("%s: %d drafts", fam.Name(), len(ds))
		for _, d := range ds {
			t.Logf("  %s day %d: %s", d.state.Persona.ID, d.state.Day, d.draft.Task.ID)
			if dump != "" {
				if err := d.draft.Save(filepath.Join(dump, d.draft.Task.ID)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestTravelAblation drops a decisive step from each travel family's
// reference (the action that carries the decision, then the script that
// makes it) and holds the verifier to failing on what is left.
func TestTravelAblation(t *testing.T) {
	s := openSource(t)
	runtime.SkipUnlessInstancesRun(t)
	decisive := map[string][]func(task.Step) bool{
		"flight-cheapest-day": {clicks(`/do/reserve`), shellWith("-fares.csv")},
		"match-invite":        {tool("mcp.calendar__create_event"), shellWith("standings.csv")},
		"cafe-near-venue":     {clicks(`/do/save`), shellWith("cafes-")},
		"stays-approval":      {tool("mcp.mail__send_mail"), shellWith("stays-per-night.csv")},
	}
	for _, fam := range travelFamilies() {
		t.Run(fam.Name(), func(t *testing.T) {
			ds := draftAll(t, s, fam)
			if len(ds) == 0 {
				t.Fatal("no drafts")
			}
			env := liveEnv(t, s, ds[0].state)
			for i, drop := range decisive[fam.Name()] {
				d := ds[0]
				tk := *d.draft.Task
				tk.Reference = slices.DeleteFunc(slices.Clone(tk.Reference), drop)
				if len(tk.Reference) == len(d.draft.Task.Reference) {
					t.Fatalf("ablation %d drops no step", i)
				}
				// What the dropped step used no longer reaches a later one:
				// the cut reference declares no facts (only V is held here).
				for j := range tk.Reference {
					tk.Reference[j].Facts = nil
				}
				v := runReference(t, env, &Draft{Task: &tk, Scripts: d.draft.Scripts})
				if v.V != 0 {
					t.Fatalf("%s without decisive step %d passes V: %v", tk.ID, i, v.Criteria)
				}
				t.Logf("%s without decisive step %d: %d of %d criteria", tk.ID, i, v.Passed, v.Total)
			}
		})
	}
}

func clicks(action string) func(task.Step) bool {
	return func(st task.Step) bool {
		sel, _ := st.Args["selector"].(string)
		return st.Tool == "browser.click" && strings.Contains(sel, action)
	}
}

func shellWith(s string) func(task.Step) bool {
	return func(st task.Step) bool {
		c, _ := st.Args["command"].(string)
		return st.Tool == "shell.run" && strings.Contains(c, "python3") && strings.Contains(c, s)
	}
}

func tool(name string) func(task.Step) bool {
	return func(st task.Step) bool { return st.Tool == name }
}

// runReference runs a draft's reference on a live instance of W0 (a step
// that fails is logged: a later step may need the dropped one) and
// verifies the final world.
func runReference(t *testing.T, env *rollout.Env, d *Draft) *verify.Result {
	t.Helper()
	ctx := context.Background()
	tk := d.Task
	vdir := filepath.Join(env.WorkDir, "ablate-"+tk.ID)
	if err := d.Save(vdir); err != nil {
		t.Fatal(err)
	}
	inst, err := env.Start(ctx, tk.Provenance.Snapshot, "ablate-"+tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	sess, err := env.Open(ctx, inst, &agent.Trajectory{Version: agent.TrajectoryVersion})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range tk.Reference {
		if err := sess.Env.Do(ctx, st.Tool, st.Args); err != nil {
			t.Logf("%s: step %d (%s) fails without the dropped one: %v", tk.ID, i, st.Tool, err)
		}
	}
	sess.Close(ctx)
	final, err := rollout.SnapshotWorld(ctx, env.Store, inst.Dir(), tk.Provenance.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	v, err := env.Verify(ctx, tk, filepath.Join(vdir, "verifier"), final, tk.Answer)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
