package skill

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
)

// serviceSkills are the events of the MCP services: each changes one
// service's database through the service's synthesis helpers and keeps
// the ledger, so that later events continue its records.
func serviceSkills() []Skill {
	return []Skill{
		dmReply(), groupChat(), orderDelivered(),
		mailReceive(), mailReply(), mailWithAttachment(), mailFile(),
		calendarSchedule(), calendarReschedule(), calendarRespond(),
		contactSave(), contactTag(),
		noteWrite(), noteUpdate(),
		todoAdd(), todoComplete(),
		paymentAccount(), paymentBook(), paymentTransfer(),
		supportTicket(), supportFollowup(),
		habitCheckIn(), budgetEntry(),
	}
}

// Currency is the currency of the persona's money accounts and budget,
// the shop's.
const Currency = "USD"

// checkRequired returns an error naming the first empty field of the
// name, value pairs.
func checkRequired(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return fmt.Errorf("field %s is required", pairs[i])
		}
	}
	return nil
}

// checkTime returns an error naming field unless v is YYYY-MM-DD HH:MM:SS.
func checkTime(field, v string) error {
	if _, err := Time(v); err != nil {
		return fmt.Errorf("field %s %q is not YYYY-MM-DD HH:MM:SS", field, v)
	}
	return nil
}

// checkDate returns an error naming field unless v is YYYY-MM-DD.
func checkDate(field, v string) error {
	if t, err := time.Parse(time.DateOnly, v); err != nil || t.Format(time.DateOnly) != v {
		return fmt.Errorf("field %s %q is not YYYY-MM-DD", field, v)
	}
	return nil
}

// tm parses a time Check has accepted.
func tm(s string) time.Time {
	t, _ := Time(s)
	return t
}

// addMinutes returns s plus n minutes, in TimeFormat.
func addMinutes(s string, n int) string {
	return tm(s).Add(time.Duration(n) * time.Minute).Format(TimeFormat)
}

// selfAddress is the persona's mail address (the services' own rule).
func selfAddress(p *persona.Persona) string { return persona.Email(p.Name) }

// contactNamed returns the persona's contact called name; the error lists
// the contacts.
func contactNamed(p *persona.Persona, name string) (persona.Contact, error) {
	var names []string
	for _, c := range p.Contacts {
		if c.Name == name {
			if c.Email == "" {
				c.Email = persona.Email(c.Name)
			}
			return c, nil
		}
		names = append(names, c.Name)
	}
	return persona.Contact{}, fmt.Errorf("%q is not one of the persona's contacts (%s)", name, strings.Join(names, ", "))
}

// contactIndex returns the index of the contact called name, or -1.
func contactIndex(p *persona.Persona, name string) int {
	return slices.IndexFunc(p.Contacts, func(c persona.Contact) bool { return c.Name == name })
}

// hasContacts reports whether the persona has contacts to draw from.
func hasContacts(d *Draw) bool { return len(d.Persona.Contacts) > 0 }

// twoContacts draws two distinct contacts.
func twoContacts(d *Draw) (persona.Contact, persona.Contact) {
	n := len(d.Persona.Contacts)
	i := d.Rand.IntN(n)
	j := (i + 1 + d.Rand.IntN(n-1)) % n
	return d.Persona.Contacts[i], d.Persona.Contacts[j]
}

// interest returns the persona's interest key, or def when it has none.
func interest(d *Draw, key, def string) string {
	if v := strings.TrimSpace(d.Persona.Interests[key]); v != "" {
		return v
	}
	return def
}

// tagOf is the persona's short tag in derived ids.
func tagOf(p *persona.Persona) string { return strings.ToLower(initials(p.ID)) }

// --- messages ---

// Reply is dm_reply's parameters: the next message of an existing thread.
type Reply struct {
	Thread string `json:"thread"`
	// Seq is the message's number in the thread: the thread's count plus one.
	Seq  int    `json:"seq"`
	From string `json:"from"`
	Body string `json:"body"`
	At   string `json:"at"`
}

// Check implements Checker.
func (p *Reply) Check() error {
	if err := checkRequired("thread", p.Thread, "from", p.From, "body", p.Body); err != nil {
		return err
	}
	if p.Seq < 1 {
		return fmt.Errorf("field seq %d must be at least 1: the thread's message count plus one", p.Seq)
	}
	return checkTime("at", p.At)
}

func dmReply() Skill {
	return Make(Def[Reply]{
		Doc: Doc{Name: "dm_reply", Summary: "Answer on an existing message thread: the side that did not write the last message replies.",
			Interfaces: []string{MCP}, Services: []string{"messages"},
			Changes:     []string{"messages.messages, one row numbered after the thread's last"},
			Constraints: []string{"the thread exists in the ledger", "seq is the thread's message count plus one", "the sender is the persona or a participant, not the author of the last message", "the time is a frozen literal of the day, in the evening after the day's other messages"},
			Continues:   []string{"dm_conversation", "group_chat", "dm_reply"},
			Example:     rawJSON(Reply{Thread: "dm-maya-okafor", Seq: 3, From: "Maya Okafor", Body: "Perfect, see you then.", At: "2026-03-03 19:30:00"})},
		Emit: func(b *Builder, p *Reply) error {
			th := b.State.Threads[p.Thread]
			if th == nil {
				return fmt.Errorf("thread %s is not in the ledger: start it with dm_conversation or group_chat", p.Thread)
			}
			if p.Seq != th.Seq+1 {
				return fmt.Errorf("field seq is %d; thread %s has %d messages, so the reply is number %d", p.Seq, p.Thread, th.Seq, th.Seq+1)
			}
			if p.From == th.Last {
				return fmt.Errorf("field from: %s wrote the thread's last message; a reply comes from another participant", p.From)
			}
			return emitConversation(b, &Conversation{Thread: p.Thread, Messages: []Msg{{From: p.From, Body: p.Body, At: p.At}}})
		},
		Propose: func(d *Draw) (*Reply, error) {
			if !d.State.DBs["messages"] {
				return nil, ErrSkip
			}
			var ids []string
			for _, id := range sortedKeys(d.State.Threads) {
				if th := d.State.Threads[id]; th.Seq > 0 && len(th.With) > 0 {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				return nil, ErrSkip
			}
			id := Pick(d, ids)
			th := d.State.Threads[id]
			p := &Reply{Thread: id, Seq: th.Seq + 1, At: d.Hour(19, 22)}
			if th.Last == d.Persona.Name {
				p.From = Pick(d, th.With)
				p.Body = fmt.Sprintf(Pick(d, contactReplies), firstName(d.Persona.Name))
			} else {
				to := th.Last
				if to == "" {
					to = th.With[0]
				}
				p.From = d.Persona.Name
				p.Body = fmt.Sprintf(Pick(d, replies), firstName(to))
			}
			return p, nil
		},
		Review: func(c *Check, p *Reply) []string {
			return c.Has(fmt.Sprintf("message %d of %s", p.Seq, p.Thread), "messages", "messages",
				"thread_id = (SELECT id FROM threads WHERE ext_id = ?) AND seq = ? AND sender = ? AND body = ? AND sent_at = ?",
				p.Thread, p.Seq, p.From, p.Body, p.At)
		},
	})
}

var contactReplies = []string{
	"Thanks %s, that works for me.",
	"Got it %s, I'll take a look tonight.",
	"Great, %s! Talk tomorrow.",
	"Perfect %s, see you then.",
	"Noted, %s. I'll send the details in the morning.",
}

// GroupChat is group_chat's parameters: a new group thread and its first
// messages.
type GroupChat struct {
	Thread   string   `json:"thread"`
	Title    string   `json:"title"`
	With     []string `json:"with"`
	Messages []Msg    `json:"messages"`
}

// Check implements Checker.
func (p *GroupChat) Check() error {
	if err := checkRequired("thread", p.Thread, "title", p.Title); err != nil {
		return err
	}
	if len(p.With) < 2 {
		return fmt.Errorf("field with has %d names: a group has at least two participants besides the persona", len(p.With))
	}
	c := Conversation{Thread: p.Thread, Messages: p.Messages}
	return c.Check()
}

var groupTopics = []string{"Weekend plans", "Dinner on Friday", "Birthday surprise", "Trip ideas", "Book swap", "Moving day help"}

var groupOpeners = []string{
	"Hi both! Shall we pick a date for %s?",
	"Starting a chat for %s so we stop losing messages.",
	"Who's in for %s?",
}

func groupChat() Skill {
	return Make(Def[GroupChat]{
		Doc: Doc{Name: "group_chat", Summary: "Start a group thread with two or more contacts and exchange the first messages.",
			Interfaces: []string{MCP}, Services: []string{"messages"},
			Changes:     []string{"messages.threads (kind group) and its participants", "messages.messages, one row per message"},
			Constraints: []string{"the thread id is new (group-TAG-N from the ledger's counter)", "participants are the persona's contacts", "messages are in time order within the day"},
			Example: rawJSON(GroupChat{Thread: "group-ar-1", Title: "Weekend plans", With: []string{"Maya Okafor", "Priya Shah"},
				Messages: []Msg{{From: "Maya Okafor", Body: "Who's in for a hike?", At: "2026-03-03 10:15:00", Read: true}}})},
		Emit: func(b *Builder, p *GroupChat) error {
			if b.State.Threads[p.Thread] != nil {
				return fmt.Errorf("thread %s exists already: continue it with dm_reply", p.Thread)
			}
			for i, w := range p.With {
				if contactIndex(b.Persona, w) < 0 {
					return fmt.Errorf("with[%d]: %q is not one of the persona's contacts", i, w)
				}
			}
			if err := emitConversation(b, &Conversation{Thread: p.Thread, Title: p.Title, With: p.With, Messages: p.Messages}); err != nil {
				return err
			}
			b.State.Next("group")
			return nil
		},
		Propose: func(d *Draw) (*GroupChat, error) {
			if !d.State.DBs["messages"] || len(d.Persona.Contacts) < 2 {
				return nil, ErrSkip
			}
			a, c := twoContacts(d)
			topic := Pick(d, groupTopics)
			me := d.Persona.Name
			return &GroupChat{Thread: fmt.Sprintf("group-%s-%d", tagOf(d.Persona), d.State.Peek("group")),
				Title: topic, With: []string{a.Name, c.Name},
				Messages: []Msg{
					{From: a.Name, Body: fmt.Sprintf(Pick(d, groupOpeners), lowerFirst(topic)), At: d.Hour(10, 12), Read: true},
					{From: c.Name, Body: fmt.Sprintf("Count me in. %s, are you free?", firstName(me)), At: d.Hour(12, 14), Read: true},
					{From: me, Body: fmt.Sprintf("Yes! Thanks for organising, %s.", firstName(a.Name)), At: d.Hour(14, 17)},
				}}, nil
		},
		Review: func(c *Check, p *GroupChat) []string {
			out := c.Has("group thread "+p.Thread, "messages", "threads", "ext_id = ? AND kind = 'group' AND title = ?", p.Thread, p.Title)
			for i, m := range p.Messages {
				out = append(out, c.Has(fmt.Sprintf("message %d", i+1), "messages", "messages",
					"thread_id = (SELECT id FROM threads WHERE ext_id = ?) AND sender = ? AND body = ? AND sent_at = ?", p.Thread, m.From, m.Body, m.At)...)
			}
			return out
		},
	})
}

// lowerFirst lower-cases s's first letter ("Dinner on Friday" -> "dinner
// on Friday").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// siteLabel is a site's name as a payee or an author ("shop" -> "Shop").
func siteLabel(site string) string {
	if site == "" {
		return site
	}
	return strings.ToUpper(site[:1]) + site[1:]
}

// --- mail ---

// InMail is mail_receive's parameters: a mail from a contact.
type InMail struct {
	ID      string `json:"id"`
	From    string `json:"from"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	At      string `json:"at"`
}

// Check implements Checker.
func (p *InMail) Check() error {
	if err := checkRequired("id", p.ID, "from", p.From, "subject", p.Subject, "body", p.Body); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

func mailID(d *Draw) string { return fmt.Sprintf("m-%s-%04d", tagOf(d.Persona), d.State.Peek("mail")) }

func hasMail(s *State, id string) bool {
	return slices.ContainsFunc(s.Mails, func(m MailRef) bool { return m.ID == id })
}

// emitMail checks m, appends its operations (sent or delivered), declares
// the row, and keeps the ledger.
func emitMail(b *Builder, m mail.Mail, sent bool, from string) error {
	if err := b.Need("mail"); err != nil {
		return err
	}
	if hasMail(b.State, m.ExtID) {
		return fmt.Errorf("field id: mail %s is in the mailbox already; take the next id", m.ExtID)
	}
	if err := m.Check(); err != nil {
		return err
	}
	folder := mail.Inbox
	if sent {
		folder = mail.Sent
		b.Op(mail.SentOps(m)...)
	} else {
		b.Op(mail.DeliverOps(m)...)
	}
	b.ProducesRow(mail.DBName, "mails", map[string]any{"ext_id": m.ExtID})
	b.State.Next("mail")
	thread := m.ThreadKey
	if thread == "" {
		thread = m.ExtID
	}
	b.State.Mails = append(b.State.Mails, MailRef{ID: m.ExtID, Thread: thread, From: from, Subject: m.Subject, Folder: folder, Day: b.Day})
	return nil
}

var mailTopics = []struct{ subject, body string }{
	{"Quick question", "Hi %s,\n\nDo you have time this week to go through the plan? Thursday afternoon would suit me.\n\nBest,\n%s"},
	{"Photos from the weekend", "Hi %s,\n\nI finally sorted the photos from the weekend, will share the album soon.\n\nCheers,\n%s"},
	{"Catching up", "Hi %s,\n\nIt's been a while! Are you around for a coffee next week?\n\n%s"},
	{"Notes from today", "Hi %s,\n\nHere are my notes from today. Let me know if I missed anything.\n\nThanks,\n%s"},
	{"Recommendation", "Hi %s,\n\nYou asked about a good place for %s food; I have a couple of ideas.\n\n%s"},
}

func mailReceive() Skill {
	return Make(Def[InMail]{
		Doc: Doc{Name: "mail_receive", Summary: "A contact sends the persona a mail; it arrives unread in the inbox.",
			Interfaces: []string{MCP}, Services: []string{"mail"},
			Changes:     []string{"mail.mails, one row in inbox from the contact's address to the persona's"},
			Constraints: []string{"the sender is one of the persona's contacts, at the contact's address", "the mail id is new (m-TAG-NNNN from the ledger's counter)", "the time is a frozen literal of the day"},
			Example:     rawJSON(InMail{ID: "m-ar-0001", From: "Maya Okafor", Subject: "Quick question", Body: "Hi Alex, do you have time this week?", At: "2026-03-03 09:12:00"})},
		Emit: func(b *Builder, p *InMail) error {
			c, err := contactNamed(b.Persona, p.From)
			if err != nil {
				return fmt.Errorf("field from: %w", err)
			}
			return emitMail(b, mail.Mail{ExtID: p.ID, From: c.Email, To: []string{selfAddress(b.Persona)}, Subject: p.Subject, Body: p.Body, SentAt: tm(p.At)}, false, c.Name)
		},
		Propose: func(d *Draw) (*InMail, error) {
			if !d.State.DBs["mail"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			c := d.Contact()
			t := Pick(d, mailTopics)
			var body string
			if strings.Count(t.body, "%s") == 3 {
				body = fmt.Sprintf(t.body, firstName(d.Persona.Name), interest(d, "cuisine", "Italian"), firstName(c.Name))
			} else {
				body = fmt.Sprintf(t.body, firstName(d.Persona.Name), firstName(c.Name))
			}
			return &InMail{ID: mailID(d), From: c.Name, Subject: t.subject, Body: body, At: d.Hour(7, 12)}, nil
		},
		Review: func(c *Check, p *InMail) []string {
			from, _ := contactNamed(c.Persona, p.From)
			return c.Has("mail "+p.ID, "mail", "mails", "ext_id = ? AND from_addr = ? AND subject = ? AND folder_id = (SELECT id FROM folders WHERE name = 'inbox')", p.ID, from.Email, p.Subject)
		},
	})
}

// MailReply is mail_reply's parameters: the persona's answer to a mail it
// received.
type MailReply struct {
	ID      string `json:"id"`
	ReplyTo string `json:"reply_to"`
	Body    string `json:"body"`
	At      string `json:"at"`
}

// Check implements Checker.
func (p *MailReply) Check() error {
	if err := checkRequired("id", p.ID, "reply_to", p.ReplyTo, "body", p.Body); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

func reSubject(s string) string {
	if strings.HasPrefix(strings.ToLower(s), "re:") {
		return s
	}
	return "Re: " + s
}

var mailReplies = []string{
	"Hi %s,\n\nThanks for your mail. Thursday works, let's say 3 pm.\n\nBest,\n%s",
	"Hi %s,\n\nGood to hear from you! Yes, let's do that.\n\n%s",
	"Hi %s,\n\nThanks, all clear. I'll follow up by Friday.\n\n%s",
}

func mailReply() Skill {
	return Make(Def[MailReply]{
		Doc: Doc{Name: "mail_reply", Summary: "The persona replies to a mail a contact sent: the answer goes to sent, in the same conversation, and the original is marked read.",
			Interfaces: []string{MCP}, Services: []string{"mail"},
			Changes:     []string{"mail.mails, one row in sent with the original's thread_key and a Re: subject", "the original mail's is_read set to 1"},
			Constraints: []string{"the original is a received mail of the ledger, from a contact", "a mail is replied to on a later day than it arrived", "the reply id is new (the ledger's mail counter)"},
			Continues:   []string{"mail_receive"},
			Example:     rawJSON(MailReply{ID: "m-ar-0002", ReplyTo: "m-ar-0001", Body: "Hi Maya, Thursday works.", At: "2026-03-04 10:00:00"})},
		Emit: func(b *Builder, p *MailReply) error {
			i := slices.IndexFunc(b.State.Mails, func(m MailRef) bool { return m.ID == p.ReplyTo })
			if i < 0 {
				return fmt.Errorf("field reply_to: mail %s is not in the ledger", p.ReplyTo)
			}
			orig := b.State.Mails[i]
			c, err := contactNamed(b.Persona, orig.From)
			if err != nil {
				return fmt.Errorf("field reply_to: mail %s is not from a contact: %w", p.ReplyTo, err)
			}
			b.Op(delta.Op{Op: delta.OpDBUpdate, DB: mail.DBName, Table: "mails", Key: mail.MailKey(orig.ID), Set: map[string]delta.Value{"is_read": lit(1)}})
			if err := emitMail(b, mail.Mail{ExtID: p.ID, ThreadKey: orig.Thread, From: selfAddress(b.Persona), To: []string{c.Email},
				Subject: reSubject(orig.Subject), Body: p.Body, SentAt: tm(p.At)}, true, b.Persona.Name); err != nil {
				return err
			}
			b.State.Mails[i].Replied = true
			return nil
		},
		Propose: func(d *Draw) (*MailReply, error) {
			if !d.State.DBs["mail"] {
				return nil, ErrSkip
			}
			var open []MailRef
			for _, m := range d.State.Mails {
				if !m.Replied && m.Day < d.Day && contactIndex(d.Persona, m.From) >= 0 {
					open = append(open, m)
				}
			}
			if len(open) == 0 {
				return nil, ErrSkip
			}
			m := Pick(d, open)
			return &MailReply{ID: mailID(d), ReplyTo: m.ID, Body: fmt.Sprintf(Pick(d, mailReplies), firstName(m.From), firstName(d.Persona.Name)), At: d.Hour(9, 18)}, nil
		},
		Review: func(c *Check, p *MailReply) []string {
			return c.Has("reply "+p.ID, "mail", "mails", "ext_id = ? AND body = ? AND thread_key = (SELECT thread_key FROM mails WHERE ext_id = ?) AND folder_id = (SELECT id FROM folders WHERE name = 'sent')", p.ID, p.Body, p.ReplyTo)
		},
	})
}

// AttachMail is mail_with_attachment's parameters: the persona mails a
// file of the home directory to a contact.
type AttachMail struct {
	ID      string `json:"id"`
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	At      string `json:"at"`
	// Path is the attached file, relative to home.
	Path string `json:"path"`
}

// Check implements Checker.
func (p *AttachMail) Check() error {
	if err := checkRequired("id", p.ID, "to", p.To, "subject", p.Subject, "body", p.Body, "path", p.Path); err != nil {
		return err
	}
	if p.Path == LoginsFile {
		return fmt.Errorf("field path: %s holds passwords; attach another file", LoginsFile)
	}
	return checkTime("at", p.At)
}

func mailWithAttachment() Skill {
	return Make(Def[AttachMail]{
		Doc: Doc{Name: "mail_with_attachment", Summary: "The persona mails a contact a file it already has in the home directory (an export, an invoice, a photo).",
			Interfaces: []string{MCP}, Services: []string{"mail"},
			Changes:     []string{"mail.mails, one row in sent", "mail.attachments, one row naming the home file"},
			Constraints: []string{"the file exists in the world (an earlier event wrote it; the ledger lists it)", "never the logins file", "the recipient is one of the persona's contacts"},
			Continues:   []string{"export_csv", "save_invoice_pdf", "save_photo", "budget_sheet", "trip_itinerary"},
			Example:     rawJSON(AttachMail{ID: "m-ar-0003", To: "Maya Okafor", Subject: "The export", Body: "Hi Maya, attached.", At: "2026-03-04 11:00:00", Path: "exports/transactions-2026-03-03.csv"})},
		Emit: func(b *Builder, p *AttachMail) error {
			if _, ok := b.State.Files[p.Path]; !ok {
				return fmt.Errorf("field path: %s is not a file of the ledger; attach a file an earlier event wrote", p.Path)
			}
			c, err := contactNamed(b.Persona, p.To)
			if err != nil {
				return fmt.Errorf("field to: %w", err)
			}
			return emitMail(b, mail.Mail{ExtID: p.ID, From: selfAddress(b.Persona), To: []string{c.Email}, Subject: p.Subject, Body: p.Body,
				SentAt: tm(p.At), Attachments: []mail.Attachment{{HomePath: p.Path}}}, true, b.Persona.Name)
		},
		Propose: func(d *Draw) (*AttachMail, error) {
			if !d.State.DBs["mail"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			var files []string
			for _, f := range sortedKeys(d.State.Files) {
				if f != LoginsFile {
					files = append(files, f)
				}
			}
			if len(files) == 0 {
				return nil, ErrSkip
			}
			f := Pick(d, files)
			c := d.Contact()
			name := f[strings.LastIndex(f, "/")+1:]
			return &AttachMail{ID: mailID(d), To: c.Name, Subject: "File: " + name, At: d.Hour(10, 19), Path: f,
				Body: fmt.Sprintf("Hi %s,\n\nHere is %s, as promised.\n\nBest,\n%s", firstName(c.Name), name, firstName(d.Persona.Name))}, nil
		},
		Review: func(c *Check, p *AttachMail) []string {
			out := c.Has("mail "+p.ID, "mail", "mails", "ext_id = ? AND subject = ? AND folder_id = (SELECT id FROM folders WHERE name = 'sent')", p.ID, p.Subject)
			out = append(out, c.Has("attachment of "+p.ID, "mail", "attachments", "home_path = ? AND mail_id = (SELECT id FROM mails WHERE ext_id = ?)", p.Path, p.ID)...)
			if _, err := c.File(p.Path); err != nil {
				out = append(out, fmt.Sprintf("attachment %s: %v", p.Path, err))
			}
			return out
		},
	})
}

// FileMail is mail_file's parameters: move a mail to a folder.
type FileMail struct {
	Mail   string `json:"mail"`
	Folder string `json:"folder"`
}

// Check implements Checker.
func (p *FileMail) Check() error {
	if err := checkRequired("mail", p.Mail, "folder", p.Folder); err != nil {
		return err
	}
	if len(p.Folder) > 100 || strings.ContainsAny(p.Folder, "\n\r\t") {
		return fmt.Errorf("field folder %q: a folder name is one line of at most 100 characters", p.Folder)
	}
	return nil
}

// folderFor is where the persona files a mail from a contact of role.
func folderFor(role string) string {
	switch strings.ToLower(role) {
	case "colleague", "manager", "boss", "client", "supplier", "equipment supplier", "venue manager":
		return "Work"
	case "sister", "brother", "mother", "father", "mum", "dad", "partner", "cousin", "aunt", "uncle", "daughter", "son":
		return "Family"
	case "friend":
		return "Friends"
	}
	return mail.Archive
}

func mailFile() Skill {
	return Make(Def[FileMail]{
		Doc: Doc{Name: "mail_file", Summary: "File a mail of the inbox into a folder (Work, Family, Friends or archive), creating the folder when it is new.",
			Interfaces: []string{MCP}, Services: []string{"mail"},
			Changes:     []string{"mail.folders, a row when the folder is new", "mail.mails: the mail's folder_id"},
			Constraints: []string{"the mail is in the ledger and not already in that folder", "folders are matched by exact name"},
			Continues:   []string{"mail_receive"},
			Example:     rawJSON(FileMail{Mail: "m-ar-0001", Folder: "Work"})},
		Emit: func(b *Builder, p *FileMail) error {
			if err := b.Need("mail"); err != nil {
				return err
			}
			i := slices.IndexFunc(b.State.Mails, func(m MailRef) bool { return m.ID == p.Mail })
			if i < 0 {
				return fmt.Errorf("field mail: %s is not in the ledger", p.Mail)
			}
			if b.State.Mails[i].Folder == p.Folder {
				return fmt.Errorf("field folder: mail %s is in %s already", p.Mail, p.Folder)
			}
			b.Op(mail.FolderOps(p.Folder)...)
			b.Op(delta.Op{Op: delta.OpDBUpdate, DB: mail.DBName, Table: "mails", Key: mail.MailKey(p.Mail),
				Set: map[string]delta.Value{"folder_id": delta.RefTo("folders", map[string]delta.Value{"name": lit(p.Folder)}, "id")}})
			b.ProducesRow(mail.DBName, "mails", map[string]any{"ext_id": p.Mail})
			b.State.Mails[i].Folder = p.Folder
			return nil
		},
		Propose: func(d *Draw) (*FileMail, error) {
			if !d.State.DBs["mail"] {
				return nil, ErrSkip
			}
			var inbox []MailRef
			for _, m := range d.State.Mails {
				if m.Folder == mail.Inbox {
					inbox = append(inbox, m)
				}
			}
			if len(inbox) == 0 {
				return nil, ErrSkip
			}
			m := Pick(d, inbox)
			folder := mail.Archive
			if c, err := contactNamed(d.Persona, m.From); err == nil {
				folder = folderFor(c.Role)
			}
			return &FileMail{Mail: m.ID, Folder: folder}, nil
		},
		Review: func(c *Check, p *FileMail) []string {
			return c.Has("mail "+p.Mail+" in "+p.Folder, "mail", "mails", "ext_id = ? AND folder_id = (SELECT id FROM folders WHERE name = ?)", p.Mail, p.Folder)
		},
	})
}

// --- calendar ---

// Meeting is calendar_schedule's parameters: an event the persona
// organizes, with guests.
type Meeting struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Location string   `json:"location,omitempty"`
	StartsAt string   `json:"starts_at"`
	EndsAt   string   `json:"ends_at"`
	Notes    string   `json:"notes,omitempty"`
	Guests   []string `json:"guests"`
}

// Check implements Checker.
func (p *Meeting) Check() error {
	if err := checkRequired("id", p.ID, "title", p.Title); err != nil {
		return err
	}
	if err := checkSpan(p.StartsAt, p.EndsAt); err != nil {
		return err
	}
	if len(p.Guests) == 0 {
		return errors.New("field guests is empty: invite at least one contact")
	}
	return nil
}

func checkSpan(start, end string) error {
	if err := checkTime("starts_at", start); err != nil {
		return err
	}
	if err := checkTime("ends_at", end); err != nil {
		return err
	}
	if !tm(end).After(tm(start)) {
		return fmt.Errorf("field ends_at %s is not after starts_at %s", end, start)
	}
	return nil
}

func eventIndex(s *State, id string) int {
	return slices.IndexFunc(s.Events, func(e EventRef) bool { return e.ID == id })
}

var meetingKinds = []struct{ title, kind string }{
	{"Coffee with %s", "cafe"},
	{"Lunch with %s", "restaurant"},
	{"Study session with %s", "library"},
	{"Walk with %s", "park"},
	{"Planning session with %s", "cafe"},
}

func calendarSchedule() Skill {
	return Make(Def[Meeting]{
		Doc: Doc{Name: "calendar_schedule", Summary: "The persona schedules an event in the coming days and invites contacts.",
			Interfaces: []string{MCP}, Services: []string{"calendar"},
			Changes:     []string{"calendar.events, one row organized by the persona", "calendar.invitations, one row per guest (needs-action)"},
			Constraints: []string{"guests are the persona's contacts", "the location is a catalog place", "times are canonical UTC literals, the end after the start", "the event id is new (evt-TAG-N from the ledger's counter)"},
			Example: rawJSON(Meeting{ID: "evt-ar-1", Title: "Coffee with Maya", Location: "Thorne Cafe, 4 Harbour St", StartsAt: "2026-03-05 10:00:00", EndsAt: "2026-03-05 11:00:00",
				Guests: []string{"Maya Okafor"}})},
		Emit: func(b *Builder, p *Meeting) error {
			if err := b.Need("calendar"); err != nil {
				return err
			}
			if eventIndex(b.State, p.ID) >= 0 {
				return fmt.Errorf("field id: event %s exists already", p.ID)
			}
			e := calendar.Event{ExtID: p.ID, Title: p.Title, Location: p.Location, StartsAt: p.StartsAt, EndsAt: p.EndsAt, Notes: p.Notes, Organizer: b.Persona.Name}
			for i, g := range p.Guests {
				if contactIndex(b.Persona, g) < 0 {
					return fmt.Errorf("guests[%d]: %q is not one of the persona's contacts", i, g)
				}
				e.Guests = append(e.Guests, calendar.Invitation{Guest: g})
			}
			if err := e.Check(); err != nil {
				return err
			}
			b.Op(calendar.EventOps(e)...)
			b.ProducesRow(calendar.DBName, "events", map[string]any{"ext_id": p.ID})
			b.State.Next("event")
			b.State.Events = append(b.State.Events, EventRef{ID: p.ID, Title: p.Title, Start: p.StartsAt, End: p.EndsAt, Day: b.Day,
				Organizer: b.Persona.Name, Guests: slices.Clone(p.Guests)})
			return nil
		},
		Propose: func(d *Draw) (*Meeting, error) {
			if !d.State.DBs["calendar"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			k := Pick(d, meetingKinds)
			place, err := d.PickRow(fmt.Sprintf(`SELECT name, address FROM places WHERE kind = '%s' ORDER BY id`, k.kind))
			if err != nil {
				return nil, err
			}
			guests := []string{d.Contact().Name}
			if len(d.Persona.Contacts) > 1 && d.Rand.IntN(3) == 0 {
				a, c := twoContacts(d)
				guests = []string{a.Name, c.Name}
			}
			names := firstName(guests[0])
			if len(guests) > 1 {
				names += " & " + firstName(guests[1])
			}
			start := At(d.Day+1+d.Rand.IntN(5), fmt.Sprintf("%02d:%02d", 9+d.Rand.IntN(8), 30*d.Rand.IntN(2)))
			return &Meeting{ID: fmt.Sprintf("evt-%s-%d", tagOf(d.Persona), d.State.Peek("event")), Title: fmt.Sprintf(k.title, names),
				Location: Str(place[0]) + ", " + Str(place[1]), StartsAt: start, EndsAt: addMinutes(start, 30*(1+d.Rand.IntN(3))), Guests: guests}, nil
		},
		Review: func(c *Check, p *Meeting) []string {
			out := c.Has("event "+p.ID, "calendar", "events", "ext_id = ? AND title = ? AND starts_at = ? AND ends_at = ?", p.ID, p.Title, p.StartsAt, p.EndsAt)
			for _, g := range p.Guests {
				out = append(out, c.Has("invitation of "+g, "calendar", "invitations", "guest = ? AND event_id = (SELECT id FROM events WHERE ext_id = ?)", g, p.ID)...)
			}
			return out
		},
	})
}

// Move is calendar_reschedule's parameters: new times of an event the
// persona organizes.
type Move struct {
	Event    string `json:"event"`
	StartsAt string `json:"starts_at"`
	EndsAt   string `json:"ends_at"`
}

// Check implements Checker.
func (p *Move) Check() error {
	if err := checkRequired("event", p.Event); err != nil {
		return err
	}
	return checkSpan(p.StartsAt, p.EndsAt)
}

func calendarReschedule() Skill {
	return Make(Def[Move]{
		Doc: Doc{Name: "calendar_reschedule", Summary: "The persona moves one of its own events to another time.",
			Interfaces: []string{MCP}, Services: []string{"calendar"},
			Changes:     []string{"calendar.events: the event's starts_at and ends_at"},
			Constraints: []string{"the event is in the ledger and organized by the persona", "the event has not passed; an event moves at most twice", "the new times differ from the current ones", "times are canonical UTC literals"},
			Continues:   []string{"calendar_schedule", "calendar_reschedule"},
			Example:     rawJSON(Move{Event: "evt-ar-1", StartsAt: "2026-03-06 10:00:00", EndsAt: "2026-03-06 11:00:00"})},
		Emit: func(b *Builder, p *Move) error {
			if err := b.Need("calendar"); err != nil {
				return err
			}
			i := eventIndex(b.State, p.Event)
			if i < 0 {
				return fmt.Errorf("field event: %s is not in the ledger", p.Event)
			}
			e := &b.State.Events[i]
			if e.Organizer != "" && e.Organizer != b.Persona.Name {
				return fmt.Errorf("field event: %s is organized by %s; the persona moves only its own events", p.Event, e.Organizer)
			}
			if e.Start == p.StartsAt && e.End == p.EndsAt {
				return fmt.Errorf("event %s is at %s already", p.Event, p.StartsAt)
			}
			b.Op(delta.Op{Op: delta.OpDBUpdate, DB: calendar.DBName, Table: "events", Key: map[string]delta.Value{"ext_id": lit(p.Event)},
				Set: map[string]delta.Value{"starts_at": lit(p.StartsAt), "ends_at": lit(p.EndsAt)}})
			b.ProducesRow(calendar.DBName, "events", map[string]any{"ext_id": p.Event})
			e.Start, e.End = p.StartsAt, p.EndsAt
			e.Moved++
			return nil
		},
		Propose: func(d *Draw) (*Move, error) {
			if !d.State.DBs["calendar"] {
				return nil, ErrSkip
			}
			var own []EventRef
			for _, e := range d.State.Events {
				if (e.Organizer == "" || e.Organizer == d.Persona.Name) && e.Moved < 2 && e.Start >= d.At("00:00") {
					own = append(own, e)
				}
			}
			if len(own) == 0 {
				return nil, ErrSkip
			}
			e := Pick(d, own)
			shift := 24 * 60 * (1 + d.Rand.IntN(2))
			if d.Rand.IntN(2) == 0 {
				shift = 60 * (1 + d.Rand.IntN(2))
			}
			return &Move{Event: e.ID, StartsAt: addMinutes(e.Start, shift), EndsAt: addMinutes(e.End, shift)}, nil
		},
		Review: func(c *Check, p *Move) []string {
			return c.Has("event "+p.Event, "calendar", "events", "ext_id = ? AND starts_at = ? AND ends_at = ?", p.Event, p.StartsAt, p.EndsAt)
		},
	})
}

// Answer is calendar_respond's parameters: the persona answers a
// contact's invitation. The event is inserted as the invitation arrives
// when the ledger does not have it yet.
type Answer struct {
	Event     string `json:"event"`
	Organizer string `json:"organizer"`
	Title     string `json:"title"`
	Location  string `json:"location,omitempty"`
	StartsAt  string `json:"starts_at"`
	EndsAt    string `json:"ends_at"`
	// Response is accepted, declined or tentative.
	Response    string `json:"response"`
	RespondedAt string `json:"responded_at"`
}

// Check implements Checker.
func (p *Answer) Check() error {
	if err := checkRequired("event", p.Event, "organizer", p.Organizer, "title", p.Title); err != nil {
		return err
	}
	switch p.Response {
	case calendar.ResponseAccepted, calendar.ResponseDeclined, calendar.ResponseTentative:
	default:
		return fmt.Errorf("field response %q is not accepted, declined or tentative", p.Response)
	}
	if err := checkSpan(p.StartsAt, p.EndsAt); err != nil {
		return err
	}
	return checkTime("responded_at", p.RespondedAt)
}

var invitationKinds = []struct{ title, kind string }{
	{"%s's birthday dinner", "restaurant"},
	{"Museum visit with %s", "museum"},
	{"Movie night at %s's pick", "cinema"},
	{"Workout with %s", "gym"},
	{"Book club at %s's", "bookshop"},
}

func calendarRespond() Skill {
	return Make(Def[Answer]{
		Doc: Doc{Name: "calendar_respond", Summary: "A contact invites the persona to an event and the persona answers (accepts, declines or is tentative).",
			Interfaces: []string{MCP}, Services: []string{"calendar"},
			Changes:     []string{"calendar.events and the persona's invitation, when the invitation is new", "calendar.invitations: the persona's response and responded_at"},
			Constraints: []string{"the organizer is one of the persona's contacts", "the persona is a guest, never the organizer", "the answer is given before the event starts", "times are canonical UTC literals"},
			Continues:   []string{"calendar_respond"},
			Example: rawJSON(Answer{Event: "inv-ar-1", Organizer: "Maya Okafor", Title: "Maya's birthday dinner", StartsAt: "2026-03-07 19:00:00", EndsAt: "2026-03-07 22:00:00",
				Response: "accepted", RespondedAt: "2026-03-03 12:15:00"})},
		Emit: func(b *Builder, p *Answer) error {
			if err := b.Need("calendar"); err != nil {
				return err
			}
			if _, err := contactNamed(b.Persona, p.Organizer); err != nil {
				return fmt.Errorf("field organizer: %w", err)
			}
			if !tm(p.RespondedAt).Before(tm(p.StartsAt)) {
				return fmt.Errorf("field responded_at %s is not before the event's start %s", p.RespondedAt, p.StartsAt)
			}
			me := b.Persona.Name
			i := eventIndex(b.State, p.Event)
			if i < 0 {
				e := calendar.Event{ExtID: p.Event, Title: p.Title, Location: p.Location, StartsAt: p.StartsAt, EndsAt: p.EndsAt, Organizer: p.Organizer,
					Guests: []calendar.Invitation{{Guest: me}}}
				if err := e.Check(); err != nil {
					return err
				}
				b.Op(calendar.EventOps(e)...)
				b.ProducesRow(calendar.DBName, "events", map[string]any{"ext_id": p.Event})
				b.State.Next("invite")
				b.State.Events = append(b.State.Events, EventRef{ID: p.Event, Title: p.Title, Start: p.StartsAt, End: p.EndsAt, Day: b.Day, Organizer: p.Organizer, Guests: []string{me}})
				i = len(b.State.Events) - 1
			}
			e := &b.State.Events[i]
			if e.Organizer != p.Organizer || !slices.Contains(e.Guests, me) {
				return fmt.Errorf("field event: %s is not %s's event with the persona as a guest", p.Event, p.Organizer)
			}
			if e.Response == p.Response {
				return fmt.Errorf("field response: the persona has %s %s already", p.Response, p.Event)
			}
			b.Op(calendar.ResponseOps(calendar.Response{Event: p.Event, Guest: me, Response: p.Response, RespondedAt: p.RespondedAt})...)
			e.Response = p.Response
			return nil
		},
		Propose: func(d *Draw) (*Answer, error) {
			if !d.State.DBs["calendar"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			c := d.Contact()
			k := Pick(d, invitationKinds)
			place, err := d.PickRow(fmt.Sprintf(`SELECT name, address FROM places WHERE kind = '%s' ORDER BY id`, k.kind))
			if err != nil {
				return nil, err
			}
			start := At(d.Day+2+d.Rand.IntN(5), fmt.Sprintf("%02d:00", 10+d.Rand.IntN(10)))
			return &Answer{Event: fmt.Sprintf("inv-%s-%d", tagOf(d.Persona), d.State.Peek("invite")), Organizer: c.Name,
				Title: fmt.Sprintf(k.title, firstName(c.Name)), Location: Str(place[0]) + ", " + Str(place[1]),
				StartsAt: start, EndsAt: addMinutes(start, 60*(1+d.Rand.IntN(3))),
				Response:    Pick(d, []string{calendar.ResponseAccepted, calendar.ResponseAccepted, calendar.ResponseTentative, calendar.ResponseDeclined}),
				RespondedAt: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *Answer) []string {
			return c.Has("the persona's answer to "+p.Event, "calendar", "invitations", "guest = ? AND response = ? AND responded_at = ? AND event_id = (SELECT id FROM events WHERE ext_id = ? AND organizer = ?)",
				c.Persona.Name, p.Response, p.RespondedAt, p.Event, p.Organizer)
		},
	})
}

// --- contacts ---

// SaveContact is contact_save's parameters: one of the persona's contacts
// saved in the address book.
type SaveContact struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Email   string   `json:"email"`
	Phone   string   `json:"phone,omitempty"`
	Company string   `json:"company,omitempty"`
	Role    string   `json:"role,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	At      string   `json:"at"`
}

// Check implements Checker.
func (p *SaveContact) Check() error {
	if err := checkRequired("id", p.ID, "name", p.Name, "email", p.Email); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

// roleTag is a contact tag for a role.
func roleTag(role string) string {
	switch f := folderFor(role); f {
	case "Work", "Family", "Friends":
		return strings.ToLower(f)
	}
	return slug(role)
}

func contactSave() Skill {
	return Make(Def[SaveContact]{
		Doc: Doc{Name: "contact_save", Summary: "Save one of the persona's contacts in the address book, with the role's tag.",
			Interfaces: []string{MCP}, Services: []string{"contacts"},
			Changes:     []string{"contacts.contacts, one row", "contacts.contact_tags, one row per tag"},
			Constraints: []string{"the contact is one of the persona's, with the persona bible's address", "the id is the name's slug", "each contact is saved once"},
			Example:     rawJSON(SaveContact{ID: "maya-okafor", Name: "Maya Okafor", Email: "maya.okafor@mail.example", Role: "venue manager", Tags: []string{"work"}, At: "2026-03-03 09:00:00"})},
		Emit: func(b *Builder, p *SaveContact) error {
			if err := b.Need("contacts"); err != nil {
				return err
			}
			if slices.Contains(b.State.Contacts, p.ID) {
				return fmt.Errorf("field id: contact %s is saved already", p.ID)
			}
			ops, err := contacts.InsertOps(contacts.Seed{ExtID: p.ID, Name: p.Name, Email: p.Email, Phone: p.Phone, Company: p.Company, Role: p.Role, Tags: p.Tags, UpdatedAt: tm(p.At)})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(contacts.DBName, "contacts", map[string]any{"ext_id": p.ID})
			b.State.Contacts = append(b.State.Contacts, p.ID)
			if len(p.Tags) > 0 {
				if b.State.Tags == nil {
					b.State.Tags = map[string][]string{}
				}
				b.State.Tags[p.ID] = append(b.State.Tags[p.ID], p.Tags...)
			}
			return nil
		},
		Propose: func(d *Draw) (*SaveContact, error) {
			if !d.State.DBs["contacts"] {
				return nil, ErrSkip
			}
			var unsaved []persona.Contact
			for _, c := range d.Persona.Contacts {
				if !slices.Contains(d.State.Contacts, slug(c.Name)) {
					unsaved = append(unsaved, c)
				}
			}
			if len(unsaved) == 0 {
				return nil, ErrSkip
			}
			c := Pick(d, unsaved)
			c, _ = contactNamed(d.Persona, c.Name)
			p := &SaveContact{ID: slug(c.Name), Name: c.Name, Email: c.Email, Role: c.Role, At: d.Hour(8, 12),
				Phone: fmt.Sprintf("+1 555-01%02d", d.Rand.IntN(100))}
			if t := roleTag(c.Role); t != "" {
				p.Tags = []string{t}
			}
			return p, nil
		},
		Review: func(c *Check, p *SaveContact) []string {
			return c.Has("contact "+p.ID, "contacts", "contacts", "ext_id = ? AND name = ? AND email = ?", p.ID, p.Name, p.Email)
		},
	})
}

// TagContact is contact_tag's parameters.
type TagContact struct {
	Contact string `json:"contact"`
	Tag     string `json:"tag"`
	At      string `json:"at"`
}

// Check implements Checker.
func (p *TagContact) Check() error {
	if err := checkRequired("contact", p.Contact, "tag", p.Tag); err != nil {
		return err
	}
	if p.Tag != strings.ToLower(p.Tag) || strings.ContainsFunc(p.Tag, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') }) {
		return fmt.Errorf("field tag %q: a tag is lower-case letters, digits, - and _, e.g. \"book-club\"", p.Tag)
	}
	return checkTime("at", p.At)
}

var contactTags = []string{"vip", "follow-up", "birthday-list", "local", "book-club", "neighbours", "travel", "work", "friends", "family"}

func contactTag() Skill {
	return Make(Def[TagContact]{
		Doc: Doc{Name: "contact_tag", Summary: "Tag a saved contact (vip, follow-up, book-club ...).",
			Interfaces: []string{MCP}, Services: []string{"contacts"},
			Changes:     []string{"contacts.contact_tags, one row", "contacts.contacts: the contact's updated_at"},
			Constraints: []string{"the contact is saved (the ledger)", "the contact does not have the tag yet", "tags are normalized lower-case"},
			Continues:   []string{"contact_save"},
			Example:     rawJSON(TagContact{Contact: "maya-okafor", Tag: "vip", At: "2026-03-04 10:00:00"})},
		Emit: func(b *Builder, p *TagContact) error {
			if err := b.Need("contacts"); err != nil {
				return err
			}
			if !slices.Contains(b.State.Contacts, p.Contact) {
				return fmt.Errorf("field contact: %s is not saved; save it with contact_save first", p.Contact)
			}
			if slices.Contains(b.State.Tags[p.Contact], p.Tag) {
				return fmt.Errorf("field tag: %s has the tag %s already", p.Contact, p.Tag)
			}
			op, err := contacts.TagOp(p.Contact, p.Tag)
			if err != nil {
				return fmt.Errorf("field tag: %w", err)
			}
			b.Op(op, delta.Op{Op: delta.OpDBUpdate, DB: contacts.DBName, Table: "contacts", Key: map[string]delta.Value{"ext_id": lit(p.Contact)},
				Set: map[string]delta.Value{"updated_at": lit(p.At)}})
			b.ProducesRow(contacts.DBName, "contacts", map[string]any{"ext_id": p.Contact})
			if b.State.Tags == nil {
				b.State.Tags = map[string][]string{}
			}
			b.State.Tags[p.Contact] = append(b.State.Tags[p.Contact], p.Tag)
			return nil
		},
		Propose: func(d *Draw) (*TagContact, error) {
			if !d.State.DBs["contacts"] || len(d.State.Contacts) == 0 {
				return nil, ErrSkip
			}
			type choice struct{ contact, tag string }
			var cs []choice
			for _, id := range d.State.Contacts {
				for _, t := range contactTags {
					if !slices.Contains(d.State.Tags[id], t) {
						cs = append(cs, choice{id, t})
					}
				}
			}
			if len(cs) == 0 {
				return nil, ErrSkip
			}
			ch := Pick(d, cs)
			return &TagContact{Contact: ch.contact, Tag: ch.tag, At: d.Hour(12, 18)}, nil
		},
		Review: func(c *Check, p *TagContact) []string {
			return c.Has("tag "+p.Tag+" of "+p.Contact, "contacts", "contact_tags", "tag = ? AND contact_id = (SELECT id FROM contacts WHERE ext_id = ? AND updated_at = ?)", p.Tag, p.Contact, p.At)
		},
	})
}

// --- notes ---

// WriteNote is note_write's parameters: a note in the notes service.
type WriteNote struct {
	ID       string `json:"id"`
	Notebook string `json:"notebook"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	// Links are home files of the ledger or http(s) URLs.
	Links  []string `json:"links,omitempty"`
	Pinned bool     `json:"pinned,omitempty"`
	At     string   `json:"at"`
}

// Check implements Checker.
func (p *WriteNote) Check() error {
	if err := checkRequired("id", p.ID, "notebook", p.Notebook, "title", p.Title, "body", p.Body); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

func noteWrite() Skill {
	return Make(Def[WriteNote]{
		Doc: Doc{Name: "note_write", Summary: "Write a note in the notes app, in a notebook, optionally linked to a home file.",
			Interfaces: []string{MCP}, Services: []string{"notes"},
			Changes:     []string{"notes.notebooks, a row when the notebook is new", "notes.notes, one row", "notes.note_links, one row per link"},
			Constraints: []string{"the note id is new (note-TAG-N from the ledger's counter)", "linked files exist in the world (the ledger lists them)", "the time is a frozen literal of the day"},
			Example:     rawJSON(WriteNote{ID: "note-ar-1", Notebook: "Personal", Title: "Ideas", Body: "- try the new bakery", At: "2026-03-03 21:00:00"})},
		Emit: func(b *Builder, p *WriteNote) error {
			if err := b.Need("notes"); err != nil {
				return err
			}
			if slices.Contains(b.State.Notes, p.ID) {
				return fmt.Errorf("field id: note %s exists already", p.ID)
			}
			for i, l := range p.Links {
				if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
					continue
				}
				if _, ok := b.State.Files[l]; !ok {
					return fmt.Errorf("links[%d]: %s is not a file of the ledger", i, l)
				}
			}
			ops, err := notes.InsertOps(notes.Seed{ExtID: p.ID, Notebook: p.Notebook, Title: p.Title, Body: p.Body, Pinned: p.Pinned, Links: p.Links, CreatedAt: tm(p.At)})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(notes.DBName, "notes", map[string]any{"ext_id": p.ID})
			b.State.Next("note")
			b.State.Notes = append(b.State.Notes, p.ID)
			if b.State.NoteBodies == nil {
				b.State.NoteBodies = map[string]string{}
			}
			b.State.NoteBodies[p.ID] = p.Body
			return nil
		},
		Propose: func(d *Draw) (*WriteNote, error) {
			if !d.State.DBs["notes"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			id := fmt.Sprintf("note-%s-%d", tagOf(d.Persona), d.State.Peek("note"))
			c := d.Contact()
			var p *WriteNote
			switch d.Rand.IntN(4) {
			case 0:
				cuisine := interest(d, "cuisine", "Italian")
				p = &WriteNote{Notebook: "Recipes", Title: cuisine + " dishes to try", Body: fmt.Sprintf("- a classic %s dish for Sunday\n- ask %s for the recipe they mentioned", cuisine, firstName(c.Name))}
			case 1:
				subj := interest(d, "subject", "history")
				p = &WriteNote{Notebook: "Learning", Title: "Reading on " + subj, Body: fmt.Sprintf("Questions about %s to look up:\n\n- the basics first\n- one good overview paper", subj)}
			case 2:
				p = &WriteNote{Notebook: "People", Title: "Call with " + c.Name, Body: fmt.Sprintf("Talked to %s (%s).\n\n- follow up next week", c.Name, c.Role)}
			default:
				p = &WriteNote{Notebook: "Personal", Title: "Week of " + d.Date(), Body: "- tidy the desk\n- plan the weekend\n- call " + firstName(c.Name)}
			}
			p.ID, p.At = id, d.Hour(18, 22)
			var files []string
			for _, f := range sortedKeys(d.State.Files) {
				if f != LoginsFile {
					files = append(files, f)
				}
			}
			if len(files) > 0 && d.Rand.IntN(2) == 0 {
				p.Links = []string{Pick(d, files)}
			}
			return p, nil
		},
		Review: func(c *Check, p *WriteNote) []string {
			return c.Has("note "+p.ID, "notes", "notes", "ext_id = ? AND title = ? AND body = ? AND notebook_id = (SELECT id FROM notebooks WHERE name = ?)", p.ID, p.Title, p.Body, p.Notebook)
		},
	})
}

// UpdateNote is note_update's parameters: a note's whole new body.
type UpdateNote struct {
	Note string `json:"note"`
	Body string `json:"body"`
	At   string `json:"at"`
}

// Check implements Checker.
func (p *UpdateNote) Check() error {
	if err := checkRequired("note", p.Note, "body", p.Body); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

var noteAdditions = []string{"Done: the first item.", "Asked around; two good suggestions.", "Moved to next week.", "Added a reminder in the calendar."}

func noteUpdate() Skill {
	return Make(Def[UpdateNote]{
		Doc: Doc{Name: "note_update", Summary: "Add a dated line to an existing note (the note's body is rewritten whole).",
			Interfaces: []string{MCP}, Services: []string{"notes"},
			Changes:     []string{"notes.notes: the note's body and updated_at"},
			Constraints: []string{"the note is in the ledger with its body", "the new body keeps the old one and differs from it", "updated_at is a frozen literal of the day"},
			Continues:   []string{"note_write", "note_update"},
			Example:     rawJSON(UpdateNote{Note: "note-ar-1", Body: "- try the new bakery\n\n2026-03-04: done.", At: "2026-03-04 20:00:00"})},
		Emit: func(b *Builder, p *UpdateNote) error {
			if err := b.Need("notes"); err != nil {
				return err
			}
			old, ok := b.State.NoteBodies[p.Note]
			if !ok {
				return fmt.Errorf("field note: %s is not a note of the ledger", p.Note)
			}
			if old == p.Body {
				return fmt.Errorf("field body: note %s has that body already", p.Note)
			}
			op, err := notes.UpdateOp(p.Note, nil, &p.Body, tm(p.At))
			if err != nil {
				return err
			}
			b.Op(op)
			b.ProducesRow(notes.DBName, "notes", map[string]any{"ext_id": p.Note})
			b.State.NoteBodies[p.Note] = p.Body
			return nil
		},
		Propose: func(d *Draw) (*UpdateNote, error) {
			if !d.State.DBs["notes"] {
				return nil, ErrSkip
			}
			ids := sortedKeys(d.State.NoteBodies)
			if len(ids) == 0 {
				return nil, ErrSkip
			}
			id := Pick(d, ids)
			return &UpdateNote{Note: id, Body: d.State.NoteBodies[id] + "\n\n" + d.Date() + ": " + Pick(d, noteAdditions), At: d.Hour(18, 22)}, nil
		},
		Review: func(c *Check, p *UpdateNote) []string {
			return c.Has("note "+p.Note, "notes", "notes", "ext_id = ? AND body = ? AND updated_at = ?", p.Note, p.Body, p.At)
		},
	})
}

// --- tasks ---

// AddTodo is todo_add's parameters: a to-do in a project, created with
// the to-do when new.
type AddTodo struct {
	ID       string `json:"id"`
	Project  string `json:"project"`
	Title    string `json:"title"`
	Notes    string `json:"notes,omitempty"`
	DueOn    string `json:"due_on,omitempty"`
	Priority string `json:"priority,omitempty"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *AddTodo) Check() error {
	if err := checkRequired("id", p.ID, "project", p.Project, "title", p.Title); err != nil {
		return err
	}
	if p.DueOn != "" {
		if err := checkDate("due_on", p.DueOn); err != nil {
			return err
		}
	}
	switch p.Priority {
	case "", tasks.PriorityLow, tasks.PriorityMedium, tasks.PriorityHigh:
	default:
		return fmt.Errorf("field priority %q is not low, medium or high", p.Priority)
	}
	return checkTime("at", p.At)
}

func todoIndex(s *State, id string) int {
	return slices.IndexFunc(s.Todos, func(t TodoRef) bool { return t.ID == id })
}

var todoTitles = []string{"Email %s about the plan", "Book a table for %s's visit", "Send %s the photos", "Call %s back", "Return %s's book"}

func todoAdd() Skill {
	return Make(Def[AddTodo]{
		Doc: Doc{Name: "todo_add", Summary: "Add a to-do to a project in the tasks app (the project is created on first use).",
			Interfaces: []string{MCP}, Services: []string{"tasks"},
			Changes:     []string{"tasks.projects, a row when the project is new", "tasks.todos, one open row"},
			Constraints: []string{"the to-do id is new (todo-TAG-N from the ledger's counter)", "the due date is on or after the day", "the project is named exactly"},
			Example:     rawJSON(AddTodo{ID: "todo-ar-1", Project: "Home", Title: "Call Maya back", DueOn: "2026-03-05", Priority: "high", At: "2026-03-03 09:00:00"})},
		Emit: func(b *Builder, p *AddTodo) error {
			if err := b.Need("tasks"); err != nil {
				return err
			}
			if todoIndex(b.State, p.ID) >= 0 {
				return fmt.Errorf("field id: to-do %s exists already", p.ID)
			}
			if p.DueOn != "" && p.DueOn < Date(b.Day) {
				return fmt.Errorf("field due_on %s is before the day (%s)", p.DueOn, Date(b.Day))
			}
			if !slices.Contains(b.State.Projects, p.Project) {
				op, err := tasks.ProjectOp(tasks.SeedProject{Name: p.Project})
				if err != nil {
					return fmt.Errorf("field project: %w", err)
				}
				b.Op(op)
				b.ProducesRow(tasks.DBName, "projects", map[string]any{"name": p.Project})
				b.State.Projects = append(b.State.Projects, p.Project)
			}
			op, err := tasks.TodoOp(tasks.SeedTodo{ID: p.ID, Project: p.Project, Title: p.Title, Notes: p.Notes, DueOn: p.DueOn, Priority: p.Priority, CreatedAt: tm(p.At)})
			if err != nil {
				return err
			}
			b.Op(op)
			b.ProducesRow(tasks.DBName, "todos", map[string]any{"ext_id": p.ID})
			b.State.Next("todo")
			b.State.Todos = append(b.State.Todos, TodoRef{ID: p.ID, Project: p.Project, Title: p.Title, Day: b.Day})
			return nil
		},
		Propose: func(d *Draw) (*AddTodo, error) {
			if !d.State.DBs["tasks"] || !hasContacts(d) {
				return nil, ErrSkip
			}
			project := Pick(d, []string{"Home", "Friends & family", "Learn " + interest(d, "language", "Spanish")})
			if len(d.State.Projects) > 0 && d.Rand.IntN(3) > 0 {
				project = Pick(d, d.State.Projects)
			}
			c := d.Contact()
			return &AddTodo{ID: fmt.Sprintf("todo-%s-%d", tagOf(d.Persona), d.State.Peek("todo")), Project: project,
				Title: fmt.Sprintf(Pick(d, todoTitles), firstName(c.Name)), DueOn: Date(d.Day + 1 + d.Rand.IntN(6)),
				Priority: Pick(d, []string{tasks.PriorityLow, tasks.PriorityMedium, tasks.PriorityHigh}), At: d.Hour(8, 12)}, nil
		},
		Review: func(c *Check, p *AddTodo) []string {
			return c.Has("to-do "+p.ID, "tasks", "todos", "ext_id = ? AND title = ? AND project_id = (SELECT id FROM projects WHERE name = ?)", p.ID, p.Title, p.Project)
		},
	})
}

// DoneTodo is todo_complete's parameters.
type DoneTodo struct {
	Todo string `json:"todo"`
	At   string `json:"at"`
}

// Check implements Checker.
func (p *DoneTodo) Check() error {
	if err := checkRequired("todo", p.Todo); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

func todoComplete() Skill {
	return Make(Def[DoneTodo]{
		Doc: Doc{Name: "todo_complete", Summary: "Tick off an open to-do that was added on an earlier day.",
			Interfaces: []string{MCP}, Services: []string{"tasks"},
			Changes:     []string{"tasks.todos: status done and completed_at"},
			Constraints: []string{"the to-do is open in the ledger", "it is completed on a later day than it was added"},
			Continues:   []string{"todo_add"},
			Example:     rawJSON(DoneTodo{Todo: "todo-ar-1", At: "2026-03-04 17:30:00"})},
		Emit: func(b *Builder, p *DoneTodo) error {
			if err := b.Need("tasks"); err != nil {
				return err
			}
			i := todoIndex(b.State, p.Todo)
			if i < 0 {
				return fmt.Errorf("field todo: %s is not in the ledger", p.Todo)
			}
			if b.State.Todos[i].Done {
				return fmt.Errorf("field todo: %s is done already", p.Todo)
			}
			b.Op(tasks.CompleteOp(p.Todo, tm(p.At)))
			b.ProducesRow(tasks.DBName, "todos", map[string]any{"ext_id": p.Todo})
			b.State.Todos[i].Done = true
			return nil
		},
		Propose: func(d *Draw) (*DoneTodo, error) {
			if !d.State.DBs["tasks"] {
				return nil, ErrSkip
			}
			var open []TodoRef
			for _, t := range d.State.Todos {
				if !t.Done && t.Day < d.Day {
					open = append(open, t)
				}
			}
			if len(open) == 0 {
				return nil, ErrSkip
			}
			return &DoneTodo{Todo: Pick(d, open).ID, At: d.Hour(9, 20)}, nil
		},
		Review: func(c *Check, p *DoneTodo) []string {
			return c.Has("to-do "+p.Todo+" done", "tasks", "todos", "ext_id = ? AND status = 'done' AND completed_at = ?", p.Todo, p.At)
		},
	})
}

// --- payments ---

// MoneyAccount is one bank account.
type MoneyAccount struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Kind         string `json:"kind"`
	Currency     string `json:"currency"`
	BalanceCents int64  `json:"balance_cents"`
}

// OpenAccounts is payment_account's parameters.
type OpenAccounts struct {
	Accounts []MoneyAccount `json:"accounts"`
}

// Check implements Checker.
func (p *OpenAccounts) Check() error {
	if len(p.Accounts) == 0 {
		return errors.New("field accounts is empty")
	}
	for i, a := range p.Accounts {
		if a.ID == "" || a.Name == "" {
			return fmt.Errorf("accounts[%d]: id and name are required", i)
		}
		switch a.Kind {
		case payments.KindChecking, payments.KindSavings, payments.KindCredit:
		default:
			return fmt.Errorf("accounts[%d].kind %q is not checking, savings or credit", i, a.Kind)
		}
		if len(a.Currency) != 3 {
			return fmt.Errorf("accounts[%d].currency %q is not a three-letter code", i, a.Currency)
		}
	}
	return nil
}

func paymentAccount() Skill {
	return Make(Def[OpenAccounts]{
		Doc: Doc{Name: "payment_account", Summary: "Open the persona's money accounts in the payments app: a checking and a savings account with their opening balances.",
			Interfaces: []string{MCP}, Services: []string{"payments"}, Setup: true,
			Changes:     []string{"payments.accounts, one row per account"},
			Constraints: []string{"each account is opened once", "checking and savings balances are not negative", "the currency is the shop's (USD)"},
			Example:     rawJSON(OpenAccounts{Accounts: []MoneyAccount{{ID: "chk-ar", Name: "Everyday checking", Kind: "checking", Currency: Currency, BalanceCents: 320000}}})},
		Emit: func(b *Builder, p *OpenAccounts) error {
			if err := b.Need("payments"); err != nil {
				return err
			}
			for i, a := range p.Accounts {
				if slices.Contains(b.State.Money, a.ID) {
					return fmt.Errorf("accounts[%d]: %s is open already", i, a.ID)
				}
				op, err := payments.AccountOp(payments.SeedAccount{ID: a.ID, Name: a.Name, Kind: a.Kind, Currency: a.Currency, BalanceCents: a.BalanceCents})
				if err != nil {
					return fmt.Errorf("accounts[%d]: %w", i, err)
				}
				b.Op(op)
				b.ProducesRow(payments.DBName, "accounts", map[string]any{"ext_id": a.ID})
				b.State.Money = append(b.State.Money, a.ID)
				balances(b.State)[a.ID] = a.BalanceCents
			}
			return nil
		},
		Propose: func(d *Draw) (*OpenAccounts, error) {
			if !d.State.DBs["payments"] {
				return nil, ErrSkip
			}
			tag := tagOf(d.Persona)
			p := &OpenAccounts{}
			for _, a := range []MoneyAccount{
				{ID: "chk-" + tag, Name: "Everyday checking", Kind: payments.KindChecking, Currency: Currency, BalanceCents: int64(150000 + 1000*d.Rand.IntN(300))},
				{ID: "sav-" + tag, Name: "Savings", Kind: payments.KindSavings, Currency: Currency, BalanceCents: int64(400000 + 1000*d.Rand.IntN(800))},
			} {
				if !slices.Contains(d.State.Money, a.ID) {
					p.Accounts = append(p.Accounts, a)
				}
			}
			if len(p.Accounts) == 0 {
				return nil, ErrSkip
			}
			return p, nil
		},
		Review: func(c *Check, p *OpenAccounts) []string {
			var out []string
			for _, a := range p.Accounts {
				out = append(out, c.Has("account "+a.ID, "payments", "accounts", "ext_id = ? AND kind = ? AND currency = ?", a.ID, a.Kind, a.Currency)...)
			}
			return out
		},
	})
}

// Booking is payment_book's parameters: one transaction on an account.
type Booking struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	At      string `json:"at"`
	// AmountCents is signed: negative for a payment, positive for income.
	AmountCents int64  `json:"amount_cents"`
	Payee       string `json:"payee"`
	Memo        string `json:"memo,omitempty"`
	Category    string `json:"category"`
}

// Check implements Checker.
func (p *Booking) Check() error {
	if err := checkRequired("id", p.ID, "account", p.Account, "payee", p.Payee, "category", p.Category); err != nil {
		return err
	}
	if p.AmountCents == 0 {
		return errors.New("field amount_cents is 0: negative for a payment, positive for income")
	}
	return checkTime("at", p.At)
}

// balances returns the ledger's balances, made when nil.
func balances(s *State) map[string]int64 {
	if s.Balances == nil {
		s.Balances = map[string]int64{}
	}
	return s.Balances
}

func hasPayment(s *State, id string) bool {
	return slices.ContainsFunc(s.Payments, func(p PaymentRef) bool { return p.ID == id })
}

// spendKinds are the catalog places the persona pays at: the price range
// in dollars and the category.
var spendKinds = map[string]struct {
	lo, hi   int
	category string
}{
	"cafe": {4, 15, "dining"}, "restaurant": {18, 70, "dining"}, "supermarket": {25, 120, "groceries"}, "bakery": {3, 14, "groceries"},
	"pharmacy": {6, 40, "health"}, "bookshop": {10, 45, "books"}, "cinema": {9, 30, "entertainment"}, "hardware store": {8, 90, "home"},
}

// placeSpend draws a payment at a catalog place: payee, cents and category.
func placeSpend(d *Draw) (string, int64, string, error) {
	kind := Pick(d, sortedKeys(spendKinds))
	row, err := d.PickRow(fmt.Sprintf(`SELECT name FROM places WHERE kind = '%s' ORDER BY id`, kind))
	if err != nil {
		return "", 0, "", err
	}
	k := spendKinds[kind]
	cents := int64((k.lo+d.Rand.IntN(k.hi-k.lo+1))*100 + 5*d.Rand.IntN(20))
	return Str(row[0]), cents, k.category, nil
}

func paymentBook() Skill {
	return Make(Def[Booking]{
		Doc: Doc{Name: "payment_book", Summary: "A card or account transaction is booked: a shop order's charge, a purchase at a catalog place, or income when the balance runs low.",
			Interfaces: []string{MCP}, Services: []string{"payments"},
			Changes:     []string{"payments.transactions, one row", "payments.accounts: the account's balance moves by the amount"},
			Constraints: []string{"the account is open (the ledger)", "a checking or savings balance stays at or above 0", "a shop order is charged once, at its total (transaction pay-ORDER)", "payees are catalog places or the shop"},
			Continues:   []string{"payment_account", "shop_purchase"},
			Example:     rawJSON(Booking{ID: "tx-ar-1", Account: "chk-ar", At: "2026-03-03 13:20:00", AmountCents: -1250, Payee: "Thorne Cafe", Category: "dining"})},
		Emit: func(b *Builder, p *Booking) error {
			if err := b.Need("payments"); err != nil {
				return err
			}
			if !slices.Contains(b.State.Money, p.Account) {
				return fmt.Errorf("field account: %s is not open; open it with payment_account", p.Account)
			}
			if hasPayment(b.State, p.ID) {
				return fmt.Errorf("field id: transaction %s is booked already", p.ID)
			}
			if bal := b.State.Balances[p.Account]; !strings.HasPrefix(p.Account, "cc-") && bal+p.AmountCents < 0 {
				return fmt.Errorf("field amount_cents: %d would take %s below 0 (balance %d)", p.AmountCents, p.Account, bal)
			}
			ops, err := payments.BookOps(payments.SeedTransaction{ID: p.ID, Account: p.Account, BookedAt: tm(p.At), AmountCents: p.AmountCents, Payee: p.Payee, Memo: p.Memo, Category: p.Category})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(payments.DBName, "transactions", map[string]any{"ext_id": p.ID})
			if !strings.HasPrefix(p.ID, "pay-") {
				b.State.Next("tx")
			}
			balances(b.State)[p.Account] += p.AmountCents
			b.State.Payments = append(b.State.Payments, PaymentRef{ID: p.ID, Account: p.Account, At: p.At, Cents: p.AmountCents, Payee: p.Payee, Category: p.Category})
			return nil
		},
		Propose: func(d *Draw) (*Booking, error) {
			if !d.State.DBs["payments"] || len(d.State.Money) == 0 {
				return nil, ErrSkip
			}
			acct := d.State.Money[0]
			p := &Booking{ID: fmt.Sprintf("tx-%s-%d", tagOf(d.Persona), d.State.Peek("tx")), Account: acct, At: d.Hour(8, 20)}
			var unpaid []OrderRef
			for _, o := range d.State.Orders {
				if !hasPayment(d.State, "pay-"+o.No) && o.Cents > 0 {
					unpaid = append(unpaid, o)
				}
			}
			if len(unpaid) > 0 && d.Rand.IntN(2) == 0 {
				o := Pick(d, unpaid)
				p.ID, p.AmountCents, p.Payee, p.Memo, p.Category = "pay-"+o.No, -o.Cents, siteLabel(o.Site), "order "+o.No, "shopping"
			} else {
				payee, cents, cat, err := placeSpend(d)
				if err != nil {
					return nil, err
				}
				p.AmountCents, p.Payee, p.Category = -cents, payee, cat
			}
			if d.State.Balances[acct]+p.AmountCents < 0 {
				p.ID = fmt.Sprintf("tx-%s-%d", tagOf(d.Persona), d.State.Peek("tx"))
				p.AmountCents, p.Payee, p.Memo, p.Category = 280000, "Payroll", "salary", "income"
			}
			return p, nil
		},
		Review: func(c *Check, p *Booking) []string {
			return c.Has("transaction "+p.ID, "payments", "transactions", "ext_id = ? AND amount_cents = ? AND payee = ? AND account_id = (SELECT id FROM accounts WHERE ext_id = ?)", p.ID, p.AmountCents, p.Payee, p.Account)
		},
	})
}

// Transfer is payment_transfer's parameters.
type Transfer struct {
	ID          string `json:"id"`
	From        string `json:"from"`
	To          string `json:"to"`
	AmountCents int64  `json:"amount_cents"`
	At          string `json:"at"`
	Memo        string `json:"memo,omitempty"`
}

// Check implements Checker.
func (p *Transfer) Check() error {
	if err := checkRequired("id", p.ID, "from", p.From, "to", p.To); err != nil {
		return err
	}
	if p.From == p.To {
		return errors.New("fields from and to name the same account")
	}
	if p.AmountCents <= 0 {
		return fmt.Errorf("field amount_cents %d must be positive", p.AmountCents)
	}
	return checkTime("at", p.At)
}

func paymentTransfer() Skill {
	return Make(Def[Transfer]{
		Doc: Doc{Name: "payment_transfer", Summary: "Move money between two of the persona's accounts (to savings, or back to checking).",
			Interfaces: []string{MCP}, Services: []string{"payments"},
			Changes:     []string{"payments.transfers, one row", "payments.transactions, the debit ID-out and the credit ID-in", "payments.accounts: both balances"},
			Constraints: []string{"both accounts are open (the ledger) and of one currency", "the source keeps a balance at or above 0", "the transfer id is new (tr-TAG-N)"},
			Continues:   []string{"payment_account", "payment_book"},
			Example:     rawJSON(Transfer{ID: "tr-ar-1", From: "chk-ar", To: "sav-ar", AmountCents: 20000, At: "2026-03-03 18:00:00", Memo: "monthly savings"})},
		Emit: func(b *Builder, p *Transfer) error {
			if err := b.Need("payments"); err != nil {
				return err
			}
			for _, a := range []string{p.From, p.To} {
				if !slices.Contains(b.State.Money, a) {
					return fmt.Errorf("account %s is not open; open it with payment_account", a)
				}
			}
			if hasPayment(b.State, p.ID+"-out") {
				return fmt.Errorf("field id: transfer %s is booked already", p.ID)
			}
			if bal := b.State.Balances[p.From]; bal < p.AmountCents {
				return fmt.Errorf("field amount_cents: %d is more than %s's balance %d", p.AmountCents, p.From, bal)
			}
			ops, err := payments.TransferOps(payments.SeedTransfer{ID: p.ID, From: p.From, To: p.To, AmountCents: p.AmountCents, BookedAt: tm(p.At), Memo: p.Memo})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(payments.DBName, "transfers", map[string]any{"ext_id": p.ID})
			b.State.Next("transfer")
			balances(b.State)[p.From] -= p.AmountCents
			balances(b.State)[p.To] += p.AmountCents
			b.State.Payments = append(b.State.Payments,
				PaymentRef{ID: p.ID + "-out", Account: p.From, At: p.At, Cents: -p.AmountCents, Payee: "Transfer to " + p.To, Category: "transfer"},
				PaymentRef{ID: p.ID + "-in", Account: p.To, At: p.At, Cents: p.AmountCents, Payee: "Transfer from " + p.From, Category: "transfer"})
			return nil
		},
		Propose: func(d *Draw) (*Transfer, error) {
			if !d.State.DBs["payments"] || len(d.State.Money) < 2 {
				return nil, ErrSkip
			}
			from, to := d.State.Money[0], d.State.Money[1]
			memo := "to savings"
			if d.State.Balances[from] < 60000 {
				from, to, memo = to, from, "top up checking"
			}
			amount := int64(100 * 50 * (1 + d.Rand.IntN(6)))
			if amount > d.State.Balances[from] {
				amount = d.State.Balances[from] / 2
			}
			if amount <= 0 {
				return nil, ErrSkip
			}
			return &Transfer{ID: fmt.Sprintf("tr-%s-%d", tagOf(d.Persona), d.State.Peek("transfer")), From: from, To: to, AmountCents: amount, At: d.Hour(17, 21), Memo: memo}, nil
		},
		Review: func(c *Check, p *Transfer) []string {
			return c.Has("transfer "+p.ID, "payments", "transfers", "ext_id = ? AND amount_cents = ? AND from_account_id = (SELECT id FROM accounts WHERE ext_id = ?)", p.ID, p.AmountCents, p.From)
		},
	})
}

// --- support ---

// OpenTicket is support_ticket's parameters: a ticket about a shop order
// of the ledger, with the persona's first message.
type OpenTicket struct {
	ID      string `json:"id"`
	OrderNo string `json:"order_no"`
	SKU     string `json:"sku"`
	// Kind is return, warranty or question.
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	At      string `json:"at"`
}

// Check implements Checker.
func (p *OpenTicket) Check() error {
	if err := checkRequired("id", p.ID, "order_no", p.OrderNo, "sku", p.SKU, "subject", p.Subject, "body", p.Body); err != nil {
		return err
	}
	switch p.Kind {
	case support.KindReturn, support.KindWarranty, support.KindQuestion:
	default:
		return fmt.Errorf("field kind %q is not return, warranty or question", p.Kind)
	}
	return checkTime("at", p.At)
}

func ticketIndex(s *State, id string) int {
	return slices.IndexFunc(s.Tickets, func(t TicketRef) bool { return t.ID == id })
}

func supportTicket() Skill {
	return Make(Def[OpenTicket]{
		Doc: Doc{Name: "support_ticket", Summary: "Contact the shop's support about an order: a question, a return or a warranty claim.",
			Interfaces: []string{MCP}, Services: []string{"support"},
			Changes:     []string{"support.tickets, one open row", "support.ticket_events, the customer's first message (seq 1)"},
			Constraints: []string{"the order and its item are a shop order of the ledger", "an order has at most one ticket of each kind", "the ticket id is new (T-TAG-N)"},
			Continues:   []string{"shop_purchase"},
			Example: rawJSON(OpenTicket{ID: "T-ar-1", OrderNo: "SO-ar-001", SKU: "XLR-25", Kind: "question", Subject: "Question about XLR cable 25 ft",
				Body: "Are both ends Neutrik-compatible?", At: "2026-03-03 09:10:00"})},
		Emit: func(b *Builder, p *OpenTicket) error {
			if err := b.Need("support"); err != nil {
				return err
			}
			if !slices.ContainsFunc(b.State.Orders, func(o OrderRef) bool { return o.No == p.OrderNo && o.SKU == p.SKU }) {
				return fmt.Errorf("fields order_no, sku: %s with item %s is not an order of the ledger", p.OrderNo, p.SKU)
			}
			if ticketIndex(b.State, p.ID) >= 0 {
				return fmt.Errorf("field id: ticket %s exists already", p.ID)
			}
			if slices.ContainsFunc(b.State.Tickets, func(t TicketRef) bool { return t.Order == p.OrderNo && t.Kind == p.Kind }) {
				return fmt.Errorf("field kind: order %s has a %s ticket already", p.OrderNo, p.Kind)
			}
			ops, err := support.TicketOps(support.Ticket{ID: p.ID, OrderNo: p.OrderNo, SKU: p.SKU, Kind: p.Kind, Subject: p.Subject, OpenedAt: tm(p.At),
				Events: []support.Event{{Author: support.AuthorCustomer, Body: p.Body, StatusAfter: support.StatusOpen, At: tm(p.At)}}})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(support.DBName, "tickets", map[string]any{"ext_id": p.ID})
			b.State.Next("ticket")
			b.State.Tickets = append(b.State.Tickets, TicketRef{ID: p.ID, Seq: 1, Status: support.StatusOpen, Order: p.OrderNo, Kind: p.Kind})
			return nil
		},
		Propose: func(d *Draw) (*OpenTicket, error) {
			if !d.State.DBs["support"] {
				return nil, ErrSkip
			}
			type choice struct {
				o    OrderRef
				kind string
			}
			var cs []choice
			for _, o := range d.State.Orders {
				if o.Site != "shop" {
					continue
				}
				for _, k := range []string{support.KindQuestion, support.KindReturn, support.KindWarranty} {
					if !slices.ContainsFunc(d.State.Tickets, func(t TicketRef) bool { return t.Order == o.No && t.Kind == k }) {
						cs = append(cs, choice{o, k})
					}
				}
			}
			if len(cs) == 0 {
				return nil, ErrSkip
			}
			ch := Pick(d, cs)
			title := ch.o.SKU
			if rows, err := d.Catalog.Query(`SELECT title FROM products WHERE sku = ?`, ch.o.SKU); err == nil && len(rows) > 0 {
				title = Str(rows[0][0])
			}
			p := &OpenTicket{ID: fmt.Sprintf("T-%s-%d", tagOf(d.Persona), d.State.Peek("ticket")), OrderNo: ch.o.No, SKU: ch.o.SKU, Kind: ch.kind, At: d.Hour(8, 12)}
			switch ch.kind {
			case support.KindQuestion:
				p.Subject, p.Body = "Question about "+title, fmt.Sprintf("Hello, about my order %s: does the %s come with a carrying case?", ch.o.No, title)
			case support.KindReturn:
				p.Subject, p.Body = "Return of order "+ch.o.No, fmt.Sprintf("Hello, I would like to return the %s from order %s; it is unused.", title, ch.o.No)
			default:
				p.Subject, p.Body = title+" stopped working", fmt.Sprintf("Hello, the %s from order %s stopped working after a few days.", title, ch.o.No)
			}
			if len(p.Subject) > 120 {
				p.Subject = p.Subject[:120]
			}
			return p, nil
		},
		Review: func(c *Check, p *OpenTicket) []string {
			return c.Has("ticket "+p.ID, "support", "tickets", "ext_id = ? AND order_no = ? AND sku = ? AND kind = ?", p.ID, p.OrderNo, p.SKU, p.Kind)
		},
	})
}

// TicketUpdate is support_followup's parameters: support changes a
// ticket's status with a note.
type TicketUpdate struct {
	Ticket string `json:"ticket"`
	// Seq is the event's number: the ticket's event count plus one.
	Seq    int    `json:"seq"`
	Status string `json:"status"`
	Note   string `json:"note"`
	At     string `json:"at"`
}

// Check implements Checker.
func (p *TicketUpdate) Check() error {
	if err := checkRequired("ticket", p.Ticket, "status", p.Status, "note", p.Note); err != nil {
		return err
	}
	if p.Seq < 2 {
		return fmt.Errorf("field seq %d: a follow-up is at least the ticket's second event", p.Seq)
	}
	switch p.Status {
	case support.StatusOpen, support.StatusWaiting, support.StatusResolved, support.StatusClosed:
	default:
		return fmt.Errorf("field status %q is not open, waiting, resolved or closed", p.Status)
	}
	return checkTime("at", p.At)
}

// followups are support's notes by the status they move a ticket to
// and, for resolved, by the ticket's kind.
var followups = map[string][]string{
	support.StatusWaiting:                               {"Thanks for reaching out. Could you send a photo of the item and its serial number?", "We need the order's delivery date to go on; could you confirm it?"},
	support.StatusResolved + "/" + support.KindReturn:   {"We have sent a prepaid return label to your address; the refund follows when the item arrives."},
	support.StatusResolved + "/" + support.KindWarranty: {"A replacement is on its way; you will get a tracking number by mail."},
	support.StatusResolved + "/" + support.KindQuestion: {"Yes: it ships with a padded case in the box.", "It does; the details are on the product page under specifications."},
	support.StatusClosed:                                {"Closing this ticket as resolved. Thank you!"},
}

func followupNote(d *Draw, t TicketRef, status string) string {
	if notes, ok := followups[status+"/"+t.Kind]; ok {
		return Pick(d, notes)
	}
	if notes, ok := followups[status]; ok {
		return Pick(d, notes)
	}
	return Pick(d, followups[support.StatusResolved+"/"+support.KindQuestion])
}

func supportFollowup() Skill {
	return Make(Def[TicketUpdate]{
		Doc: Doc{Name: "support_followup", Summary: "Support answers a ticket that is not closed and moves it on: waiting for the customer, resolved, or closed.",
			Interfaces: []string{MCP}, Services: []string{"support"},
			Changes:     []string{"support.ticket_events, one event by support numbered after the last", "support.tickets: status and updated_at"},
			Constraints: []string{"the ticket is in the ledger and not closed", "statuses move forward: open -> waiting or resolved, waiting -> resolved, resolved -> closed", "seq is the ticket's event count plus one"},
			Continues:   []string{"support_ticket", "support_followup"},
			Example:     rawJSON(TicketUpdate{Ticket: "T-ar-1", Seq: 2, Status: "resolved", Note: "Yes, both ends are standard XLR.", At: "2026-03-03 15:40:00"})},
		Emit: func(b *Builder, p *TicketUpdate) error {
			if err := b.Need("support"); err != nil {
				return err
			}
			i := ticketIndex(b.State, p.Ticket)
			if i < 0 {
				return fmt.Errorf("field ticket: %s is not in the ledger", p.Ticket)
			}
			t := &b.State.Tickets[i]
			if t.Status == support.StatusClosed {
				return fmt.Errorf("field ticket: %s is closed", p.Ticket)
			}
			if p.Seq != t.Seq+1 {
				return fmt.Errorf("field seq is %d; ticket %s has %d events, so this is number %d", p.Seq, p.Ticket, t.Seq, t.Seq+1)
			}
			if p.Status == t.Status {
				return fmt.Errorf("field status: %s is %s already", p.Ticket, p.Status)
			}
			ops, err := support.StatusOps(p.Ticket, p.Seq, p.Status, tm(p.At), p.Note)
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow(support.DBName, "tickets", map[string]any{"ext_id": p.Ticket})
			t.Seq, t.Status = p.Seq, p.Status
			return nil
		},
		Propose: func(d *Draw) (*TicketUpdate, error) {
			if !d.State.DBs["support"] {
				return nil, ErrSkip
			}
			var open []TicketRef
			for _, t := range d.State.Tickets {
				if t.Status != support.StatusClosed {
					open = append(open, t)
				}
			}
			if len(open) == 0 {
				return nil, ErrSkip
			}
			t := Pick(d, open)
			var next string
			switch t.Status {
			case support.StatusOpen:
				next = Pick(d, []string{support.StatusWaiting, support.StatusResolved})
			case support.StatusWaiting:
				next = support.StatusResolved
			default:
				next = support.StatusClosed
			}
			return &TicketUpdate{Ticket: t.ID, Seq: t.Seq + 1, Status: next, Note: followupNote(d, t, next), At: d.Hour(13, 18)}, nil
		},
		Review: func(c *Check, p *TicketUpdate) []string {
			out := c.Has("ticket "+p.Ticket, "support", "tickets", "ext_id = ? AND updated_at = ?", p.Ticket, p.At)
			return append(out, c.Has(fmt.Sprintf("event %d of %s", p.Seq, p.Ticket), "support", "ticket_events",
				"seq = ? AND status_after = ? AND body = ? AND ticket_id = (SELECT id FROM tickets WHERE ext_id = ?)", p.Seq, p.Status, p.Note, p.Ticket)...)
		},
	})
}

// --- definition-served applications ---

// defOps returns the operations of the synthesis operation op of the
// definition-served service.
func defOps(b *Builder, service, op string, params map[string]any) ([]delta.Op, error) {
	ref, ok := b.State.Services[service]
	if !ok {
		return nil, fmt.Errorf("service %s is not defined in this world: an earlier define_service must add it", service)
	}
	if b.Definitions == nil {
		return nil, fmt.Errorf("no definitions library to compile %s from", service)
	}
	spec, err := b.Definitions.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return spec.Compiled().Op(op, params)
}

// served reports whether the world serves the definition name and has its
// database.
func served(d *Draw, name string) bool {
	_, ok := d.State.Services[name]
	return ok && d.State.DBs[name]
}

// CheckIn is habit_check_in's parameters: a day's check-in of a habit,
// which is created first when the ledger does not have it.
type CheckIn struct {
	Habit string `json:"habit"`
	// Name, Cadence (daily, weekly) and Target create the habit when it
	// is new.
	Name    string `json:"name,omitempty"`
	Cadence string `json:"cadence,omitempty"`
	Target  int    `json:"target,omitempty"`
	Date    string `json:"date"`
	Note    string `json:"note,omitempty"`
	At      string `json:"at"`
}

// Check implements Checker.
func (p *CheckIn) Check() error {
	if err := checkRequired("habit", p.Habit); err != nil {
		return err
	}
	switch p.Cadence {
	case "", "daily", "weekly":
	default:
		return fmt.Errorf("field cadence %q is not daily or weekly", p.Cadence)
	}
	if p.Target < 0 || p.Target > 7 {
		return fmt.Errorf("field target %d is not 1 to 7", p.Target)
	}
	if err := checkDate("date", p.Date); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

var habitIdeas = []struct {
	name, cadence string
	target        int
}{
	{"Read 20 pages", "daily", 1}, {"Morning run", "weekly", 3}, {"Stretch", "daily", 1}, {"Meditate", "daily", 1},
	{"Cook at home", "weekly", 4}, {"Practice %s", "daily", 1}, {"Call family", "weekly", 1},
}

func habitCheckIn() Skill {
	return Make(Def[CheckIn]{
		Doc: Doc{Name: "habit_check_in", Summary: "Check in a habit for the day in the habits app (the habit is created on first use).",
			Interfaces: []string{MCP}, Services: []string{"habits"},
			Changes:     []string{"habits.habits, a row when the habit is new", "habits.checkins, one row for the day"},
			Constraints: []string{"the habits definition is served (define_service)", "one check-in per habit and day, never in the future", "a daily habit has target 1"},
			Continues:   []string{"define_service", "habit_check_in"},
			Example:     rawJSON(CheckIn{Habit: "stretch", Name: "Stretch", Cadence: "daily", Target: 1, Date: "2026-03-03", Note: "10 minutes", At: "2026-03-03 07:30:00"})},
		Emit: func(b *Builder, p *CheckIn) error {
			if p.Date > Date(b.Day) {
				return fmt.Errorf("field date %s is after the day (%s): check-ins record what was done", p.Date, Date(b.Day))
			}
			if !b.State.HasRecord("habits", "habits", p.Habit) {
				if p.Name == "" {
					return fmt.Errorf("field name: habit %s is new; give its name, cadence and target", p.Habit)
				}
				cadence, target := p.Cadence, p.Target
				if cadence == "" {
					cadence = "daily"
				}
				if target == 0 {
					target = 1
				}
				ops, err := defOps(b, "habits", "add_habit", map[string]any{"ext_id": p.Habit, "name": p.Name, "cadence": cadence, "target": target, "archived": false, "created_at": p.At})
				if err != nil {
					return err
				}
				b.Op(ops...)
				b.ProducesRow("habits", "habits", map[string]any{"ext_id": p.Habit})
				b.State.AddRecord("habits", "habits", p.Habit)
			}
			key := p.Habit + "@" + p.Date
			if b.State.HasRecord("habits", "checkins", key) {
				return fmt.Errorf("field date: %s is checked in on %s already", p.Habit, p.Date)
			}
			ops, err := defOps(b, "habits", "add_check_ins", map[string]any{"habit": p.Habit, "check_ins": []map[string]any{{"date": p.Date, "note": p.Note, "created_at": p.At}}})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.State.AddRecord("habits", "checkins", key)
			return nil
		},
		Propose: func(d *Draw) (*CheckIn, error) {
			if !served(d, "habits") {
				return nil, ErrSkip
			}
			today := d.Date()
			var due []string
			for _, h := range d.State.Records["habits/habits"] {
				if !d.State.HasRecord("habits", "checkins", h+"@"+today) {
					due = append(due, h)
				}
			}
			p := &CheckIn{Date: today, At: d.Hour(6, 22), Note: Pick(d, []string{"", "", "felt good", "short one today", "done before breakfast"})}
			if len(due) > 0 && (len(d.State.Records["habits/habits"]) >= 3 || d.Rand.IntN(4) > 0) {
				p.Habit = Pick(d, due)
				return p, nil
			}
			var fresh []int
			for i, h := range habitIdeas {
				if !d.State.HasRecord("habits", "habits", slug(habitName(d, h.name))) {
					fresh = append(fresh, i)
				}
			}
			if len(fresh) == 0 {
				if len(due) == 0 {
					return nil, ErrSkip
				}
				p.Habit = Pick(d, due)
				return p, nil
			}
			h := habitIdeas[Pick(d, fresh)]
			name := habitName(d, h.name)
			p.Habit, p.Name, p.Cadence, p.Target = slug(name), name, h.cadence, h.target
			return p, nil
		},
		Review: func(c *Check, p *CheckIn) []string {
			return c.Has("check-in of "+p.Habit, "habits", "checkins", "date = ? AND habit_id = (SELECT id FROM habits WHERE ext_id = ?)", p.Date, p.Habit)
		},
	})
}

func habitName(d *Draw, name string) string {
	if strings.Contains(name, "%s") {
		return fmt.Sprintf(name, interest(d, "language", "Spanish"))
	}
	return name
}

// Expense is budget_entry's parameters: an expense in a budget category,
// which is created (with this month's budget) when the ledger does not
// have it.
type Expense struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	// BudgetCents sets the category's budget for the expense's month when
	// it has none yet (0: leave it unbudgeted).
	BudgetCents int64  `json:"budget_cents,omitempty"`
	Date        string `json:"date"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Payee       string `json:"payee"`
	Note        string `json:"note,omitempty"`
	At          string `json:"at"`
}

// Check implements Checker.
func (p *Expense) Check() error {
	if err := checkRequired("id", p.ID, "category", p.Category, "currency", p.Currency, "payee", p.Payee); err != nil {
		return err
	}
	if p.AmountCents <= 0 {
		return fmt.Errorf("field amount_cents %d must be positive", p.AmountCents)
	}
	if p.BudgetCents < 0 {
		return fmt.Errorf("field budget_cents %d is negative", p.BudgetCents)
	}
	if err := checkDate("date", p.Date); err != nil {
		return err
	}
	return checkTime("at", p.At)
}

// budgetCategories are the budget's categories by spending category, with
// a monthly budget in cents.
var budgetCategories = map[string]struct {
	name   string
	budget int64
}{
	"dining": {"Dining out", 25000}, "groceries": {"Groceries", 45000}, "health": {"Health", 8000}, "books": {"Books", 6000},
	"entertainment": {"Entertainment", 7000}, "home": {"Home", 10000},
}

func budgetEntry() Skill {
	return Make(Def[Expense]{
		Doc: Doc{Name: "budget_entry", Summary: "Enter an expense in the budget app, in a category (created with this month's budget on first use).",
			Interfaces: []string{MCP}, Services: []string{"budget"},
			Changes:     []string{"budget.categories, a row when the category is new", "budget.budgets, the category's month when it has no budget yet", "budget.expenses, one row"},
			Constraints: []string{"the budget definition is served (define_service)", "payees are catalog places", "the expense date is the day or earlier", "the expense id is new (DATE-PAYEE-N)"},
			Continues:   []string{"define_service", "budget_entry"},
			Example: rawJSON(Expense{ID: "2026-03-03-thorne-cafe-1", Category: "Dining out", BudgetCents: 25000, Date: "2026-03-03", AmountCents: 1250, Currency: Currency,
				Payee: "Thorne Cafe", At: "2026-03-03 13:30:00"})},
		Emit: func(b *Builder, p *Expense) error {
			if p.Date > Date(b.Day) {
				return fmt.Errorf("field date %s is after the day (%s)", p.Date, Date(b.Day))
			}
			if !b.State.HasRecord("budget", "categories", p.Category) {
				ops, err := defOps(b, "budget", "add_category", map[string]any{"name": p.Category, "created_at": p.At})
				if err != nil {
					return err
				}
				b.Op(ops...)
				b.ProducesRow("budget", "categories", map[string]any{"name": p.Category})
				b.State.AddRecord("budget", "categories", p.Category)
			}
			month := p.Date[:7]
			if p.BudgetCents > 0 && !b.State.HasRecord("budget", "budgets", p.Category+"@"+month) {
				ops, err := defOps(b, "budget", "set_budget", map[string]any{"category": p.Category, "month": month, "amount_cents": p.BudgetCents, "currency": p.Currency})
				if err != nil {
					return err
				}
				b.Op(ops...)
				b.State.AddRecord("budget", "budgets", p.Category+"@"+month)
			}
			if b.State.HasRecord("budget", "expenses", p.ID) {
				return fmt.Errorf("field id: expense %s exists already", p.ID)
			}
			ops, err := defOps(b, "budget", "add_expense", map[string]any{"ext_id": p.ID, "date": p.Date, "amount_cents": p.AmountCents, "currency": p.Currency,
				"category": p.Category, "payee": p.Payee, "note": p.Note, "created_at": p.At})
			if err != nil {
				return err
			}
			b.Op(ops...)
			b.ProducesRow("budget", "expenses", map[string]any{"ext_id": p.ID})
			b.State.Next("expense")
			b.State.AddRecord("budget", "expenses", p.ID)
			return nil
		},
		Propose: func(d *Draw) (*Expense, error) {
			if !served(d, "budget") {
				return nil, ErrSkip
			}
			payee, cents, spend, err := placeSpend(d)
			if err != nil {
				return nil, err
			}
			cat := budgetCategories[spend]
			p := &Expense{ID: fmt.Sprintf("%s-%s-%d", d.Date(), slug(payee), d.State.Peek("expense")), Category: cat.name, Date: d.Date(),
				AmountCents: cents, Currency: Currency, Payee: payee, At: d.Hour(12, 22)}
			if !d.State.HasRecord("budget", "budgets", cat.name+"@"+d.Date()[:7]) {
				p.BudgetCents = cat.budget
			}
			return p, nil
		},
		Review: func(c *Check, p *Expense) []string {
			return c.Has("expense "+p.ID, "budget", "expenses", "ext_id = ? AND amount_cents = ? AND payee = ? AND category_id = (SELECT id FROM categories WHERE name = ?)", p.ID, p.AmountCents, p.Payee, p.Category)
		},
	})
}
