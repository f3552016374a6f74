package mutate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

// ResultVersion is the version of the JSON form of Result.
const ResultVersion = 1

// DefaultMaxEvaluations bounds the mutations evaluated per task when
// Input.MaxEvaluations is 0.
const DefaultMaxEvaluations = 60

// Criterion statuses.
const (
	Isolated   = "isolated"
	Entangled  = "entangled"
	Untargeted = "untargeted"
	Unresolved = "unresolved"
)

// Input is what Check needs.
type Input struct {
	// Task is the task; its verifier is V and its Answer the final answer
	// the reference gives.
	Task *task.Task
	// VerifierDir is the task's verifier directory (script criteria).
	VerifierDir string
	// Initial and Solved are the world directories W0 and W_ref. Neither
	// is written.
	Initial, Solved string
	// Runner runs script criteria (as for verify.Verify).
	Runner verify.Runner
	// Catalog is the catalog database SQL criteria read (verify.Input).
	Catalog string
	// Scratch is where the mutated copies of W_ref and the scripts' scratch
	// homes are made; a sandboxed Runner's uid must be able to reach it.
	// "" means a fresh directory in the system temporary directory.
	Scratch string
	// MaxEvaluations bounds the mutations evaluated; 0 means
	// DefaultMaxEvaluations.
	MaxEvaluations int

	// fresh evaluates each mutation the way Check did before issue 15: on
	// a fresh copy of W_ref, computing every criterion. The benchmarks
	// measure against it and the tests hold the two to one result.
	fresh bool
	// undone, when set, is called with the working copy after each
	// mutation of it is undone (the tests compare it with W_ref).
	undone func(dir string) error
}

// Result is the outcome of the mutation check; it is part of a gate report.
type Result struct {
	Version int `json:"version"`
	// Passed is set when every criterion is isolated.
	Passed bool `json:"passed"`
	// Problem says why the check could not run (W_ref does not pass V).
	Problem string `json:"problem,omitempty"`
	// Candidates is the number of mutations derived from W0 -> W_ref.
	Candidates int `json:"candidates"`
	// Evaluations is the number of mutations whose V was computed (the
	// verifications of W_ref and W0 themselves are not counted);
	// Inapplicable counts mutations the world refused (a unique key).
	Evaluations    int  `json:"evaluations"`
	Inapplicable   int  `json:"inapplicable,omitempty"`
	MaxEvaluations int  `json:"max_evaluations"`
	CapHit         bool `json:"cap_hit,omitempty"`
	// Criteria holds one verdict per criterion, in verifier order.
	Criteria []CriterionResult `json:"criteria"`
	// Evidence is plain sentences for the task's author.
	Evidence []string `json:"evidence"`
}

// CriterionResult is the verdict on one criterion.
type CriterionResult struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// Mutation describes the isolating mutation, or for an entangled
	// criterion the one that flipped the fewest others.
	Mutation string `json:"mutation,omitempty"`
	// Entangled lists the criteria that Mutation flipped as well.
	Entangled []string `json:"entangled,omitempty"`
	// Candidates is how many mutations could affect the criterion, Tried
	// how many of them were evaluated, Flips how many failed it.
	Candidates int `json:"candidates"`
	Tried      int `json:"tried"`
	Flips      int `json:"flips"`
	// InitialPass is set for an untargeted criterion that already passes
	// on W0.
	InitialPass bool `json:"initial_pass,omitempty"`
}

// Check runs the mutation check. A task that fails it is a Result with
// Passed false; the error is for harness failures (a world missing, the
// runner unable to run, a cancelled ctx).
func Check(ctx context.Context, in Input) (*Result, error) {
	if in.Task == nil || in.Initial == "" || in.Solved == "" {
		return nil, errors.New("mutate: a task, an initial and a solved world are needed")
	}
	crit := in.Task.Verifier.Criteria
	r := &Result{Version: ResultVersion, MaxEvaluations: in.MaxEvaluations, Evidence: []string{}}
	if r.MaxEvaluations <= 0 {
		r.MaxEvaluations = DefaultMaxEvaluations
	}
	scratch := in.Scratch
	if scratch != "" {
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
	} else {
		dir, err := os.MkdirTemp("", "wildawm-mutate-")
		if err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
		defer os.RemoveAll(dir)
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
		scratch = dir
	}
	ev := &evaluator{in: in, scratch: scratch}
	defer ev.close()
	base, err := ev.verify(ctx, in.Task, in.Solved, in.Task.Answer)
	if err != nil {
		return nil, err
	}
	if base.V != 1 {
		var failed []string
		for _, c := range base.Criteria {
			if !c.Pass {
				failed = append(failed, fmt.Sprintf("%s (%s)", c.ID, strings.TrimSpace(c.Evidence+" "+c.Error)))
			}
		}
		r.Problem = fmt.Sprintf("the reference's solved world does not pass V, so no mutation can be judged: %s failed", strings.Join(failed, "; "))
		r.Evidence = append(r.Evidence, r.Problem+".")
		r.Criteria = make([]CriterionResult, 0, len(crit))
		for _, c := range crit {
			r.Criteria = append(r.Criteria, CriterionResult{ID: c.ID, Kind: c.Kind, Status: Unresolved})
		}
		return r, nil
	}

	cands, err := candidates(ctx, in.Initial, in.Solved, in.Task)
	if err != nil {
		return nil, err
	}
	r.Candidates = len(cands)
	s := newSearch(in, cands)
	if err := s.run(ctx, ev, r); err != nil {
		return nil, err
	}
	var w0 *verify.Result
	for i := range s.res {
		if s.res[i].Status != Untargeted {
			continue
		}
		if w0 == nil {
			if w0, err = ev.verify(ctx, in.Task, in.Initial, in.Task.Answer); err != nil {
				return nil, err
			}
		}
		s.res[i].InitialPass = w0.Criteria[i].Pass
	}
	r.Criteria = s.res
	r.Passed = true
	for _, c := range r.Criteria {
		if c.Status != Isolated {
			r.Passed = false
		}
	}
	r.Evidence = append(r.Evidence, evidence(r)...)
	return r, nil
}

// search tries, criterion by criterion in rounds, each criterion's next
// likeliest mutation until one isolates it, its mutations run out or the
// cap is hit. One evaluation informs every criterion.
type search struct {
	crit  []task.Criterion
	cands []*mutation
	order [][]int // per criterion: candidate indices, likeliest first
	pos   []int
	done  map[int]outcome
	res   []CriterionResult
	best  []int // per criterion: candidate of the fewest co-flips, -1
}

func newSearch(in Input, cands []*mutation) *search {
	crit := in.Task.Verifier.Criteria
	s := &search{crit: crit, cands: cands, done: map[int]outcome{},
		order: make([][]int, len(crit)), pos: make([]int, len(crit)), res: make([]CriterionResult, len(crit)), best: make([]int, len(crit))}
	for i := range crit {
		c := &crit[i]
		s.order[i] = rank(c, scriptText(in.VerifierDir, c), cands)
		s.res[i] = CriterionResult{ID: c.ID, Kind: c.Kind, Candidates: len(s.order[i])}
		s.best[i] = -1
	}
	return s
}

func (s *search) resolved(i int) bool { return s.res[i].Status == Isolated }

func (s *search) run(ctx context.Context, ev *evaluator, r *Result) error {
	for {
		progress := false
		for i := range s.crit {
			if s.resolved(i) {
				continue
			}
			for s.pos[i] < len(s.order[i]) {
				if _, ok := s.done[s.order[i][s.pos[i]]]; !ok {
					break
				}
				s.pos[i]++
			}
			if s.pos[i] == len(s.order[i]) {
				continue
			}
			if r.Evaluations >= r.MaxEvaluations {
				r.CapHit = true
				s.finish(r)
				return nil
			}
			k := s.order[i][s.pos[i]]
			o, err := ev.evaluate(ctx, s.cands[k])
			if err != nil {
				return err
			}
			s.done[k] = o
			progress = true
			if !o.applied {
				r.Inapplicable++
				continue
			}
			r.Evaluations++
			s.record(k, o)
		}
		if !progress {
			s.finish(r)
			return nil
		}
	}
}

// record updates every criterion with the outcome of candidate k.
func (s *search) record(k int, o outcome) {
	for _, j := range o.flipped {
		if s.resolved(j) {
			continue
		}
		s.res[j].Flips++
		if s.best[j] < 0 || len(o.flipped) < len(s.done[s.best[j]].flipped) {
			s.best[j] = k
		}
		if len(o.flipped) == 1 {
			s.res[j].Status = Isolated
		}
	}
}

// finish sets every criterion's status, mutation and counts.
func (s *search) finish(r *Result) {
	for i := range s.res {
		c := &s.res[i]
		c.Tried = 0
		for _, k := range s.order[i] {
			if o, ok := s.done[k]; ok && o.applied {
				c.Tried++
			}
		}
		if b := s.best[i]; b >= 0 {
			c.Mutation = s.cands[b].desc
			if c.Status != Isolated {
				c.Status = Entangled
				for _, j := range s.done[b].flipped {
					if j != i {
						c.Entangled = append(c.Entangled, s.crit[j].ID)
					}
				}
			}
			continue
		}
		c.Status = Untargeted
		if r.CapHit && s.pos[i] < len(s.order[i]) {
			c.Status = Unresolved
		}
	}
}

// evidence writes the verdicts as sentences for the task's author.
func evidence(r *Result) []string {
	var out []string
	if r.Passed {
		out = append(out, fmt.Sprintf("Every criterion is isolated: for each, one mutation of the reference's solved world fails it and no other (%d mutations evaluated).", r.Evaluations))
	}
	for _, c := range r.Criteria {
		switch c.Status {
		case Isolated:
			out = append(out, fmt.Sprintf("Criterion %s is isolated: %s fails it and no other criterion.", c.ID, c.Mutation))
		case Entangled:
			with := strings.Join(c.Entangled, ", ")
			out = append(out, fmt.Sprintf("Criterion %s is entangled with %s: none of the %d mutations that failed it left every other criterion passing; the closest, %s, failed %s too. It checks nothing of its own: merge them or make it check something the others do not.",
				c.ID, with, c.Flips, c.Mutation, with))
		case Untargeted:
			why := "it checks something the reference did not change"
			if c.InitialPass {
				why = "it already passes on the initial world W0, so it checks nothing the task changes"
			}
			if c.Candidates == 0 {
				out = append(out, fmt.Sprintf("Criterion %s is untargeted: the reference changed nothing it can read; %s. Make it check the task's effect, or drop it.", c.ID, why))
			} else {
				out = append(out, fmt.Sprintf("Criterion %s is untargeted: none of the %d mutations of what the reference changed fails it; %s. Make it check the task's effect, or drop it.", c.ID, c.Tried, why))
			}
		case Unresolved:
			out = append(out, fmt.Sprintf("Criterion %s is unresolved: the cap of %d evaluations was hit after %d of its %d mutations, none of which failed it.", c.ID, r.MaxEvaluations, c.Tried, c.Candidates))
		}
	}
	if r.CapHit {
		out = append(out, fmt.Sprintf("The cap of %d evaluations was hit (%d candidate mutations in all); a higher cap may settle what is not isolated.", r.MaxEvaluations, r.Candidates))
	}
	return out
}

// scriptText is a script criterion's source, used to rank the mutations
// whose database, table, column, path or values it names; "" otherwise.
func scriptText(vdir string, c *task.Criterion) string {
	if c.Kind != task.KindScript || vdir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(vdir, filepath.FromSlash(c.Script)))
	if err != nil {
		return "" // verify reports the script; ranking only loses a hint
	}
	return string(b)
}

// rank lists the candidates that can affect c, likeliest first.
func rank(c *task.Criterion, script string, cands []*mutation) []int {
	var text string
	switch c.Kind {
	case task.KindSQL:
		text = c.Query
	case task.KindScript:
		text = script
	}
	lower := strings.ToLower(text)
	type scored struct{ k, score, kind int }
	var out []scored
	for k, m := range cands {
		if !relevant(c, m) {
			continue
		}
		score := 0
		if c.Kind == task.KindScript {
			switch {
			case m.path != "":
				score += 8
				if strings.Contains(lower, strings.ToLower(m.path)) {
					score += 8
				}
			case m.db != "":
				score += 4
				if mentions(lower, m.db) {
					score += 4
				}
			}
		}
		if m.table != "" && mentions(lower, m.table) {
			score += 2
			for _, v := range m.values {
				if len(v) >= 3 && strings.Contains(lower, strings.ToLower(v)) {
					score += 3
					break
				}
			}
			if m.column != "" && mentions(lower, m.column) {
				score++
			}
		}
		out = append(out, scored{k, score, m.rank})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return a.kind - b.kind
	})
	ks := make([]int, len(out))
	for i, s := range out {
		ks[i] = s.k
	}
	return ks
}

// relevant reports whether m can change what c reads.
func relevant(c *task.Criterion, m *mutation) bool {
	switch c.Kind {
	case task.KindSQL:
		return c.WorldOrDefault() == task.Final && m.db == c.DB
	case task.KindFile, task.KindCSV:
		return c.WorldOrDefault() == task.Final && m.path != "" && m.path == cleanPath(c.Path)
	case task.KindAnswer:
		return m.answer != nil
	case task.KindScript:
		return true
	}
	return false
}

// mentions reports whether name occurs in lower as a whole word.
func mentions(lower, name string) bool {
	name = strings.ToLower(name)
	for i := 0; ; {
		j := strings.Index(lower[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !wordByte(lower[j-1])) && (end == len(lower) || !wordByte(lower[end])) {
			return true
		}
		i = j + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}
