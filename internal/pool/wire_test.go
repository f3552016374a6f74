package pool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// TestMutationCheckTakesAUIDOfItsOwn: the mutation check runs its scripts
// as a uid from the environment's allocator while 1,000 instances draw
// theirs from it at once: the instances' uids never repeat, and the check
// took uids the instances did not get (it once ran as FirstUID+999, the
// uid of the environment's 999th instance).
func TestMutationCheckTakesAUIDOfItsOwn(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	dir := f.tasks["wishlist-balance"]
	tk, err := task.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, taskgen.CheckFile))
	if err != nil {
		t.Fatal(err)
	}
	var c taskgen.Check
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	uids := sandbox.NewUIDs(900000, 0)
	env := &rollout.Env{Store: f.env.Store, Materializer: f.env.Materializer, CatalogDir: f.env.CatalogDir, WorkDir: f.env.WorkDir, Self: f.env.Self,
		Services: f.env.Services, UIDs: uids}
	initial, err := env.Materializer.Lower(ctx, tk.Provenance.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	solved, err := env.Materializer.Lower(ctx, c.Final)
	if err != nil {
		t.Fatal(err)
	}
	const instances = 1000
	wait := sandbox.DrawUIDs(t, instances, 1, env.NewUID)
	m, err := pool.MutateCheck(ctx, env, tk, filepath.Join(dir, "verifier"), initial, solved)
	seen := wait()
	if err != nil {
		t.Fatal(err)
	}
	if !m.Passed || m.Evaluations == 0 {
		t.Errorf("the mutation check of an accepted task: passed %t after %d evaluations: %v", m.Passed, m.Evaluations, m.Evidence)
	}
	if len(seen) != instances || uids.Taken() <= instances {
		t.Errorf("%d instance uids, %d taken: the mutation check took none from the allocator", len(seen), uids.Taken())
	}
}
