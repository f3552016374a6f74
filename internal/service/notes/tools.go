package notes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit       = 20
	MaxLimit           = 100
	MaxBodyChars       = 50000
	MaxTitleChars      = 200
	MaxNotebookChars   = 100
	MaxQueryChars      = 200
	MaxTargetBytes     = 2000
	maxIDChars         = 200
	maxNotebooksInList = 20
	previewChars       = 100
	snippetContext     = 60
)

// NotebookSummary is one notebook of list_notebooks.
type NotebookSummary struct {
	Notebook string `json:"notebook" jsonschema:"the notebook name, to pass as notebook"`
	Notes    int    `json:"notes" jsonschema:"number of notes in it"`
}

// ListNotebooksIn are list_notebooks' arguments (none).
type ListNotebooksIn struct{}

// ListNotebooksOut is list_notebooks' result.
type ListNotebooksOut struct {
	Notebooks []NotebookSummary `json:"notebooks" jsonschema:"notebooks sorted by name"`
}

// NoteSummary is one note of list_notes and search_notes.
type NoteSummary struct {
	Note      string `json:"note" jsonschema:"the note id to pass to read_note, update_note, pin_note, link_note and delete_note"`
	Notebook  string `json:"notebook"`
	Title     string `json:"title"`
	Pinned    bool   `json:"pinned,omitempty"`
	Preview   string `json:"preview" jsonschema:"the start of the body, or in search_notes the text around the match"`
	UpdatedAt string `json:"updated_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
}

// ListNotesIn are list_notes' arguments.
type ListNotesIn struct {
	Notebook string `json:"notebook,omitempty" jsonschema:"only notes of this notebook (a name from list_notebooks); omit for all notes"`
	Limit    int    `json:"limit,omitempty" jsonschema:"how many notes to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_notes result, to get the next page; omit for the first page"`
}

// ListNotesOut is list_notes' result.
type ListNotesOut struct {
	Notes      []NoteSummary `json:"notes" jsonschema:"pinned notes first, then most recently updated first"`
	NextCursor string        `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// SearchNotesIn are search_notes' arguments.
type SearchNotesIn struct {
	Query string `json:"query" jsonschema:"text to find in titles and bodies; plain text, case-insensitive, not a pattern"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many notes to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchNotesOut is search_notes' result.
type SearchNotesOut struct {
	Notes []NoteSummary `json:"notes" jsonschema:"matching notes, most recently updated first"`
	More  bool          `json:"more,omitempty" jsonschema:"true if more notes match than were returned"`
}

// Note is one whole note.
type Note struct {
	Note      string   `json:"note" jsonschema:"the note id"`
	Notebook  string   `json:"notebook"`
	Title     string   `json:"title"`
	Body      string   `json:"body" jsonschema:"markdown"`
	Pinned    bool     `json:"pinned"`
	Links     []string `json:"links" jsonschema:"linked files (paths relative to home) and URLs, sorted"`
	CreatedAt string   `json:"created_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	UpdatedAt string   `json:"updated_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
}

// NoteIn names one note.
type NoteIn struct {
	Note string `json:"note" jsonschema:"the note id, as list_notes or search_notes return it (e.g. lisbon-packing-list)"`
}

// CreateNoteIn are create_note's arguments.
type CreateNoteIn struct {
	Notebook string `json:"notebook" jsonschema:"the notebook name; an existing one is matched ignoring case, a new name creates the notebook"`
	Title    string `json:"title" jsonschema:"the title, 1 to 200 characters on one line"`
	Body     string `json:"body,omitempty" jsonschema:"the text, markdown, at most 50000 characters"`
}

// CreateNoteOut is create_note's result.
type CreateNoteOut struct {
	Note            Note `json:"note"`
	CreatedNotebook bool `json:"created_notebook,omitempty" jsonschema:"true if the notebook did not exist and was created"`
}

// UpdateNoteIn are update_note's arguments.
type UpdateNoteIn struct {
	Note   string  `json:"note" jsonschema:"the note id"`
	Title  *string `json:"title,omitempty" jsonschema:"the new title"`
	Body   *string `json:"body,omitempty" jsonschema:"the new body, replacing the old one; give body or append, not both"`
	Append string  `json:"append,omitempty" jsonschema:"text to add at the end of the body, on a new line; give body or append, not both"`
}

// UpdateNoteOut is update_note's result.
type UpdateNoteOut struct {
	Note    Note     `json:"note" jsonschema:"the note after the change"`
	Changed []string `json:"changed" jsonschema:"title and/or body if they changed; empty if they were already so"`
}

// PinNoteIn are pin_note's arguments.
type PinNoteIn struct {
	Note  string `json:"note" jsonschema:"the note id"`
	Unpin bool   `json:"unpin,omitempty" jsonschema:"true to unpin the note instead of pinning it"`
}

// PinNoteOut is pin_note's result.
type PinNoteOut struct {
	Note    string `json:"note"`
	Pinned  bool   `json:"pinned" jsonschema:"the note's state after the call"`
	Changed bool   `json:"changed" jsonschema:"false if it was already so"`
}

// LinkNoteIn are link_note's arguments.
type LinkNoteIn struct {
	Note   string `json:"note" jsonschema:"the note id"`
	Target string `json:"target" jsonschema:"a file path relative to home (e.g. docs/plan.md) or an http(s) URL"`
	Remove bool   `json:"remove,omitempty" jsonschema:"true to remove the link instead of adding it"`
}

// LinkNoteOut is link_note's result.
type LinkNoteOut struct {
	Note    string   `json:"note"`
	Links   []string `json:"links" jsonschema:"the note's links after the call, sorted"`
	Changed bool     `json:"changed" jsonschema:"false if the link already existed (or, with remove, did not exist)"`
}

// DeleteNoteOut is delete_note's result.
type DeleteNoteOut struct {
	Note    string `json:"note"`
	Title   string `json:"title"`
	Deleted bool   `json:"deleted"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	idem := &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "list_notebooks", Title: "List notebooks",
		Description: "Lists the notebooks, sorted by name, with the number of notes in each.",
		Annotations: ro,
	}, s.listNotebooks)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "list_notes", Title: "List notes",
		Description: "Lists notes, optionally of one notebook: pinned notes first, then most recently updated first, " +
			"with id, title and the start of the body. Returns up to limit notes and a next_cursor when there are more; " +
			"pass it back as cursor to see the next page. Read a whole note with read_note.",
		Annotations: ro,
	}, s.listNotes)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "search_notes", Title: "Search notes",
		Description: "Finds notes whose title or body contains the query (case-insensitive plain text, not a pattern), " +
			"most recently updated first, with the text around the match.",
		Annotations: ro,
	}, s.searchNotes)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "read_note", Title: "Read a note",
		Description: "Returns one whole note: title, notebook, markdown body, pinned, links and times.",
		Annotations: ro,
	}, s.readNote)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "create_note", Title: "Create a note",
		Description: "Creates a note in a notebook (matched ignoring case; a new name creates the notebook) with a title " +
			"and a markdown body. Returns the note with its id.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.createNote)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "update_note", Title: "Update a note",
		Description: "Changes a note's title and/or body: body replaces the whole text, append adds text at the end on a " +
			"new line (give one of them). Returns the note after the change.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: boolPtr(false)},
	}, s.updateNote)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "pin_note", Title: "Pin a note",
		Description: "Pins a note so that it is listed first, or unpins it with unpin=true.",
		Annotations: idem,
	}, s.pinNote)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "link_note", Title: "Link a note",
		Description: "Links a note to a file (a path relative to home, e.g. docs/plan.md) or a web page (an http or https URL), " +
			"or removes the link with remove=true. Returns the note's links.",
		Annotations: idem,
	}, s.linkNote)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name: "delete_note", Title: "Delete a note",
		Description: "Deletes one note and its links. This cannot be undone; the notebook stays.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}, s.deleteNote)
}

func (s *Service) listNotebooks(ctx context.Context, _ ListNotebooksIn) (ListNotebooksOut, error) {
	out := ListNotebooksOut{Notebooks: []NotebookSummary{}}
	err := s.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT b.name, (SELECT COUNT(*) FROM notes n WHERE n.notebook_id = b.id) FROM notebooks b ORDER BY lower(b.name), b.name`)
		if err != nil {
			return fmt.Errorf("list notebooks: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var nb NotebookSummary
			if err := rows.Scan(&nb.Notebook, &nb.Notes); err != nil {
				return fmt.Errorf("list notebooks: %w", err)
			}
			out.Notebooks = append(out.Notebooks, nb)
		}
		return rows.Err()
	})
	return out, err
}

// findNotebook returns the id and name of the notebook called name (exact,
// else ignoring ASCII case), or 0 if there is none.
func findNotebook(ctx context.Context, q querier, name string) (int64, string, error) {
	var id int64
	var got string
	err := q.QueryRowContext(ctx, `SELECT id, name FROM notebooks WHERE name = ?1 OR lower(name) = lower(?1) ORDER BY name <> ?1, id LIMIT 1`, name).Scan(&id, &got)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, "", nil
	case err != nil:
		return 0, "", fmt.Errorf("find notebook: %w", err)
	}
	return id, got, nil
}

// noNotebook is the tool error for an unknown notebook, listing them.
func noNotebook(ctx context.Context, q querier, name string) error {
	rows, err := q.QueryContext(ctx, `SELECT name FROM notebooks ORDER BY lower(name), name LIMIT ?`, maxNotebooksInList+1)
	if err != nil {
		return fmt.Errorf("list notebooks: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("list notebooks: %w", err)
		}
		names = append(names, fmt.Sprintf("%q", n))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list notebooks: %w", err)
	}
	if len(names) == 0 {
		return badCall("no notebook %q, and there are no notebooks yet; create_note creates one", clip(name, 80))
	}
	list := strings.Join(names, ", ")
	if len(names) > maxNotebooksInList {
		list = strings.Join(names[:maxNotebooksInList], ", ") + ", ... (call list_notebooks)"
	}
	return badCall("no notebook %q; the notebooks are %s. Omit notebook to list every note", clip(name, 80), list)
}

const summaryColumns = `n.ext_id, b.name, n.title, n.pinned, n.body, n.updated_at`

func querySummaries(ctx context.Context, q querier, query string, args ...any) ([]NoteSummary, []string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	var ns []NoteSummary
	var bodies []string
	for rows.Next() {
		var n NoteSummary
		var body string
		if err := rows.Scan(&n.Note, &n.Notebook, &n.Title, &n.Pinned, &body, &n.UpdatedAt); err != nil {
			return nil, nil, fmt.Errorf("list notes: %w", err)
		}
		ns, bodies = append(ns, n), append(bodies, body)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list notes: %w", err)
	}
	return ns, bodies, nil
}

func (s *Service) listNotes(ctx context.Context, in ListNotesIn) (ListNotesOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListNotesOut{}, err
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListNotesOut{}, badCall("cursor %q is not one list_notes returned; pass next_cursor from the previous list_notes result unchanged, or omit cursor to start from the first page", clip(in.Cursor, 80))
		}
		after = &c
	}
	notebook := strings.TrimSpace(in.Notebook)
	if utf8.RuneCountInString(notebook) > MaxNotebookChars {
		return ListNotesOut{}, badCall("notebook is %d characters; notebook names have at most %d; call list_notebooks", utf8.RuneCountInString(notebook), MaxNotebookChars)
	}
	out := ListNotesOut{Notes: []NoteSummary{}}
	err = s.read(ctx, func(q querier) error {
		query := `SELECT ` + summaryColumns + ` FROM notes n JOIN notebooks b ON b.id = n.notebook_id WHERE 1`
		args := []any{}
		if notebook != "" {
			id, _, err := findNotebook(ctx, q, notebook)
			if err != nil {
				return err
			}
			if id == 0 {
				return noNotebook(ctx, q, notebook)
			}
			query += ` AND n.notebook_id = ?`
			args = append(args, id)
		}
		if after != nil {
			query += ` AND (n.pinned < ? OR (n.pinned = ? AND (n.updated_at < ? OR (n.updated_at = ? AND n.ext_id > ?))))`
			args = append(args, after.pinned, after.pinned, after.updatedAt, after.updatedAt, after.note)
		}
		query += ` ORDER BY n.pinned DESC, n.updated_at DESC, n.ext_id ASC LIMIT ?`
		args = append(args, limit+1)
		ns, bodies, err := querySummaries(ctx, q, query, args...)
		if err != nil {
			return err
		}
		if len(ns) > limit {
			ns = ns[:limit]
			last := ns[limit-1]
			out.NextCursor = cursor{pinned: last.Pinned, updatedAt: last.UpdatedAt, note: last.Note}.String()
		}
		for i := range ns {
			ns[i].Preview = preview(bodies[i], previewChars)
		}
		out.Notes = ns
		return nil
	})
	return out, err
}

func (s *Service) searchNotes(ctx context.Context, in SearchNotesIn) (SearchNotesOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchNotesOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch n := utf8.RuneCountInString(query); {
	case query == "":
		return SearchNotesOut{}, badCall("query is empty; pass a word or phrase to look for, e.g. \"passport\"")
	case n > MaxQueryChars:
		return SearchNotesOut{}, badCall("query is %d characters; use at most %d (a distinctive word or phrase)", n, MaxQueryChars)
	}
	out := SearchNotesOut{Notes: []NoteSummary{}}
	err = s.read(ctx, func(q querier) error {
		// Bound as a parameter and matched with instr (not LIKE), so % and _
		// are plain characters. lower() folds ASCII letters only.
		ns, bodies, err := querySummaries(ctx, q, `SELECT `+summaryColumns+` FROM notes n JOIN notebooks b ON b.id = n.notebook_id
WHERE instr(lower(n.title), lower(?1)) > 0 OR instr(lower(n.body), lower(?1)) > 0
ORDER BY n.updated_at DESC, n.ext_id ASC LIMIT ?2`, query, limit+1)
		if err != nil {
			return err
		}
		if len(ns) > limit {
			ns, out.More = ns[:limit], true
		}
		for i := range ns {
			ns[i].Preview = snippet(bodies[i], query, snippetContext)
		}
		out.Notes = ns
		return nil
	})
	return out, err
}

// note is a row of notes with its notebook's name and its links.
type note struct {
	id int64
	n  Note
}

// findNote returns the note with that ext_id, or a tool error that names the
// way to find one (and a close match when there is one).
func findNote(ctx context.Context, q querier, extID string) (note, error) {
	switch {
	case strings.TrimSpace(extID) == "":
		return note{}, badCall("note is required: pass a note id from list_notes or search_notes (the \"note\" field)")
	case utf8.RuneCountInString(extID) > maxIDChars:
		return note{}, badCall("note is %d characters, longer than any note id; pass the \"note\" field of list_notes or search_notes", utf8.RuneCountInString(extID))
	}
	var r note
	err := q.QueryRowContext(ctx, `SELECT n.id, n.ext_id, b.name, n.title, n.body, n.pinned, n.created_at, n.updated_at
FROM notes n JOIN notebooks b ON b.id = n.notebook_id WHERE n.ext_id = ?`, extID).
		Scan(&r.id, &r.n.Note, &r.n.Notebook, &r.n.Title, &r.n.Body, &r.n.Pinned, &r.n.CreatedAt, &r.n.UpdatedAt)
	if err == nil {
		r.n.Links, err = links(ctx, q, r.id)
		return r, err
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return note{}, fmt.Errorf("find note: %w", err)
	}
	var near, nearTitle string
	err = q.QueryRowContext(ctx, `SELECT ext_id, title FROM notes WHERE lower(ext_id) = lower(?1) OR lower(title) = lower(?1) ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &nearTitle)
	switch {
	case err == nil:
		return note{}, badCall("no note %q; did you mean note %q (%s)? Note ids are exact; call list_notes or search_notes to see them", clip(extID, 80), near, nearTitle)
	case errors.Is(err, sql.ErrNoRows):
		return note{}, badCall("no note %q; call search_notes or list_notes to see the note ids (the \"note\" field)", clip(extID, 80))
	default:
		return note{}, fmt.Errorf("find note: %w", err)
	}
}

func links(ctx context.Context, q querier, noteID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT target FROM note_links WHERE note_id = ? ORDER BY target`, noteID)
	if err != nil {
		return nil, fmt.Errorf("links: %w", err)
	}
	defer rows.Close()
	ls := []string{}
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("links: %w", err)
		}
		ls = append(ls, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("links: %w", err)
	}
	return ls, nil
}

func (s *Service) readNote(ctx context.Context, in NoteIn) (Note, error) {
	var out Note
	err := s.read(ctx, func(q querier) error {
		r, err := findNote(ctx, q, in.Note)
		out = r.n
		return err
	})
	return out, err
}

// checkNew validates create_note's arguments and returns them normalized.
func checkNew(in CreateNoteIn) (notebook, title string, err error) {
	if notebook, err = checkLine("notebook", in.Notebook, MaxNotebookChars, "Personal"); err != nil {
		return "", "", err
	}
	if title, err = checkLine("title", in.Title, MaxTitleChars, "Packing list"); err != nil {
		return "", "", err
	}
	return notebook, title, checkBody("body", in.Body)
}

func (s *Service) createNote(ctx context.Context, in CreateNoteIn) (CreateNoteOut, error) {
	notebook, title, err := checkNew(in)
	if err != nil {
		return CreateNoteOut{}, err
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	out := CreateNoteOut{Note: Note{Title: title, Body: in.Body, Links: []string{}, CreatedAt: now, UpdatedAt: now}}
	err = s.write(ctx, func(q querier) error {
		nbID, name, err := findNotebook(ctx, q, notebook)
		if err != nil {
			return err
		}
		if nbID == 0 {
			if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM notebooks`).Scan(&nbID); err != nil {
				return fmt.Errorf("new notebook: %w", err)
			}
			if _, err := q.ExecContext(ctx, `INSERT INTO notebooks (id, name) VALUES (?, ?)`, nbID, notebook); err != nil {
				return fmt.Errorf("new notebook: %w", err)
			}
			name, out.CreatedNotebook = notebook, true
		}
		out.Note.Notebook = name
		base := slug(title)
		out.Note.Note = base
		for i := 2; ; i++ {
			var taken bool
			if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM notes WHERE ext_id = ?)`, out.Note.Note).Scan(&taken); err != nil {
				return fmt.Errorf("new note id: %w", err)
			}
			if !taken {
				break
			}
			out.Note.Note = fmt.Sprintf("%s-%d", base, i)
		}
		_, err = q.ExecContext(ctx, `INSERT INTO notes (id, ext_id, notebook_id, title, body, created_at, updated_at, pinned)
VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM notes), ?, ?, ?, ?, ?, ?, 0)`, out.Note.Note, nbID, title, in.Body, now, now)
		if err != nil {
			return fmt.Errorf("insert note: %w", err)
		}
		return nil
	})
	if err != nil {
		return CreateNoteOut{}, err
	}
	return out, nil
}

// appendText returns body with text added on a new line.
func appendText(body, text string) string {
	if body == "" || strings.HasSuffix(body, "\n") {
		return body + text
	}
	return body + "\n" + text
}

func (s *Service) updateNote(ctx context.Context, in UpdateNoteIn) (UpdateNoteOut, error) {
	switch {
	case in.Title == nil && in.Body == nil && in.Append == "":
		return UpdateNoteOut{}, badCall("nothing to change; pass title, body (to replace the text) or append (to add to the end)")
	case in.Body != nil && in.Append != "":
		return UpdateNoteOut{}, badCall("give body (replaces the whole text) or append (adds to the end), not both")
	}
	var title string
	if in.Title != nil {
		var err error
		if title, err = checkLine("title", *in.Title, MaxTitleChars, "Packing list"); err != nil {
			return UpdateNoteOut{}, err
		}
	}
	if in.Body != nil {
		if err := checkBody("body", *in.Body); err != nil {
			return UpdateNoteOut{}, err
		}
	}
	if err := checkBody("append", in.Append); err != nil {
		return UpdateNoteOut{}, err
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out UpdateNoteOut
	err := s.write(ctx, func(q querier) error {
		r, err := findNote(ctx, q, in.Note)
		if err != nil {
			return err
		}
		n := r.n
		changed := []string{}
		if in.Title != nil && title != n.Title {
			n.Title = title
			changed = append(changed, "title")
		}
		body := n.Body
		switch {
		case in.Body != nil:
			body = *in.Body
		case in.Append != "":
			body = appendText(body, in.Append)
			if c := utf8.RuneCountInString(body); c > MaxBodyChars {
				return badCall("the body would be %d characters after appending; a note holds at most %d. Create a new note for the rest", c, MaxBodyChars)
			}
		}
		if body != n.Body {
			n.Body = body
			changed = append(changed, "body")
		}
		out = UpdateNoteOut{Note: n, Changed: changed}
		if len(changed) == 0 {
			return nil
		}
		out.Note.UpdatedAt = now
		if _, err := q.ExecContext(ctx, `UPDATE notes SET title = ?, body = ?, updated_at = ? WHERE id = ?`, n.Title, n.Body, now, r.id); err != nil {
			return fmt.Errorf("update note: %w", err)
		}
		return nil
	})
	if err != nil {
		return UpdateNoteOut{}, err
	}
	return out, nil
}

func (s *Service) pinNote(ctx context.Context, in PinNoteIn) (PinNoteOut, error) {
	var out PinNoteOut
	err := s.write(ctx, func(q querier) error {
		r, err := findNote(ctx, q, in.Note)
		if err != nil {
			return err
		}
		out = PinNoteOut{Note: r.n.Note, Pinned: !in.Unpin, Changed: r.n.Pinned == in.Unpin}
		if !out.Changed {
			return nil
		}
		if _, err := q.ExecContext(ctx, `UPDATE notes SET pinned = ? WHERE id = ?`, out.Pinned, r.id); err != nil {
			return fmt.Errorf("pin note: %w", err)
		}
		return nil
	})
	if err != nil {
		return PinNoteOut{}, err
	}
	return out, nil
}

func (s *Service) linkNote(ctx context.Context, in LinkNoteIn) (LinkNoteOut, error) {
	target, err := checkTarget(in.Target)
	if err != nil {
		return LinkNoteOut{}, err
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out LinkNoteOut
	err = s.write(ctx, func(q querier) error {
		r, err := findNote(ctx, q, in.Note)
		if err != nil {
			return err
		}
		var res sql.Result
		if in.Remove {
			res, err = q.ExecContext(ctx, `DELETE FROM note_links WHERE note_id = ? AND target = ?`, r.id, target)
		} else {
			res, err = q.ExecContext(ctx, `INSERT INTO note_links (id, note_id, target)
SELECT (SELECT COALESCE(MAX(id), 0) + 1 FROM note_links), ?1, ?2
WHERE NOT EXISTS (SELECT 1 FROM note_links WHERE note_id = ?1 AND target = ?2)`, r.id, target)
		}
		if err != nil {
			return fmt.Errorf("link note: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("link note: %w", err)
		}
		out = LinkNoteOut{Note: r.n.Note, Changed: n > 0}
		if out.Changed {
			if _, err := q.ExecContext(ctx, `UPDATE notes SET updated_at = ? WHERE id = ?`, now, r.id); err != nil {
				return fmt.Errorf("link note: %w", err)
			}
		}
		out.Links, err = links(ctx, q, r.id)
		return err
	})
	if err != nil {
		return LinkNoteOut{}, err
	}
	return out, nil
}

func (s *Service) deleteNote(ctx context.Context, in NoteIn) (DeleteNoteOut, error) {
	var out DeleteNoteOut
	err := s.write(ctx, func(q querier) error {
		r, err := findNote(ctx, q, in.Note)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM note_links WHERE note_id = ?`, r.id); err != nil {
			return fmt.Errorf("delete links: %w", err)
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM notes WHERE id = ?`, r.id); err != nil {
			return fmt.Errorf("delete note: %w", err)
		}
		out = DeleteNoteOut{Note: r.n.Note, Title: r.n.Title, Deleted: true}
		return nil
	})
	if err != nil {
		return DeleteNoteOut{}, err
	}
	return out, nil
}
