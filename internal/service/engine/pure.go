package engine

import (
	"strings"
)

// A tool's leading steps that read no table — the checks and rows over its
// arguments, what a hand-written tool checks before it opens a
// transaction — run before the transaction, on the same connection
// (dbtool.DB.ReadAfter, WriteAfter): a call they refuse costs no BEGIN, no
// change count and no ROLLBACK, and a write tool holds its database's
// lock for less time.

// leadingPure returns how many of steps, from the first, read no table.
func leadingPure(steps []Step) int {
	for i, st := range steps {
		if !pureStep(st) {
			return i
		}
	}
	return len(steps)
}

// pureStep reports whether st is a check or row that reads no table.
func pureStep(st Step) bool {
	if st.DB != "" || st.Check == "" && st.Row == "" || st.Row != "" && st.Missing != "" {
		return false
	}
	for _, q := range []string{st.If, st.Check, st.Row} {
		if !pureSQL(q) {
			return false
		}
	}
	return true
}

// pureSQL reports whether q names no table and no state of the
// connection.
func pureSQL(q string) bool {
	u := strings.ToUpper(q)
	for _, w := range []string{"FROM", "CHANGES(", "LAST_INSERT_ROWID", "SQLITE_", "PRAGMA"} {
		if strings.Contains(u, w) {
			return false
		}
	}
	return true
}
