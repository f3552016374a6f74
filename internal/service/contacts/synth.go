package contacts

import (
	"fmt"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
)

// Seed is a contact a world synthesizer writes directly into a world through
// a delta ("god mode"), never through the tools.
type Seed struct {
	// ExtID is the contact id; empty means slug(Name), as create_contact
	// would choose it in an empty address book.
	ExtID                                    string
	Name, Email, Phone, Company, Role, Notes string
	Tags                                     []string
	// UpdatedAt is the contact's last change; it must not be zero.
	UpdatedAt time.Time
}

// CreateOp returns the db.create operation that creates the contacts
// database with Schema.
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

// ContactRef returns a delta value naming the id of the contact extID, for a
// foreign key.
func ContactRef(extID string) delta.Value {
	return delta.RefTo("contacts", map[string]delta.Value{"ext_id": delta.Lit(extID)}, "id")
}

// InsertOps returns the db.insert operations that add seeds and their tags.
// Each seed is validated as create_contact validates its arguments; emails
// must be unique among the seeds (a synthesizer must check them against the
// world's existing contacts itself).
func InsertOps(seeds ...Seed) ([]delta.Op, error) {
	var ops []delta.Op
	ids, emails := map[string]bool{}, map[string]string{}
	for i, sd := range seeds {
		c, err := checkSeed(sd)
		if err != nil {
			return nil, fmt.Errorf("contacts seed %d: %w", i, err)
		}
		if sd.UpdatedAt.IsZero() {
			return nil, fmt.Errorf("contacts seed %d (%s): UpdatedAt is zero", i, c["name"])
		}
		ext := sd.ExtID
		if ext == "" {
			ext = slug(c["name"])
		}
		if ids[ext] {
			return nil, fmt.Errorf("contacts seed %d: ext_id %q repeats", i, ext)
		}
		ids[ext] = true
		if email := c["email"]; email != "" {
			low := strings.ToLower(email)
			if other, ok := emails[low]; ok {
				return nil, fmt.Errorf("contacts seed %d: email %s is also contact %q's", i, email, other)
			}
			emails[low] = ext
		}
		values := map[string]delta.Value{"updated_at": delta.Lit(sd.UpdatedAt.UTC().Format(TimeFormat))}
		for col, v := range c {
			values[col] = delta.Lit(v)
		}
		ops = append(ops, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "contacts",
			Key: map[string]delta.Value{"ext_id": delta.Lit(ext)}, Values: values})
		for _, t := range sd.Tags {
			op, err := TagOp(ext, t)
			if err != nil {
				return nil, fmt.Errorf("contacts seed %d: %w", i, err)
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// TagOp returns the db.insert operation that tags the contact extID (a no-op
// on apply if it already has the tag). The tag is normalized as tag_contact
// normalizes it.
func TagOp(extID, tag string) (delta.Op, error) {
	t, err := normTag(tag)
	if err != nil {
		return delta.Op{}, err
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "contact_tags",
		Key:    map[string]delta.Value{"contact_id": ContactRef(extID), "tag": delta.Lit(t)},
		Values: map[string]delta.Value{}}, nil
}

// UpdateOp returns the db.update operation that sets the fields given in f
// of the contact extID and its updated_at to at. Values are validated as
// update_contact validates them; uniqueness of a new email is not checked.
func UpdateOp(extID string, f Fields, at time.Time) (delta.Op, error) {
	if f.empty() {
		return delta.Op{}, fmt.Errorf("contacts update of %q: no fields", extID)
	}
	set := map[string]delta.Value{"updated_at": delta.Lit(at.UTC().Format(TimeFormat))}
	for _, fl := range f.list() {
		if fl.v == nil {
			continue
		}
		v, err := fl.check(*fl.v)
		if err != nil {
			return delta.Op{}, fmt.Errorf("contacts update of %q: %w", extID, err)
		}
		set[fl.name] = delta.Lit(v)
	}
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "contacts",
		Key: map[string]delta.Value{"ext_id": delta.Lit(extID)}, Set: set}, nil
}

// checkSeed validates a seed's fields as create_contact validates its
// arguments and returns them normalized, by column.
func checkSeed(sd Seed) (map[string]string, error) {
	c := map[string]string{}
	for _, f := range []struct{ name, v string }{
		{"name", sd.Name}, {"email", sd.Email}, {"phone", sd.Phone}, {"company", sd.Company}, {"role", sd.Role}, {"notes", sd.Notes},
	} {
		v, err := validators[f.name](f.v)
		if err != nil {
			return nil, err
		}
		c[f.name] = v
	}
	return c, nil
}
