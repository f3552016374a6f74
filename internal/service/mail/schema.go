package mail

// DBName is the name of the service's database in a world (db/mail.sqlite).
const DBName = "mail"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// The standard folders, in the order CreateOps and the test world create
// them.
const (
	Inbox   = "inbox"
	Sent    = "sent"
	Archive = "archive"
	Drafts  = "drafts"
	Trash   = "trash"
)

// StandardFolders lists the folders every mailbox has, in id order.
func StandardFolders() []string { return []string{Inbox, Sent, Archive, Drafts, Trash} }

// Limits the Go hooks apply (service.yaml states the others to the model).
const (
	MaxAddressChars = 254
	MaxPathChars    = 1024
)
