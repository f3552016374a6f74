package judge

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// ReplayJudge compares a rollout's changes with the reference's.
type ReplayJudge struct {
	// W0 is the initial world; Ref is W0 after the reference completion.
	W0, Ref string
	// Task, when set, lends its declared mistakes (its facts' wrong
	// values): a rollout whose changes carry one where the reference's
	// carry the value fails, however alike the rest.
	Task *task.Task
	ref  *state.Diff
}

var tokenRE = regexp.MustCompile(`\b[A-Z]{1,5}\d*-\d{3,5}\b|\b\d+\b`)

// Judge returns the verdict for the final world at dir, with evidence.
func (j *ReplayJudge) Judge(ctx context.Context, dir string) (gate.Verdict, []string, error) {
	if j.ref == nil {
		d, err := state.Compare(ctx, j.W0, j.Ref)
		if err != nil {
			return "", nil, fmt.Errorf("replay judge: reference diff: %w", err)
		}
		j.ref = d
	}
	got, err := state.Compare(ctx, j.W0, dir)
	if err != nil {
		return "", nil, fmt.Errorf("replay judge: rollout diff: %w", err)
	}
	var misses []string
	for _, rt := range j.ref.Tables {
		gt := findTable(got, rt.DB, rt.Table)
		for _, want := range rt.Added {
			if gt == nil || !slices.ContainsFunc(gt.Added, func(r state.Row) bool { return rowAlike(want, r, rt.Key) }) {
				misses = append(misses, fmt.Sprintf("missing a row like the reference's in %s.%s: %s", rt.DB, rt.Table, rowKey(want, rt.Key)))
			}
		}
		if gt != nil && len(gt.Added) > len(rt.Added) {
			misses = append(misses, fmt.Sprintf("%d extra row(s) in %s.%s", len(gt.Added)-len(rt.Added), rt.DB, rt.Table))
		}
	}
	// What the reference changed in a row the rollout must change the same
	// way, except the columns such a change drags along (reading a thread
	// flips its read flags, any write moves an updated_at): those are not
	// part of the task.
	for _, rt := range j.ref.Tables {
		gt := findTable(got, rt.DB, rt.Table)
		for _, want := range rt.Changed {
			cols := slices.DeleteFunc(slices.Clone(want.Cols), incidental)
			if len(cols) == 0 {
				continue
			}
			var have *state.RowChange
			if gt != nil {
				if i := slices.IndexFunc(gt.Changed, func(c state.RowChange) bool { return fmt.Sprint(c.Key) == fmt.Sprint(want.Key) }); i >= 0 {
					have = &gt.Changed[i]
				}
			}
			for _, col := range cols {
				if have == nil || !slices.Contains(have.Cols, col) || !valueAlike(want.After[col], have.After[col]) {
					misses = append(misses, fmt.Sprintf("%s.%s row %v: %s is not changed as the reference changes it", rt.DB, rt.Table, want.Key, col))
				}
			}
		}
	}
	// Deleting what the reference keeps is never incidental.
	for _, gt := range got.Tables {
		rt := findTable(j.ref, gt.DB, gt.Table)
		if n := len(gt.Deleted); n > 0 && (rt == nil || n > len(rt.Deleted)) {
			misses = append(misses, fmt.Sprintf("%d row(s) deleted from %s.%s", n, gt.DB, gt.Table))
		}
	}
	for _, f := range got.Files {
		if f.Change == state.Deleted && !slices.ContainsFunc(j.ref.Files, func(r state.FileChange) bool { return r.Path == f.Path && r.Change == state.Deleted }) {
			misses = append(misses, fmt.Sprintf("home/%s was deleted", f.Path))
		}
	}
	for _, rf := range j.ref.Files {
		if rf.Change == state.Deleted || rf.Kind != "file" {
			continue
		}
		ok, why := fileAlike(filepath.Join(j.Ref, world.HomeDir), filepath.Join(dir, world.HomeDir), rf.Path)
		if !ok {
			misses = append(misses, fmt.Sprintf("home/%s: %s", rf.Path, why))
		}
	}
	if m, ok := declaredMistake(j.Task, diffText(got, dir), diffText(j.ref, j.Ref)); ok {
		misses = append(misses, fmt.Sprintf("its changes carry %q where the reference completion's carry %q (the mistake the task's fact %s names)", clip(m.wrong, 120), clip(m.value, 120), m.fact))
	}
	evidence := []string{"offline replay judge: compared the rollout's state diff with the reference completion's"}
	if len(misses) == 0 {
		return gate.Completed, append(evidence, "every change of the reference is present and nothing extra in its tables"), nil
	}
	return gate.Failed, append(evidence, misses...), nil
}

func findTable(d *state.Diff, db, table string) *state.TableDiff {
	for i := range d.Tables {
		if d.Tables[i].DB == db && d.Tables[i].Table == table {
			return &d.Tables[i]
		}
	}
	return nil
}

// rowAlike: equal key columns and numbers; text carries the same
// identifiers and numbers.
func rowAlike(want, got state.Row, key []string) bool {
	for col, wv := range want {
		if col == "id" {
			continue // derived ids are not content
		}
		gv := got[col]
		switch w := wv.(type) {
		case string:
			g, ok := gv.(string)
			if !ok {
				return false
			}
			if slices.Contains(key, col) {
				if w != g {
					return false
				}
				continue
			}
			for _, tok := range tokenRE.FindAllString(w, -1) {
				if !strings.Contains(g, tok) {
					return false
				}
			}
		default:
			if fmt.Sprint(wv) != fmt.Sprint(gv) {
				return false
			}
		}
	}
	return true
}

func rowKey(r state.Row, key []string) string {
	parts := []string{}
	for _, k := range key {
		parts = append(parts, fmt.Sprintf("%s=%v", k, r[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// fileAlike compares a file the reference wrote with the rollout's: CSV by
// parsed rows, other text by the identifiers and numbers it carries. The
// rollout's world is the agent's: its file is opened as the verifier opens
// it, but following no symlink (world.OpenHomeFile: no fifo, at most
// verify.MaxFileBytes).
func fileAlike(refHome, gotHome, rel string) (bool, string) {
	want, err := os.ReadFile(filepath.Join(refHome, filepath.FromSlash(rel)))
	if err != nil {
		return false, err.Error()
	}
	have, err := world.ReadHomeFile(gotHome, rel, world.HomeOpen{MaxSize: verify.MaxFileBytes})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, "absent"
	case errors.Is(err, world.ErrNotRegular), errors.Is(err, world.ErrLink):
		return false, "not a regular file"
	case err != nil:
		return false, err.Error()
	}
	if strings.HasSuffix(rel, ".csv") {
		wr, err1 := csv.NewReader(strings.NewReader(string(want))).ReadAll()
		gr, err2 := csv.NewReader(strings.NewReader(string(have))).ReadAll()
		if err1 != nil || err2 != nil {
			return false, "not CSV"
		}
		if !slices.EqualFunc(wr, gr, func(a, b []string) bool { return slices.Equal(a, b) }) {
			return false, fmt.Sprintf("rows differ from the reference's (%d vs %d rows)", len(gr), len(wr))
		}
		return true, ""
	}
	for _, tok := range tokenRE.FindAllString(string(want), -1) {
		if !strings.Contains(string(have), tok) {
			return false, fmt.Sprintf("lacks %q", tok)
		}
	}
	return true, ""
}

var incidentalRE = regexp.MustCompile(`(?i)(^|_)(read|seen|unread|viewed|opened|updated|modified|accessed)(_at)?$|_at$|^last_`)

// incidental reports whether a column changes along with a change rather
// than being one.
func incidental(col string) bool { return incidentalRE.MatchString(col) }

// valueAlike: numbers by value, text by the identifiers and numbers it
// carries (a note's wording may differ), others exactly.
func valueAlike(want, got any) bool {
	w, ok1 := want.(string)
	g, ok2 := got.(string)
	if ok1 && ok2 {
		toks := tokenRE.FindAllString(w, -1)
		if len(toks) == 0 {
			return strings.EqualFold(strings.TrimSpace(w), strings.TrimSpace(g))
		}
		for _, tok := range toks {
			if !strings.Contains(g, tok) {
				return false
			}
		}
		return true
	}
	return fmt.Sprint(want) == fmt.Sprint(got)
}
