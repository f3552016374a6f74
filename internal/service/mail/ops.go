package mail

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/world"
)

// Mail is a mail as the world synthesizer writes it into a day's delta with
// DeliverOps or SentOps ("god mode": never reachable through a tool).
type Mail struct {
	// ExtID is the mail's id, unique in the mailbox, e.g. "m-000123". The
	// service numbers its own mails m-NNNNNN and skips ids already taken.
	ExtID string
	// Folder defaults to inbox (DeliverOps) or sent (SentOps); it must exist
	// by the time the ops apply (CreateOps, FolderOps).
	Folder string
	// ThreadKey is the conversation; empty means ExtID (a new conversation).
	ThreadKey string
	From      string
	To, Cc    []string
	Subject   string
	Body      string
	// SentAt is stored in UTC as TimeFormat.
	SentAt  time.Time
	Read    bool
	Starred bool
	// Attachments are files of the persona's home directory.
	Attachments []Attachment
}

// Attachment is a file of a synthesized mail.
type Attachment struct {
	// HomePath is the file's slash path relative to home.
	HomePath string
	// Filename defaults to the last element of HomePath.
	Filename string
	// Content, when not nil, is written to HomePath by a file.write op placed
	// before the mail's rows; nil means the file already exists in the
	// world (or another op of the day writes it).
	Content []byte
}

// Check reports what is wrong with m as input to DeliverOps or SentOps: an
// empty ExtID, a bad address, a zero SentAt, an attachment path that leaves
// home or two attachments with one file name.
func (m Mail) Check() error {
	var errs []error
	if m.ExtID == "" {
		errs = append(errs, errors.New("ExtID is empty"))
	}
	if msg := checkAddress(m.From); msg != "" {
		errs = append(errs, fmt.Errorf("From: %s", msg))
	}
	for _, a := range append(append([]string{}, m.To...), m.Cc...) {
		if msg := checkAddress(a); msg != "" {
			errs = append(errs, fmt.Errorf("To/Cc: %s", msg))
		}
	}
	if m.SentAt.IsZero() {
		errs = append(errs, errors.New("SentAt is zero"))
	}
	seen := map[string]bool{}
	for _, a := range m.Attachments {
		clean, err := world.CleanHomePath(a.HomePath)
		if err != nil {
			errs = append(errs, fmt.Errorf("attachment: %w", err))
			continue
		}
		name := a.filename(clean)
		if seen[name] {
			errs = append(errs, fmt.Errorf("two attachments named %q", name))
		}
		seen[name] = true
	}
	if len(errs) > 0 {
		return fmt.Errorf("mail %q: %w", m.ExtID, errors.Join(errs...))
	}
	return nil
}

func (a Attachment) filename(clean string) string {
	if a.Filename != "" {
		return a.Filename
	}
	return path.Base(clean)
}

func lit(v any) delta.Value { return delta.Lit(v) }

// CreateOps returns the ops that create the mail database of a world: its
// Schema and the standard folders.
func CreateOps() []delta.Op {
	ops := []delta.Op{{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}}
	for _, f := range StandardFolders() {
		ops = append(ops, FolderOps(f)...)
	}
	return ops
}

// FolderOps returns the op that creates the folder name (nothing happens if
// it exists).
func FolderOps(name string) []delta.Op {
	return []delta.Op{{Op: delta.OpDBInsert, DB: DBName, Table: "folders", Key: map[string]delta.Value{"name": lit(name)}, Values: map[string]delta.Value{}}}
}

// DeliverOps returns the ops that deliver the inbound mail m: its attachment
// files (those with Content), the mail row in m.Folder (inbox if empty) and
// its attachment rows. Re-applying them changes nothing (db.insert is keyed
// by natural key). Call m.Check first; the ops do not validate.
func DeliverOps(m Mail) []delta.Op {
	if m.Folder == "" {
		m.Folder = Inbox
	}
	return mailOps(m)
}

// SentOps returns the ops that record m as a mail the persona sent: like
// DeliverOps, in m.Folder (sent if empty), always read.
func SentOps(m Mail) []delta.Op {
	if m.Folder == "" {
		m.Folder = Sent
	}
	m.Read = true
	return mailOps(m)
}

// MailKey is the natural key of the mail with that ext_id, for a delta's
// refs and produces.
func MailKey(extID string) map[string]delta.Value {
	return map[string]delta.Value{"ext_id": lit(extID)}
}

// MailRow names the mail with that ext_id in a delta's produces.
func MailRow(extID string) world.RowRef {
	return world.RowRef{DB: DBName, Table: "mails", Key: map[string]any{"ext_id": extID}}
}

func mailOps(m Mail) []delta.Op {
	thread := m.ThreadKey
	if thread == "" {
		thread = m.ExtID
	}
	var ops []delta.Op
	for _, a := range m.Attachments {
		if a.Content == nil {
			continue
		}
		b64 := base64.StdEncoding.EncodeToString(a.Content)
		ops = append(ops, delta.Op{Op: delta.OpFileWrite, Path: a.HomePath, ContentBase64: &b64})
	}
	ops = append(ops, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "mails", Key: MailKey(m.ExtID),
		Values: map[string]delta.Value{
			"folder_id":  delta.RefTo("folders", map[string]delta.Value{"name": lit(m.Folder)}, "id"),
			"thread_key": lit(thread),
			"from_addr":  lit(m.From),
			"to_addrs":   lit(joinAddrs(m.To)),
			"cc_addrs":   lit(joinAddrs(m.Cc)),
			"subject":    lit(m.Subject),
			"body":       lit(m.Body),
			"sent_at":    lit(m.SentAt.UTC().Format(TimeFormat)),
			"is_read":    lit(m.Read),
			"is_starred": lit(m.Starred),
		}})
	for _, a := range m.Attachments {
		clean, err := world.CleanHomePath(a.HomePath)
		if err != nil {
			clean = a.HomePath // lint rejects nothing here; Check reports it
		}
		ops = append(ops, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "attachments",
			Key:    map[string]delta.Value{"mail_id": delta.RefTo("mails", MailKey(m.ExtID), "id"), "filename": lit(a.filename(clean))},
			Values: map[string]delta.Value{"home_path": lit(clean)}})
	}
	return ops
}
