package engine

import (
	"testing"
)

// BenchmarkBind: one prepared three-parameter statement, its parameters
// bound by name (as written) and by position (bind).
func BenchmarkBind(b *testing.B) {
	db := sqliteMemory(b)
	q := "SELECT :thread_id + 1, :self, :now"
	p := map[string]any{"thread_id": int64(7), "self": "Alex", "now": "2026-03-01 09:00:00"}
	for _, c := range []struct {
		name string
		bind func() (string, []any)
	}{
		{"by-name", func() (string, []any) { return q, args(q, p) }},
		{"by-position", func() (string, []any) { return bind(q, p) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			text, _ := c.bind()
			st, err := db.Prepare(text)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var x, y, z any
			for b.Loop() {
				_, a := c.bind()
				if err := st.QueryRow(a...).Scan(&x, &y, &z); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
