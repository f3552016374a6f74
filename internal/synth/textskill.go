package synth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/skill"
)

// Text skills are skills the llm planner writes as documented text (a
// skill.Doc) with add_skill: saved as JSON in a directory next to the
// definitions library, immutable like definitions, and realised by the
// implementer by hand. Their events are "text:NAME" (skill.TextPrefix).

// TextSkillsDir is the directory of the text skills that go with the
// definitions library in libDir: DIR/skills next to DIR/library.
func TextSkillsDir(libDir string) string { return filepath.Join(filepath.Dir(libDir), "skills") }

// skillName is a text skill's name: lower_snake.
var skillName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// maxSkillName bounds a text skill's name.
const maxSkillName = 48

// CheckTextSkill checks a text skill's Doc against the skill library:
// the name is lower_snake and no skill's, the interfaces are gui, mcp or
// cli, summary, changes and constraints say something, and the example
// is a JSON object.
func CheckTextSkill(d skill.Doc, lib *skill.Library) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch {
	case !skillName.MatchString(d.Name) || len(d.Name) > maxSkillName:
		add("name %q is not lower_snake (a-z, 0-9 and single underscores, starting with a letter, at most %d characters)", d.Name, maxSkillName)
	case lib != nil:
		if _, err := lib.Lookup(d.Name); err == nil {
			add("name %q is a skill of the library already: use it, or name the new skill differently", d.Name)
		}
	}
	if strings.TrimSpace(d.Summary) == "" {
		add("summary is empty: say in one sentence what happens")
	}
	if len(d.Interfaces) == 0 {
		add("interfaces is empty: name gui, mcp or cli")
	}
	for i, f := range d.Interfaces {
		if f != skill.GUI && f != skill.MCP && f != skill.CLI {
			add("interfaces[%d] %q is not gui, mcp or cli", i, f)
		}
	}
	for _, l := range []struct {
		field string
		xs    []string
	}{{"changes", d.Changes}, {"constraints", d.Constraints}} {
		if len(l.xs) == 0 {
			add("%s is empty: name at least one", l.field)
		}
		for i, x := range l.xs {
			if strings.TrimSpace(x) == "" {
				add("%s[%d] is empty", l.field, i)
			}
		}
	}
	if ex := bytes.TrimSpace(d.Example); len(ex) == 0 || ex[0] != '{' || !json.Valid(ex) {
		add("example must be one JSON object: the parameters of one event")
	}
	return out
}

// SaveTextSkill saves d as dir/NAME.json. A text skill is immutable once
// saved: the same skill again is a no-op, another under its name fails
// with ErrConflict.
func SaveTextSkill(dir string, d skill.Doc) error {
	var ex bytes.Buffer
	if err := json.Compact(&ex, d.Example); err != nil {
		return fmt.Errorf("text skill %s: example: %w", d.Name, err)
	}
	d.Example = ex.Bytes()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, d.Name+".json")
	switch cur, err := os.ReadFile(path); {
	case err == nil && bytes.Equal(cur, b):
		return nil
	case err == nil:
		return fmt.Errorf("text skill %s is %w; add the new one under another name such as %s_v2", d.Name, ErrConflict, d.Name)
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	return writeAtomic(path, b)
}

// LoadTextSkills reads the text skills in dir, by name; a missing dir
// holds none.
func LoadTextSkills(dir string) ([]skill.Doc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []skill.Doc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d skill.Doc
		if err := skill.DecodeStrict(b, &d); err != nil {
			return nil, fmt.Errorf("text skill %s: %w", f, err)
		}
		out = append(out, d)
	}
	return out, nil
}
