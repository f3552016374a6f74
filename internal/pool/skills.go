package pool

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// SkillFile is the evolving task-synthesis skill file, in a run's
// directory: the lessons the gates taught, one line each.
const SkillFile = "skills/task-synthesis.md"

// Lesson is one thing a family's tasks taught: a fix that made a task
// pass, applied from then on to the family's tasks before their first
// evaluation (Kind one of the Fix kinds, Target the criterion, or for
// tighten the "db.table" or home path it checks), or, with Kind "note",
// evidence no fix answered.
type Lesson struct {
	Family string `json:"family"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Why    string `json:"why"`
	Seen   int    `json:"seen"`
}

// Skills are the lessons of a skill file.
type Skills struct {
	Lessons []Lesson
}

var lessonRE = regexp.MustCompile(`^- ([a-z0-9-]+): ([a-z-]+) (\S+) \(seen (\d+)\): (.*)$`)

// LoadSkills reads a skill file; a missing one has no lessons.
func LoadSkills(path string) (*Skills, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Skills{}, nil
	}
	if err != nil {
		return nil, err
	}
	s := &Skills{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m := lessonRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("pool: %s line %d: a lesson is `- FAMILY: KIND TARGET (seen N): WHY`, got %q", path, n, line)
		}
		seen, _ := strconv.Atoi(m[4])
		s.Lessons = append(s.Lessons, Lesson{Family: m[1], Kind: m[2], Target: m[3], Seen: seen, Why: m[5]})
	}
	return s, sc.Err()
}

// Merge adds lessons, counting ones already known.
func (s *Skills) Merge(ls []Lesson) {
	for _, l := range ls {
		i := slices.IndexFunc(s.Lessons, func(o Lesson) bool { return o.Family == l.Family && o.Kind == l.Kind && o.Target == l.Target })
		if i >= 0 {
			s.Lessons[i].Seen += max(l.Seen, 1)
			continue
		}
		l.Seen = max(l.Seen, 1)
		s.Lessons = append(s.Lessons, l)
	}
	slices.SortFunc(s.Lessons, func(a, b Lesson) int {
		return strings.Compare(a.Family+"\x00"+a.Kind+"\x00"+a.Target, b.Family+"\x00"+b.Kind+"\x00"+b.Target)
	})
}

// Save writes the skill file atomically.
func (s *Skills) Save(path string) error {
	var b strings.Builder
	b.WriteString("# Task synthesis: lessons from the gates\n\n")
	b.WriteString("Written by `wildawm pool run`; read back by the next run, which applies each\n")
	b.WriteString("fix to the family's tasks before their first evaluation. Notes are evidence\n")
	b.WriteString("the procedural author had no fix for.\n\n")
	for _, l := range s.Lessons {
		fmt.Fprintf(&b, "- %s: %s %s (seen %d): %s\n", l.Family, l.Kind, l.Target, l.Seen, strings.ReplaceAll(l.Why, "\n", " "))
	}
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return err
	}
	return world.WriteFileAtomic(path, []byte(b.String()), 0o644)
}

func dirOf(path string) string {
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return "."
	}
	return path[:i]
}

// applyLessons applies the family's lessons to d before its first
// evaluation.
func (st *gating) applyLessons(ctx context.Context, s *Skills, family string, d *taskgen.Draft) ([]Fix, error) {
	var fixes []Fix
	for _, l := range s.Lessons {
		if l.Family != family {
			continue
		}
		switch l.Kind {
		case FixRelax, FixDropUntargeted, FixDropEntangled:
			if len(d.Task.Verifier.Criteria) > 1 && dropCriterion(d, l.Target) {
				fixes = append(fixes, Fix{Kind: l.Kind, Criterion: l.Target, Why: "skill file: " + l.Why, Lesson: true})
			}
		case FixTighten:
			cands, err := diffCriteria(ctx, st.w0, st.ref, l.Target)
			if err != nil {
				return nil, err
			}
			for _, dc := range cands {
				c := dc.Criterion
				if !slices.ContainsFunc(d.Task.Verifier.Criteria, func(e task.Criterion) bool { return e.ID == c.ID }) {
					d.Task.Verifier.Criteria = append(d.Task.Verifier.Criteria, c)
					fixes = append(fixes, Fix{Kind: FixTighten, Criterion: c.ID, Target: dc.Target, Why: "skill file: " + l.Why, Lesson: true})
				}
			}
		}
	}
	return fixes, nil
}

// lessonsOf is what an outcome teaches: the fixes of an accepted task's
// revisions, or, for a rejected one, a note of the gates no fix answered.
func lessonsOf(family string, o *Outcome) []Lesson {
	var out []Lesson
	if o.Accepted {
		for _, rv := range o.Revisions {
			for _, f := range rv.Fixes {
				target := f.Criterion
				if f.Kind == FixTighten {
					target = f.Target
				}
				out = append(out, Lesson{Family: family, Kind: f.Kind, Target: target, Why: f.Why})
			}
		}
		return out
	}
	for _, name := range o.Report.FailedGates() {
		out = append(out, Lesson{Family: family, Kind: "note", Target: name, Why: "rejected by " + name + " after the revisions"})
	}
	return out
}
