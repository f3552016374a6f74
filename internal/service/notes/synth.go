package notes

import (
	"fmt"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
)

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
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

// NotebookRef returns a delta value naming the id of the notebook name.
func NotebookRef(name string) delta.Value {
	return delta.RefTo("notebooks", map[string]delta.Value{"name": delta.Lit(name)}, "id")
}

// NoteRef returns a delta value naming the id of the note extID.
func NoteRef(extID string) delta.Value {
	return delta.RefTo("notes", map[string]delta.Value{"ext_id": delta.Lit(extID)}, "id")
}

// NotebookOp returns the db.insert operation that adds the notebook name
// (a no-op on apply if it exists).
func NotebookOp(name string) (delta.Op, error) {
	n, err := checkLine("notebook", name, MaxNotebookChars, "Personal")
	if err != nil {
		return delta.Op{}, err
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "notebooks",
		Key: map[string]delta.Value{"name": delta.Lit(n)}, Values: map[string]delta.Value{}}, nil
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
		nb, title, err := checkNew(sd.Notebook, sd.Title, sd.Body)
		if err != nil {
			return nil, fmt.Errorf("notes seed %d: %w", i, err)
		}
		if sd.CreatedAt.IsZero() {
			return nil, fmt.Errorf("notes seed %d (%s): CreatedAt is zero", i, title)
		}
		updated := sd.UpdatedAt
		if updated.IsZero() {
			updated = sd.CreatedAt
		}
		if updated.Before(sd.CreatedAt) {
			return nil, fmt.Errorf("notes seed %d (%s): UpdatedAt is before CreatedAt", i, title)
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
		ops = append(ops, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "notes",
			Key: map[string]delta.Value{"ext_id": delta.Lit(ext)},
			Values: map[string]delta.Value{
				"notebook_id": NotebookRef(nb), "title": delta.Lit(title), "body": delta.Lit(sd.Body),
				"created_at": delta.Lit(sd.CreatedAt.UTC().Format(TimeFormat)),
				"updated_at": delta.Lit(updated.UTC().Format(TimeFormat)),
				"pinned":     delta.Lit(pinned),
			}})
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
	t, err := checkTarget(target)
	if err != nil {
		return delta.Op{}, err
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "note_links",
		Key: map[string]delta.Value{"note_id": NoteRef(extID), "target": delta.Lit(t)}, Values: map[string]delta.Value{}}, nil
}

// UpdateOp returns the db.update operation that sets the title and/or body
// of the note extID (nil leaves one unchanged) and its updated_at to at,
// validated as update_note validates them. To append, a synthesizer passes
// the whole new body: a delta's SQL expressions may not hold arbitrary text.
func UpdateOp(extID string, title, body *string, at time.Time) (delta.Op, error) {
	if title == nil && body == nil {
		return delta.Op{}, fmt.Errorf("notes update of %q: no title or body", extID)
	}
	set := map[string]delta.Value{"updated_at": delta.Lit(at.UTC().Format(TimeFormat))}
	if title != nil {
		t, err := checkLine("title", *title, MaxTitleChars, "Packing list")
		if err != nil {
			return delta.Op{}, fmt.Errorf("notes update of %q: %w", extID, err)
		}
		set["title"] = delta.Lit(t)
	}
	if body != nil {
		if err := checkBody("body", *body); err != nil {
			return delta.Op{}, fmt.Errorf("notes update of %q: %w", extID, err)
		}
		set["body"] = delta.Lit(*body)
	}
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "notes",
		Key: map[string]delta.Value{"ext_id": delta.Lit(extID)}, Set: set}, nil
}

// PinOp returns the db.update operation that pins (or unpins) the note extID.
func PinOp(extID string, pinned bool) delta.Op {
	v := 0
	if pinned {
		v = 1
	}
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "notes",
		Key: map[string]delta.Value{"ext_id": delta.Lit(extID)}, Set: map[string]delta.Value{"pinned": delta.Lit(v)}}
}

// checkNew validates a new note's notebook, title and body as create_note
// does and returns them normalized.
func checkNew(notebook, title, body string) (string, string, error) {
	notebook, err := checkLine("notebook", notebook, MaxNotebookChars, "Personal")
	if err != nil {
		return "", "", err
	}
	if title, err = checkLine("title", title, MaxTitleChars, "Packing list"); err != nil {
		return "", "", err
	}
	return notebook, title, checkBody("body", body)
}
