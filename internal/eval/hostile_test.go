package eval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// renamed is a policy under the agent's name.
type renamed struct {
	rollout.Policy
	name string
}

func (r renamed) Name() string { return r.name }

// TestHostileRolloutsCounted: an agent whose first rollout of the case
// solves it and whose others each do one hostile thing to their answer or
// world: every hostile rollout is kept in eval.json and counts as failed
// (failure "agent", V 0), none is left out as infrastructure, so pass@1
// is 1/K. Before the fix the 200 KB answer failed the verifier's exec and
// was left out (pass@1 of the oracle and a stuck agent 1.000 instead of
// 0.500). The names rollout also needs the store to refuse the names
// (world.ErrAgentFault): without it the final world cannot be checked
// out and is left out as infra.
func TestHostileRolloutsCounted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		attacks []string
	}{
		{"answer", []string{policy.HostileLongAnswer}},
		{"files", []string{policy.HostileUnreadable, policy.HostileDirForFile, policy.HostileGarbage}},
		{"names", []string{policy.HostileNames}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fixture(t)
			f.WritePool(t, func(fam string) string {
				if fam == "wishlist-balance" {
					return pool.SplitVal
				}
				return pool.SplitRL
			})
			split := &Split{Dir: f.Dir, Env: func(*task.Task) (Rollouts, error) { return f.Env, nil }}
			name := "scripted:hostile-" + tc.name
			k := 1 + len(tc.attacks)
			ag := Agent{Name: name, Policy: func(c Case, index int) (rollout.Policy, error) {
				if index == 1 {
					return renamed{policy.NewReplay("oracle", c.Task, policy.ErrorModel{}, 1), name}, nil
				}
				p, err := policy.NewHostile(tc.attacks[index-2], c.Task, uint64(index))
				return renamed{p, name}, err
			}}
			out := filepath.Join(t.TempDir(), "eval")
			rep, err := Run(context.Background(), Options{Adapter: split, Agent: ag, K: k, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			o := rep.Overall
			for _, r := range rep.Rollouts {
				t.Logf("rollout %d: v %d, failure %q, error %q, fault %q", r.Index, r.V, r.Failure, r.Error, r.Fault)
			}
			if o.Infra != 0 || o.Setup != 0 || o.Counted != k || len(rep.Rollouts) != k || !rep.Complete {
				t.Fatalf("%d hostile rollouts: infra %d, setup %d, counted %d of %d", k-1, o.Infra, o.Setup, o.Counted, k)
			}
			if want := 1 / float64(k); o.PassAt[0].Value != want {
				t.Errorf("pass@1 %v, want %v (the oracle's one pass in %d)", o.PassAt[0].Value, want, k)
			}
			saved, err := Load(filepath.Join(out, File))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range saved.Rollouts {
				switch {
				case r.Index == 1 && (r.V != 1 || r.Failure != ""):
					t.Errorf("the oracle: %+v", r)
				case r.Index > 1 && (r.V != 0 || r.Failure != agent.FailAgent || !r.Counted()):
					t.Errorf("%s: %+v", tc.attacks[r.Index-2], r)
				case r.Index > 1 && tc.attacks[r.Index-2] == policy.HostileLongAnswer && !strings.Contains(r.Fault, "MaxAnswerBytes"):
					t.Errorf("the long answer's record names no fault: %+v", r)
				}
			}
		})
	}
}
