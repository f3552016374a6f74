package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrSkip is what Propose returns when the skill has nothing to do today
// (no open thread to reply to, no order to return).
var ErrSkip = errors.New("skill: nothing to do today")

// Interfaces.
const (
	GUI = "gui"
	MCP = "mcp"
	CLI = "cli"
)

// TextPrefix starts the skill of an event of a text skill
// ("text:NAME"): a skill that exists as documented text only (a Doc), so
// the library neither emits nor reviews its events; the implementer
// realises them by hand and the reviewer judges them.
const TextPrefix = "text:"

// IsText reports whether an event's skill names a text skill.
func IsText(skill string) bool { return strings.HasPrefix(skill, TextPrefix) }

// Doc is a skill's text form: what model-driven stages read, and what
// docs/skills.md lists.
type Doc struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Interfaces are those the event happens through (gui, mcp, cli).
	Interfaces []string `json:"interfaces"`
	// Sites, Services and Files name what the event changes: site and
	// service databases, and the kinds of files it writes (csv, markdown,
	// pdf, png, script, text).
	Sites    []string `json:"sites,omitempty"`
	Services []string `json:"services,omitempty"`
	Files    []string `json:"files,omitempty"`
	// Changes says, in words, what changes where.
	Changes []string `json:"changes"`
	// Constraints are the consistency rules the event keeps.
	Constraints []string `json:"constraints"`
	// Continues names the skills whose records this one continues.
	Continues []string `json:"continues,omitempty"`
	// Setup marks a skill that sets the world up once (a database, an
	// account): it proposes nothing once done.
	Setup bool `json:"setup,omitempty"`
	// Example is one valid set of parameters.
	Example json.RawMessage `json:"example,omitempty"`
}

// Skill is one event recipe. Build one with Make.
type Skill struct {
	Doc
	decode  func([]byte) (any, error)
	emit    func(*Builder, any) error
	propose func(*Draw) (any, error)
	review  func(*Check, any) []string
}

// Def is a skill's definition with parameters of type P.
type Def[P any] struct {
	Doc
	// Emit appends the event's operations and produces entries to b. It
	// must be a pure function of b's state and p.
	Emit func(b *Builder, p *P) error
	// Propose draws today's parameters, or returns ErrSkip. Nil for a skill
	// only hand-written plans use.
	Propose func(d *Draw) (*P, error)
	// Review checks the materialised world holds what p says happened and
	// returns one line per problem. Nil when the produces check says all.
	Review func(c *Check, p *P) []string
}

// Checker is implemented by parameter types with rules beyond their JSON
// types; the error names the field.
type Checker interface{ Check() error }

// Make builds a skill from its definition.
func Make[P any](d Def[P]) Skill {
	s := Skill{Doc: d.Doc}
	s.decode = func(b []byte) (any, error) {
		p := new(P)
		if err := DecodeStrict(b, p); err != nil {
			return nil, err
		}
		if c, ok := any(p).(Checker); ok {
			if err := c.Check(); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	s.emit = func(b *Builder, p any) error { return d.Emit(b, p.(*P)) }
	if d.Propose != nil {
		s.propose = func(dr *Draw) (any, error) {
			p, err := d.Propose(dr)
			if err != nil {
				return nil, err
			}
			return p, nil
		}
	}
	if d.Review != nil {
		s.review = func(c *Check, p any) []string { return d.Review(c, p.(*P)) }
	}
	return s
}

// Decode checks params against the skill's parameter type.
func (s *Skill) Decode(params json.RawMessage) (any, error) {
	p, err := s.decode(params)
	if err != nil {
		return nil, fmt.Errorf("skill %s: params: %w", s.Name, err)
	}
	return p, nil
}

// Emit appends the event with params to the day being built.
func (s *Skill) Emit(b *Builder, params json.RawMessage) error {
	p, err := s.Decode(params)
	if err != nil {
		return err
	}
	if err := s.emit(b, p); err != nil {
		return fmt.Errorf("skill %s: %w", s.Name, err)
	}
	return nil
}

// Proposable reports whether the planner may choose the skill.
func (s *Skill) Proposable() bool { return s.propose != nil }

// Propose draws parameters for today, encoded; ErrSkip when the skill has
// nothing to do.
func (s *Skill) Propose(d *Draw) (json.RawMessage, error) {
	if s.propose == nil {
		return nil, ErrSkip
	}
	p, err := s.propose(d)
	if err != nil {
		if errors.Is(err, ErrSkip) {
			return nil, err
		}
		return nil, fmt.Errorf("skill %s: propose: %w", s.Name, err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("skill %s: propose: %w", s.Name, err)
	}
	return b, nil
}

// Review checks the world c against params; nil when it holds them.
func (s *Skill) Review(c *Check, params json.RawMessage) []string {
	if s.review == nil {
		return nil
	}
	p, err := s.Decode(params)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, line := range s.review(c, p) {
		out = append(out, s.Name+": "+line)
	}
	return out
}

// DecodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data, with errors that name the field. Empty input is {}.
func DecodeStrict(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %s: got JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown field %s", msg)
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// Library is the skills by name.
type Library struct {
	byName map[string]Skill
	names  []string
}

// NewLibrary returns a library of skills; a name used twice is an error.
func NewLibrary(skills ...Skill) (*Library, error) {
	l := &Library{byName: map[string]Skill{}}
	for _, s := range skills {
		if s.Name == "" {
			return nil, errors.New("skill: a skill without a name")
		}
		if _, dup := l.byName[s.Name]; dup {
			return nil, fmt.Errorf("skill: %q defined twice", s.Name)
		}
		l.byName[s.Name] = s
		l.names = append(l.names, s.Name)
	}
	slices.Sort(l.names)
	return l, nil
}

// Lookup returns the skill called name; the error lists the names.
func (l *Library) Lookup(name string) (*Skill, error) {
	s, ok := l.byName[name]
	if !ok {
		return nil, fmt.Errorf("no skill %q; the skills are %s", name, strings.Join(l.names, ", "))
	}
	return &s, nil
}

// Names returns the skill names, sorted.
func (l *Library) Names() []string { return slices.Clone(l.names) }

// Docs returns every skill's text form, by name.
func (l *Library) Docs() []Doc {
	out := make([]Doc, 0, len(l.names))
	for _, n := range l.names {
		out = append(out, l.byName[n].Doc)
	}
	return out
}

// All returns the built-in library: the case study's skills and the
// generated worlds' skills.
func All() *Library {
	var list []Skill
	list = append(list, coreSkills()...)
	list = append(list, serviceSkills()...)
	list = append(list, siteSkills()...)
	list = append(list, fileSkills()...)
	l, err := NewLibrary(list...)
	if err != nil {
		panic(err) // a programming error, caught by TestLibrary
	}
	return l
}
