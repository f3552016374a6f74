package delta

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// ApplyCopy applies d to a copy of the world at parent ("" for the empty
// world) and leaves the result at dst, which must not exist. The parent is
// never written; on error dst does not exist.
func ApplyCopy(ctx context.Context, parent, dst string, d *Delta, opts *Options) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("apply delta: %s already exists", dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("apply delta: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".apply-"+filepath.Base(dst)+"-")
	if err != nil {
		return fmt.Errorf("apply delta: %w", err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "world")
	if parent != "" {
		if err := state.Copy(ctx, parent, work); err != nil {
			return fmt.Errorf("apply delta: copy parent: %w", err)
		}
	}
	if err := Apply(ctx, work, d, opts); err != nil {
		return err
	}
	if err := os.Rename(work, dst); err != nil {
		return fmt.Errorf("apply delta: %w", err)
	}
	return nil
}

// ReplayResult is the outcome of the replay check.
type ReplayResult struct {
	Hashes [2]world.ID `json:"hashes"`
	Equal  bool        `json:"equal"`
	// First names the first differing database, table and row, or file,
	// when the hashes differ.
	First string `json:"first,omitempty"`
}

// Fresh materialises a fresh copy of the parent world at dst (which does
// not exist). For the empty world it may do nothing.
type Fresh func(ctx context.Context, dst string) error

// Replay applies d twice, each time to a fresh copy of the parent made by
// fresh under scratch, and compares the two content hashes.
func Replay(ctx context.Context, fresh Fresh, d *Delta, scratch string, opts *Options) (*ReplayResult, error) {
	var dirs [2]string
	res := &ReplayResult{}
	for i := range dirs {
		dirs[i] = filepath.Join(scratch, fmt.Sprintf("replay-%d", i))
		if err := fresh(ctx, dirs[i]); err != nil {
			return nil, fmt.Errorf("replay: make fresh parent %d: %w", i, err)
		}
		if err := Apply(ctx, dirs[i], d, opts); err != nil {
			return nil, fmt.Errorf("replay: apply %d: %w", i+1, err)
		}
		h, err := state.Hash(ctx, dirs[i])
		if err != nil {
			return nil, fmt.Errorf("replay: hash %d: %w", i+1, err)
		}
		res.Hashes[i] = h
	}
	res.Equal = res.Hashes[0] == res.Hashes[1]
	if !res.Equal {
		diff, err := state.Compare(ctx, dirs[0], dirs[1])
		if err != nil {
			return nil, fmt.Errorf("replay: compare: %w", err)
		}
		res.First = diff.First()
	}
	return res, nil
}

// CheckProduces checks that every write p declares exists in the world at
// result and changed from the world at parent ("" for the empty world). It
// returns one issue per missing or unchanged write.
func CheckProduces(ctx context.Context, parent, result string, p *world.Produces) ([]Issue, error) {
	if parent == "" {
		tmp, err := os.MkdirTemp("", "wildawm-empty-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		m, err := world.ReadManifest(result)
		if err != nil {
			return nil, err
		}
		empty := *m
		empty.Day, empty.Produces = 0, nil
		parent = tmp
		if err := os.WriteFile(filepath.Join(tmp, world.ManifestFile), empty.Encode(), 0o644); err != nil {
			return nil, err
		}
	}
	diff, err := state.Compare(ctx, parent, result)
	if err != nil {
		return nil, fmt.Errorf("produces check: %w", err)
	}
	var issues []Issue
	for j, r := range p.Rows {
		f := fmt.Sprintf("produces.rows[%d]", j)
		if !rowWritten(diff, r) {
			issues = append(issues, Issue{Op: -1, Field: f, Msg: fmt.Sprintf("%s.%s %s was declared but not written (absent or unchanged)", r.DB, r.Table, refKeyText(r.Key))})
		}
	}
	files := map[string]string{}
	for _, fc := range diff.Files {
		files[fc.Path] = fc.Change
	}
	for j, path := range p.Files {
		clean, err := world.CleanHomePath(path)
		if err != nil {
			issues = append(issues, Issue{Op: -1, Field: fmt.Sprintf("produces.files[%d]", j), Msg: err.Error()})
			continue
		}
		if c := files[clean]; c != state.Added && c != state.Changed {
			issues = append(issues, Issue{Op: -1, Field: fmt.Sprintf("produces.files[%d]", j), Msg: fmt.Sprintf("home/%s was declared but not written (absent or unchanged)", clean)})
		}
	}
	accts := map[string]string{}
	for _, ac := range diff.Accounts {
		accts[ac.Site+"\x00"+ac.Username] = ac.Change
	}
	for j, a := range p.Accounts {
		if c := accts[a.Site+"\x00"+a.Username]; c != state.Added && c != state.Changed {
			issues = append(issues, Issue{Op: -1, Field: fmt.Sprintf("produces.accounts[%d]", j), Msg: fmt.Sprintf("account %s/%s was declared but not created or changed", a.Site, a.Username)})
		}
	}
	return issues, nil
}

func rowWritten(diff *state.Diff, r world.RowRef) bool {
	for _, t := range diff.Tables {
		if t.DB != r.DB || t.Table != r.Table {
			continue
		}
		for _, row := range t.Added {
			if keyMatches(row, r.Key) {
				return true
			}
		}
		for _, c := range t.Changed {
			if keyMatches(c.Key, r.Key) {
				return true
			}
		}
	}
	return false
}

// keyMatches compares a diff row with a declared key, numbers by value.
func keyMatches(row state.Row, key map[string]any) bool {
	for k, want := range key {
		got, ok := row[k]
		if !ok {
			return false
		}
		wv, err := literal(Lit(want))
		if err != nil || !sameValue(got, wv) {
			return false
		}
	}
	return len(key) > 0
}

func sameValue(a, b any) bool {
	fa, aNum := toFloat(a)
	fb, bNum := toFloat(b)
	if aNum && bNum {
		return fa == fb && !math.IsNaN(fa)
	}
	return a == b
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func refKeyText(key map[string]any) string {
	vals := make(map[string]Value, len(key))
	for k, v := range key {
		vals[k] = Lit(v)
	}
	return keyText(vals)
}
