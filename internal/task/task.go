package task

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// Version is the version of task.json this code reads and writes.
const Version = 1

// Interfaces a task may require.
const (
	GUI = "gui"
	MCP = "mcp"
	CLI = "cli"
)

// AllInterfaces lists the interfaces in canonical order.
var allInterfaces = []string{GUI, MCP, CLI}

// Difficulties the gates assign.
const (
	Hard   = "hard"
	Medium = "medium"
)

var idRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// MaxIDLen bounds task, sub-task and criterion IDs.
const MaxIDLen = 64

// Task is one synthesised task (docs/task.md).
type Task struct {
	Version int `json:"version"`
	// ID names the task: lowercase letters, digits and '-'.
	ID string `json:"id"`
	// Instruction is what the solver is asked to do.
	Instruction string `json:"instruction"`
	// Interfaces lists the interfaces the task needs, each indispensable.
	Interfaces []string `json:"interfaces"`
	// Subtasks is the ordered decomposition.
	Subtasks []Subtask `json:"subtasks"`
	// Hint is shown only to hinted rollouts.
	Hint string `json:"hint"`
	// Rubric lists what a judge checks.
	Rubric []string `json:"rubric"`
	// Reference is a reference completion.
	Reference []Step `json:"reference"`
	// Verifier is V(W0, W, a).
	Verifier Verifier `json:"verifier"`
	// Answer is the expected final answer, if the task asks for one.
	Answer string `json:"answer,omitempty"`
	// Difficulty is set by the gates: "", "hard" or "medium".
	Difficulty string `json:"difficulty,omitempty"`
	// Provenance says which world the task was authored on.
	Provenance Provenance `json:"provenance"`
	// Rationale is internal metadata, never shown to the solver.
	Rationale string `json:"rationale"`
}

// Subtask is one step of the ordered decomposition.
type Subtask struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Interface string `json:"interface"`
	// Decisive names the evidence this sub-task's decision rests on and
	// nothing else can supply: DecisiveImage means only a picture tells
	// the right choice. The gates then run the reference procedure with
	// that evidence removed, which must fail (docs/gate-report.md).
	Decisive string `json:"decisive,omitempty"`
	// Support marks a sub-task every task of its kind has, not something
	// this task asks (finding a login before a site's first page): the
	// interface statistics (switches, revisits) leave it out.
	Support bool `json:"support,omitempty"`
}

// Kinds of decisive evidence a sub-task may declare.
const (
	DecisiveImage = "image"
)

// DecisiveSubtask returns the first sub-task that declares kind as its
// decisive evidence.
func (t *Task) DecisiveSubtask(kind string) (Subtask, bool) {
	for _, s := range t.Subtasks {
		if s.Decisive == kind {
			return s, true
		}
	}
	return Subtask{}, false
}

// Step is one action of the reference completion.
type Step struct {
	Interface string         `json:"interface"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args,omitempty"`
	Note      string         `json:"note,omitempty"`
	// Facts are what the agent learns or decides at this step that later
	// steps depend on, each with what a careless agent would use instead
	// (fact.go): the shortcut agents that rate difficulty offline.
	Facts []Fact `json:"facts,omitempty"`
}

// Provenance names the initial world W0 a task was authored on.
type Provenance struct {
	Persona string `json:"persona"`
	Day     int    `json:"day"`
	// Snapshot is the snapshot ID of W0.
	Snapshot world.ID `json:"snapshot"`
	// Catalog is the catalog hash W0 references; zero if none.
	Catalog world.ID `json:"catalog,omitzero"`
}

// Public is the only part of a task a solver sees.
type Public struct {
	ID          string   `json:"id"`
	Instruction string   `json:"instruction"`
	Interfaces  []string `json:"interfaces"`
	// Hint is set for hinted rollouts only.
	Hint string `json:"hint,omitempty"`
}

// Public returns what a solver sees; the hint only when withHint is set.
func (t *Task) Public(withHint bool) Public {
	p := Public{ID: t.ID, Instruction: t.Instruction, Interfaces: slices.Clone(t.Interfaces)}
	if withHint {
		p.Hint = t.Hint
	}
	return p
}

// fieldError is a validation error naming the field and the fix.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("task: field %s: %s", field, fmt.Sprintf(format, args...))
}

func validID(field, id string) error {
	switch {
	case id == "":
		return fieldError(field, `is empty: give an ID of lowercase letters, digits and '-' (e.g. "export-invoices")`)
	case len(id) > MaxIDLen:
		return fieldError(field, "%q is %d bytes; at most %d", id, len(id), MaxIDLen)
	case !idRE.MatchString(id):
		return fieldError(field, `%q: want lowercase letters, digits and single '-' between them (e.g. "export-invoices")`, id)
	}
	return nil
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// Validate returns an error naming the first invalid field and how to fix it.
func (t *Task) Validate() error {
	if t.Version != Version {
		return fieldError("version", "got %d, this build reads version %d", t.Version, Version)
	}
	if err := validID("id", t.ID); err != nil {
		return err
	}
	if blank(t.Instruction) {
		return fieldError("instruction", "is empty: say what the solver must do")
	}
	if len(t.Interfaces) == 0 {
		return fieldError("interfaces", "is empty: list the interfaces the task needs, from %s", strings.Join(allInterfaces, ", "))
	}
	for i, in := range t.Interfaces {
		f := fmt.Sprintf("interfaces[%d]", i)
		if !slices.Contains(allInterfaces, in) {
			return fieldError(f, "%q is not one of %s", in, strings.Join(allInterfaces, ", "))
		}
		if slices.Index(t.Interfaces, in) != i {
			return fieldError(f, "%q is listed twice", in)
		}
	}
	if len(t.Subtasks) == 0 {
		return fieldError("subtasks", "is empty: give the ordered sub-task decomposition")
	}
	seen := map[string]bool{}
	for i, s := range t.Subtasks {
		f := fmt.Sprintf("subtasks[%d]", i)
		if err := validID(f+".id", s.ID); err != nil {
			return err
		}
		if seen[s.ID] {
			return fieldError(f+".id", "%q is used twice: sub-task IDs must be unique", s.ID)
		}
		seen[s.ID] = true
		if blank(s.Title) {
			return fieldError(f+".title", "is empty: say what the sub-task achieves")
		}
		if err := t.declared(f+".interface", s.Interface); err != nil {
			return err
		}
		switch s.Decisive {
		case "":
		case DecisiveImage:
			if s.Interface != GUI {
				return fieldError(f+".decisive", "%q needs a gui sub-task (images are seen in the browser), not %q", s.Decisive, s.Interface)
			}
		default:
			return fieldError(f+".decisive", "%q is not a kind of decisive evidence: use %q or leave it out", s.Decisive, DecisiveImage)
		}
	}
	for i, in := range t.Interfaces {
		if !slices.ContainsFunc(t.Subtasks, func(s Subtask) bool { return s.Interface == in }) {
			return fieldError(fmt.Sprintf("interfaces[%d]", i), "%q is declared but no sub-task uses it: drop it or add the sub-task that needs it", in)
		}
	}
	if blank(t.Hint) {
		return fieldError("hint", "is empty: give the hint shown to hinted rollouts")
	}
	if len(t.Rubric) == 0 {
		return fieldError("rubric", "is empty: list what a judge checks")
	}
	for i, r := range t.Rubric {
		if blank(r) {
			return fieldError(fmt.Sprintf("rubric[%d]", i), "is empty: remove it or say what a judge checks")
		}
	}
	if len(t.Reference) == 0 {
		return fieldError("reference", "is empty: give a reference completion")
	}
	for i, s := range t.Reference {
		f := fmt.Sprintf("reference[%d]", i)
		if err := t.declared(f+".interface", s.Interface); err != nil {
			return err
		}
		if blank(s.Tool) {
			return fieldError(f+".tool", "is empty: name the tool the step calls")
		}
	}
	for i, in := range t.Interfaces {
		if !slices.ContainsFunc(t.Reference, func(s Step) bool { return s.Interface == in }) {
			return fieldError(fmt.Sprintf("interfaces[%d]", i), "%q is declared but the reference completion never uses it", in)
		}
	}
	if err := t.validateFacts(); err != nil {
		return err
	}
	if err := t.Verifier.Validate(); err != nil {
		return err
	}
	switch t.Difficulty {
	case "", Hard, Medium:
	default:
		return fieldError("difficulty", "%q: want \"\", %q or %q", t.Difficulty, Hard, Medium)
	}
	if blank(t.Provenance.Persona) {
		return fieldError("provenance.persona", "is empty: name the persona of the initial world")
	}
	if t.Provenance.Day < 0 {
		return fieldError("provenance.day", "got %d, must be >= 0", t.Provenance.Day)
	}
	if t.Provenance.Snapshot.IsZero() {
		return fieldError("provenance.snapshot", "is empty: give the snapshot ID of the initial world")
	}
	if blank(t.Rationale) {
		return fieldError("rationale", "is empty: record why the task is built this way (never shown to the solver)")
	}
	return nil
}

func (t *Task) declared(field, in string) error {
	if !slices.Contains(allInterfaces, in) {
		return fieldError(field, "%q is not one of %s", in, strings.Join(allInterfaces, ", "))
	}
	if !slices.Contains(t.Interfaces, in) {
		return fieldError(field, "%q is not in interfaces %v: declare it or use a declared one", in, t.Interfaces)
	}
	return nil
}
