package taskgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/world"
)

// State is one synthesized world state a task may start from.
type State struct {
	Persona  *persona.Persona
	Day      int
	Snapshot world.ID
}

// Source is a world-synthesis run's states (`wildawm syn worlds --dir`).
type Source struct {
	Run          *synth.Run
	Materializer *reset.Materializer
	CatalogDir   string
	States       []State
}

// OpenSource opens the run at dir; materialised worlds are cached under
// cacheDir. Only days that passed their check (done.json) count.
func OpenSource(ctx context.Context, dir, cacheDir string) (*Source, func(), error) {
	r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	ps, err := r.LoadPersonas()
	if err != nil {
		closeRun()
		return nil, nil, err
	}
	if len(ps) == 0 {
		closeRun()
		return nil, nil, fmt.Errorf("taskgen: %s has no personas: synthesize worlds first (wildawm syn worlds --dir %s)", dir, dir)
	}
	s := &Source{Run: r, Materializer: &reset.Materializer{Store: r.Store, CacheDir: cacheDir}, CatalogDir: filepath.Join(dir, "catalog")}
	for _, p := range ps {
		for day := 0; day < p.Days; day++ {
			b, err := os.ReadFile(filepath.Join(r.DayDir(p.ID, day), "done.json"))
			if errors.Is(err, fs.ErrNotExist) {
				break // the days after a missing one never grew
			}
			if err != nil {
				closeRun()
				return nil, nil, err
			}
			var d synth.Done
			if err := json.Unmarshal(b, &d); err != nil {
				closeRun()
				return nil, nil, fmt.Errorf("taskgen: %s day %d: done.json: %w", p.ID, day, err)
			}
			s.States = append(s.States, State{Persona: p, Day: day, Snapshot: d.Snapshot})
		}
	}
	return s, closeRun, nil
}

// World materialises a state (read-only, cached) and reads it.
func (s *Source) World(ctx context.Context, st State) (*World, error) {
	dir, err := s.Materializer.Lower(ctx, st.Snapshot)
	if err != nil {
		return nil, err
	}
	return Load(dir, s.CatalogDir, st.Snapshot, st.Persona.Name)
}
