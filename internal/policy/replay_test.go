package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
)

// nullBrowser accepts every action: the replay test scores the files.
type nullBrowser struct{ opened []string }

func (b *nullBrowser) Navigate(ctx context.Context, url string) error {
	b.opened = append(b.opened, url)
	return nil
}
func (*nullBrowser) Click(context.Context, string) error                { return nil }
func (*nullBrowser) SetValue(context.Context, string, string) error     { return nil }
func (*nullBrowser) Select(context.Context, string, string) error       { return nil }
func (*nullBrowser) Submit(context.Context, string) error               { return nil }
func (*nullBrowser) Text(context.Context, string) (string, error)       { return "", nil }
func (*nullBrowser) ImageBytes(context.Context, string) ([]byte, error) { return nil, nil }
func (*nullBrowser) HTML(context.Context) (string, error)               { return "", nil }
func (*nullBrowser) URL(context.Context) (string, error)                { return "", nil }
func (*nullBrowser) Snapshot(context.Context) (string, error)           { return "", nil }
func (*nullBrowser) Scroll(context.Context, int) error                  { return nil }
func (*nullBrowser) Back(context.Context) error                         { return nil }
func (*nullBrowser) Screenshot(context.Context) ([]byte, error)         { return nil, nil }

var echoRE = regexp.MustCompile(`^mkdir -p parts && echo (\S+) > (parts/\d+)$`)

// ledgerTask's reference appends twelve lines to a ledger through the
// shell and the file tools and opens one page: solved when the ledger is
// exactly right and the page was opened.
func ledgerTask() *task.Task {
	t := &task.Task{ID: "ledger", Instruction: "write the ledger", Hint: "go line by line", Answer: "12 lines"}
	for i := 1; i <= 12; i++ {
		if i%4 == 0 {
			t.Reference = append(t.Reference, task.Step{Interface: task.CLI, Tool: "file.write",
				Args: map[string]any{"path": fmt.Sprintf("parts/%02d", i), "content": fmt.Sprintf("line %d of the ledger\n", i)}})
			continue
		}
		t.Reference = append(t.Reference, task.Step{Interface: task.CLI, Tool: "shell.run",
			Args: map[string]any{"command": fmt.Sprintf("mkdir -p parts && echo item-%d,%s > parts/%02d", i, json.Number(fmt.Sprint(i*3)), i)}})
	}
	t.Reference = append(t.Reference, task.Step{Interface: task.GUI, Tool: "browser.open", Args: map[string]any{"url": "/orders"}})
	return t
}

func mustVariant(name string) ErrorModel {
	e, ok := Variant(name)
	if !ok {
		panic("no variant " + name)
	}
	return e
}

// stepsOf is what a replay did, as text.
func stepsOf(p rollout.Policy) string {
	var b strings.Builder
	_, _, steps := runLedgerSteps(p, false)
	for _, s := range steps {
		fmt.Fprintf(&b, "%s %v %s\n", s.Tool, s.Args, s.Error)
	}
	return b.String()
}

func runLedger(t *testing.T, p rollout.Policy, hint bool) (solved bool, answer string) {
	solved, answer, _ = runLedgerSteps(p, hint)
	return solved, answer
}

func runLedgerSteps(p rollout.Policy, hint bool) (solved bool, answer string, steps []agent.Step) {
	home, err := os.MkdirTemp("", "ledger-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	b := &nullBrowser{}
	env := &agent.Env{Browser: b, BaseURL: "http://site.test", Traj: &agent.Trajectory{},
		Files: agent.HomeFiles{Dir: home, UID: -1, GID: -1},
		// The reference's one command, interpreted: thousands of
		// rollouts run here, and bash would take a minute for them.
		Shell: func(ctx context.Context, command string) (*sandbox.Result, error) {
			m := echoRE.FindStringSubmatch(command)
			if m == nil {
				return &sandbox.Result{Stderr: []byte("syntax error"), ExitCode: 2}, nil
			}
			os.MkdirAll(filepath.Join(home, "parts"), 0o755)
			return &sandbox.Result{}, os.WriteFile(filepath.Join(home, m[2]), []byte(m[1]+"\n"), 0o644)
		}}
	tk := ledgerTask()
	answer, err = p.Run(context.Background(), env, tk.Public(hint))
	if err != nil {
		return false, "", env.Traj.Steps
	}
	var got strings.Builder
	entries, _ := os.ReadDir(filepath.Join(home, "parts"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(home, "parts", e.Name()))
		fmt.Fprintf(&got, "%s:\n%s", e.Name(), b)
	}
	var want strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&want, "%02d:\n", i)
		if i%4 == 0 {
			fmt.Fprintf(&want, "line %d of the ledger\n", i)
		} else {
			fmt.Fprintf(&want, "item-%d,%d\n", i, i*3)
		}
	}
	return got.String() == want.String() && len(b.opened) == 1 && b.opened[0] == "http://site.test/orders", answer, env.Traj.Steps
}

// TestReplayEnsembleSuccessRates: over many seeds the oracle always
// solves the task, the variants less often and differently from each
// other, the hint helps, and the same seed makes the same mistakes.
func TestReplayEnsembleSuccessRates(t *testing.T) {
	tk := ledgerTask()
	const seeds = 150
	rate := map[string]float64{}
	for _, v := range ReplayVariants() {
		for _, hint := range []bool{false, true} {
			n := 0
			for seed := range uint64(seeds) {
				ok, answer := runLedger(t, NewReplay(v.Name, tk, v.Errors, seed), hint)
				if ok {
					n++
					if answer != "12 lines" {
						t.Fatalf("%s seed %d hint %t: solved but answered %q", v.Name, seed, hint, answer)
					}
				}
			}
			rate[fmt.Sprintf("%s/hint=%t", v.Name, hint)] = float64(n) / seeds
		}
	}
	t.Logf("success rates: %v", rate)
	if rate["oracle/hint=false"] != 1 || rate["oracle/hint=true"] != 1 {
		t.Fatalf("the oracle does not always solve it: %v", rate)
	}
	if r := rate["cli-only/hint=false"]; r != 0 {
		t.Fatalf("the CLI-only variant solved a task that needs the browser: %v", r)
	}
	c, s, q := rate["careful/hint=false"], rate["sloppy/hint=false"], rate["quitter/hint=false"]
	if !(c < 1 && c > s && s > 0 && q > 0 && q < c) {
		t.Fatalf("want 1 > careful > sloppy > 0 and 0 < quitter < careful: %v", rate)
	}
	if rate["sloppy/hint=true"] <= s {
		t.Fatalf("the hint does not help the sloppy variant: %v", rate)
	}
	// The same seed makes the same mistakes; another seed, or another
	// variant with the same seed, others.
	for seed := range uint64(20) {
		a := stepsOf(NewReplay("sloppy", tk, mustVariant("sloppy"), seed))
		if b := stepsOf(NewReplay("sloppy", tk, mustVariant("sloppy"), seed)); a != b {
			t.Fatalf("seed %d: two runs of the same replay differ:\n%s\n---\n%s", seed, a, b)
		}
	}
	differ := 0
	for seed := range uint64(20) {
		if stepsOf(NewReplay("sloppy", tk, mustVariant("sloppy"), seed)) != stepsOf(NewReplay("careful", tk, mustVariant("careful"), seed)) {
			differ++
		}
	}
	if differ < 5 {
		t.Fatalf("sloppy and careful differ on only %d of 20 seeds", differ)
	}
	specs := ReplayEnsemble(tk, 1)
	if len(specs) != 6 || specs[0].Hint || specs[2].Hint || !specs[3].Hint || !specs[5].Hint {
		t.Fatalf("ensemble %+v", specs)
	}
	for _, s := range specs {
		if n := s.Policy.Name(); strings.Contains(n, "oracle") || strings.Contains(n, "cli-only") {
			t.Fatalf("the ensemble has %s", n)
		}
	}
	if ok, _ := runLedger(t, ReplayWithout(tk, task.GUI), false); ok {
		t.Fatal("the reference without its browser steps solved a task that needs the browser")
	}
}
