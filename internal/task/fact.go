package task

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Kinds of fact a reference step may declare (docs/task.md, "Facts").
const (
	// FactRead is data the agent reads through an interface (a page, an
	// MCP result, a file) and later steps use.
	FactRead = "read"
	// FactOutput is what a step computes (a script's output): an agent
	// that skips the step guesses it.
	FactOutput = "output"
	// FactChoice is a decision among candidates: an agent that chooses
	// carelessly takes the distractor.
	FactChoice = "choice"
)

// FactKinds lists the kinds in canonical order.
func FactKinds() []string { return []string{FactRead, FactOutput, FactChoice} }

// Fact is what an agent learns or decides at a reference step that later
// steps depend on. Value is how it appears in the later steps' arguments
// (or in the answer); Wrong is what an agent that took the shortcut at
// this step uses in its place: the value it would have read carelessly,
// guessed without running the script, or the distractor it would have
// chosen. The shortcut agents (internal/policy) are built on these.
type Fact struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
	Wrong string `json:"wrong"`
	// Wrong may equal Value only for an output: a guess that happens to
	// be right (the computing step is still left out).
	//
	// Cue is a phrase of the task's hint that points at this fact: an
	// agent given the hint takes no shortcut here.
	Cue string `json:"cue,omitempty"`
	// Forms are the other forms later steps carry the same fact in (a
	// place's number in a URL beside its name in a title), each with its
	// wrong counterpart; they are replaced together with Value.
	Forms []Form `json:"forms,omitempty"`
}

// Form is one more form of a fact: Value as a later step carries it,
// Wrong in its place.
type Form struct {
	Value string `json:"value"`
	Wrong string `json:"wrong"`
}

// Subs are the fact's replacements, Value's first.
func (f Fact) Subs() []Form { return append([]Form{{f.Value, f.Wrong}}, f.Forms...) }

// Facts lists the reference's facts in step order, each with its step's
// index.
func (t *Task) Facts() []StepFact {
	var out []StepFact
	for i, s := range t.Reference {
		for _, f := range s.Facts {
			out = append(out, StepFact{Step: i, Fact: f})
		}
	}
	return out
}

// StepFact is a fact with the index of the reference step declaring it.
type StepFact struct {
	Step int
	Fact
}

// Cued reports whether the hint points at f: its cue appears in hint
// (case and spacing aside).
func (f Fact) Cued(hint string) bool {
	if blank(f.Cue) || blank(hint) {
		return false
	}
	return strings.Contains(fold(hint), fold(f.Cue))
}

func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// Substitute returns args with every occurrence of from in a text (or a
// number's literal) replaced by to, and whether anything changed. args
// itself is left alone.
func Substitute(args map[string]any, from, to string) (map[string]any, bool) {
	return SubstituteAll(args, []Form{{Value: from, Wrong: to}})
}

// SubstituteAll is Substitute with several replacements made at once:
// each text is scanned once, the longest value matching at a position
// wins, and a replacement's result is never replaced again (A -> B and
// B -> C turn A into B, not C).
func SubstituteAll(args map[string]any, subs []Form) (map[string]any, bool) {
	var pairs []string
	exact := map[string]string{}
	for _, fm := range slices.SortedStableFunc(slices.Values(subs), func(a, b Form) int { return len(b.Value) - len(a.Value) }) {
		if fm.Value == "" {
			continue
		}
		if _, dup := exact[fm.Value]; dup {
			continue // the first replacement of a value holds
		}
		exact[fm.Value] = fm.Wrong
		pairs = append(pairs, fm.Value, fm.Wrong)
	}
	if len(pairs) == 0 {
		return args, false
	}
	r := strings.NewReplacer(pairs...)
	changed := false
	var sub func(v any) any
	sub = func(v any) any {
		switch x := v.(type) {
		case string:
			if y := r.Replace(x); y != x {
				changed = true
				return y
			}
		case json.Number:
			if to, ok := exact[string(x)]; ok {
				changed = true
				if json.Valid([]byte(to)) {
					return json.Number(to)
				}
				return to
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = sub(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = sub(e)
			}
			return out
		}
		return v
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = sub(v)
	}
	if !changed {
		return args, false
	}
	return out, true
}

// ReplaceAll is SubstituteAll on one text.
func ReplaceAll(s string, subs []Form) string {
	out, _ := SubstituteAll(map[string]any{"s": s}, subs)
	return out["s"].(string)
}

// contains reports whether from occurs in args as Substitute would find
// it.
func contains(args map[string]any, from string) bool {
	_, ok := Substitute(args, from, from+"\x00")
	return ok
}

// ValidateFacts is the facts' part of Validate, for a task built in
// parts.
func (t *Task) ValidateFacts() error { return t.validateFacts() }

// validateFacts checks the reference's facts: known kinds, unique ids,
// a Wrong other than Value, and a Value that a later step (or, for a
// choice, this step) or the answer uses, so that getting it wrong can
// matter.
func (t *Task) validateFacts() error {
	seen := map[string]string{}
	for i, s := range t.Reference {
		for j, f := range s.Facts {
			field := fmt.Sprintf("reference[%d].facts[%d]", i, j)
			if err := validID(field+".id", f.ID); err != nil {
				return err
			}
			if prev, dup := seen[f.ID]; dup {
				return fieldError(field+".id", "%q is also the id of %s: give each fact its own id", f.ID, prev)
			}
			seen[f.ID] = field
			if !slices.Contains(FactKinds(), f.Kind) {
				return fieldError(field+".kind", "%q is not one of %s", f.Kind, strings.Join(FactKinds(), ", "))
			}
			from := i + 1
			if f.Kind == FactChoice {
				from = i
			}
			for k, fm := range f.Subs() {
				ff := field + ".value"
				if k > 0 {
					ff = fmt.Sprintf("%s.forms[%d].value", field, k-1)
				}
				if fm.Value == "" {
					return fieldError(ff, "is empty: give the value as later steps use it")
				}
				// A guess may come out right (the step is still left out);
				// a careless read or choice that changes nothing is no fact.
				if fm.Wrong == fm.Value && k > 0 {
					continue // a form the mistake leaves alike (a chain's name) changes nothing
				}
				if fm.Wrong == fm.Value && f.Kind != FactOutput {
					return fieldError(strings.TrimSuffix(ff, "value")+"wrong", "equals value: give what an agent that took the shortcut would use instead")
				}
				used := strings.Contains(t.Answer, fm.Value)
				for _, later := range t.Reference[from:] {
					used = used || contains(later.Args, fm.Value)
				}
				if !used {
					return fieldError(ff, "%q appears in no later step's arguments nor in the answer: a fact nothing uses cannot be got wrong", clipFact(fm.Value))
				}
			}
		}
	}
	return nil
}

func clipFact(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
