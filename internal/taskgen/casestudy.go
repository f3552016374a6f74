package taskgen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/task"
)

// CaseStudyFamily is the paper's case study as a task family: the
// hand-written task (synth.CaseStudyTask) on the case-study persona's
// world (synth.Run.CaseStudy), authored on the last day of its rack
// fit-out arc, when the approval, the spec sheet, the BOM and the
// inventory are all on the computer. It sketches on no other world.
const CaseStudyFamily = "case-study"

type caseStudy struct{}

func (caseStudy) Name() string     { return CaseStudyFamily }
func (caseStudy) Covers() []string { return []string{"shop", "messages"} }

func (caseStudy) Sketch(w *World, _ *rand.Rand) ([]Sketch, error) {
	p := synth.CaseStudyPersona()
	if w.Manifest.Persona != p.ID || w.Manifest.Day != p.Arcs[0].To {
		return nil, nil
	}
	for _, rel := range []string{synth.PathBOM, synth.PathInventory, synth.PathSpecSheet} {
		if _, err := w.Home(rel); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
	}
	approved := synth.CaseStudyCandidates()[0]
	return []Sketch{{Family: CaseStudyFamily, Title: "Order the rack surge protector Maya approved, by its look",
		Params: map[string]string{"approved": approved, "look_alike": synth.CaseStudyCandidates()[1]},
		Core:   []string{"order shop " + approved, "file " + synth.PathShortlist, "file " + synth.PathRestock, "message install assistant"}}}, nil
}

func (caseStudy) Author(w *World, s Sketch) (*Draft, error) {
	if s.Params["approved"] != catalog.CandidateWhite {
		return nil, fmt.Errorf("taskgen: %s sketch: params.approved is %q, want %q (the look-alike the approval describes)", CaseStudyFamily, s.Params["approved"], catalog.CandidateWhite)
	}
	t, scripts, err := synth.CaseStudyTask(synth.CaseStudyInput(w.Manifest.Day, w.Snapshot, w.Manifest.Catalog))
	if err != nil {
		return nil, err
	}
	return &Draft{Task: t, Scripts: scripts}, nil
}

// CaseStudySource grows the case study's world in the world run at dir
// (building the run's catalog first if it has none), then opens the run as
// a Source, its worlds materialised under cacheDir; st is the state the
// case-study task is authored on. close releases the run.
func CaseStudySource(ctx context.Context, dir, cacheDir string, progress func(format string, args ...any)) (src *Source, st State, close func(), err error) {
	r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: dir, Progress: progress})
	if err != nil {
		return nil, State{}, nil, err
	}
	days, err := r.CaseStudy(ctx, progress)
	closeRun()
	if err != nil {
		return nil, State{}, nil, err
	}
	src, close, err = OpenSource(ctx, dir, cacheDir)
	if err != nil {
		return nil, State{}, nil, err
	}
	w0 := days[len(days)-1]
	for _, s := range src.States {
		if s.Persona.ID == synth.CaseStudyPersona().ID && s.Snapshot == w0.Snapshot {
			return src, s, close, nil
		}
	}
	close()
	return nil, State{}, nil, fmt.Errorf("taskgen: the case study's day %d (%s) is not a state of the run at %s", w0.Day, w0.Snapshot.Short(), dir)
}

// AuthorCaseStudy writes the case-study task on st (a state of src, from
// CaseStudySource) to out/ID through the synthesis (the diversity gate,
// the calendar check, sketch.json) and, with env set, its self-check
// (check.json). It returns the task's directory. A task an earlier call
// wrote is kept as it is.
func AuthorCaseStudy(ctx context.Context, src *Source, st State, out string, env *rollout.Env) (string, error) {
	s := &Synth{Source: src, Out: out, Diversity: &Diversity{}}
	if env != nil {
		s.Check = func(*persona.Persona) *rollout.Env { return env }
	}
	fam, err := Lookup(CaseStudyFamily)
	if err != nil {
		return "", err
	}
	j := s.Jobs([]Family{fam}, func(x State) bool { return x == st }, 1)
	if len(j) != 1 {
		return "", fmt.Errorf("taskgen: the case study's state %s day %d is not in the source", st.Persona.ID, st.Day)
	}
	res, err := s.Do(ctx, j[0])
	if err != nil {
		return "", err
	}
	if len(res.Tasks) != 1 {
		why := fmt.Sprintf("%d sketches", res.Sketches)
		for _, p := range append(res.Rejected, res.Dropped...) {
			why += fmt.Sprintf("; %s: %s", p.ID, p.Problem)
			if p.Check != nil && p.Check.Problem != "" {
				why += " (self-check: " + p.Check.Problem + ")"
			}
		}
		return "", fmt.Errorf("taskgen: the case-study family wrote no task on %s day %d: %s", st.Persona.ID, st.Day, why)
	}
	dir := res.Tasks[0].Dir
	if _, err := task.Load(dir); err != nil {
		return "", err
	}
	return filepath.Clean(dir), nil
}
