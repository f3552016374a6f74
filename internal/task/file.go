package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// The layout of a task directory (docs/task.md).
const (
	File        = "task.json"
	VerifierDir = "verifier"
	ScriptsDir  = "scripts"
)

// MaxBytes bounds the size of task.json.
const MaxBytes = 4 << 20

// Parse decodes task.json strictly (unknown fields and trailing data are
// errors naming the field) and validates it.
func Parse(b []byte) (*Task, error) {
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("task: task.json is larger than %d MiB", MaxBytes>>20)
	}
	var t Task
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber() // reference args keep their numbers exactly
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("task: %s", jsonError(b, err))
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, fmt.Errorf("task: unexpected data after the JSON object")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

// Encode returns the canonical JSON of t: indented, map keys sorted, a
// trailing newline.
func (t *Task) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("encode task: %w", err)
	}
	return buf.Bytes(), nil
}

// Load reads and validates the task in dir and checks its verifier
// directory (CheckVerifierDir).
func Load(dir string) (*Task, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		return nil, fmt.Errorf("load task: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	if err := t.CheckVerifierDir(filepath.Join(dir, VerifierDir)); err != nil {
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	return t, nil
}

// Save validates t and writes dir/task.json atomically (dir is created).
// It does not touch the verifier directory.
func (t *Task) Save(dir string) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("save task: %w", err)
	}
	b, err := t.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save task: %w", err)
	}
	if err := world.WriteFileAtomic(filepath.Join(dir, File), b, 0o644); err != nil {
		return fmt.Errorf("save task: %w", err)
	}
	return nil
}

// CheckVerifierDir checks the verifier directory against the criteria:
// every script a criterion names exists, the SDK is present when any script
// does, and no script under scripts/ goes unreferenced (it would never run).
func (t *Task) CheckVerifierDir(dir string) error {
	scripts := t.Verifier.Scripts()
	if len(scripts) == 0 {
		return nil
	}
	for _, s := range append(scripts, SDKScript) {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("verifier/%s does not exist: write it (the SDK with verify.WriteSDK)", s)
		case err != nil:
			return fmt.Errorf("verifier/%s: %w", s, err)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("verifier/%s is not a regular file", s)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, ScriptsDir))
	if err != nil {
		return fmt.Errorf("verifier: %w", err)
	}
	for _, e := range entries {
		rel := ScriptsDir + "/" + e.Name()
		if strings.HasSuffix(e.Name(), ".py") && rel != SDKScript && !slices.Contains(scripts, rel) {
			return fmt.Errorf("verifier/%s is not run by any criterion: add a script criterion for it or delete it", rel)
		}
	}
	return nil
}

// jsonError turns a decoding error into a message naming the field or the
// line and column.
func jsonError(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(b, syn.Offset)
		return fmt.Sprintf("line %d column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s: got JSON %s, want %s", typ.Field, typ.Value, typ.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func position(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
