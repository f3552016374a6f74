package notes

import (
	"fmt"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
)

// This file is the "god mode" synthesis API: Go functions that build the
// delta operations seeding or changing a world's notes database, through
// the definition's synthesis operations (service.yaml, ops), which check
// the values as the tools do. They are for world synthesis, never tools.

// Seed is a note a world synthesizer writes directly into a world through a
// delta ("god mode"), never through the tools.
type Seed struct {
	// ExtID is the note id; empty means slug(Title), as create_note would
	// choose it in an empty database.
	ExtID    string
	Notebook string
	Title    string
	Body     string // markdown
	Pinned   bool
	// Links are home-relative file paths or http(s) URLs.
	Links []string
	// CreatedAt must not be zero; a zero UpdatedAt means CreatedAt.
	CreatedAt, UpdatedAt time.Time
}

// CreateOp returns the db.create operation that creates the notes database
// with Schema.
func CreateOp() delta.Op { return Compiled().Def.CreateOp() }

// op returns the one delta operation of the definition's synthesis
// operation name.
func op(name string, params map[string]any) (delta.Op, error) {
	ops, err := Compiled().Op(name, params)
	switch {
	case err != nil:
		return delta.Op{}, err
	case len(ops) != 1:
		return delta.Op{}, fmt.Errorf("notes: service.yaml: op %s emitted %d operations, want 1", name, len(ops))
	}
	return ops[0], nil
}

// NotebookOp returns the db.insert operation that adds the notebook name
// (a no-op on apply if it exists).
func NotebookOp(name string) (delta.Op, error) {
	return op("add_notebook", map[string]any{"name": strings.TrimSpace(name)})
}

// InsertOps returns the db.insert operations that add seeds, their notebooks
// (each once, before its first note) and their links. Seeds are validated as
// create_note and link_note validate their arguments; ext_ids must be unique
// among the seeds. A notebook is named exactly: unlike create_note, seeds do
// not match existing notebooks ignoring case.
func InsertOps(seeds ...Seed) ([]delta.Op, error) {
	var ops []delta.Op
	notebooks, ids := map[string]bool{}, map[string]bool{}
	for i, sd := range seeds {
		nb, title := strings.TrimSpace(sd.Notebook), strings.TrimSpace(sd.Title)
		if sd.CreatedAt.IsZero() {
			return nil, fmt.Errorf("notes seed %d (%s): CreatedAt is zero", i, title)
		}
		updated := sd.UpdatedAt
		if updated.IsZero() {
			updated = sd.CreatedAt
		}
		ext := sd.ExtID
		if ext == "" {
			ext = slug(title)
		}
		if ids[ext] {
			return nil, fmt.Errorf("notes seed %d: ext_id %q repeats", i, ext)
		}
		ids[ext] = true
		if !notebooks[nb] {
			op, err := NotebookOp(nb)
			if err != nil {
				return nil, fmt.Errorf("notes seed %d: %w", i, err)
			}
			ops = append(ops, op)
			notebooks[nb] = true
		}
		pinned := 0
		if sd.Pinned {
			pinned = 1
		}
		note, err := op("add_note", map[string]any{"ext_id": ext, "notebook": nb, "title": title, "body": sd.Body, "pinned": pinned,
			"created_at": sd.CreatedAt.UTC().Format(TimeFormat), "updated_at": updated.UTC().Format(TimeFormat)})
		if err != nil {
			return nil, fmt.Errorf("notes seed %d: %w", i, err)
		}
		ops = append(ops, note)
		for _, l := range sd.Links {
			op, err := LinkOp(ext, l)
			if err != nil {
				return nil, fmt.Errorf("notes seed %d: %w", i, err)
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// LinkOp returns the db.insert operation that links the note extID to
// target (a no-op on apply if the link exists), validated as link_note
// validates it.
func LinkOp(extID, target string) (delta.Op, error) {
	return op("add_link", map[string]any{"ext_id": extID, "target": strings.TrimSpace(target)})
}

// UpdateOp returns the db.update operation that sets the title and/or body
// of the note extID (nil leaves one unchanged) and its updated_at to at,
// validated as update_note validates them. To append, a synthesizer passes
// the whole new body: a delta's SQL expressions may not hold arbitrary text.
func UpdateOp(extID string, title, body *string, at time.Time) (delta.Op, error) {
	params := map[string]any{"ext_id": extID, "updated_at": at.UTC().Format(TimeFormat)}
	if title != nil {
		params["title"] = strings.TrimSpace(*title)
	}
	if body != nil {
		params["body"] = *body
	}
	o, err := op("update_note", params)
	if err != nil {
		return delta.Op{}, fmt.Errorf("notes update of %q: %w", extID, err)
	}
	return o, nil
}

// PinOp returns the db.update operation that pins (or unpins) the note extID.
func PinOp(extID string, pinned bool) delta.Op {
	v := 0
	if pinned {
		v = 1
	}
	o, err := op("pin_note", map[string]any{"ext_id": extID, "pinned": v})
	if err != nil {
		panic("notes: service.yaml: " + err.Error()) // the parameters are always valid
	}
	return o
}
