package verify

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// MaxFileBytes bounds the home files a criterion reads.
const MaxFileBytes = 16 << 20

// errNotRegular marks a path that exists but is not a regular file (a
// fifo, a socket, a directory): the criterion fails, with no error.
var errNotRegular = world.ErrNotRegular

// homeEntry reports whether rel exists in the home of the world at root and,
// when read is set and it is a regular file, its content. Reads go through
// world.OpenHomeFile following only the symlinks that stay inside home,
// without blocking (a fifo is not a regular file, not a hang), and refuse a
// file over MaxFileBytes before reading it.
func homeEntry(root, rel string, read bool) (exists bool, content []byte, err error) {
	clean, err := world.CleanHomePath(rel)
	if err != nil {
		return false, nil, err
	}
	home := filepath.Join(root, world.HomeDir)
	r, err := os.OpenRoot(home)
	if err != nil {
		return false, nil, err
	}
	defer r.Close()
	if _, err := r.Lstat(clean); errors.Is(err, fs.ErrNotExist) {
		return false, nil, nil
	} else if err != nil {
		return false, nil, err
	}
	if !read {
		return true, nil, nil
	}
	if err := ownerReadable(r, clean); err != nil {
		return true, nil, err
	}
	b, err := world.ReadHomeFile(home, clean, world.HomeOpen{MaxSize: MaxFileBytes, FollowInside: true})
	if err != nil {
		return true, nil, err
	}
	return true, b, nil
}

// errUnreadable marks a home file the world's own user cannot read: the
// file lacks its owner's read bit, or a directory on its path its owner's
// search bit. The verifier runs as root and could read it, but what the
// agent left unreadable is not delivered: the criterion fails, with no
// error (the agent's doing, never infrastructure).
var errUnreadable = errors.New("not readable by its owner")

// ownerReadable checks the owner's permission bits along clean (inside r):
// search on every directory, read on the file.
func ownerReadable(r *os.Root, clean string) error {
	parts := strings.Split(clean, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := r.Stat(p)
		if err != nil {
			return err
		}
		bit, what := fs.FileMode(0o400), "read"
		if i < len(parts)-1 {
			bit, what = 0o100, "search"
		}
		if fi.Mode().Perm()&bit == 0 {
			return fmt.Errorf("%s %w: %s has mode %04o, no %s permission for its owner", clean, errUnreadable, p, fi.Mode().Perm(), what)
		}
	}
	return nil
}

func checkFile(root, initial string, c *task.Criterion) CriterionResult {
	wantExists := c.ExistsOrDefault()
	needContent := c.Contains != nil || c.Regex != "" || c.Changed
	exists, content, err := homeEntry(root, c.Path, needContent)
	if err != nil {
		if errors.Is(err, errNotRegular) || errors.Is(err, errUnreadable) {
			return CriterionResult{Evidence: err.Error()}
		}
		return CriterionResult{Error: err.Error()}
	}
	if !exists {
		if wantExists {
			return CriterionResult{Evidence: fmt.Sprintf("%s does not exist", c.Path)}
		}
		return CriterionResult{Pass: true, Evidence: fmt.Sprintf("%s does not exist, as required", c.Path)}
	}
	if !wantExists {
		return CriterionResult{Evidence: fmt.Sprintf("%s exists but must not", c.Path)}
	}
	var failed, notes []string
	if c.Contains != nil {
		if missing := missingSubstrings(string(content), c.Contains); len(missing) > 0 {
			failed = append(failed, fmt.Sprintf("does not contain %q", missing))
		} else {
			notes = append(notes, fmt.Sprintf("contains %q", c.Contains))
		}
	}
	if c.Regex != "" {
		re, err := regexp.Compile(c.Regex)
		if err != nil {
			return CriterionResult{Error: fmt.Sprintf("regex: %v", err)}
		}
		if m := re.Find(content); m == nil {
			failed = append(failed, fmt.Sprintf("does not match /%s/", c.Regex))
		} else {
			notes = append(notes, fmt.Sprintf("matches /%s/ at %q", c.Regex, truncate(string(m), 200)))
		}
	}
	if c.Changed {
		before, old, err := homeEntry(initial, c.Path, true)
		switch {
		case err != nil && !errors.Is(err, errNotRegular) && !errors.Is(err, errUnreadable):
			return CriterionResult{Error: fmt.Sprintf("initial world: %v", err)}
		case !before || err != nil:
			notes = append(notes, "is new (no such file in the initial world)")
		case bytes.Equal(old, content):
			failed = append(failed, "is unchanged from the initial world")
		default:
			notes = append(notes, "changed from the initial world")
		}
	}
	if len(failed) > 0 {
		return CriterionResult{Evidence: fmt.Sprintf("%s %s", c.Path, strings.Join(failed, "; "))}
	}
	if len(notes) == 0 {
		notes = append(notes, "exists")
	}
	return CriterionResult{Pass: true, Evidence: fmt.Sprintf("%s %s", c.Path, strings.Join(notes, "; "))}
}

// missingSubstrings returns the substrings not found in s, ignoring case.
func missingSubstrings(s string, subs []string) []string {
	lower := strings.ToLower(s)
	var missing []string
	for _, sub := range subs {
		if !strings.Contains(lower, strings.ToLower(sub)) {
			missing = append(missing, sub)
		}
	}
	return missing
}

func checkCSV(root string, c *task.Criterion) CriterionResult {
	exists, content, err := homeEntry(root, c.Path, true)
	switch {
	case errors.Is(err, errNotRegular), errors.Is(err, errUnreadable):
		return CriterionResult{Evidence: err.Error()}
	case err != nil:
		return CriterionResult{Error: err.Error()}
	case !exists:
		return CriterionResult{Evidence: fmt.Sprintf("%s does not exist", c.Path)}
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(content, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return CriterionResult{Evidence: fmt.Sprintf("%s is not valid CSV: %v", c.Path, err)}
	}
	if len(records) == 0 {
		return CriterionResult{Evidence: fmt.Sprintf("%s is empty (no header)", c.Path)}
	}
	header, data := records[0], records[1:]
	fail := func(format string, args ...any) CriterionResult {
		return CriterionResult{Evidence: c.Path + ": " + fmt.Sprintf(format, args...)}
	}
	if c.Header != nil && !slices.Equal(header, c.Header) {
		return fail("header is %q, expected %q", header, c.Header)
	}
	if len(data) < c.MinRows {
		return fail("%d data rows, expected at least %d", len(data), c.MinRows)
	}
	notes := []string{fmt.Sprintf("header %q, %d data rows", header, len(data))}
	if c.Equals != nil {
		row := c.Row
		if row < 0 {
			row += len(data)
		}
		if row < 0 || row >= len(data) {
			return fail("has %d data rows, so row %d does not exist", len(data), c.Row)
		}
		rec := data[row]
		for _, col := range slices.Sorted(maps.Keys(c.Equals)) {
			want := c.Equals[col]
			i := slices.Index(header, col)
			if i < 0 {
				return fail("no column %q in header %q", col, header)
			}
			got := ""
			if i < len(rec) {
				got = rec[i]
			}
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				return fail("row %d column %q is %q, expected %q", c.Row, col, got, want)
			}
		}
		notes = append(notes, fmt.Sprintf("row %d matches %s", c.Row, jsonText(c.Equals)))
	}
	return CriterionResult{Pass: true, Evidence: c.Path + ": " + strings.Join(notes, "; ")}
}

func checkAnswer(answer string, c *task.Criterion) CriterionResult {
	if missing := missingSubstrings(answer, c.Contains); len(missing) > 0 {
		return CriterionResult{Evidence: fmt.Sprintf("the answer does not contain %q (answer: %q)", missing, truncate(answer, 300))}
	}
	return CriterionResult{Pass: true, Evidence: fmt.Sprintf("the answer contains %q", c.Contains)}
}
