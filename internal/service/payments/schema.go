package payments

// DBName is the name of the service's database in a world
// (db/payments.sqlite).
const DBName = "payments"

// Formats of the time columns (UTC).
const (
	TimeFormat   = "2006-01-02 15:04:05"
	DateFormat   = "2006-01-02"
	PeriodFormat = "2006-01"
)

// Account kinds, as stored.
const (
	KindChecking = "checking"
	KindSavings  = "savings"
	KindCredit   = "credit"
)
