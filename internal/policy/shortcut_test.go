package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
)

// cafeTask reads a venue on a page, ranks cafés with a script and books
// the nearest: one fact of each kind, the read one cued by the hint.
func cafeTask() *task.Task {
	return &task.Task{ID: "cafe", Instruction: "book the nearest café", Hint: "the venue page gives its coordinates", Answer: "Bean There",
		Reference: []task.Step{
			{Interface: task.GUI, Tool: "browser.open", Args: map[string]any{"url": "/venue"}},
			{Interface: task.GUI, Tool: "browser.read", Args: map[string]any{"selector": "article"},
				Facts: []task.Fact{{ID: "venue", Kind: task.FactRead, Value: "venue=(41.38, 2.17)", Wrong: "venue=(41.4, 2.2)", Cue: "venue page gives its coordinates"}}},
			{Interface: task.CLI, Tool: "shell.run", Args: map[string]any{"command": "rank venue=(41.38, 2.17) > table.csv"},
				Facts: []task.Fact{{ID: "nearest", Kind: task.FactOutput, Value: "Bean There", Wrong: "Cup Inn"}}},
			{Interface: task.GUI, Tool: "browser.open", Args: map[string]any{"url": "/places/7"},
				Facts: []task.Fact{{ID: "pick", Kind: task.FactChoice, Value: "/places/7", Wrong: "/places/9", Forms: []task.Form{{Value: "Bean There", Wrong: "Grind"}}}}},
			{Interface: task.CLI, Tool: "shell.run", Args: map[string]any{"command": "book 'Bean There'"}},
		}}
}

// run is what a policy did on cafeTask: the commands and pages, in order,
// and its answer.
func run(t *testing.T, p rollout.Policy, hint bool) (string, string) {
	t.Helper()
	var did []string
	b := &nullBrowser{}
	env := &agent.Env{Browser: b, BaseURL: "http://site.test", Traj: &agent.Trajectory{},
		Files: agent.HomeFiles{Dir: t.TempDir(), UID: -1, GID: -1},
		Shell: func(_ context.Context, command string) (*sandbox.Result, error) {
			did = append(did, command)
			return &sandbox.Result{}, nil
		}}
	answer, err := p.Run(context.Background(), env, cafeTask().Public(hint))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range b.opened {
		did = append(did, strings.TrimPrefix(u, "http://site.test"))
	}
	return strings.Join(did, " | "), answer
}

func shortcut(name string) ShortcutKind {
	for _, sk := range Shortcuts() {
		if sk.Name == name {
			return sk
		}
	}
	panic("no shortcut " + name)
}

// TestShortcutAgents: each agent makes its kind's mistake at its kind's
// facts and nowhere else, from the right step on; the hint's cue keeps
// the agent careful there; the answer carries the mistake.
func TestShortcutAgents(t *testing.T) {
	tk := cafeTask()
	if err := tk.ValidateFacts(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent  string
		hint   bool
		did    string
		answer string
	}{
		// The read left out, the rounded coordinates in the script.
		{"unread", false, "rank venue=(41.4, 2.2) > table.csv | book 'Bean There' | /venue | /places/7", "Bean There"},
		// The hint points at the venue's coordinates: read carefully.
		{"unread", true, "rank venue=(41.38, 2.17) > table.csv | book 'Bean There' | /venue | /places/7", "Bean There"},
		// The script left out, its output guessed.
		{"guess", false, "book 'Cup Inn' | /venue | /places/7", "Cup Inn"},
		{"guess", true, "book 'Cup Inn' | /venue | /places/7", "Cup Inn"},
		// The distractor taken at the decision's own step.
		{"distractor", false, "rank venue=(41.38, 2.17) > table.csv | book 'Grind' | /venue | /places/9", "Grind"},
	} {
		did, answer := run(t, NewShortcut(tk, shortcut(c.agent)), c.hint)
		if did != c.did || answer != c.answer {
			t.Errorf("%s (hint %t):\n did %s, answered %q\nwant %s, %q", c.agent, c.hint, did, answer, c.did, c.answer)
		}
	}
}

// TestShortcutEnsembleIgnoresSeed: the same task gets the same rollouts
// whatever the seed, and the shape the gates want (three hint-free, then
// the same three hinted).
func TestShortcutEnsembleIgnoresSeed(t *testing.T) {
	tk := cafeTask()
	a, b := ShortcutEnsemble(tk, 1), ShortcutEnsemble(tk, 987654321)
	if len(a) != 6 || len(b) != 6 {
		t.Fatalf("%d and %d rollouts, want 6", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Hint != b[i].Hint || a[i].Policy.Name() != b[i].Policy.Name() || a[i].Hint != (i >= 3) {
			t.Fatalf("rollout %d: %s/%t vs %s/%t", i, a[i].Policy.Name(), a[i].Hint, b[i].Policy.Name(), b[i].Hint)
		}
		da, _ := run(t, a[i].Policy, a[i].Hint)
		db, _ := run(t, b[i].Policy, b[i].Hint)
		if da != db {
			t.Fatalf("rollout %s differs with the seed:\n%s\n%s", a[i].ID, da, db)
		}
	}
}

// TestReplayWithoutForgetsWhatTheInterfaceTold: without the browser the
// venue's coordinates, read there, are not known to the script, and the
// choice made on a page is not known either.
func TestReplayWithoutForgetsWhatTheInterfaceTold(t *testing.T) {
	did, answer := run(t, ReplayWithout(cafeTask(), task.GUI), false)
	if want := "rank venue=(41.4, 2.2) > table.csv | book 'Grind'"; did != want || answer != "Grind" {
		t.Fatalf("did %s, answered %q; want %s, Grind", did, answer, want)
	}
	// Without the shell the script's output is a guess: the answer is
	// the guess's (the page opened is the choice's, which the script's
	// output does not name in this task).
	did, answer = run(t, ReplayWithout(cafeTask(), task.CLI), false)
	if want := "/venue | /places/7"; did != want || answer != "Cup Inn" {
		t.Fatalf("without the shell: did %s, answered %q; want %s, Cup Inn", did, answer, want)
	}
}
