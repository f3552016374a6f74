package reset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// BenchmarkReset times Reset (after a small untimed write, as Bench does)
// for every strategy on the default ~16 MiB fixture.
func BenchmarkReset(b *testing.B) {
	lower := newLower(b, nil)
	homeRel, dbRel, err := (&Report{}).scan(lower)
	if err != nil {
		b.Fatal(err)
	}
	ss := []Strategy{CP{}, &Copy{}, &Copy{Workers: 1}, &Hardlink{}, &Overlay{}, &Overlay{Reset: ResetRemount}, SQLiteDeserialize{}}
	for _, s := range ss {
		b.Run(s.Name(), func(b *testing.B) {
			in, err := s.New(b.Context(), lower, filepath.Join(b.TempDir(), "i"))
			if errors.Is(err, ErrUnavailable) {
				b.Skipf("%s unavailable: %v", s.Name(), err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close(context.Background())
			i := 0
			for b.Loop() {
				b.StopTimer()
				if err := benchWrite(b.Context(), in, homeRel, dbRel, i); err != nil {
					b.Fatal(err)
				}
				i++
				b.StartTimer()
				if err := in.Reset(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
