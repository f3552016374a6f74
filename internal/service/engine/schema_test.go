package engine

import (
	"slices"
	"testing"
)

// TestSchemaIndexesFollowTheirTable checks the order of the DDL: each
// table, then its indexes, then the next table (the order a world's
// db.create ran before the services were definitions).
func TestSchemaIndexesFollowTheirTable(t *testing.T) {
	d := &Definition{Tables: []Table{
		{Name: "a", Columns: []string{"id INTEGER PRIMARY KEY", "k TEXT NOT NULL UNIQUE"}, Indexes: []string{"CREATE INDEX a_k ON a(k)"}},
		{Name: "b", Columns: []string{"id INTEGER PRIMARY KEY"}, Constraints: []string{"UNIQUE(id)"}},
	}}
	want := []string{
		"CREATE TABLE a (\n  id INTEGER PRIMARY KEY,\n  k TEXT NOT NULL UNIQUE\n)",
		"CREATE INDEX a_k ON a(k)",
		"CREATE TABLE b (\n  id INTEGER PRIMARY KEY,\n  UNIQUE(id)\n)",
	}
	if got := d.Schema(); !slices.Equal(got, want) {
		t.Errorf("Schema() = %q\nwant %q", got, want)
	}
}
