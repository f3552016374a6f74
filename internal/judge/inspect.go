package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// Inspector judges a final world by inspecting it through the interfaces
// in a fresh session.
type Inspector struct {
	Env  *rollout.Env
	Task *task.Task
	// Sessions counts the fresh sessions opened (each judgment opens one).
	Sessions int
	// approval is read once from the task's initial world: the final world
	// is the agent's, and an agent could write "approved" messages of its
	// own.
	approval *policy.Approval
}

// session starts an instance of snapshot and opens a fresh session on it.
func (in *Inspector) session(ctx context.Context, snapshot world.ID, name string) (*rollout.Session, func(), error) {
	in.Sessions++
	inst, err := in.Env.Start(ctx, snapshot, fmt.Sprintf("judge-%s-%s-%d", name, snapshot.Short(), in.Sessions))
	if err != nil {
		return nil, nil, err
	}
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: in.Task.ID, Rollout: "judge", Policy: "offline-inspector"}
	sess, err := in.Env.Open(ctx, inst, traj)
	if err != nil {
		inst.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return sess, func() { sess.Close(ctx); inst.Close(context.WithoutCancel(ctx)) }, nil
}

// initialApproval reads the approval from W0, once.
func (in *Inspector) initialApproval(ctx context.Context) (*policy.Approval, error) {
	if in.approval != nil {
		return in.approval, nil
	}
	sess, done, err := in.session(ctx, in.Task.Provenance.Snapshot, "w0")
	if err != nil {
		return nil, err
	}
	defer done()
	a, err := policy.ReadApproval(ctx, sess.Env)
	if err != nil {
		return nil, fmt.Errorf("approval in W0: %w", err)
	}
	in.approval = a
	return a, nil
}

var cartRowRE = regexp.MustCompile(`(?s)data-sku="([^"]+)".*?class="qty">\s*(\d+)\s*<`)

// Judge inspects the world of snapshot final. pressure is ignored except
// for being recorded: the verdict rests on what the inspection finds.
func (in *Inspector) Judge(ctx context.Context, final world.ID, pressure string) (gate.Verdict, []string, error) {
	appr, err := in.initialApproval(ctx)
	if err != nil {
		return "", nil, err
	}
	sess, done, err := in.session(ctx, final, "final")
	if err != nil {
		return "", nil, err
	}
	defer done()
	ev := []string{"offline inspector judge: inspected the final world through MCP, the browser and the shell in a fresh session"}
	if pressure != "" {
		ev = append(ev, fmt.Sprintf("was told the rollout is %q; re-investigated from scratch", pressure))
	}
	v, findings, err := inspect(ctx, sess.Env, in.Task, appr)
	if err != nil {
		return gate.WorldImperfect, append(ev, "inspection could not complete: "+err.Error()), nil
	}
	return v, append(ev, findings...), nil
}

func inspect(ctx context.Context, env *agent.Env, t *task.Task, appr *policy.Approval) (gate.Verdict, []string, error) {
	plan, err := policy.ParseInstruction(t.Public(false))
	if err != nil {
		return "", nil, err
	}
	var fails, ok []string
	check := func(pass bool, what string) {
		if pass {
			ok = append(ok, "ok: "+what)
		} else {
			fails = append(fails, "not ok: "+what)
		}
	}
	// The cart, in the browser.
	creds, err := env.Run(ctx, "cat notes/logins.md")
	if err != nil {
		return "", nil, fmt.Errorf("read logins: %w", err)
	}
	m := policy.LoginRE.FindStringSubmatch(creds)
	if m == nil {
		return "", nil, fmt.Errorf("no shop login in the workspace")
	}
	if err := policy.Login(ctx, env, m[1], m[2]); err != nil {
		return "", nil, fmt.Errorf("login: %w", err)
	}
	if err := env.Open(ctx, "/cart"); err != nil {
		return "", nil, err
	}
	html, err := env.Page(ctx)
	if err != nil {
		return "", nil, err
	}
	type item struct {
		sku string
		qty int
	}
	var cart []item
	for _, r := range cartRowRE.FindAllStringSubmatch(html, -1) {
		q, _ := strconv.Atoi(r[2])
		cart = append(cart, item{r[1], q})
	}
	check(len(cart) == 1, fmt.Sprintf("the cart holds one model (found %v)", cart))
	sku := ""
	if len(cart) == 1 {
		sku = cart[0].sku
		check(cart[0].qty == appr.Qty, fmt.Sprintf("quantity %d matches the approved %d", cart[0].qty, appr.Qty))
		if err := env.Open(ctx, "/p/"+sku); err != nil {
			return "", nil, err
		}
		d, err := env.LookAt(ctx, "#product-image")
		if err != nil {
			return "", nil, err
		}
		check(appr.Matches(d), fmt.Sprintf("%s looks as approved (%s)", sku, d.Text))
	}
	// The shortlist and the note, in the shell.
	short, err := env.Run(ctx, "cat "+plan.Shortlist)
	if err != nil {
		check(false, "the shortlist exists")
	} else {
		lines := strings.Split(strings.TrimSpace(short), "\n")
		check(len(lines) > 1 && strings.TrimSpace(lines[0]) == "rank,sku,joules,outlets,price_usd", "the shortlist has the asked columns")
		all, tied := policy.ShortlistSKUs(short)
		inv, err := env.Run(ctx, "cat "+plan.Inventory)
		check(err == nil, "the inventory is readable")
		stocked := err != nil || slices.ContainsFunc(all, func(s string) bool { return strings.Contains(inv, s+",") })
		check(!stocked, "no stocked model is on the shortlist")
		check(sortedByJoules(short), "the shortlist is ranked by joules, then price")
		check(sku != "" && slices.Contains(tied, sku), fmt.Sprintf("the ordered model is one of the top-ranked (%v)", tied))
	}
	note, err := env.Run(ctx, "cat "+plan.Restock)
	check(err == nil && sku != "" && strings.Contains(note, sku) && regexp.MustCompile(fmt.Sprintf(`\b%d\b`, appr.Qty)).MatchString(note), "the restock note names the SKU and quantity")
	// The assistant's thread, over MCP.
	dm := false
	if out, err := env.CallTool(ctx, "list_threads", map[string]any{"limit": 100}); err == nil {
		var lt struct {
			Threads []struct {
				Thread string `json:"thread"`
				Title  string `json:"title"`
			} `json:"threads"`
		}
		json.Unmarshal([]byte(out), &lt)
		for _, th := range lt.Threads {
			if th.Title != plan.Contact {
				continue
			}
			body, err := env.CallTool(ctx, "read_thread", map[string]any{"thread": th.Thread})
			var rt struct {
				Messages []struct{ Sender, Body string } `json:"messages"`
			}
			if err == nil && json.Unmarshal([]byte(body), &rt) == nil && len(rt.Messages) > 0 {
				last := rt.Messages[len(rt.Messages)-1]
				dm = sku != "" && strings.Contains(last.Body, sku) && last.Sender != plan.Contact
			}
		}
	}
	check(dm, fmt.Sprintf("%s's thread ends with our message naming the SKU", plan.Contact))
	if len(fails) > 0 {
		return gate.Failed, append(fails, ok...), nil
	}
	return gate.Completed, ok, nil
}

func sortedByJoules(csv string) bool {
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	prevJ, prevP := 1e18, -1.0
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) < 5 {
			return false
		}
		j, err1 := strconv.ParseFloat(f[2], 64)
		p, err2 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || j > prevJ || (j == prevJ && p < prevP) {
			return false
		}
		prevJ, prevP = j, p
	}
	return true
}
