package support

// Limits of a ticket's fields (service.yaml states them to the model and
// checks the tools' arguments; the synthesis functions check seeds).
const (
	MaxSubjectChars = 200
	MaxBodyChars    = 5000
	MaxKeyChars     = 100 // order_no, sku, ticket
)

// Kinds, statuses and authors, as stored.
const (
	KindReturn   = "return"
	KindWarranty = "warranty"
	KindQuestion = "question"

	StatusOpen     = "open"
	StatusWaiting  = "waiting"
	StatusResolved = "resolved"
	StatusClosed   = "closed"

	AuthorCustomer = "customer"
	AuthorSupport  = "support"
)

func validKind(k string) bool {
	return k == KindReturn || k == KindWarranty || k == KindQuestion
}

func validStatus(s string) bool {
	return s == StatusOpen || s == StatusWaiting || s == StatusResolved || s == StatusClosed
}
