package task

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// Criterion kinds. Declarative kinds run in-process; script runs in a sandbox.
const (
	KindSQL    = "sql"
	KindFile   = "file"
	KindCSV    = "csv"
	KindAnswer = "answer"
	KindScript = "script"
)

// Worlds a criterion may read.
const (
	Initial = "initial"
	Final   = "final"
)

// SDKScript is the shared helper module every verifier directory holds; it is
// never a criterion itself.
const SDKScript = "scripts/_verify_sdk.py"

// MaxScriptTimeout bounds timeout_seconds of a script criterion.
const MaxScriptTimeout = 300

// kindFields lists the fields each kind takes (besides id, kind, description).
var kindFields = map[string][]string{
	KindSQL:    {"db", "query", "expect", "world"},
	KindFile:   {"path", "exists", "contains", "regex", "changed", "world"},
	KindCSV:    {"path", "header", "row", "equals", "min_rows", "world"},
	KindAnswer: {"contains"},
	KindScript: {"script", "timeout_seconds"},
}

var scriptRE = regexp.MustCompile(`^scripts/[a-z0-9][a-z0-9_-]*\.py$`)

// Verifier is V(W0, W, a) = prod_i v_i over its criteria.
type Verifier struct {
	Criteria []Criterion `json:"criteria"`
}

// Criterion is one check v_i. Kind selects which fields apply (docs/task.md).
type Criterion struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"`

	// sql: a single SELECT on WORLD/db/DB.sqlite whose result must equal
	// Expect (a JSON scalar, or an array of rows).
	DB     string          `json:"db,omitempty"`
	Query  string          `json:"query,omitempty"`
	Expect json.RawMessage `json:"expect,omitempty"`
	// World is "final" (default) or "initial" (sql, file, csv).
	World string `json:"world,omitempty"`

	// file and csv: a home-relative path.
	Path string `json:"path,omitempty"`
	// Exists (file) defaults to true; false checks the path is absent.
	Exists *bool `json:"exists,omitempty"`
	// Contains (file, answer): case-insensitive substrings that must all occur.
	Contains []string `json:"contains,omitempty"`
	// Regex (file): an RE2 expression the content must match.
	Regex string `json:"regex,omitempty"`
	// Changed (file): the content must differ from the same path in W0.
	Changed bool `json:"changed,omitempty"`

	// csv: the exact header, the 0-based data row Equals checks (negative
	// counts from the end: -1 is the last row), cell values by column name,
	// and the minimum number of data rows.
	Header  []string          `json:"header,omitempty"`
	Row     int               `json:"row,omitempty"`
	Equals  map[string]string `json:"equals,omitempty"`
	MinRows int               `json:"min_rows,omitempty"`

	// script: "scripts/NAME.py" inside the verifier directory, and its
	// timeout (0 means the default, 20 s).
	Script         string `json:"script,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

// ExistsOrDefault returns Exists, true when unset.
func (c *Criterion) ExistsOrDefault() bool { return c.Exists == nil || *c.Exists }

// WorldOrDefault returns World, "final" when unset.
func (c *Criterion) WorldOrDefault() string {
	if c.World == "" {
		return Final
	}
	return c.World
}

// setFields names the kind-specific fields that are set.
func (c *Criterion) setFields() []string {
	var set []string
	add := func(name string, ok bool) {
		if ok {
			set = append(set, name)
		}
	}
	add("db", c.DB != "")
	add("query", c.Query != "")
	add("expect", len(c.Expect) > 0)
	add("world", c.World != "")
	add("path", c.Path != "")
	add("exists", c.Exists != nil)
	add("contains", c.Contains != nil)
	add("regex", c.Regex != "")
	add("changed", c.Changed)
	add("header", c.Header != nil)
	add("row", c.Row != 0)
	add("equals", c.Equals != nil)
	add("min_rows", c.MinRows != 0)
	add("script", c.Script != "")
	add("timeout_seconds", c.TimeoutSeconds != 0)
	return set
}

// Validate returns an error naming the first invalid criterion field.
func (v *Verifier) Validate() error {
	if len(v.Criteria) == 0 {
		return fieldError("verifier.criteria", "is empty: a verifier needs at least one criterion (V over no criteria would always pass)")
	}
	seen := map[string]bool{}
	for i := range v.Criteria {
		c := &v.Criteria[i]
		f := fmt.Sprintf("verifier.criteria[%d]", i)
		if err := validID(f+".id", c.ID); err != nil {
			return err
		}
		if seen[c.ID] {
			return fieldError(f+".id", "%q is used twice: criterion IDs must be unique", c.ID)
		}
		seen[c.ID] = true
		if err := c.validate(f); err != nil {
			return err
		}
	}
	return nil
}

// Scripts returns the scripts the criteria run, in criterion order.
func (v *Verifier) Scripts() []string {
	var out []string
	for _, c := range v.Criteria {
		if c.Kind == KindScript && !slices.Contains(out, c.Script) {
			out = append(out, c.Script)
		}
	}
	return out
}

func (c *Criterion) validate(f string) error {
	takes, ok := kindFields[c.Kind]
	if !ok {
		return fieldError(f+".kind", "%q is not one of sql, file, csv, answer, script", c.Kind)
	}
	for _, name := range c.setFields() {
		if !slices.Contains(takes, name) {
			return fieldError(f+"."+name, "is not a field of kind %q, which takes %s", c.Kind, strings.Join(takes, ", "))
		}
	}
	switch c.World {
	case "", Initial, Final:
	default:
		return fieldError(f+".world", "%q: want %q (default) or %q", c.World, Final, Initial)
	}
	switch c.Kind {
	case KindSQL:
		if err := world.ValidDBName(c.DB); err != nil {
			return fieldError(f+".db", "%v", err)
		}
		if blank(c.Query) {
			return fieldError(f+".query", "is empty: give a single SELECT statement")
		}
		if len(c.Expect) == 0 {
			return fieldError(f+".expect", "is missing: give the expected JSON scalar (one row, one column) or array of rows; use null for SQL NULL")
		}
		if err := validExpect(c.Expect); err != nil {
			return fieldError(f+".expect", "%v", err)
		}
	case KindFile:
		if _, err := world.CleanHomePath(c.Path); err != nil {
			return fieldError(f+".path", "%v", err)
		}
		if !c.ExistsOrDefault() && (c.Contains != nil || c.Regex != "" || c.Changed) {
			return fieldError(f+".exists", "is false, so contains, regex and changed cannot be checked: split the criterion")
		}
		if err := nonEmpty(f+".contains", c.Contains); err != nil {
			return err
		}
		if c.Regex != "" {
			if _, err := regexp.Compile(c.Regex); err != nil {
				return fieldError(f+".regex", "%v", err)
			}
		}
	case KindCSV:
		if _, err := world.CleanHomePath(c.Path); err != nil {
			return fieldError(f+".path", "%v", err)
		}
		if c.Row != 0 && c.Equals == nil {
			return fieldError(f+".row", "is set but equals is not: give the cell values of that row")
		}
		if c.Equals != nil && len(c.Equals) == 0 {
			return fieldError(f+".equals", "is empty: give at least one column and value, or drop it")
		}
		for _, col := range slices.Sorted(maps.Keys(c.Equals)) {
			if blank(col) {
				return fieldError(f+".equals", "has an empty column name")
			}
			if c.Header != nil && !slices.Contains(c.Header, col) {
				return fieldError(f+".equals", "column %q is not in header %q", col, c.Header)
			}
		}
		if c.MinRows < 0 {
			return fieldError(f+".min_rows", "got %d, must be >= 0", c.MinRows)
		}
	case KindAnswer:
		if len(c.Contains) == 0 {
			return fieldError(f+".contains", "is empty: give the substrings the final answer must contain")
		}
		if err := nonEmpty(f+".contains", c.Contains); err != nil {
			return err
		}
	case KindScript:
		if c.Script == SDKScript {
			return fieldError(f+".script", "%q is the shared SDK, not a check: name a script of your own", c.Script)
		}
		if !scriptRE.MatchString(c.Script) || path.Clean(c.Script) != c.Script {
			return fieldError(f+".script", `%q: want "scripts/NAME.py" (NAME of lowercase letters, digits, '_' and '-')`, c.Script)
		}
		if c.TimeoutSeconds < 0 || c.TimeoutSeconds > MaxScriptTimeout {
			return fieldError(f+".timeout_seconds", "got %d, want 0 (default 20) to %d", c.TimeoutSeconds, MaxScriptTimeout)
		}
	}
	return nil
}

func nonEmpty(field string, ss []string) error {
	if ss != nil && len(ss) == 0 {
		return fieldError(field, "is empty: give at least one substring, or drop it")
	}
	for i, s := range ss {
		if s == "" {
			return fieldError(fmt.Sprintf("%s[%d]", field, i), "is empty: an empty substring always matches")
		}
	}
	return nil
}

// ParseExpect decodes an sql criterion's expect: a scalar (int64, float64,
// string, bool or nil) or a []any of rows, each a []any of scalars or a bare
// scalar (a one-column row). Numbers are int64 when integral, else float64.
func ParseExpect(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return normExpect(v, 0)
}

func normExpect(v any, depth int) (any, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", v)
		}
		return f, nil
	case []any:
		if depth >= 2 {
			return nil, fmt.Errorf("a cell cannot be an array: want a scalar or an array of rows (arrays of scalars)")
		}
		out := make([]any, len(v))
		for i, e := range v {
			n, err := normExpect(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		return nil, fmt.Errorf("objects are not allowed: want a scalar or an array of rows, e.g. [[\"SP-100\", 2]]")
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

func validExpect(raw json.RawMessage) error {
	_, err := ParseExpect(raw)
	return err
}
