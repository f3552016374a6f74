package messages

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit   = 20
	MaxLimit       = 100
	MaxBodyChars   = 10000
	MaxQueryChars  = 200
	MaxNameChars   = 200
	previewChars   = 100
	snippetContext = 60
)

// ListThreadsIn are list_threads' arguments.
type ListThreadsIn struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many threads to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_threads result, to get the next page; omit for the first page"`
}

// ListThreadsOut is list_threads' result.
type ListThreadsOut struct {
	Threads []ThreadSummary `json:"threads" jsonschema:"threads, most recently active first"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// ThreadSummary is one thread of list_threads.
type ThreadSummary struct {
	Thread       string       `json:"thread" jsonschema:"the thread id to pass to read_thread and send_message"`
	Title        string       `json:"title"`
	Kind         string       `json:"kind" jsonschema:"dm (two people) or group"`
	Participants []string     `json:"participants"`
	LastMessage  *MessageStub `json:"last_message,omitempty" jsonschema:"the latest message; absent in a thread without messages"`
	Unread       int          `json:"unread" jsonschema:"messages from others not yet read"`
	Messages     int          `json:"messages" jsonschema:"number of messages in the thread"`
}

// MessageStub is the preview of a thread's latest message.
type MessageStub struct {
	Sender  string `json:"sender"`
	Preview string `json:"preview" jsonschema:"the start of the body"`
	SentAt  string `json:"sent_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
}

// ReadThreadIn are read_thread's arguments.
type ReadThreadIn struct {
	Thread string `json:"thread" jsonschema:"the thread id, as list_threads or search_messages return it (e.g. dm-maya-chen)"`
}

// ReadThreadOut is read_thread's result.
type ReadThreadOut struct {
	Thread       string    `json:"thread"`
	Title        string    `json:"title"`
	Kind         string    `json:"kind"`
	Participants []string  `json:"participants"`
	Messages     []Message `json:"messages" jsonschema:"every message, oldest first"`
}

// Message is one message of read_thread.
type Message struct {
	Seq    int    `json:"seq" jsonschema:"position in the thread, from 1"`
	Sender string `json:"sender"`
	Body   string `json:"body"`
	SentAt string `json:"sent_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	New    bool   `json:"new,omitempty" jsonschema:"true if it was unread before this call"`
}

// SearchMessagesIn are search_messages' arguments.
type SearchMessagesIn struct {
	Query string `json:"query" jsonschema:"text to find in message bodies and sender names; plain text, case-insensitive, not a pattern"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many matches to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchMessagesOut is search_messages' result.
type SearchMessagesOut struct {
	Matches []Match `json:"matches" jsonschema:"matches, newest first"`
	More    bool    `json:"more,omitempty" jsonschema:"true if more messages match than were returned"`
}

// Match is one message found by search_messages.
type Match struct {
	Thread  string `json:"thread" jsonschema:"the thread id, for read_thread"`
	Title   string `json:"title"`
	Seq     int    `json:"seq"`
	Sender  string `json:"sender"`
	Snippet string `json:"snippet" jsonschema:"the part of the body around the match"`
	SentAt  string `json:"sent_at"`
}

// SendMessageIn are send_message's arguments.
type SendMessageIn struct {
	Thread string `json:"thread,omitempty" jsonschema:"the thread id to reply in; give thread or to, not both"`
	To     string `json:"to,omitempty" jsonschema:"a person's name to message directly; reuses your direct thread with them or starts one; give thread or to, not both"`
	Body   string `json:"body" jsonschema:"the message text, 1 to 10000 characters"`
}

// SendMessageOut is send_message's result.
type SendMessageOut struct {
	Thread        string `json:"thread"`
	Title         string `json:"title"`
	Seq           int    `json:"seq"`
	Sender        string `json:"sender"`
	Body          string `json:"body"`
	SentAt        string `json:"sent_at"`
	CreatedThread bool   `json:"created_thread,omitempty" jsonschema:"true if this message started a new direct thread"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_threads",
		Title: "List message threads",
		Description: "Lists your message threads (direct messages and groups), most recently active first, " +
			"with participants, a preview of the latest message and the number of unread messages. " +
			"Use it to find a thread's id before read_thread or send_message. Returns up to limit threads " +
			"and a next_cursor when there are more; pass it back as cursor to see the next page.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, s.listThreads)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "read_thread",
		Title: "Read a thread",
		Description: "Returns every message of one thread, oldest first, with sender, body and time, and marks them read " +
			"(messages unread before this call have new=true). Use it to read a conversation before replying. " +
			"The thread id comes from list_threads or search_messages.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.readThread)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "search_messages",
		Title: "Search messages",
		Description: "Finds messages whose text or sender name contains the query (case-insensitive plain text, not a pattern), " +
			"newest first. Use it to find who said something or which thread discussed a topic. Returns the thread id, " +
			"the message's seq, sender, time and a snippet around the match; read the whole thread with read_thread. " +
			"Does not mark anything read.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, s.searchMessages)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "send_message",
		Title: "Send a message",
		Description: fmt.Sprintf("Sends a message as %s. Give thread to reply in an existing thread (direct or group), "+
			"or to with a person's name to message them directly: your existing direct thread with them is used, "+
			"or a new one is started. Give exactly one of thread and to. Returns the message as stored, with its thread id and seq.", s.self),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.sendMessage)
}

// thread is a row of threads.
type thread struct {
	id                     int64
	extID, title, kind, at string
}

func (s *Service) listThreads(ctx context.Context, in ListThreadsIn) (ListThreadsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListThreadsOut{}, err
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListThreadsOut{}, badCall("cursor %q is not one list_threads returned; pass next_cursor from the previous list_threads result unchanged, or omit cursor to start from the first page", in.Cursor)
		}
		after = &c
	}
	out := ListThreadsOut{Threads: []ThreadSummary{}}
	// One statement gives the page with each thread's participants, counts
	// and latest message (a query per thread costs more than the page).
	// The page size is part of the text, not a parameter: SQLite plans the
	// ORDER BY ... LIMIT of the page with the bound value and re-prepares
	// the statement whenever it changes (dbtool.CheckLimit bounds it to 1..MaxLimit).
	query := `WITH page AS (
  SELECT id, ext_id, title, kind, active_at FROM (
    SELECT t.id, t.ext_id, t.title, t.kind,
      COALESCE((SELECT m.sent_at FROM messages m WHERE m.thread_id = t.id ORDER BY m.seq DESC LIMIT 1), t.created_at) AS active_at
    FROM threads t)`
	args := []any{}
	if after != nil {
		query += `
  WHERE active_at < ? OR (active_at = ? AND ext_id > ?)`
		args = append(args, after.activeAt, after.activeAt, after.thread)
	}
	query += `
  ORDER BY active_at DESC, ext_id ASC LIMIT ` + strconv.Itoa(limit+1) + `)
SELECT p.id, p.ext_id, p.title, p.kind, p.active_at,
  (SELECT json_group_array(name ORDER BY id) FROM participants WHERE thread_id = p.id),
  (SELECT COUNT(*) FROM messages WHERE thread_id = p.id),
  (SELECT COUNT(*) FROM messages WHERE thread_id = p.id AND is_read = 0 AND sender <> ?),
  l.sender, l.body, l.sent_at
FROM page p
LEFT JOIN messages l ON l.thread_id = p.id AND l.seq = (SELECT MAX(seq) FROM messages WHERE thread_id = p.id)
ORDER BY p.active_at DESC, p.ext_id ASC`
	args = append(args, s.self)
	err = s.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("list threads: %w", err)
		}
		defer rows.Close()
		var last thread
		for rows.Next() {
			var t thread
			var people string
			var sum ThreadSummary
			var sender, body, sentAt sql.NullString
			if err := rows.Scan(&t.id, &t.extID, &t.title, &t.kind, &t.at, &people, &sum.Messages, &sum.Unread, &sender, &body, &sentAt); err != nil {
				return fmt.Errorf("list threads: %w", err)
			}
			if len(out.Threads) == limit {
				out.NextCursor = cursor{activeAt: last.at, thread: last.extID}.String()
				break
			}
			last = t
			sum.Thread, sum.Title, sum.Kind = t.extID, t.title, t.kind
			if err := json.Unmarshal([]byte(people), &sum.Participants); err != nil {
				return fmt.Errorf("participants of %s: %w", t.extID, err)
			}
			if sender.Valid {
				sum.LastMessage = &MessageStub{Sender: sender.String, Preview: preview(body.String, previewChars), SentAt: sentAt.String}
			}
			out.Threads = append(out.Threads, sum)
		}
		return rows.Err()
	})
	return out, err
}

func participants(ctx context.Context, q querier, threadID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM participants WHERE thread_id = ? ORDER BY id`, threadID)
	if err != nil {
		return nil, fmt.Errorf("participants: %w", err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("participants: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("participants: %w", err)
	}
	return names, nil
}

// findThread returns the thread with that ext_id, or a tool error that names
// the way to find one (and a close match when there is one).
func findThread(ctx context.Context, q querier, extID string) (thread, error) {
	if strings.TrimSpace(extID) == "" {
		return thread{}, badCall("thread is required: pass a thread id from list_threads (the \"thread\" field)")
	}
	var t thread
	err := q.QueryRowContext(ctx, `SELECT id, ext_id, title, kind, created_at FROM threads WHERE ext_id = ?`, extID).Scan(&t.id, &t.extID, &t.title, &t.kind, &t.at)
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return thread{}, fmt.Errorf("find thread: %w", err)
	}
	var near, nearTitle string
	err = q.QueryRowContext(ctx, `SELECT ext_id, title FROM threads WHERE lower(ext_id) = lower(?1) OR lower(title) = lower(?1) ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &nearTitle)
	switch {
	case err == nil:
		return thread{}, badCall("no thread %q; did you mean thread %q (%s)? Thread ids are exact; call list_threads to see them", extID, near, nearTitle)
	case errors.Is(err, sql.ErrNoRows):
		return thread{}, badCall("no thread %q; call list_threads to see the thread ids (the \"thread\" field), or search_messages to find a thread by its content", extID)
	default:
		return thread{}, fmt.Errorf("find thread: %w", err)
	}
}

func (s *Service) readThread(ctx context.Context, in ReadThreadIn) (ReadThreadOut, error) {
	var out ReadThreadOut
	err := s.write(ctx, func(q querier) error {
		t, err := findThread(ctx, q, in.Thread)
		if err != nil {
			return err
		}
		out = ReadThreadOut{Thread: t.extID, Title: t.title, Kind: t.kind, Messages: []Message{}}
		if out.Participants, err = participants(ctx, q, t.id); err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, `SELECT seq, sender, body, sent_at, is_read = 0 AND sender <> ? FROM messages WHERE thread_id = ? ORDER BY seq`, s.self, t.id)
		if err != nil {
			return fmt.Errorf("read thread: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var m Message
			if err := rows.Scan(&m.Seq, &m.Sender, &m.Body, &m.SentAt, &m.New); err != nil {
				return fmt.Errorf("read thread: %w", err)
			}
			out.Messages = append(out.Messages, m)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read thread: %w", err)
		}
		rows.Close()
		if _, err := q.ExecContext(ctx, `UPDATE messages SET is_read = 1 WHERE thread_id = ? AND is_read = 0`, t.id); err != nil {
			return fmt.Errorf("mark read: %w", err)
		}
		return nil
	})
	return out, err
}

func (s *Service) searchMessages(ctx context.Context, in SearchMessagesIn) (SearchMessagesOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchMessagesOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch {
	case query == "":
		return SearchMessagesOut{}, badCall("query is empty; pass a word or phrase to look for, e.g. \"dinner\"")
	case utf8.RuneCountInString(query) > MaxQueryChars:
		return SearchMessagesOut{}, badCall("query is %d characters; use at most %d (a distinctive word or phrase)", utf8.RuneCountInString(query), MaxQueryChars)
	}
	out := SearchMessagesOut{Matches: []Match{}}
	err = s.read(ctx, func(q querier) error {
		// The query is bound as a parameter; instr (not LIKE) so that % and _
		// are plain characters. lower() folds ASCII letters only.
		rows, err := q.QueryContext(ctx, `SELECT t.ext_id, t.title, m.seq, m.sender, m.body, m.sent_at
FROM messages m JOIN threads t ON t.id = m.thread_id
WHERE instr(lower(m.body), lower(?1)) > 0 OR instr(lower(m.sender), lower(?1)) > 0
ORDER BY m.sent_at DESC, t.ext_id ASC, m.seq DESC
LIMIT ?2`, query, limit+1)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var m Match
			var body string
			if err := rows.Scan(&m.Thread, &m.Title, &m.Seq, &m.Sender, &body, &m.SentAt); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			if len(out.Matches) == limit {
				out.More = true
				break
			}
			m.Snippet = snippet(body, query, snippetContext)
			out.Matches = append(out.Matches, m)
		}
		return rows.Err()
	})
	return out, err
}

func (s *Service) sendMessage(ctx context.Context, in SendMessageIn) (SendMessageOut, error) {
	to := strings.TrimSpace(in.To)
	switch n := utf8.RuneCountInString(in.Body); {
	case in.Thread != "" && in.To != "":
		return SendMessageOut{}, badCall("give either thread (to reply in an existing thread) or to (to message a person directly), not both")
	case in.Thread == "" && to == "":
		return SendMessageOut{}, badCall("give thread (a thread id from list_threads) to reply in a thread, or to (a person's name) to message someone directly")
	case strings.TrimSpace(in.Body) == "":
		return SendMessageOut{}, badCall("body is empty; pass the text of the message")
	case n > MaxBodyChars:
		return SendMessageOut{}, badCall("body is %d characters; the limit is %d. Shorten it or split it into several messages", n, MaxBodyChars)
	case utf8.RuneCountInString(to) > MaxNameChars:
		return SendMessageOut{}, badCall("to is %d characters; pass a person's name (at most %d characters)", utf8.RuneCountInString(to), MaxNameChars)
	case to != "" && strings.EqualFold(to, s.self):
		return SendMessageOut{}, badCall("to is %q, which is you; pass the name of the person to message", to)
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	out := SendMessageOut{Sender: s.self, Body: in.Body, SentAt: now}
	err := s.write(ctx, func(q querier) error {
		var t thread
		var err error
		if in.Thread != "" {
			t, err = findThread(ctx, q, in.Thread)
		} else {
			t, out.CreatedThread, err = s.directThread(ctx, q, to, now)
		}
		if err != nil {
			return err
		}
		out.Thread, out.Title = t.extID, t.title
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE thread_id = ?`, t.id).Scan(&out.Seq); err != nil {
			return fmt.Errorf("next seq: %w", err)
		}
		_, err = q.ExecContext(ctx, `INSERT INTO messages (id, thread_id, seq, sender, body, sent_at, is_read)
VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM messages), ?, ?, ?, ?, ?, 1)`, t.id, out.Seq, s.self, in.Body, now)
		if err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
		return nil
	})
	if err != nil {
		return SendMessageOut{}, err
	}
	return out, nil
}

// directThread returns the persona's direct thread with name: the first
// (lowest id) dm thread that has a participant of that name (ASCII case
// folded), else a new one with ext_id dm-<slug of name> (suffixed -2, -3...
// if that id is taken by another thread).
func (s *Service) directThread(ctx context.Context, q querier, name, now string) (thread, bool, error) {
	var t thread
	err := q.QueryRowContext(ctx, `SELECT t.id, t.ext_id, t.title, t.kind, t.created_at
FROM threads t JOIN participants p ON p.thread_id = t.id
WHERE t.kind = 'dm' AND lower(p.name) = lower(?) AND p.name <> ?
ORDER BY t.id LIMIT 1`, name, s.self).Scan(&t.id, &t.extID, &t.title, &t.kind, &t.at)
	if err == nil {
		return t, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return thread{}, false, fmt.Errorf("find direct thread: %w", err)
	}
	base := "dm-" + slug(name)
	t = thread{extID: base, title: name, kind: "dm", at: now}
	for i := 2; ; i++ {
		var taken bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE ext_id = ?)`, t.extID).Scan(&taken); err != nil {
			return thread{}, false, fmt.Errorf("new direct thread: %w", err)
		}
		if !taken {
			break
		}
		t.extID = fmt.Sprintf("%s-%d", base, i)
	}
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM threads`).Scan(&t.id); err != nil {
		return thread{}, false, fmt.Errorf("new direct thread: %w", err)
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO threads (id, ext_id, title, kind, created_at) VALUES (?, ?, ?, 'dm', ?)`, t.id, t.extID, t.title, now); err != nil {
		return thread{}, false, fmt.Errorf("new direct thread: %w", err)
	}
	for _, p := range []string{s.self, name} {
		if _, err := q.ExecContext(ctx, `INSERT INTO participants (id, thread_id, name, role) VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM participants), ?, ?, '')`, t.id, p); err != nil {
			return thread{}, false, fmt.Errorf("new direct thread: %w", err)
		}
	}
	return t, true, nil
}
