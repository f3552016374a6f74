package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// mailboxURIPrefix is the start of a folder resource's URI,
// mail://mailbox/{folder}.
const mailboxURIPrefix = "mail://mailbox/"

// MailboxURI returns the resource URI of the folder with that name.
func MailboxURI(folder string) string {
	return mailboxURIPrefix + dbtool.URIEscape(folder)
}

// readResource renders a folder as text, one line per mail, newest first. It
// does not mark mails read.
func (s *Service) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, mailboxURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	folder, err := url.PathUnescape(rest)
	if err != nil || folder == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var text strings.Builder
	err = s.read(ctx, func(q querier) error {
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT id FROM folders WHERE name = ?`, folder).Scan(&id); err != nil {
			return err
		}
		ms, err := scanMails(ctx, q, selectMail+` WHERE m.folder_id = ? ORDER BY m.sent_at DESC, m.ext_id ASC`, id)
		if err != nil {
			return err
		}
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
		return nil
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		s.log.ErrorContext(ctx, "mail resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the mail service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text.String()}}}, nil
}
