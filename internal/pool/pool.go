package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// File is the pool's index, in a run's directory.
const File = "pool/pool.json"

// Version is the version of pool.json this build writes.
const Version = 1

// Splits of the pool.
const (
	SplitSFT = "sft"
	SplitRL  = "rl"
	SplitVal = "val"
)

// DefaultProportions are the paper's splits: 100 SFT, 208 RL, 33 val.
func DefaultProportions() map[string]int {
	return map[string]int{SplitSFT: 100, SplitRL: 208, SplitVal: 33}
}

// Entry is one accepted task of the pool.
type Entry struct {
	ID         string   `json:"id"`
	Dir        string   `json:"dir"` // relative to the pool's tasks directory
	Split      string   `json:"split"`
	Family     string   `json:"family"`
	Persona    string   `json:"persona"`
	Day        int      `json:"day"`
	Snapshot   world.ID `json:"snapshot"`
	Difficulty string   `json:"difficulty"`
	// RatedBy names what rated Difficulty: "shortcut agents" (the offline
	// shortcut ensemble), "model NAME" for each model of a model ensemble,
	// "scripted agents" for other scripts (RatedBy).
	RatedBy   string `json:"rated_by"`
	Direct    bool   `json:"direct"`
	Revisions int    `json:"revisions"`
	Subtasks  int    `json:"subtasks"`
	Switches  int    `json:"interface_switches"`
	Revisits  bool   `json:"revisits_interface"`
	// Ratings are the re-ratings of the task's difficulty by agents (pool
	// rate), by agent; Difficulty stays the gate's own.
	Ratings []Rating `json:"ratings,omitempty"`
}

// Pool is the index of accepted tasks.
type Pool struct {
	Version     int            `json:"version"`
	TasksDir    string         `json:"tasks_dir"`
	Proportions map[string]int `json:"proportions"`
	Counts      map[string]int `json:"counts"`
	Gated       int            `json:"gated"`
	Tasks       []Entry        `json:"tasks"`
}

// RatedBy names what rated o's difficulty: the sources of its hint-free
// ensemble rollouts, comma-separated.
func RatedBy(o *Outcome) string {
	var by []string
	for _, r := range o.Rollouts {
		if !r.Hint && r.Ensemble() && r.Policy != "" {
			by = addSource(by, rolloutSource(r.Policy))
		}
	}
	return strings.Join(by, ", ")
}

// Outcomes reads every gated task's outcome under tasksDir, in ID order.
func Outcomes(tasksDir string) ([]*Outcome, []string, error) {
	paths, err := filepath.Glob(filepath.Join(tasksDir, "*", OutcomeFile))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(paths)
	var out []*Outcome
	var dirs []string
	for _, p := range paths {
		dir := filepath.Dir(filepath.Dir(p))
		o, err := LoadOutcome(dir)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, o)
		dirs = append(dirs, dir)
	}
	return out, dirs, nil
}

// Build indexes the accepted tasks under tasksDir and splits them in the
// proportions (nil: the paper's), by a hash of each task's ID: the same
// tasks always land in the same split, and a task's split does not
// depend on which others were accepted, beyond the counts.
func Build(tasksDir string, proportions map[string]int) (*Pool, error) {
	if proportions == nil {
		proportions = DefaultProportions()
	}
	total := 0
	for name, n := range proportions {
		if !slices.Contains([]string{SplitSFT, SplitRL, SplitVal}, name) {
			return nil, fmt.Errorf("pool: split %q: the splits are sft, rl and val", name)
		}
		if n < 0 {
			return nil, fmt.Errorf("pool: split %s: a proportion cannot be negative (%d)", name, n)
		}
		total += n
	}
	if total == 0 {
		return nil, errors.New("pool: the proportions are all zero: give e.g. sft=100,rl=208,val=33")
	}
	outs, dirs, err := Outcomes(tasksDir)
	if err != nil {
		return nil, err
	}
	p := &Pool{Version: Version, TasksDir: tasksDir, Proportions: proportions, Counts: map[string]int{}, Gated: len(outs)}
	for i, o := range outs {
		if !o.Accepted {
			continue
		}
		t, err := task.Load(dirs[i])
		if err != nil {
			return nil, err
		}
		rs, err := Ratings(dirs[i])
		if err != nil {
			return nil, err
		}
		p.Tasks = append(p.Tasks, Entry{ID: o.TaskID, Dir: filepath.Base(dirs[i]), Family: o.Family, Persona: o.Persona, Day: o.Day,
			Snapshot: t.Provenance.Snapshot, Difficulty: o.Difficulty, RatedBy: RatedBy(o), Direct: o.Direct, Revisions: len(o.Revisions),
			Subtasks: o.Subtasks, Switches: o.Switches, Revisits: o.Revisits, Ratings: rs})
	}
	// Order by hash, then deal the splits out by largest remainder.
	slices.SortFunc(p.Tasks, func(a, b Entry) int {
		ha, hb := idHash(a.ID), idHash(b.ID)
		if ha != hb {
			if ha < hb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	n := len(p.Tasks)
	quota := map[string]int{}
	assigned := 0
	type rem struct {
		name string
		frac int
	}
	var rems []rem
	for _, name := range []string{SplitSFT, SplitRL, SplitVal} {
		q := n * proportions[name] / total
		quota[name] = q
		assigned += q
		rems = append(rems, rem{name, n * proportions[name] % total})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return b.frac - a.frac })
	for i := 0; assigned < n; i++ {
		quota[rems[i%len(rems)].name]++
		assigned++
	}
	i := 0
	for _, name := range []string{SplitSFT, SplitRL, SplitVal} {
		for k := 0; k < quota[name]; k++ {
			p.Tasks[i].Split = name
			i++
		}
		p.Counts[name] = quota[name]
	}
	slices.SortFunc(p.Tasks, func(a, b Entry) int { return strings.Compare(a.ID, b.ID) })
	return p, nil
}

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// checkUnique is the one rule for duplicates every consumer of a pool
// (rl serve, openenv serve, eval, sft) gets through LoadPool: a task is
// listed once, and two entries never name one task directory.
func (p *Pool) checkUnique() error {
	ids := map[string]int{}
	dirs := map[string]int{}
	for i, e := range p.Tasks {
		if j, dup := ids[e.ID]; dup {
			return fmt.Errorf("tasks[%d] and tasks[%d]: task %s is listed twice: list each task once (wildawm pool split --dir RUN writes the index afresh)", j, i, e.ID)
		}
		ids[e.ID] = i
		d := filepath.Clean(e.Dir)
		if j, dup := dirs[d]; dup {
			return fmt.Errorf("tasks[%d] and tasks[%d]: tasks %s and %s name one directory %s: list each task once (wildawm pool split --dir RUN writes the index afresh)", j, i, p.Tasks[j].ID, e.ID, e.Dir)
		}
		dirs[d] = i
	}
	return nil
}

// Save writes the pool's index atomically, its tasks directory relative to
// the index's own directory when it can be, so the run can move. A pool
// that lists a task twice is refused, as LoadPool refuses it.
func (p *Pool) Save(path string) error {
	if err := p.checkUnique(); err != nil {
		return fmt.Errorf("pool: save %s: %w", path, err)
	}
	q := *p
	if abs, err := filepath.Abs(p.TasksDir); err == nil {
		if base, err := filepath.Abs(filepath.Dir(path)); err == nil {
			if rel, err := filepath.Rel(base, abs); err == nil {
				q.TasksDir = rel
			}
		}
	}
	return saveJSON(path, &q)
}

// TaskDir is the directory of an entry's task.
func (p *Pool) TaskDir(e Entry) string { return filepath.Join(p.TasksDir, e.Dir) }

// LoadPool reads a pool index.
func LoadPool(path string) (*Pool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pool: %w (build it with `wildawm pool split`)", err)
	}
	var p Pool
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("pool: %s: %w", path, err)
	}
	if p.Version != Version {
		return nil, fmt.Errorf("pool: %s: version %d, this build reads %d", path, p.Version, Version)
	}
	if err := p.checkUnique(); err != nil {
		return nil, fmt.Errorf("pool: %s: %w", path, err)
	}
	// Every entry's id and directory become paths (the task's directory,
	// its trajectories, an export's copy): each must be a name.
	for i, e := range p.Tasks {
		for _, f := range []struct{ field, v string }{{"id", e.ID}, {"dir", e.Dir}} {
			if err := world.CheckName(path, fmt.Sprintf("tasks[%d].%s", i, f.field), f.v); err != nil {
				return nil, fmt.Errorf("pool: %w", err)
			}
		}
	}
	// A relative tasks directory is relative to the index's directory (as
	// Save writes it); an index written before that named it from the
	// working directory of the command that wrote it.
	if !filepath.IsAbs(p.TasksDir) {
		if d := filepath.Join(filepath.Dir(path), p.TasksDir); isDir(d) || !isDir(p.TasksDir) {
			p.TasksDir = d
		}
	}
	return &p, nil
}

// Split returns the entries of one split ("" for all).
func (p *Pool) Split(name string) []Entry {
	var out []Entry
	for _, e := range p.Tasks {
		if name == "" || e.Split == name {
			out = append(out, e)
		}
	}
	return out
}

// Export copies the tasks of split (all if "") into out: each task's
// directory (task.json, verifier/, sketch and self-check, gate/ with its
// outcome, report and stored trajectories) and an index, pool.json,
// listing only them. The worlds stay in the store the snapshots name.
func (p *Pool) Export(ctx context.Context, split, out string) (int, error) {
	es := p.Split(split)
	if len(es) == 0 {
		return 0, fmt.Errorf("pool: split %q has no tasks", split)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	for _, e := range es {
		dst := filepath.Join(out, e.Dir)
		tmp := dst + ".new"
		os.RemoveAll(tmp)
		if err := verify.CopyDir(ctx, filepath.Join(p.TasksDir, e.Dir), tmp); err != nil {
			return 0, fmt.Errorf("pool: export %s: %w", e.ID, err)
		}
		os.RemoveAll(dst)
		if err := os.Rename(tmp, dst); err != nil {
			return 0, err
		}
	}
	sub := *p
	sub.TasksDir, sub.Tasks, sub.Counts = out, es, map[string]int{}
	for _, e := range es {
		sub.Counts[e.Split]++
	}
	return len(es), sub.Save(filepath.Join(out, "pool.json"))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
