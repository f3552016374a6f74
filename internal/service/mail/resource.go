package mail

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// mailboxURIPrefix is the start of a folder resource's URI,
// mail://mailbox/{folder}.
const mailboxURIPrefix = "mail://mailbox/"

// MailboxURI returns the resource URI of the folder with that name.
func MailboxURI(folder string) string {
	return mailboxURIPrefix + dbtool.URIEscape(folder)
}

// renderMailbox renders the folder keys[0] (its name) as text, one line per
// mail, newest first. It does not mark mails read.
func renderMailbox(ctx context.Context, q querier, keys []string) (string, error) {
	folder := keys[0]
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT id FROM folders WHERE name = ?`, folder).Scan(&id); err != nil {
		return "", err
	}
	ms, err := scanMails(ctx, q, selectMail+` WHERE m.folder_id = ? ORDER BY m.sent_at DESC, m.ext_id ASC`, id)
	if err != nil {
		return "", err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "Folder %s: %d mails\n\n", folder, len(ms))
	for _, m := range ms {
		flags := ""
		if !m.read {
			flags += " [unread]"
		}
		if m.starred {
			flags += " [starred]"
		}
		fmt.Fprintf(&text, "%s  %s  %s  %s%s\n", m.extID, m.sent, m.from, oneLine(m.subject), flags)
	}
	return text.String(), nil
}
