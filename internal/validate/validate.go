package validate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/health"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// Version is the report format's version.
const Version = 1

// The layers, in order.
const (
	Lint     = "lint"
	Replay   = "replay"
	Produces = "produces"
	Health   = "health"
	Review   = "review"
)

// Layers lists the layer names in order.
var Layers = []string{Lint, Replay, Produces, Health, Review}

// Layer is one layer's verdict.
type Layer struct {
	Name     string   `json:"name"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
	// Skipped says why the layer did not run (an earlier layer failed, or
	// the checker has no runtime for live health).
	Skipped string  `json:"skipped,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Report is a day's five-layer verdict.
type Report struct {
	Version int    `json:"version"`
	Persona string `json:"persona"`
	Day     int    `json:"day"`
	// OK is set when every layer that ran passed; Complete when all five
	// ran.
	OK       bool    `json:"ok"`
	Complete bool    `json:"complete"`
	Layers   []Layer `json:"layers"`
	// Hash and Snapshot are the accepted state's, set when OK.
	Hash     world.ID `json:"hash,omitzero"`
	Snapshot world.ID `json:"snapshot,omitzero"`
	// Stats measure the accepted state.
	Stats *Stats `json:"stats,omitempty"`
	// Forgot is set when a rejected candidate's snapshot was dropped from
	// the store (a gc reclaims its blobs).
	Forgot bool `json:"forgot,omitempty"`
	// Events maps each problem back to the plan's events it names, by
	// index, so a revision knows what to change.
	Events []int `json:"events,omitempty"`
}

// Problems returns every layer's problems, each prefixed with its layer.
func (r *Report) Problems() []string {
	var out []string
	for _, l := range r.Layers {
		for _, p := range l.Problems {
			out = append(out, l.Name+": "+p)
		}
	}
	return out
}

// Checker holds what every check shares.
type Checker struct {
	Generators delta.Generators
	Store      *store.Store
	Skills     *skill.Library
	Catalog    *skill.Catalog
	// Identities are the accepted personas' reserved names.
	Identities *persona.Identities
	// Env returns the runtime environment that boots persona's instances
	// for live health, and a function that releases it; nil skips layer 4
	// (recorded in the report as skipped, never as passed: the report is
	// then not Complete).
	Env func(p *persona.Persona) (*rollout.Env, func())
	// Reviewer, when set, reviews the materialised day after the skills'
	// reviews; its problems are layer 5's too.
	Reviewer Reviewer
}

// Reviewer judges a materialised day as a whole: in is the day checked,
// dir the directory it was materialised in. Its problems fail layer 5;
// its error is the harness's.
type Reviewer interface {
	Review(ctx context.Context, in Input, dir string) ([]string, error)
}

// Input is one day to check.
type Input struct {
	Persona *persona.Persona
	Delta   *delta.Delta
	// Events are the day's plan, in the order the delta emitted them.
	Events []skill.Event
	// ParentDir is the parent world's directory ("" on day 0), ParentSnap
	// its snapshot.
	ParentDir  string
	ParentSnap world.ID
	// Dir is where the accepted world is written (it must not exist).
	Dir string
	// Day is the plan's day, which the delta and the manifest must be.
	Day int
	// Recheck is set when the day was accepted before (world validate):
	// its snapshot is then the accepted state's and is never dropped.
	Recheck bool
}

// Check runs the five layers on in. A day that fails is a report with OK
// false and Dir removed.
func (c *Checker) Check(ctx context.Context, in Input) (*Report, error) {
	rep := &Report{Version: Version, Persona: in.Persona.ID, Day: in.Delta.Day}
	opts := &delta.Options{Generators: c.Generators, Parent: in.ParentSnap}
	failed := ""
	run := func(name string, f func() ([]string, error)) error {
		l := Layer{Name: name}
		if failed != "" {
			l.Skipped = "layer " + failed + " failed"
			rep.Layers = append(rep.Layers, l)
			return nil
		}
		start := time.Now()
		problems, err := f()
		l.Seconds = time.Since(start).Seconds()
		if err != nil {
			return fmt.Errorf("validate %s day %d, %s: %w", in.Persona.ID, in.Delta.Day, name, err)
		}
		l.Problems = problems
		l.OK = len(problems) == 0
		if name == Health && c.Env == nil && l.OK {
			l.OK, l.Skipped = false, "no runtime given for live health"
		}
		if !l.OK && l.Skipped == "" {
			failed = name
		}
		rep.Layers = append(rep.Layers, l)
		return nil
	}
	var replay *delta.ReplayResult
	steps := []struct {
		name string
		f    func() ([]string, error)
	}{
		{Lint, func() ([]string, error) { return c.lint(ctx, in, opts) }},
		{Replay, func() ([]string, error) {
			r, problems, err := c.replay(ctx, in, opts)
			replay = r
			return problems, err
		}},
		{Produces, func() ([]string, error) { return c.produces(ctx, in, opts, replay) }},
		{Health, func() ([]string, error) { return c.health(ctx, in, rep) }},
		{Review, func() ([]string, error) { return c.review(ctx, in) }},
	}
	for _, s := range steps {
		if err := run(s.name, s.f); err != nil {
			os.RemoveAll(in.Dir)
			if !rep.Snapshot.IsZero() && !in.Recheck {
				// A harness failure (or an interrupt) after the candidate
				// was snapshotted: do not leave it in the store.
				c.Store.Forget(context.WithoutCancel(ctx), rep.Snapshot)
			}
			return nil, err
		}
	}
	rep.OK, rep.Complete = failed == "", true
	for _, l := range rep.Layers {
		if l.Skipped != "" {
			rep.Complete = false
		}
	}
	rep.Events = implicated(rep, in.Events)
	if !rep.OK {
		os.RemoveAll(in.Dir)
		if !rep.Snapshot.IsZero() && !in.Recheck {
			// The candidate was snapshotted for live health; a rejected
			// state is not kept (its blobs go at the store's next gc).
			if err := c.Store.Forget(ctx, rep.Snapshot); err != nil {
				return nil, err
			}
			rep.Forgot = true
		}
		rep.Snapshot, rep.Stats = world.ID{}, nil
	}
	return rep, nil
}

func (c *Checker) lint(ctx context.Context, in Input, opts *delta.Options) ([]string, error) {
	var problems []string
	if err := delta.Lint(ctx, in.ParentDir, in.Delta, opts); err != nil {
		var le *delta.LintError
		if !errors.As(err, &le) {
			return nil, err
		}
		for _, is := range le.Issues {
			problems = append(problems, is.String())
		}
	}
	if c.Identities != nil {
		for _, f := range c.Identities.Foreign(in.Persona.ID, texts(in.Delta)) {
			problems = append(problems, "identity: the day names "+f+"; use the persona's own contacts")
		}
	}
	return problems, nil
}

// texts are the string values of a delta's operations.
func texts(d *delta.Delta) []string {
	var out []string
	for _, o := range d.Ops {
		for _, m := range []map[string]delta.Value{o.Key, o.Values, o.Set} {
			for _, v := range m {
				b, _ := json.Marshal(v)
				var s string
				if json.Unmarshal(b, &s) == nil {
					out = append(out, s)
				}
			}
		}
		if o.Content != nil {
			out = append(out, *o.Content)
		}
		if o.ContentBase64 != nil {
			if b, err := base64.StdEncoding.DecodeString(*o.ContentBase64); err == nil && utf8.Valid(b) {
				out = append(out, string(b))
			}
		}
		if o.Generator != nil {
			out = jsonStrings(out, o.Generator.Params)
		}
		out = append(out, o.SQL...)
		for _, p := range []string{o.Path, o.From, o.To} {
			if p != "" {
				// A path names a person by slug: notes/maya-okafor.md.
				base := strings.TrimSuffix(path.Base(p), path.Ext(p))
				out = append(out, p, base)
			}
		}
		if o.Username != "" {
			out = append(out, o.Username, o.Display)
		}
	}
	return out
}

// jsonStrings appends every string of the JSON value raw (keys and
// values, at any depth) to out.
func jsonStrings(out []string, raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return append(out, string(raw))
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func (c *Checker) replay(ctx context.Context, in Input, opts *delta.Options) (*delta.ReplayResult, []string, error) {
	fresh := func(ctx context.Context, dst string) error {
		if in.ParentDir == "" {
			return nil
		}
		return state.Copy(ctx, in.ParentDir, dst)
	}
	if err := os.MkdirAll(filepath.Dir(in.Dir), 0o755); err != nil {
		return nil, nil, err
	}
	scratch, err := os.MkdirTemp(filepath.Dir(in.Dir), ".replay-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(scratch)
	res, err := delta.Replay(ctx, fresh, in.Delta, scratch, opts)
	if err != nil {
		var ae *delta.ApplyError
		if errors.As(err, &ae) {
			return nil, []string{err.Error()}, nil
		}
		return nil, nil, err
	}
	if !res.Equal {
		return res, []string{fmt.Sprintf("the two replays differ: %s (%s vs %s)", res.First, res.Hashes[0].Short(), res.Hashes[1].Short())}, nil
	}
	return res, nil, nil
}

func (c *Checker) produces(ctx context.Context, in Input, opts *delta.Options, replay *delta.ReplayResult) ([]string, error) {
	if err := delta.ApplyCopy(ctx, in.ParentDir, in.Dir, in.Delta, opts); err != nil {
		return []string{err.Error()}, nil
	}
	issues, err := delta.CheckProduces(ctx, in.ParentDir, in.Dir, &in.Delta.Produces)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, is := range issues {
		problems = append(problems, is.String())
	}
	sum, err := state.Summarize(ctx, in.Dir)
	if err != nil {
		return nil, err
	}
	if replay != nil && sum.Hash != replay.Hashes[0] {
		problems = append(problems, fmt.Sprintf("the applied world %s differs from its replay %s", sum.Hash.Short(), replay.Hashes[0].Short()))
	}
	return problems, nil
}

// health snapshots the day and boots it: the store holds every candidate
// state, and one that fails is left for the store's gc.
func (c *Checker) health(ctx context.Context, in Input, rep *Report) ([]string, error) {
	sum, err := state.Summarize(ctx, in.Dir)
	if err != nil {
		return nil, err
	}
	m, err := world.ReadManifest(in.Dir)
	if err != nil {
		return nil, err
	}
	id, err := c.Store.Snapshot(ctx, in.Dir, store.Meta{Kind: store.KindWorld, Parent: in.ParentSnap, WorldHash: sum.Hash, Persona: m.Persona, Day: m.Day, Catalog: m.Catalog})
	if err != nil {
		return nil, err
	}
	rep.Hash, rep.Snapshot = sum.Hash, id
	ms, err := Measure(ctx, in.Dir, sum)
	if err != nil {
		return nil, err
	}
	rep.Stats = &ms
	if c.Env == nil {
		return nil, nil
	}
	env, release := c.Env(in.Persona)
	defer release()
	hr, err := health.Check(ctx, env, id)
	if err != nil {
		return nil, err
	}
	if !hr.OK && len(hr.Problems) == 0 {
		return []string{"the health report is not OK and names no problem"}, nil
	}
	return hr.Problems, nil
}

// review runs each event's skill review over the materialised day and the
// rules over the whole day: every event's skill is in the library, and the
// manifest is the plan's persona, day and clock; then the Reviewer, when
// set.
func (c *Checker) review(ctx context.Context, in Input) ([]string, error) {
	chk := skill.NewCheck(in.Dir, in.Persona, c.Catalog)
	defer chk.Close()
	var problems []string
	for i, ev := range in.Events {
		if skill.IsText(ev.Skill) {
			continue // a text skill has no review of its own: the Reviewer judges it
		}
		sk, err := c.Skills.Lookup(ev.Skill)
		if err != nil {
			problems = append(problems, fmt.Sprintf("event %d: %v", i, err))
			continue
		}
		for _, p := range sk.Review(chk, ev.Params) {
			problems = append(problems, fmt.Sprintf("event %d: %s", i, p))
		}
	}
	m, err := world.ReadManifest(in.Dir)
	if err != nil {
		problems = append(problems, err.Error())
	} else {
		if m.Day != in.Day || m.Persona != in.Persona.ID {
			problems = append(problems, fmt.Sprintf("the manifest says persona %s day %d, the plan %s day %d", m.Persona, m.Day, in.Persona.ID, in.Day))
		}
		if m.Clock != in.Delta.Clock {
			problems = append(problems, fmt.Sprintf("the manifest's clock %s is not the day's %s", m.Clock, in.Delta.Clock))
		}
	}
	if c.Reviewer != nil {
		more, err := c.Reviewer.Review(ctx, in, in.Dir)
		if err != nil {
			return nil, fmt.Errorf("reviewer: %w", err)
		}
		problems = append(problems, more...)
	}
	return problems, nil
}

// implicated lists the plan's events the report's problems name ("event
// 3: ..."), sorted.
func implicated(rep *Report, events []skill.Event) []int {
	var out []int
	for _, p := range rep.Problems() {
		for i := range events {
			if strings.Contains(p, fmt.Sprintf("event %d:", i)) && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}
