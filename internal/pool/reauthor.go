package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// FixReauthor is a revision by the author itself: the task written again
// from the sketch and the gates' feedback, self-checked, and rolled out
// anew (the task changed, so its rollouts say nothing of it).
const FixReauthor = "reauthor"

// Reauthor is the author a revision the procedural reviser has no fix for
// goes back to (the llm author, with the gates' feedback); Source gives it
// the task's world.
type Reauthor struct {
	Author taskgen.AuthorBackend
	Source *taskgen.Source
}

// reauthor writes the task again with feedback, self-checks it and, if it
// passes, replaces the task and its rollouts. It returns the fix, or why
// there is none.
func (st *gating) reauthor(ctx context.Context, draft *taskgen.Draft, feedback string, seed uint64) (*Fix, string, error) {
	ra := st.g.Reauthor
	b, err := os.ReadFile(filepath.Join(st.dir, taskgen.SketchFile))
	if err != nil {
		return nil, "no sketch to write the task again from: " + err.Error(), nil
	}
	var p taskgen.Produced
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, "", fmt.Errorf("pool: %s: %w", filepath.Join(st.dir, taskgen.SketchFile), err)
	}
	var state *taskgen.State
	for i, s := range ra.Source.States {
		if s.Persona.ID == st.t.Provenance.Persona && s.Day == st.t.Provenance.Day && s.Snapshot == st.t.Provenance.Snapshot {
			state = &ra.Source.States[i]
		}
	}
	if state == nil {
		return nil, "", fmt.Errorf("pool: %s: its state (%s day %d) is not in the source", st.t.ID, st.t.Provenance.Persona, st.t.Provenance.Day)
	}
	w, err := ra.Source.World(ctx, *state)
	if err != nil {
		return nil, "", err
	}
	d, err := ra.Author.Author(ctx, w, p.Sketch, feedback)
	var ae *taskgen.AuthorError
	if errors.As(err, &ae) {
		return nil, fmt.Sprintf("%s could not write the task again: %v", ra.Author.Name(), err), nil
	}
	if err != nil {
		return nil, "", err
	}
	d.Task.ID = st.t.ID
	if err := saveRevised(st.dir, d); err != nil {
		return nil, fmt.Sprintf("%s wrote an invalid task: %v", ra.Author.Name(), err), nil
	}
	c, err := taskgen.CheckTask(ctx, st.env, d, st.dir)
	if err != nil {
		return nil, "", err
	}
	if !c.OK {
		return nil, fmt.Sprintf("%s's revised task failed its self-check: %s", ra.Author.Name(), c.Problem), nil
	}
	cb, _ := json.MarshalIndent(c, "", "  ")
	if err := world.WriteFileAtomic(filepath.Join(st.dir, taskgen.CheckFile), append(cb, '\n'), 0o644); err != nil {
		return nil, "", err
	}
	// A new task: new reference, new judges, new rollouts.
	*draft = *d
	st.t, st.check = d.Task, c
	if st.ref, err = st.env.Lower(ctx, c.Final); err != nil {
		return nil, "", err
	}
	st.rj = &judge.ReplayJudge{W0: st.w0, Ref: st.ref, Task: st.t}
	if st.g.Observer != nil {
		st.obs = st.g.Observer(st.env, st.t, c.Final, filepath.Join(st.copyDir, "verifier"))
	}
	st.recs = nil
	for _, spec := range st.specs(seed) {
		r, err := st.rollout(ctx, spec)
		if err != nil {
			return nil, "", err
		}
		st.recs = append(st.recs, *r)
	}
	for i := range st.recs {
		if err := st.judgeOne(ctx, &st.recs[i]); err != nil {
			return nil, "", err
		}
	}
	if err := st.regrade(ctx); err != nil {
		return nil, "", err
	}
	return &Fix{Kind: FixReauthor, Criterion: "*", Why: fmt.Sprintf("%s wrote the task again from the gates' feedback; it passed its self-check and was rolled out anew", ra.Author.Name())}, "", nil
}
