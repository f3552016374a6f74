package engine

import (
	"slices"
	"testing"
)

// TestResultColumnsKeywordPrefix checks that a column whose name starts
// with a keyword (from_addr, order_id, limit_x) does not end the select
// list when the step's bound columns are read.
func TestResultColumnsKeywordPrefix(t *testing.T) {
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"SELECT thread_key AS t, from_addr AS f FROM mails WHERE ext_id = :m", []string{"t", "f"}},
		{"SELECT order_id, limit_x, groupname, union_id, wherever FROM t", []string{"order_id", "limit_x", "groupname", "union_id", "wherever"}},
		{"SELECT selected AS s FROM t", []string{"s"}},
		{"SELECT a.id AS a_id FROM accounts a", []string{"a_id"}},
	} {
		got, err := resultColumns(c.query)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("resultColumns(%q) = %v, %v; want %v", c.query, got, err, c.want)
		}
	}
}
