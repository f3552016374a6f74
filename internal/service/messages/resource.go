package messages

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// threadURIPrefix is the start of a thread resource's URI,
// messages://thread/{ext_id}.
const threadURIPrefix = "messages://thread/"

// ThreadURI returns the resource URI of the thread with that ext_id.
func ThreadURI(extID string) string {
	return threadURIPrefix + dbtool.URIEscape(extID)
}

// renderThread renders the thread keys[0] (its ext_id) as text, one
// "seq. sender (sent_at): body" line per message. It does not mark messages
// read.
func renderThread(ctx context.Context, q querier, keys []string) (string, error) {
	extID := keys[0]
	var id int64
	var title, kind string
	if err := q.QueryRowContext(ctx, `SELECT id, title, kind FROM threads WHERE ext_id = ?`, extID).Scan(&id, &title, &kind); err != nil {
		return "", err
	}
	names, err := participants(ctx, q, id)
	if err != nil {
		return "", err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%s (%s, thread %s)\nParticipants: %s\n\n", title, kind, extID, strings.Join(names, ", "))
	rows, err := q.QueryContext(ctx, `SELECT seq, sender, sent_at, body FROM messages WHERE thread_id = ? ORDER BY seq`, id)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int
		var sender, at, body string
		if err := rows.Scan(&seq, &sender, &at, &body); err != nil {
			return "", err
		}
		fmt.Fprintf(&text, "%d. %s (%s): %s\n", seq, sender, at, body)
	}
	return text.String(), rows.Err()
}
