package taskgen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

// Family is one kind of task. Sketch proposes tasks the world's own data
// supports (none when it lacks what the family needs); Author writes one
// sketch's artifacts. Both are deterministic given the world and the rng.
type Family interface {
	Name() string
	// Covers lists the sites and services the family's tasks use.
	Covers() []string
	Sketch(w *World, rng *rand.Rand) ([]Sketch, error)
	Author(w *World, s Sketch) (*Draft, error)
}

// Sketch is a proposed task, as plain data.
type Sketch struct {
	Family string `json:"family"`
	Title  string `json:"title"`
	// Params are what the author needs, by name.
	Params map[string]string `json:"params"`
	// Core names the task's core actions and artifacts ("order devices
	// LD-0149", "file decisions/wishlist.csv"): what the diversity gate
	// compares, so that two tasks sharing them are near-duplicates.
	Core []string `json:"core"`
}

// Draft is an authored task: the seven artifacts (the task spec with its
// instruction, sub-tasks, hint, rubric, reference completion, verifier and
// rationale) and the verifier's scripts by file name.
type Draft struct {
	Task    *task.Task
	Scripts map[string]string
}

// Save writes the draft as a task directory: task.json and verifier/ with
// the scripts and the SDK. It replaces dir whole (written aside, renamed).
func (d *Draft) Save(dir string) error {
	if err := d.Task.Validate(); err != nil {
		return err
	}
	tmp := dir + ".new"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "verifier", "scripts"), 0o755); err != nil {
		return err
	}
	for _, name := range slices.Sorted(mapKeys(d.Scripts)) {
		if err := os.WriteFile(filepath.Join(tmp, "verifier", "scripts", name), []byte(d.Scripts[name]), 0o644); err != nil {
			return err
		}
	}
	if err := verify.WriteSDK(filepath.Join(tmp, "verifier")); err != nil {
		return err
	}
	if err := d.Task.Save(tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// All is the registry of task families, in a fixed order; the paper's
// case study (CaseStudyFamily) is the last.
func All() []Family {
	return slices.Concat(shoppingFamilies(), travelFamilies(), workFamilies(), mediaFamilies(), devFamilies(), homeFamilies(), dailyFamilies(), []Family{caseStudy{}})
}

// Lookup returns the family named name.
func Lookup(name string) (Family, error) {
	var names []string
	for _, f := range All() {
		if f.Name() == name {
			return f, nil
		}
		names = append(names, f.Name())
	}
	return nil, fmt.Errorf("no task family %q: the families are %v", name, names)
}
