package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// Deltas turns a plan into day deltas with the skill library.
func Deltas(p Persona, plan []Day, skills *skill.Library, catalog world.ID) ([]*delta.Delta, error) {
	b := skill.NewBuilder(&p)
	out := make([]*delta.Delta, 0, len(plan))
	for _, day := range plan {
		d, err := EmitDay(b, day, skills)
		if err != nil {
			return nil, err
		}
		if day.Day == 0 {
			d.Catalog = catalog
		}
		out = append(out, d)
	}
	return out, nil
}

// EmitDay emits one day's events with b (which holds the ledger of the
// days before) and returns the day's delta. Events of text skills
// (skill.TextPrefix) emit nothing: the llm implementer realises them with
// its own operations.
func EmitDay(b *skill.Builder, day Day, skills *skill.Library) (*delta.Delta, error) {
	b.Begin(day.Day, day.Clock)
	for i, ev := range day.Events {
		if skill.IsText(ev.Skill) {
			continue // the implementer's, by hand (propose_ops)
		}
		sk, err := skills.Lookup(ev.Skill)
		if err != nil {
			return nil, fmt.Errorf("day %d event %d: %w", day.Day, i, err)
		}
		if err := sk.Emit(b, ev.Params); err != nil {
			return nil, fmt.Errorf("day %d event %d: %w", day.Day, i, err)
		}
		b.State.Used[ev.Skill]++
	}
	return b.Delta(), nil
}

// GrowOptions configure Grow.
type GrowOptions struct {
	Store      *store.Store
	Generators delta.Generators
	// WorkDir holds one directory per day (replaced if present).
	WorkDir string
	// Progress, if set, is told about each day.
	Progress func(format string, args ...any)
}

// GrownDay is one checked, stored day.
type GrownDay struct {
	Day      int      `json:"day"`
	Snapshot world.ID `json:"snapshot"`
	Hash     world.ID `json:"hash"`
	Dir      string   `json:"-"`
}

// Grow applies the deltas in order from the empty world. Each day passes
// lint, the replay check (applied twice to fresh copies, equal hashes) and
// the produces check before it is snapshotted with its parent. Rerunning
// Grow with the same deltas gives the same snapshots.
func Grow(ctx context.Context, deltas []*delta.Delta, opts GrowOptions) ([]GrownDay, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	if err := os.MkdirAll(opts.WorkDir, 0o755); err != nil {
		return nil, err
	}
	var (
		out        []GrownDay
		parentDir  string
		parentSnap world.ID
	)
	for _, d := range deltas {
		dir := filepath.Join(opts.WorkDir, fmt.Sprintf("day-%02d", d.Day))
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		dopts := &delta.Options{Generators: opts.Generators, Parent: parentSnap}
		pd := parentDir
		fresh := func(ctx context.Context, dst string) error {
			if pd == "" {
				return nil
			}
			return state.Copy(ctx, pd, dst)
		}
		scratch, err := os.MkdirTemp(opts.WorkDir, ".replay-")
		if err != nil {
			return nil, err
		}
		res, err := delta.Replay(ctx, fresh, d, scratch, dopts)
		os.RemoveAll(scratch)
		if err != nil {
			return nil, fmt.Errorf("day %d: %w", d.Day, err)
		}
		if !res.Equal {
			return nil, fmt.Errorf("day %d: replay mismatch: %s", d.Day, res.First)
		}
		if err := delta.ApplyCopy(ctx, parentDir, dir, d, dopts); err != nil {
			return nil, fmt.Errorf("day %d: %w", d.Day, err)
		}
		issues, err := delta.CheckProduces(ctx, parentDir, dir, &d.Produces)
		if err != nil {
			return nil, fmt.Errorf("day %d: %w", d.Day, err)
		}
		if len(issues) > 0 {
			return nil, fmt.Errorf("day %d: produces check: %v", d.Day, issues)
		}
		sum, err := state.Summarize(ctx, dir)
		if err != nil {
			return nil, err
		}
		if sum.Hash != res.Hashes[0] {
			return nil, fmt.Errorf("day %d: applied world %s differs from its replay %s", d.Day, sum.Hash.Short(), res.Hashes[0].Short())
		}
		m, err := world.ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		id, err := opts.Store.Snapshot(ctx, dir, store.Meta{Kind: store.KindWorld, Parent: parentSnap, WorldHash: sum.Hash, Persona: m.Persona, Day: m.Day, Catalog: m.Catalog})
		if err != nil {
			return nil, fmt.Errorf("day %d: %w", d.Day, err)
		}
		progress("day %d: %d operations, replay ok, produces ok, world %s, snapshot %s", d.Day, len(d.Ops), sum.Hash.Short(), id.Short())
		out = append(out, GrownDay{Day: d.Day, Snapshot: id, Hash: sum.Hash, Dir: dir})
		parentDir, parentSnap = dir, id
	}
	return out, nil
}
