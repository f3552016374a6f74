package messages

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

// threadURIPrefix is the start of a thread resource's URI,
// messages://thread/{ext_id}.
const threadURIPrefix = "messages://thread/"

// ThreadURI returns the resource URI of the thread with that ext_id.
func ThreadURI(extID string) string {
	return threadURIPrefix + dbtool.URIEscape(extID)
}

// readResource renders a thread as text, one "seq. sender (sent_at): body"
// line per message. It does not mark messages read.
func (s *Service) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, threadURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	extID, err := url.PathUnescape(rest)
	if err != nil || extID == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var text strings.Builder
	err = s.read(ctx, func(q querier) error {
		var id int64
		var title, kind string
		err := q.QueryRowContext(ctx, `SELECT id, title, kind FROM threads WHERE ext_id = ?`, extID).Scan(&id, &title, &kind)
		if err != nil {
			return err
		}
		names, err := participants(ctx, q, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(&text, "%s (%s, thread %s)\nParticipants: %s\n\n", title, kind, extID, strings.Join(names, ", "))
		rows, err := q.QueryContext(ctx, `SELECT seq, sender, sent_at, body FROM messages WHERE thread_id = ? ORDER BY seq`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq int
			var sender, at, body string
			if err := rows.Scan(&seq, &sender, &at, &body); err != nil {
				return err
			}
			fmt.Fprintf(&text, "%d. %s (%s): %s\n", seq, sender, at, body)
		}
		return rows.Err()
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		s.log.ErrorContext(ctx, "messages resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the messages service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text.String()}}}, nil
}
