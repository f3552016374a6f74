package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// policyHostile is the test's offline policy: policy.Hostile, its attack
// named by the request's policy_params ({"attack": NAME}) or, with none,
// by the slot.
const policyHostile = "scripted:hostile"

func hostilePolicies(attacks []string) map[string]PolicyFactory {
	ps := DefaultPolicies()
	ps[policyHostile] = func(t *task.Task, slot int, seed uint64, params json.RawMessage) (rollout.Policy, error) {
		attack := attacks[slot%len(attacks)]
		if len(params) > 0 {
			var p struct{ Attack string }
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, fmt.Errorf("policy_params: %w", err)
			}
			attack = p.Attack
		}
		return policy.NewHostile(attack, t, seed)
	}
	ps[policyOracle] = func(t *task.Task, slot int, seed uint64, params json.RawMessage) (rollout.Policy, error) {
		return policy.NewReplay("oracle", t, policy.ErrorModel{}, seed), nil
	}
	return ps
}

// policyOracle is the reference replay without errors: the control, which
// the sabotage attacks start from.
const policyOracle = "scripted:replay-oracle"

// faultAttacks make the answer or the world unverifiable: reward exactly
// 0, the cause in the result's fault.
// The names attack is not among them: such names are stored exactly
// (docs/world.md, "Names"), so its world is verified and fails on its merits.
var faultAttacks = map[string]bool{policy.HostileLongAnswer: true}

// TestHostilePolicyThroughService runs each of policy.HostileAttacks through
// the service's rollout path (what rl serve runs for every slot) on a live
// instance: each is the agent's failure (V false, reward below 1, never a
// pass) or a format failure, never an infrastructure or set-up failure;
// those that make the answer or world unverifiable score exactly 0 with
// the cause in the result. Before the fix the 200 KB and the NUL answers
// failed the verifier's exec and came back as infra; the x\xff/x\xfe names
// did too (the final world could not be checked out), and need the store's
// refusal of such names (world.ErrAgentFault) as well as this fix.
func TestHostilePolicyThroughService(t *testing.T) {
	f := fixture(t)
	s := open(t, f, Options{Policies: hostilePolicies(policy.HostileAttacks())})
	tk := f.Tasks["wishlist-balance"]
	// The control: the reference solution passes, so the sabotage attacks
	// below break a world the verifier would pass.
	res, err := s.Rollout(context.Background(), RolloutJob{Step: 1, TaskID: tk.ID, RolloutID: "oracle",
		Request: Request{Step: 1, Tasks: 1, G: 1, Policy: policyOracle, Seed: 1}})
	if err != nil || !res.V || res.Reward != 1 {
		t.Fatalf("the oracle: %v %+v", err, res)
	}
	for _, attack := range policy.HostileAttacks() {
		t.Run(attack, func(t *testing.T) {
			params, _ := json.Marshal(map[string]string{"attack": attack})
			res, err := s.Rollout(context.Background(), RolloutJob{Step: 1, TaskID: tk.ID, RolloutID: "hostile-" + attack,
				Request: Request{Step: 1, Tasks: 1, G: 1, Policy: policyHostile, PolicyParams: params, Seed: 1}})
			if err != nil {
				t.Fatalf("the rollout failed the step: %v", err)
			}
			checkHostile(t, attack, res)
		})
	}
}

func checkHostile(t *testing.T, attack string, res *RolloutResult) {
	t.Helper()
	why := fmt.Sprintf("outcome %s, failure %q, error %q, fault %q, v %t, reward %v", res.Outcome, res.Failure, res.Error, res.Fault, res.V, res.Reward)
	switch {
	case res.Failure == agent.FailInfra || res.Failure == agent.FailSetup:
		t.Fatalf("%s escaped its reward as %s: %s", attack, res.Failure, why)
	case res.V || rl.Succeeded(res.Reward):
		t.Fatalf("%s passed: %s", attack, why)
	case res.FormatFailure:
		if res.Reward != rl.FormatFailureReward {
			t.Fatalf("%s: a format failure with reward %v", attack, res.Reward)
		}
	case res.Failure != agent.FailAgent:
		t.Fatalf("%s is not the agent's failure: %s", attack, why)
	case faultAttacks[attack] && (res.Reward != 0 || res.Fault == "" || res.Trajectory.Fault != res.Fault):
		t.Fatalf("%s made its answer or world unverifiable, yet: %s", attack, why)
	}
	t.Logf("%s: %s", attack, why)
}

// TestHostileGroupNotAbandoned: a step whose every slot is a hostile
// policy (the attacks this package can contain on its own: the answers
// and the files) finishes with no group abandoned and every rollout
// scored as the agent's failure, none retried as infrastructure. Before
// the fix the answer attacks came back infra and their group was
// abandoned.
func TestHostileGroupNotAbandoned(t *testing.T) {
	f := fixture(t)
	attacks := []string{policy.HostileLongAnswer, policy.HostileNULAnswer, policy.HostileUnreadable, policy.HostileGarbage}
	inner := open(t, f, Options{Policies: hostilePolicies(attacks)})
	var mu sync.Mutex
	seen := map[string]*RolloutResult{}
	s := open(t, f, Options{Policies: hostilePolicies(attacks), Rollout: func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		res, err := inner.Rollout(ctx, j)
		if err == nil {
			mu.Lock()
			seen[fmt.Sprintf("%s slot %d (%s)", j.TaskID, j.Slot, attacks[j.Slot%len(attacks)])] = res
			mu.Unlock()
		}
		return res, err
	}})
	b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 1, G: len(attacks), Policy: policyHostile, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	if b.Stats.Abandoned != 0 || b.Stats.Retried != 0 || len(b.Groups) != 1 || b.Groups[0].State == "infra" {
		t.Fatalf("hostile step: stats %+v, groups %+v", b.Stats, b.Groups)
	}
	if len(seen) < len(attacks) {
		t.Fatalf("%d rollouts ran, want every attack once at least", len(seen))
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	}) {
		attack := k[strings.LastIndex(k, "(")+1 : len(k)-1]
		checkHostile(t, attack, seen[k])
	}
}
