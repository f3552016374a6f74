package contacts

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
	DefaultLimit   = 20
	MaxLimit       = 100
	MaxNameChars   = 200
	MaxFieldChars  = 200
	MaxEmailChars  = 254
	MaxPhoneChars  = 32
	MaxNotesChars  = 10000
	MaxQueryChars  = 200
	MaxTagChars    = 40
	maxIDChars     = 200
	maxTagsInError = 20
)

// Contact is one contact as the tools return it.
type Contact struct {
	Contact   string   `json:"contact" jsonschema:"the contact id to pass to get_contact, update_contact, tag_contact and delete_contact"`
	Name      string   `json:"name"`
	Email     string   `json:"email,omitempty"`
	Phone     string   `json:"phone,omitempty"`
	Company   string   `json:"company,omitempty"`
	Role      string   `json:"role,omitempty" jsonschema:"job title or relation, e.g. CTO or landlord"`
	Tags      []string `json:"tags" jsonschema:"labels, sorted"`
	Notes     string   `json:"notes,omitempty" jsonschema:"free text; only get_contact, create_contact and update_contact return it"`
	UpdatedAt string   `json:"updated_at" jsonschema:"last change, UTC, YYYY-MM-DD HH:MM:SS"`
}

// ListContactsIn are list_contacts' arguments.
type ListContactsIn struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many contacts to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_contacts result, to get the next page; omit for the first page"`
	Tag    string `json:"tag,omitempty" jsonschema:"only contacts with this tag; omit for all contacts"`
}

// ListContactsOut is list_contacts' result.
type ListContactsOut struct {
	Contacts   []Contact `json:"contacts" jsonschema:"contacts sorted by name"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// SearchContactsIn are search_contacts' arguments.
type SearchContactsIn struct {
	Query string `json:"query" jsonschema:"text to find in names, emails, companies and roles; plain text, case-insensitive, not a pattern"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many contacts to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchContactsOut is search_contacts' result.
type SearchContactsOut struct {
	Contacts []Contact `json:"contacts" jsonschema:"matching contacts sorted by name"`
	More     bool      `json:"more,omitempty" jsonschema:"true if more contacts match than were returned"`
}

// GetContactIn are get_contact's arguments.
type GetContactIn struct {
	Contact string `json:"contact" jsonschema:"the contact id, as list_contacts or search_contacts return it (e.g. maya-chen)"`
}

// CreateContactIn are create_contact's arguments.
type CreateContactIn struct {
	Name    string `json:"name" jsonschema:"full name, 1 to 200 characters"`
	Email   string `json:"email,omitempty" jsonschema:"email address like maya@example.com; must not belong to another contact"`
	Phone   string `json:"phone,omitempty" jsonschema:"phone number: digits, spaces, hyphens and a leading +"`
	Company string `json:"company,omitempty" jsonschema:"company or organisation, at most 200 characters"`
	Role    string `json:"role,omitempty" jsonschema:"job title or relation, at most 200 characters"`
	Notes   string `json:"notes,omitempty" jsonschema:"free text, at most 10000 characters"`
}

// Fields are the fields update_contact changes; absent ones stay as they are.
type Fields struct {
	Name    *string `json:"name,omitempty" jsonschema:"new full name"`
	Email   *string `json:"email,omitempty" jsonschema:"new email address; empty string removes it"`
	Phone   *string `json:"phone,omitempty" jsonschema:"new phone number; empty string removes it"`
	Company *string `json:"company,omitempty" jsonschema:"new company; empty string removes it"`
	Role    *string `json:"role,omitempty" jsonschema:"new role; empty string removes it"`
	Notes   *string `json:"notes,omitempty" jsonschema:"new notes, replacing the old ones; empty string removes them"`
}

// UpdateContactIn are update_contact's arguments.
type UpdateContactIn struct {
	Contact string `json:"contact" jsonschema:"the contact id to change"`
	Fields  Fields `json:"fields" jsonschema:"the fields to change; at least one"`
}

// UpdateContactOut is update_contact's result.
type UpdateContactOut struct {
	Contact Contact  `json:"contact" jsonschema:"the contact after the change"`
	Changed []string `json:"changed" jsonschema:"names of the fields whose value changed; empty if all were already so"`
}

// TagContactIn are tag_contact's arguments.
type TagContactIn struct {
	Contact string `json:"contact" jsonschema:"the contact id"`
	Tag     string `json:"tag" jsonschema:"a label of letters, digits, - and _ (stored lowercase), e.g. work"`
	Remove  bool   `json:"remove,omitempty" jsonschema:"true to remove the tag instead of adding it"`
}

// TagContactOut is tag_contact's result.
type TagContactOut struct {
	Contact string   `json:"contact"`
	Tag     string   `json:"tag" jsonschema:"the tag as stored"`
	Tags    []string `json:"tags" jsonschema:"the contact's tags after the call"`
	Changed bool     `json:"changed" jsonschema:"false if the contact already had (or, with remove, already lacked) the tag"`
}

// DeleteContactIn are delete_contact's arguments.
type DeleteContactIn struct {
	Contact string `json:"contact" jsonschema:"the contact id to delete"`
}

// DeleteContactOut is delete_contact's result.
type DeleteContactOut struct {
	Contact string `json:"contact"`
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_contacts",
		Title: "List contacts",
		Description: "Lists the address book sorted by name, optionally only contacts with a tag, with each contact's id, " +
			"email, phone, company, role and tags (not notes; use get_contact). Returns up to limit contacts and a " +
			"next_cursor when there are more; pass it back as cursor to see the next page.",
		Annotations: ro,
	}, s.listContacts)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "search_contacts",
		Title: "Search contacts",
		Description: "Finds contacts whose name, email, company or role contains the query (case-insensitive plain text, " +
			"not a pattern), sorted by name. Use it to find a contact's id before get_contact, update_contact or tag_contact.",
		Annotations: ro,
	}, s.searchContacts)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "get_contact",
		Title:       "Get a contact",
		Description: "Returns one contact with every field, its tags and notes. The contact id comes from list_contacts or search_contacts.",
		Annotations: ro,
	}, s.getContact)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "create_contact",
		Title: "Create a contact",
		Description: "Adds a contact. name is required; email, phone, company, role and notes are optional. The email must " +
			"look like name@example.com and not belong to another contact; the phone may have digits, spaces, hyphens and a " +
			"leading +. Returns the new contact with its id.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.createContact)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "update_contact",
		Title: "Update a contact",
		Description: "Changes fields of one contact: pass the contact id and fields with the new values (name, email, phone, " +
			"company, role, notes); fields left out stay as they are, an empty string clears an optional field. " +
			"To change tags use tag_contact. Returns the contact after the change and the names of the changed fields.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, s.updateContact)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "tag_contact",
		Title: "Tag a contact",
		Description: "Adds a tag (a label such as work or family) to a contact, or removes it with remove=true. " +
			"Tags are stored lowercase. Returns the contact's tags after the call.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, s.tagContact)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "delete_contact",
		Title:       "Delete a contact",
		Description: "Deletes one contact and its tags from the address book. This cannot be undone.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}, s.deleteContact)
}

// row is a row of contacts.
type row struct {
	id int64
	c  Contact
}

const contactColumns = `id, ext_id, name, email, phone, company, role, notes, updated_at`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.c.Contact, &r.c.Name, &r.c.Email, &r.c.Phone, &r.c.Company, &r.c.Role, &r.c.Notes, &r.c.UpdatedAt)
	return r, err
}

// queryContacts returns the contacts query selects (contactColumns), with
// their tags; withNotes false leaves Notes empty.
func queryContacts(ctx context.Context, q querier, withNotes bool, query string, args ...any) ([]Contact, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	defer rows.Close()
	var rs []row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("list contacts: %w", err)
		}
		if !withNotes {
			r.c.Notes = ""
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	rows.Close()
	cs := make([]Contact, 0, len(rs))
	for _, r := range rs {
		if r.c.Tags, err = tags(ctx, q, r.id); err != nil {
			return nil, err
		}
		cs = append(cs, r.c)
	}
	return cs, nil
}

func tags(ctx context.Context, q querier, contactID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT tag FROM contact_tags WHERE contact_id = ? ORDER BY tag`, contactID)
	if err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	defer rows.Close()
	ts := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("tags: %w", err)
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	return ts, nil
}

// findContact returns the contact with that ext_id (with tags and notes), or
// a tool error that names the way to find one (and a close match when there
// is one).
func findContact(ctx context.Context, q querier, extID string) (row, error) {
	switch {
	case strings.TrimSpace(extID) == "":
		return row{}, badCall("contact is required: pass a contact id from list_contacts or search_contacts (the \"contact\" field)")
	case utf8.RuneCountInString(extID) > maxIDChars:
		return row{}, badCall("contact is %d characters, longer than any contact id; pass the \"contact\" field of list_contacts or search_contacts", utf8.RuneCountInString(extID))
	}
	r, err := scanRow(q.QueryRowContext(ctx, `SELECT `+contactColumns+` FROM contacts WHERE ext_id = ?`, extID))
	if err == nil {
		if r.c.Tags, err = tags(ctx, q, r.id); err != nil {
			return row{}, err
		}
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return row{}, fmt.Errorf("find contact: %w", err)
	}
	var near, nearName string
	err = q.QueryRowContext(ctx, `SELECT ext_id, name FROM contacts
WHERE lower(ext_id) = lower(?1) OR lower(name) = lower(?1) OR (email <> '' AND lower(email) = lower(?1))
ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &nearName)
	switch {
	case err == nil:
		return row{}, badCall("no contact %q; did you mean contact %q (%s)? Contact ids are exact; call search_contacts or list_contacts to see them", clip(extID, 80), near, nearName)
	case errors.Is(err, sql.ErrNoRows):
		return row{}, badCall("no contact %q; call search_contacts with a name or email, or list_contacts, to see the contact ids (the \"contact\" field)", clip(extID, 80))
	default:
		return row{}, fmt.Errorf("find contact: %w", err)
	}
}

// emailOwner fails with a tool error when another contact (not exceptID)
// has email, ignoring ASCII case.
func emailOwner(ctx context.Context, q querier, email string, exceptID int64) error {
	if email == "" {
		return nil
	}
	var ext, name, have string
	err := q.QueryRowContext(ctx, `SELECT ext_id, name, email FROM contacts WHERE email <> '' AND lower(email) = lower(?) AND id <> ? ORDER BY id LIMIT 1`, email, exceptID).Scan(&ext, &name, &have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check email: %w", err)
	}
	return badCall("email %s already belongs to contact %q (%s); use update_contact on %q to change that contact, or pass a different email", have, ext, name, ext)
}

func (s *Service) listContacts(ctx context.Context, in ListContactsIn) (ListContactsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListContactsOut{}, err
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListContactsOut{}, badCall("cursor %q is not one list_contacts returned; pass next_cursor from the previous list_contacts result unchanged, or omit cursor to start from the first page", clip(in.Cursor, 80))
		}
		after = &c
	}
	tag := ""
	if in.Tag != "" {
		if tag, err = normTag(in.Tag); err != nil {
			return ListContactsOut{}, err
		}
	}
	out := ListContactsOut{Contacts: []Contact{}}
	err = s.read(ctx, func(q querier) error {
		if tag != "" {
			if err := tagInUse(ctx, q, tag); err != nil {
				return err
			}
		}
		query := `SELECT ` + contactColumns + ` FROM contacts WHERE 1`
		args := []any{}
		if tag != "" {
			query += ` AND id IN (SELECT contact_id FROM contact_tags WHERE tag = ?)`
			args = append(args, tag)
		}
		if after != nil {
			query += ` AND (lower(name) > ? OR (lower(name) = ? AND ext_id > ?))`
			args = append(args, after.name, after.name, after.contact)
		}
		query += ` ORDER BY lower(name), ext_id LIMIT ?`
		args = append(args, limit+1)
		cs, err := queryContacts(ctx, q, false, query, args...)
		if err != nil {
			return err
		}
		if len(cs) > limit {
			cs = cs[:limit]
			last := cs[limit-1]
			// lower() in SQL folds ASCII only; compute the key the same way.
			var key string
			if err := q.QueryRowContext(ctx, `SELECT lower(name) FROM contacts WHERE ext_id = ?`, last.Contact).Scan(&key); err != nil {
				return fmt.Errorf("cursor: %w", err)
			}
			out.NextCursor = cursor{name: key, contact: last.Contact}.String()
		}
		out.Contacts = cs
		return nil
	})
	return out, err
}

// tagInUse fails with a tool error naming the tags in use unless some
// contact has tag.
func tagInUse(ctx context.Context, q querier, tag string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM contact_tags WHERE tag = ?`, tag).Scan(&n); err != nil {
		return fmt.Errorf("tag: %w", err)
	}
	if n > 0 {
		return nil
	}
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT tag FROM contact_tags ORDER BY tag LIMIT ?`, maxTagsInError+1)
	if err != nil {
		return fmt.Errorf("tags in use: %w", err)
	}
	defer rows.Close()
	var inUse []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return fmt.Errorf("tags in use: %w", err)
		}
		inUse = append(inUse, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("tags in use: %w", err)
	}
	if len(inUse) == 0 {
		return badCall("no contact has tag %q, and no contact has any tag yet; omit tag to list all contacts", tag)
	}
	list := strings.Join(inUse, ", ")
	if len(inUse) > maxTagsInError {
		list = strings.Join(inUse[:maxTagsInError], ", ") + ", ..."
	}
	return badCall("no contact has tag %q; tags in use: %s. Omit tag to list all contacts", tag, list)
}

func (s *Service) searchContacts(ctx context.Context, in SearchContactsIn) (SearchContactsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchContactsOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch n := utf8.RuneCountInString(query); {
	case query == "":
		return SearchContactsOut{}, badCall("query is empty; pass part of a name, email, company or role, e.g. \"chen\"")
	case n > MaxQueryChars:
		return SearchContactsOut{}, badCall("query is %d characters; use at most %d (part of a name, email, company or role)", n, MaxQueryChars)
	}
	out := SearchContactsOut{Contacts: []Contact{}}
	err = s.read(ctx, func(q querier) error {
		// Bound as a parameter and matched with instr (not LIKE), so % and _
		// are plain characters. lower() folds ASCII letters only.
		cs, err := queryContacts(ctx, q, false, `SELECT `+contactColumns+` FROM contacts
WHERE instr(lower(name), lower(?1)) > 0 OR instr(lower(email), lower(?1)) > 0
   OR instr(lower(company), lower(?1)) > 0 OR instr(lower(role), lower(?1)) > 0
ORDER BY lower(name), ext_id LIMIT ?2`, query, limit+1)
		if err != nil {
			return err
		}
		if len(cs) > limit {
			cs, out.More = cs[:limit], true
		}
		out.Contacts = cs
		return nil
	})
	return out, err
}

func (s *Service) getContact(ctx context.Context, in GetContactIn) (Contact, error) {
	var out Contact
	err := s.read(ctx, func(q querier) error {
		r, err := findContact(ctx, q, in.Contact)
		out = r.c
		return err
	})
	return out, err
}

func (s *Service) createContact(ctx context.Context, in CreateContactIn) (Contact, error) {
	c, err := checkContact(in)
	if err != nil {
		return Contact{}, err
	}
	c.UpdatedAt = s.clock.Now().UTC().Format(TimeFormat)
	c.Tags = []string{}
	err = s.write(ctx, func(q querier) error {
		if err := emailOwner(ctx, q, c.Email, 0); err != nil {
			return err
		}
		base := slug(c.Name)
		c.Contact = base
		for i := 2; ; i++ {
			var taken bool
			if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM contacts WHERE ext_id = ?)`, c.Contact).Scan(&taken); err != nil {
				return fmt.Errorf("new contact id: %w", err)
			}
			if !taken {
				break
			}
			c.Contact = fmt.Sprintf("%s-%d", base, i)
		}
		_, err := q.ExecContext(ctx, `INSERT INTO contacts (`+contactColumns+`)
VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM contacts), ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Contact, c.Name, c.Email, c.Phone, c.Company, c.Role, c.Notes, c.UpdatedAt)
		if err != nil {
			return fmt.Errorf("insert contact: %w", err)
		}
		return nil
	})
	if err != nil {
		return Contact{}, err
	}
	return c, nil
}

// checkContact validates and normalizes create_contact's arguments.
func checkContact(in CreateContactIn) (Contact, error) {
	var c Contact
	var err error
	if c.Name, err = checkName("name", in.Name); err != nil {
		return c, err
	}
	if c.Email, err = checkEmail(in.Email); err != nil {
		return c, err
	}
	if c.Phone, err = checkPhone(in.Phone); err != nil {
		return c, err
	}
	if c.Company, err = checkText("company", in.Company, MaxFieldChars, false); err != nil {
		return c, err
	}
	if c.Role, err = checkText("role", in.Role, MaxFieldChars, false); err != nil {
		return c, err
	}
	if c.Notes, err = checkText("notes", in.Notes, MaxNotesChars, true); err != nil {
		return c, err
	}
	return c, nil
}

// apply validates the fields set in f and applies them to c, returning the
// names of the columns whose value changed.
func (f Fields) apply(c *Contact) ([]string, error) {
	changed := []string{}
	set := func(name string, v *string, dst *string, check func(string) (string, error)) error {
		if v == nil {
			return nil
		}
		nv, err := check(*v)
		if err != nil {
			return err
		}
		if nv != *dst {
			*dst = nv
			changed = append(changed, name)
		}
		return nil
	}
	for _, fl := range []struct {
		name  string
		v     *string
		dst   *string
		check func(string) (string, error)
	}{
		{"name", f.Name, &c.Name, func(v string) (string, error) { return checkName("fields.name", v) }},
		{"email", f.Email, &c.Email, checkEmail},
		{"phone", f.Phone, &c.Phone, checkPhone},
		{"company", f.Company, &c.Company, func(v string) (string, error) { return checkText("company", v, MaxFieldChars, false) }},
		{"role", f.Role, &c.Role, func(v string) (string, error) { return checkText("role", v, MaxFieldChars, false) }},
		{"notes", f.Notes, &c.Notes, func(v string) (string, error) { return checkText("notes", v, MaxNotesChars, true) }},
	} {
		if err := set(fl.name, fl.v, fl.dst, fl.check); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

func (f Fields) empty() bool {
	return f.Name == nil && f.Email == nil && f.Phone == nil && f.Company == nil && f.Role == nil && f.Notes == nil
}

func (s *Service) updateContact(ctx context.Context, in UpdateContactIn) (UpdateContactOut, error) {
	if in.Fields.empty() {
		return UpdateContactOut{}, badCall("fields is empty; pass at least one of name, email, phone, company, role, notes with its new value, e.g. {\"fields\": {\"phone\": \"+1 415-555-0100\"}}")
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out UpdateContactOut
	err := s.write(ctx, func(q querier) error {
		r, err := findContact(ctx, q, in.Contact)
		if err != nil {
			return err
		}
		c := r.c
		changed, err := in.Fields.apply(&c)
		if err != nil {
			return err
		}
		out = UpdateContactOut{Contact: c, Changed: changed}
		if len(changed) == 0 {
			return nil
		}
		if err := emailOwner(ctx, q, c.Email, r.id); err != nil {
			return err
		}
		out.Contact.UpdatedAt = now
		_, err = q.ExecContext(ctx, `UPDATE contacts SET name = ?, email = ?, phone = ?, company = ?, role = ?, notes = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Email, c.Phone, c.Company, c.Role, c.Notes, now, r.id)
		if err != nil {
			return fmt.Errorf("update contact: %w", err)
		}
		return nil
	})
	if err != nil {
		return UpdateContactOut{}, err
	}
	return out, nil
}

func (s *Service) tagContact(ctx context.Context, in TagContactIn) (TagContactOut, error) {
	tag, err := normTag(in.Tag)
	if err != nil {
		return TagContactOut{}, err
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out TagContactOut
	err = s.write(ctx, func(q querier) error {
		r, err := findContact(ctx, q, in.Contact)
		if err != nil {
			return err
		}
		var res sql.Result
		if in.Remove {
			res, err = q.ExecContext(ctx, `DELETE FROM contact_tags WHERE contact_id = ? AND tag = ?`, r.id, tag)
		} else {
			res, err = q.ExecContext(ctx, `INSERT INTO contact_tags (id, contact_id, tag)
SELECT (SELECT COALESCE(MAX(id), 0) + 1 FROM contact_tags), ?1, ?2
WHERE NOT EXISTS (SELECT 1 FROM contact_tags WHERE contact_id = ?1 AND tag = ?2)`, r.id, tag)
		}
		if err != nil {
			return fmt.Errorf("tag contact: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("tag contact: %w", err)
		}
		out = TagContactOut{Contact: r.c.Contact, Tag: tag, Changed: n > 0}
		if out.Changed {
			if _, err := q.ExecContext(ctx, `UPDATE contacts SET updated_at = ? WHERE id = ?`, now, r.id); err != nil {
				return fmt.Errorf("tag contact: %w", err)
			}
		}
		out.Tags, err = tags(ctx, q, r.id)
		return err
	})
	if err != nil {
		return TagContactOut{}, err
	}
	return out, nil
}

func (s *Service) deleteContact(ctx context.Context, in DeleteContactIn) (DeleteContactOut, error) {
	var out DeleteContactOut
	err := s.write(ctx, func(q querier) error {
		r, err := findContact(ctx, q, in.Contact)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM contact_tags WHERE contact_id = ?`, r.id); err != nil {
			return fmt.Errorf("delete tags: %w", err)
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM contacts WHERE id = ?`, r.id); err != nil {
			return fmt.Errorf("delete contact: %w", err)
		}
		out = DeleteContactOut{Contact: r.c.Contact, Name: r.c.Name, Deleted: true}
		return nil
	})
	if err != nil {
		return DeleteContactOut{}, err
	}
	return out, nil
}
