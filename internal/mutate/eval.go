package mutate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// evaluator computes V on mutations of W_ref. W_ref is copied once, to
// the working copy; each mutation changes one thing of it (a database,
// a home path) or only the answer, V is computed and the thing is copied
// back from W_ref. Only the criteria that can read what a mutation
// changed are computed again; the others keep their verdict on W_ref,
// where every criterion passed.
type evaluator struct {
	in      Input
	scratch string
	n       int
	// work is the working copy ("" until the first mutation of the
	// world); perCopy is set when W_ref's home holds a symlink, through
	// which a mutation could write another path than its own: each
	// mutation then gets a fresh copy.
	work    string
	perCopy bool
	// subsets caches the criteria each target's mutations are computed
	// on, by target.
	subsets map[string]*subset
}

// subset is the criteria of the task that can read one target.
type subset struct {
	task  *task.Task // the task with only those criteria
	index []int      // their indices among the task's criteria
}

func (e *evaluator) verify(ctx context.Context, t *task.Task, final, answer string) (*verify.Result, error) {
	res, err := verify.Verify(ctx, t, verify.Input{Initial: e.in.Initial, Final: final, Answer: answer, Catalog: e.in.Catalog,
		VerifierDir: e.in.VerifierDir, Runner: e.in.Runner, Scratch: e.scratch})
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	return res, nil
}

// close removes the working copy.
func (e *evaluator) close() {
	if e.work != "" {
		os.RemoveAll(filepath.Dir(e.work))
	}
}

// errInapplicable marks a mutation the world refuses (a unique key, a row
// that is not there): it is skipped, not evaluated.
var errInapplicable = errors.New("mutation does not apply")

// outcome is what one evaluated mutation did.
type outcome struct {
	applied bool
	flipped []int // criteria that passed on W_ref and failed
}

// evaluate computes V on W_ref changed by m.
func (e *evaluator) evaluate(ctx context.Context, m *mutation) (outcome, error) {
	if e.in.fresh {
		return e.evaluateFresh(ctx, m)
	}
	sub := e.subset(m)
	if m.answer != nil {
		return e.compute(ctx, sub, e.in.Solved, *m.answer)
	}
	if e.work == "" {
		if err := e.copyOnce(ctx); err != nil {
			return outcome{}, err
		}
	}
	if e.perCopy {
		return e.evaluateFresh(ctx, m)
	}
	o, err := e.applied(ctx, m, sub)
	if uerr := e.undo(m); uerr != nil && err == nil {
		err = fmt.Errorf("mutate: undo %s: %w", m.desc, uerr)
	}
	if err == nil && e.in.undone != nil {
		err = e.in.undone(e.work)
	}
	return o, err
}

// applied applies m to the working copy and computes V on it.
func (e *evaluator) applied(ctx context.Context, m *mutation, sub *subset) (outcome, error) {
	if err := m.apply(ctx, e.work); err != nil {
		if errors.Is(err, errInapplicable) {
			return outcome{}, nil
		}
		return outcome{}, fmt.Errorf("mutate: %s: %w", m.desc, err)
	}
	return e.compute(ctx, sub, e.work, e.in.Task.Answer)
}

// compute computes sub's criteria on the world final with answer; the
// others passed on W_ref and read nothing that differs from it.
func (e *evaluator) compute(ctx context.Context, sub *subset, final, answer string) (outcome, error) {
	o := outcome{applied: true}
	if len(sub.index) == 0 {
		// Verify would have read the world's layout: a mutation that
		// broke it is still a harness failure.
		if _, err := state.ReadLayout(final); err != nil {
			return outcome{}, fmt.Errorf("mutate: verify: %w", err)
		}
		return o, nil
	}
	res, err := e.verify(ctx, sub.task, final, answer)
	if err != nil {
		return outcome{}, err
	}
	for i, c := range res.Criteria {
		if !c.Pass {
			o.flipped = append(o.flipped, sub.index[i])
		}
	}
	return o, nil
}

// copyOnce makes the working copy of W_ref.
func (e *evaluator) copyOnce(ctx context.Context) error {
	dir, err := os.MkdirTemp(e.scratch, "copy-")
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("mutate: %w", err)
	}
	work := filepath.Join(dir, "w")
	if err := cloneWorld(ctx, e.in.Solved, work); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("mutate: %w", err)
	}
	e.work = work
	e.perCopy, err = hasSymlink(filepath.Join(e.in.Solved, world.HomeDir))
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	return nil
}

// undo copies back from W_ref what m changed in the working copy: its
// database (and removes any journal), or its home path and the
// directories made for it.
func (e *evaluator) undo(m *mutation) error {
	if m.db != "" {
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			if err := restoreFile(world.DBPath(e.in.Solved, m.db)+suffix, world.DBPath(e.work, m.db)+suffix); err != nil {
				return err
			}
		}
		return nil
	}
	rel := filepath.FromSlash(m.path)
	home, refHome := filepath.Join(e.work, world.HomeDir), filepath.Join(e.in.Solved, world.HomeDir)
	if err := restoreFile(filepath.Join(refHome, rel), filepath.Join(home, rel)); err != nil {
		return err
	}
	for d := filepath.Dir(rel); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(refHome, d)); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Remove(filepath.Join(home, d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// subset returns the criteria that can read what m changes. A mutation
// changes one database, one home path or the answer: an sql criterion
// reads one database of the final world (verify's authorizer refuses
// ATTACH), a file or csv criterion one home path (all of them are
// computed again on any home mutation, so that a path reached through a
// directory made or removed is never missed), an answer criterion the
// answer; a script may read anything. Criteria of the initial world read
// W0, which no mutation changes.
func (e *evaluator) subset(m *mutation) *subset {
	key := "answer"
	switch {
	case m.answer != nil:
	case m.db != "":
		key = "db " + m.db
	default:
		key = "home"
	}
	if s, ok := e.subsets[key]; ok {
		return s
	}
	t := *e.in.Task
	t.Verifier.Criteria = nil
	s := &subset{task: &t}
	for i, c := range e.in.Task.Verifier.Criteria {
		if reads(&c, m) {
			t.Verifier.Criteria = append(t.Verifier.Criteria, c)
			s.index = append(s.index, i)
		}
	}
	if e.subsets == nil {
		e.subsets = map[string]*subset{}
	}
	e.subsets[key] = s
	return s
}

// reads reports whether c can read what m changes.
func reads(c *task.Criterion, m *mutation) bool {
	switch c.Kind {
	case task.KindSQL:
		return c.WorldOrDefault() == task.Final && m.answer == nil && m.db == c.DB
	case task.KindFile, task.KindCSV:
		return c.WorldOrDefault() == task.Final && m.answer == nil && m.db == ""
	case task.KindAnswer:
		return m.answer != nil
	}
	return true // a script, or a kind verify will refuse
}

// evaluateFresh applies m to a fresh copy of W_ref, computes every
// criterion and removes the copy.
func (e *evaluator) evaluateFresh(ctx context.Context, m *mutation) (outcome, error) {
	e.n++
	dir := filepath.Join(e.scratch, fmt.Sprintf("world-%d", e.n))
	defer os.RemoveAll(dir)
	final, answer := e.in.Solved, e.in.Task.Answer
	if m.answer != nil {
		answer = *m.answer
	} else {
		if err := cloneWorld(ctx, e.in.Solved, dir); err != nil {
			return outcome{}, fmt.Errorf("mutate: %w", err)
		}
		if err := m.apply(ctx, dir); err != nil {
			if errors.Is(err, errInapplicable) {
				return outcome{}, nil
			}
			return outcome{}, fmt.Errorf("mutate: %s: %w", m.desc, err)
		}
		final = dir
	}
	all := &subset{task: e.in.Task}
	for i := range e.in.Task.Verifier.Criteria {
		all.index = append(all.index, i)
	}
	return e.compute(ctx, all, final, answer)
}
