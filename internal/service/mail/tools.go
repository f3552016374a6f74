package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit    = 20
	MaxLimit        = 100
	MaxBodyChars    = 50000
	MaxSubjectChars = 500
	MaxQueryChars   = 200
	MaxRecipients   = 50
	MaxAttachments  = 10
	MaxAddressChars = 254
	MaxPathChars    = 1024
	MaxNameChars    = 200 // mail ids, thread keys and folder names
	previewChars    = 100
	snippetContext  = 60
)

// DateFormat is the layout of search_mails' since and until.
const DateFormat = "2006-01-02"

// ListFoldersIn are list_folders' arguments (none).
type ListFoldersIn struct{}

// ListFoldersOut is list_folders' result.
type ListFoldersOut struct {
	Folders []Folder `json:"folders" jsonschema:"every folder, standard ones first"`
}

// Folder is one folder of list_folders.
type Folder struct {
	Name   string `json:"name" jsonschema:"the folder name to pass to list_mails and move_mail"`
	Total  int    `json:"total" jsonschema:"number of mails in the folder"`
	Unread int    `json:"unread" jsonschema:"mails not yet read"`
}

// ListMailsIn are list_mails' arguments.
type ListMailsIn struct {
	Folder     string `json:"folder,omitempty" jsonschema:"the folder name from list_folders (e.g. inbox, sent, archive); omit for inbox"`
	Limit      int    `json:"limit,omitempty" jsonschema:"how many mails to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_mails result for the same folder, to get the next page; omit for the first page"`
	UnreadOnly bool   `json:"unread_only,omitempty" jsonschema:"true to list only unread mails"`
}

// ListMailsOut is list_mails' result.
type ListMailsOut struct {
	Folder string        `json:"folder"`
	Mails  []MailSummary `json:"mails" jsonschema:"mails, newest first"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// MailSummary is one mail of list_mails.
type MailSummary struct {
	Mail        string   `json:"mail" jsonschema:"the mail id to pass to read_mail, move_mail, star_mail and delete_mail"`
	ThreadKey   string   `json:"thread_key" jsonschema:"the conversation id to pass to read_thread"`
	From        string   `json:"from"`
	To          []string `json:"to"`
	Subject     string   `json:"subject"`
	Preview     string   `json:"preview" jsonschema:"the start of the body"`
	SentAt      string   `json:"sent_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	Read        bool     `json:"read"`
	Starred     bool     `json:"starred"`
	Attachments int      `json:"attachments" jsonschema:"number of attached files"`
}

// SearchMailsIn are search_mails' arguments.
type SearchMailsIn struct {
	Query string `json:"query" jsonschema:"a word or phrase to find in the subject, body or sender address (case-insensitive plain text)"`
	Since string `json:"since,omitempty" jsonschema:"only mails sent on or after this day, YYYY-MM-DD (UTC)"`
	Until string `json:"until,omitempty" jsonschema:"only mails sent on or before this day, YYYY-MM-DD (UTC)"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many matches to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchMailsOut is search_mails' result.
type SearchMailsOut struct {
	Matches []Match `json:"matches" jsonschema:"matching mails, newest first"`
	More    bool    `json:"more,omitempty" jsonschema:"true if more mails match than were returned"`
}

// Match is one mail of search_mails.
type Match struct {
	Mail      string `json:"mail"`
	Folder    string `json:"folder"`
	ThreadKey string `json:"thread_key"`
	From      string `json:"from"`
	Subject   string `json:"subject"`
	Snippet   string `json:"snippet" jsonschema:"the body around the first match"`
	SentAt    string `json:"sent_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
}

// ReadMailIn are read_mail's arguments.
type ReadMailIn struct {
	Mail string `json:"mail" jsonschema:"the mail id, as list_mails or search_mails return it (e.g. m-000123)"`
}

// MailView is one whole mail: read_mail's and send_mail's result and an
// entry of read_thread.
type MailView struct {
	Mail        string           `json:"mail"`
	Folder      string           `json:"folder"`
	ThreadKey   string           `json:"thread_key"`
	From        string           `json:"from"`
	To          []string         `json:"to"`
	Cc          []string         `json:"cc"`
	Subject     string           `json:"subject"`
	Body        string           `json:"body"`
	SentAt      string           `json:"sent_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	Read        bool             `json:"read"`
	Starred     bool             `json:"starred"`
	New         bool             `json:"new,omitempty" jsonschema:"true if it was unread before this call"`
	Attachments []AttachmentView `json:"attachments"`
}

// AttachmentView is one attached file.
type AttachmentView struct {
	Filename string `json:"filename"`
	HomePath string `json:"home_path" jsonschema:"where the file is, relative to your home directory"`
}

// ReadThreadIn are read_thread's arguments.
type ReadThreadIn struct {
	ThreadKey string `json:"thread_key" jsonschema:"the conversation id, the thread_key field of list_mails, search_mails or read_mail"`
}

// ReadThreadOut is read_thread's result.
type ReadThreadOut struct {
	ThreadKey string     `json:"thread_key"`
	Mails     []MailView `json:"mails" jsonschema:"every mail of the conversation in any folder, oldest first"`
}

// SendMailIn are send_mail's arguments.
type SendMailIn struct {
	To          []string `json:"to,omitempty" jsonschema:"recipient addresses, e.g. [\"maya@example.com\"]; may be omitted when replying (then the sender of the mail replied to)"`
	Cc          []string `json:"cc,omitempty" jsonschema:"addresses to copy"`
	Subject     string   `json:"subject,omitempty" jsonschema:"one line; may be omitted when replying (then Re: and the subject of the mail replied to)"`
	Body        string   `json:"body" jsonschema:"the text of the mail"`
	Attachments []string `json:"attachments,omitempty" jsonschema:"files to attach, as paths relative to your home directory, e.g. [\"docs/report.pdf\"]"`
	InReplyTo   string   `json:"in_reply_to,omitempty" jsonschema:"the mail id this mail answers; the reply joins its conversation"`
}

// MoveMailIn are move_mail's arguments.
type MoveMailIn struct {
	Mail   string `json:"mail" jsonschema:"the mail id"`
	Folder string `json:"folder" jsonschema:"the destination folder name from list_folders"`
}

// MoveMailOut is move_mail's result.
type MoveMailOut struct {
	Mail   string `json:"mail"`
	From   string `json:"from_folder" jsonschema:"the folder the mail was in"`
	Folder string `json:"folder" jsonschema:"the folder the mail is in now"`
}

// StarMailIn are star_mail's arguments.
type StarMailIn struct {
	Mail    string `json:"mail" jsonschema:"the mail id"`
	Starred bool   `json:"starred" jsonschema:"true to star the mail, false to unstar it"`
}

// StarMailOut is star_mail's result.
type StarMailOut struct {
	Mail    string `json:"mail"`
	Starred bool   `json:"starred"`
}

// DeleteMailIn are delete_mail's arguments.
type DeleteMailIn struct {
	Mail string `json:"mail" jsonschema:"the mail id"`
}

// DeleteMailOut is delete_mail's result.
type DeleteMailOut struct {
	Mail    string `json:"mail"`
	Deleted bool   `json:"deleted" jsonschema:"true if the mail was in trash and is now gone for good; false if it was moved to trash"`
	Folder  string `json:"folder,omitempty" jsonschema:"trash, when the mail was moved there"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "list_folders",
		Title:       "List mail folders",
		Description: "Lists your mail folders (inbox, sent, archive, drafts, trash and your own) with the number of mails and unread mails in each.",
		Annotations: readOnly,
	}, s.listFolders)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_mails",
		Title: "List mails",
		Description: "Lists the mails of one folder (inbox when omitted), newest first, with sender, subject, a preview and read/starred flags. " +
			"Use it to find a mail id before read_mail. Returns up to limit mails and a next_cursor when there are more; " +
			"pass it back as cursor to see the next page. Does not mark anything read.",
		Annotations: readOnly,
	}, s.listMails)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "search_mails",
		Title: "Search mails",
		Description: "Finds mails in every folder whose subject, body or sender address contains the query (case-insensitive plain text, " +
			"not a pattern), optionally between two days, newest first. Returns the mail id, folder, thread key and a snippet; " +
			"read the whole mail with read_mail. Does not mark anything read.",
		Annotations: readOnly,
	}, s.searchMails)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "read_mail",
		Title: "Read a mail",
		Description: "Returns one whole mail (sender, recipients, subject, body, time) with its attachments as paths relative to your " +
			"home directory, and marks it read (new=true if it was unread).",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.readMail)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "read_thread",
		Title: "Read a conversation",
		Description: "Returns every mail of one conversation (thread_key), in any folder, oldest first, with attachments, " +
			"and marks them read. Use it to read the history before replying.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.readThread)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "send_mail",
		Title: "Send a mail",
		Description: fmt.Sprintf("Sends a mail from %s and stores it in the sent folder. Give to, subject and body; "+
			"attachments are files of your home directory by relative path. To reply, give in_reply_to with the mail id: "+
			"the reply joins that conversation, and to and subject default to the sender and \"Re: \" + subject. "+
			"Returns the mail as stored, with its id.", s.selfAddr),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.sendMail)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "move_mail",
		Title:       "Move a mail",
		Description: "Moves a mail to another folder (a name from list_folders), e.g. to archive it.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.moveMail)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "star_mail",
		Title:       "Star or unstar a mail",
		Description: "Sets or clears the star of a mail.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.starMail)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "delete_mail",
		Title: "Delete a mail",
		Description: "Moves a mail to trash. A mail already in trash is deleted for good, with its attachment records " +
			"(the files in your home directory stay).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}, s.deleteMail)
}

// mailRow is a row of mails with its folder's name.
type mailRow struct {
	id                                                          int64
	extID, folder, threadKey, from, to, cc, subject, body, sent string
	read, starred                                               bool
}

const selectMail = `SELECT m.id, m.ext_id, f.name, m.thread_key, m.from_addr, m.to_addrs, m.cc_addrs, m.subject, m.body, m.sent_at, m.is_read, m.is_starred
FROM mails m JOIN folders f ON f.id = m.folder_id`

func scanMails(ctx context.Context, q querier, query string, args ...any) ([]mailRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query mails: %w", err)
	}
	defer rows.Close()
	var ms []mailRow
	for rows.Next() {
		var m mailRow
		if err := rows.Scan(&m.id, &m.extID, &m.folder, &m.threadKey, &m.from, &m.to, &m.cc, &m.subject, &m.body, &m.sent, &m.read, &m.starred); err != nil {
			return nil, fmt.Errorf("query mails: %w", err)
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query mails: %w", err)
	}
	return ms, nil
}

func attachmentsOf(ctx context.Context, q querier, mailID int64) ([]AttachmentView, error) {
	rows, err := q.QueryContext(ctx, `SELECT filename, home_path FROM attachments WHERE mail_id = ? ORDER BY id`, mailID)
	if err != nil {
		return nil, fmt.Errorf("attachments: %w", err)
	}
	defer rows.Close()
	out := []AttachmentView{}
	for rows.Next() {
		var a AttachmentView
		if err := rows.Scan(&a.Filename, &a.HomePath); err != nil {
			return nil, fmt.Errorf("attachments: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attachments: %w", err)
	}
	return out, nil
}

// view returns the whole mail m with its attachments.
func view(ctx context.Context, q querier, m mailRow) (MailView, error) {
	v := MailView{Mail: m.extID, Folder: m.folder, ThreadKey: m.threadKey, From: m.from, To: splitAddrs(m.to), Cc: splitAddrs(m.cc),
		Subject: m.subject, Body: m.body, SentAt: m.sent, Read: m.read, Starred: m.starred}
	var err error
	v.Attachments, err = attachmentsOf(ctx, q, m.id)
	return v, err
}

// checkName rejects an empty or overlong id-like argument.
func checkName(field, value, hint string) error {
	switch n := utf8.RuneCountInString(value); {
	case strings.TrimSpace(value) == "":
		return badCall("%s is required: %s", field, hint)
	case n > MaxNameChars:
		return badCall("%s is %d characters, more than any %s (at most %d): %s", field, n, field, MaxNameChars, hint)
	}
	return nil
}

const mailHint = "pass a mail id from list_mails or search_mails (the \"mail\" field, e.g. m-000123)"

// findMail returns the mail with that ext_id, or a tool error that names the
// way to find one (and a close match when there is one).
func findMail(ctx context.Context, q querier, extID string) (mailRow, error) {
	if err := checkName("mail", extID, mailHint); err != nil {
		return mailRow{}, err
	}
	ms, err := scanMails(ctx, q, selectMail+` WHERE m.ext_id = ?`, extID)
	if err != nil {
		return mailRow{}, err
	}
	if len(ms) == 1 {
		return ms[0], nil
	}
	var near, subject string
	err = q.QueryRowContext(ctx, `SELECT ext_id, subject FROM mails WHERE lower(ext_id) = lower(?1) OR ext_id = 'm-' || ?1 ORDER BY id LIMIT 1`,
		strings.TrimSpace(extID)).Scan(&near, &subject)
	switch {
	case err == nil:
		return mailRow{}, badCall("no mail %q; did you mean mail %q (%q)? Mail ids are exact; call list_mails or search_mails to see them", extID, near, subject)
	case errors.Is(err, sql.ErrNoRows):
		return mailRow{}, badCall("no mail %q; %s", extID, mailHint)
	default:
		return mailRow{}, fmt.Errorf("find mail: %w", err)
	}
}

// findFolder returns the id of the folder with that name, or a tool error
// listing the folders.
func findFolder(ctx context.Context, q querier, name string) (int64, error) {
	if err := checkName("folder", name, "pass a folder name from list_folders, e.g. \"archive\""); err != nil {
		return 0, err
	}
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM folders WHERE name = ?`, name).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("find folder: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT name FROM folders ORDER BY id`)
	if err != nil {
		return 0, fmt.Errorf("find folder: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("find folder: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("find folder: %w", err)
	}
	return 0, badCall("no folder %q; the folders are %s (names are exact; list_folders shows them)", name, strings.Join(names, ", "))
}

func (s *Service) listFolders(ctx context.Context, _ ListFoldersIn) (ListFoldersOut, error) {
	out := ListFoldersOut{Folders: []Folder{}}
	err := s.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT f.name, COUNT(m.id), COALESCE(SUM(m.is_read = 0), 0)
FROM folders f LEFT JOIN mails m ON m.folder_id = f.id GROUP BY f.id ORDER BY f.id`)
		if err != nil {
			return fmt.Errorf("list folders: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var f Folder
			if err := rows.Scan(&f.Name, &f.Total, &f.Unread); err != nil {
				return fmt.Errorf("list folders: %w", err)
			}
			out.Folders = append(out.Folders, f)
		}
		return rows.Err()
	})
	return out, err
}

func (s *Service) listMails(ctx context.Context, in ListMailsIn) (ListMailsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListMailsOut{}, err
	}
	folder := in.Folder
	if folder == "" {
		folder = Inbox
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok || c.folder != folder {
			return ListMailsOut{}, badCall("cursor %q is not one list_mails returned for folder %q; pass next_cursor from the previous list_mails result of the same folder unchanged, or omit cursor to start from the first page", in.Cursor, folder)
		}
		after = &c
	}
	out := ListMailsOut{Folder: folder, Mails: []MailSummary{}}
	err = s.read(ctx, func(q querier) error {
		fid, err := findFolder(ctx, q, folder)
		if err != nil {
			return err
		}
		query := selectMail + ` WHERE m.folder_id = ?`
		args := []any{fid}
		if in.UnreadOnly {
			query += ` AND m.is_read = 0`
		}
		if after != nil {
			query += ` AND (m.sent_at < ? OR (m.sent_at = ? AND m.ext_id > ?))`
			args = append(args, after.sentAt, after.sentAt, after.mail)
		}
		query += ` ORDER BY m.sent_at DESC, m.ext_id ASC LIMIT ?`
		args = append(args, limit+1)
		ms, err := scanMails(ctx, q, query, args...)
		if err != nil {
			return err
		}
		if len(ms) > limit {
			ms = ms[:limit]
			last := ms[limit-1]
			out.NextCursor = cursor{folder: folder, sentAt: last.sent, mail: last.extID}.String()
		}
		for _, m := range ms {
			sum := MailSummary{Mail: m.extID, ThreadKey: m.threadKey, From: m.from, To: splitAddrs(m.to), Subject: m.subject,
				Preview: preview(m.body, previewChars), SentAt: m.sent, Read: m.read, Starred: m.starred}
			if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM attachments WHERE mail_id = ?`, m.id).Scan(&sum.Attachments); err != nil {
				return fmt.Errorf("count attachments: %w", err)
			}
			out.Mails = append(out.Mails, sum)
		}
		return nil
	})
	return out, err
}

// parseDay checks a YYYY-MM-DD argument and returns it.
func parseDay(field, value string) (time.Time, error) {
	d, err := time.Parse(DateFormat, value)
	if err != nil {
		return time.Time{}, badCall("%s %q is not a date; use YYYY-MM-DD, e.g. \"2026-02-28\"", field, value)
	}
	return d, nil
}

func (s *Service) searchMails(ctx context.Context, in SearchMailsIn) (SearchMailsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchMailsOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch n := utf8.RuneCountInString(query); {
	case query == "":
		return SearchMailsOut{}, badCall("query is empty; pass a word or phrase to look for, e.g. \"invoice\"")
	case n > MaxQueryChars:
		return SearchMailsOut{}, badCall("query is %d characters; use at most %d (a distinctive word or phrase)", n, MaxQueryChars)
	}
	// since and until bound sent_at as text: [since 00:00:00, until+1 00:00:00).
	var from, to string
	if in.Since != "" {
		d, err := parseDay("since", in.Since)
		if err != nil {
			return SearchMailsOut{}, err
		}
		from = d.Format(DateFormat)
	}
	if in.Until != "" {
		d, err := parseDay("until", in.Until)
		if err != nil {
			return SearchMailsOut{}, err
		}
		if from != "" && d.Format(DateFormat) < from {
			return SearchMailsOut{}, badCall("until %s is before since %s; swap them or omit one", in.Until, in.Since)
		}
		to = d.AddDate(0, 0, 1).Format(DateFormat)
	}
	out := SearchMailsOut{Matches: []Match{}}
	err = s.read(ctx, func(q querier) error {
		// The query is bound as a parameter; instr (not LIKE) so that % and _
		// are plain characters. lower() folds ASCII letters only.
		ms, err := scanMails(ctx, q, selectMail+`
WHERE (instr(lower(m.subject), lower(?1)) > 0 OR instr(lower(m.body), lower(?1)) > 0 OR instr(lower(m.from_addr), lower(?1)) > 0)
  AND (?2 = '' OR m.sent_at >= ?2) AND (?3 = '' OR m.sent_at < ?3)
ORDER BY m.sent_at DESC, m.ext_id ASC
LIMIT ?4`, query, from, to, limit+1)
		if err != nil {
			return err
		}
		if len(ms) > limit {
			ms, out.More = ms[:limit], true
		}
		for _, m := range ms {
			out.Matches = append(out.Matches, Match{Mail: m.extID, Folder: m.folder, ThreadKey: m.threadKey, From: m.from,
				Subject: m.subject, Snippet: snippet(m.body, query, snippetContext), SentAt: m.sent})
		}
		return nil
	})
	return out, err
}

func (s *Service) readMail(ctx context.Context, in ReadMailIn) (MailView, error) {
	var out MailView
	err := s.write(ctx, func(q querier) error {
		m, err := findMail(ctx, q, in.Mail)
		if err != nil {
			return err
		}
		if out, err = view(ctx, q, m); err != nil {
			return err
		}
		out.New, out.Read = !m.read, true
		if _, err := q.ExecContext(ctx, `UPDATE mails SET is_read = 1 WHERE id = ? AND is_read <> 1`, m.id); err != nil {
			return fmt.Errorf("mark read: %w", err)
		}
		return nil
	})
	return out, err
}

func (s *Service) readThread(ctx context.Context, in ReadThreadIn) (ReadThreadOut, error) {
	hint := "pass the thread_key field of a mail from list_mails, search_mails or read_mail"
	if err := checkName("thread_key", in.ThreadKey, hint); err != nil {
		return ReadThreadOut{}, err
	}
	out := ReadThreadOut{ThreadKey: in.ThreadKey, Mails: []MailView{}}
	err := s.write(ctx, func(q querier) error {
		ms, err := scanMails(ctx, q, selectMail+` WHERE m.thread_key = ? ORDER BY m.sent_at, m.ext_id`, in.ThreadKey)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return badCall("no conversation with thread_key %q; %s (thread keys are exact)", in.ThreadKey, hint)
		}
		for _, m := range ms {
			v, err := view(ctx, q, m)
			if err != nil {
				return err
			}
			v.New, v.Read = !m.read, true
			out.Mails = append(out.Mails, v)
		}
		if _, err := q.ExecContext(ctx, `UPDATE mails SET is_read = 1 WHERE thread_key = ? AND is_read <> 1`, in.ThreadKey); err != nil {
			return fmt.Errorf("mark read: %w", err)
		}
		return nil
	})
	return out, err
}

// checkAddrs validates a list argument of addresses.
func checkAddrs(field string, addrs []string) error {
	if len(addrs) > MaxRecipients {
		return badCall("%s has %d addresses; at most %d per mail", field, len(addrs), MaxRecipients)
	}
	for _, a := range addrs {
		if msg := checkAddress(a); msg != "" {
			return badCall("%s: %s", field, msg)
		}
	}
	return nil
}

func (s *Service) sendMail(ctx context.Context, in SendMailIn) (MailView, error) {
	subject := strings.TrimSpace(in.Subject)
	switch n := utf8.RuneCountInString(in.Body); {
	case strings.TrimSpace(in.Body) == "":
		return MailView{}, badCall("body is empty; pass the text of the mail")
	case n > MaxBodyChars:
		return MailView{}, badCall("body is %d characters; the limit is %d. Shorten it, or put the text in a file of your home directory and attach it", n, MaxBodyChars)
	case utf8.RuneCountInString(subject) > MaxSubjectChars:
		return MailView{}, badCall("subject is %d characters; use at most %d", utf8.RuneCountInString(subject), MaxSubjectChars)
	case strings.ContainsAny(subject, "\r\n"):
		return MailView{}, badCall("subject has a line break; a subject is one line")
	case in.InReplyTo == "" && len(in.To) == 0:
		return MailView{}, badCall("to is empty; pass at least one recipient address, e.g. [\"maya@example.com\"] (or in_reply_to to answer a mail)")
	case in.InReplyTo == "" && subject == "":
		return MailView{}, badCall("subject is empty; pass a one-line subject (or in_reply_to to answer a mail)")
	case len(in.Attachments) > MaxAttachments:
		return MailView{}, badCall("%d attachments; at most %d per mail", len(in.Attachments), MaxAttachments)
	}
	if err := checkAddrs("to", in.To); err != nil {
		return MailView{}, err
	}
	if err := checkAddrs("cc", in.Cc); err != nil {
		return MailView{}, err
	}
	atts, err := s.checkAttachments(in.Attachments)
	if err != nil {
		return MailView{}, err
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out MailView
	err = s.write(ctx, func(q querier) error {
		to := in.To
		threadKey := ""
		if in.InReplyTo != "" {
			parent, err := findMail(ctx, q, in.InReplyTo)
			if err != nil {
				return err
			}
			threadKey = parent.threadKey
			if subject == "" {
				subject = parent.subject
				if !strings.HasPrefix(strings.ToLower(subject), "re:") {
					subject = "Re: " + subject
				}
			}
			if len(to) == 0 {
				to = []string{parent.from}
				if strings.EqualFold(parent.from, s.selfAddr) {
					to = splitAddrs(parent.to)
				}
			}
		}
		var folderID int64
		if err := q.QueryRowContext(ctx, `SELECT id FROM folders WHERE name = ?`, Sent).Scan(&folderID); err != nil {
			return fmt.Errorf("sent folder: %w", err)
		}
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM mails`).Scan(&id); err != nil {
			return fmt.Errorf("next mail id: %w", err)
		}
		extID, err := freeExtID(ctx, q, id)
		if err != nil {
			return err
		}
		if threadKey == "" {
			threadKey = extID
		}
		_, err = q.ExecContext(ctx, `INSERT INTO mails (id, ext_id, folder_id, thread_key, from_addr, to_addrs, cc_addrs, subject, body, sent_at, is_read, is_starred)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0)`, id, extID, folderID, threadKey, s.selfAddr, joinAddrs(to), joinAddrs(in.Cc), subject, in.Body, now)
		if err != nil {
			return fmt.Errorf("insert mail: %w", err)
		}
		for _, a := range atts {
			if _, err := q.ExecContext(ctx, `INSERT INTO attachments (id, mail_id, filename, home_path)
VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM attachments), ?, ?, ?)`, id, a.Filename, a.HomePath); err != nil {
				return fmt.Errorf("insert attachment: %w", err)
			}
		}
		out = MailView{Mail: extID, Folder: Sent, ThreadKey: threadKey, From: s.selfAddr, To: splitAddrs(joinAddrs(to)), Cc: splitAddrs(joinAddrs(in.Cc)),
			Subject: subject, Body: in.Body, SentAt: now, Read: true, Attachments: atts}
		return nil
	})
	if err != nil {
		return MailView{}, err
	}
	return out, nil
}

// freeExtID returns m-NNNNNN for the first n at or after id whose ext_id is
// not taken (synthesized mails may use any ext_id).
func freeExtID(ctx context.Context, q querier, id int64) (string, error) {
	for n := id; ; n++ {
		ext := fmt.Sprintf("m-%06d", n)
		var taken bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM mails WHERE ext_id = ?)`, ext).Scan(&taken); err != nil {
			return "", fmt.Errorf("new mail id: %w", err)
		}
		if !taken {
			return ext, nil
		}
	}
}

func (s *Service) moveMail(ctx context.Context, in MoveMailIn) (MoveMailOut, error) {
	var out MoveMailOut
	err := s.write(ctx, func(q querier) error {
		m, err := findMail(ctx, q, in.Mail)
		if err != nil {
			return err
		}
		fid, err := findFolder(ctx, q, in.Folder)
		if err != nil {
			return err
		}
		out = MoveMailOut{Mail: m.extID, From: m.folder, Folder: in.Folder}
		if _, err := q.ExecContext(ctx, `UPDATE mails SET folder_id = ? WHERE id = ? AND folder_id <> ?`, fid, m.id, fid); err != nil {
			return fmt.Errorf("move mail: %w", err)
		}
		return nil
	})
	return out, err
}

func (s *Service) starMail(ctx context.Context, in StarMailIn) (StarMailOut, error) {
	var out StarMailOut
	err := s.write(ctx, func(q querier) error {
		m, err := findMail(ctx, q, in.Mail)
		if err != nil {
			return err
		}
		out = StarMailOut{Mail: m.extID, Starred: in.Starred}
		if _, err := q.ExecContext(ctx, `UPDATE mails SET is_starred = ? WHERE id = ? AND is_starred <> ?`, in.Starred, m.id, in.Starred); err != nil {
			return fmt.Errorf("star mail: %w", err)
		}
		return nil
	})
	return out, err
}

func (s *Service) deleteMail(ctx context.Context, in DeleteMailIn) (DeleteMailOut, error) {
	var out DeleteMailOut
	err := s.write(ctx, func(q querier) error {
		m, err := findMail(ctx, q, in.Mail)
		if err != nil {
			return err
		}
		out.Mail = m.extID
		if m.folder == Trash {
			if _, err := q.ExecContext(ctx, `DELETE FROM attachments WHERE mail_id = ?`, m.id); err != nil {
				return fmt.Errorf("delete attachments: %w", err)
			}
			if _, err := q.ExecContext(ctx, `DELETE FROM mails WHERE id = ?`, m.id); err != nil {
				return fmt.Errorf("delete mail: %w", err)
			}
			out.Deleted = true
			return nil
		}
		var trash int64
		if err := q.QueryRowContext(ctx, `SELECT id FROM folders WHERE name = ?`, Trash).Scan(&trash); err != nil {
			return fmt.Errorf("trash folder: %w", err)
		}
		if _, err := q.ExecContext(ctx, `UPDATE mails SET folder_id = ? WHERE id = ?`, trash, m.id); err != nil {
			return fmt.Errorf("move to trash: %w", err)
		}
		out.Folder = Trash
		return nil
	})
	return out, err
}
