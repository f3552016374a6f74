package runtime

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Clock is an instance's clock: a fixed instant the runtime may step
// forward. Safe for concurrent use; it never reads the wall clock.
type Clock struct{ ns atomic.Int64 }

// Now returns the clock's instant, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// set stores t, which checkClock must have accepted.
func (c *Clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// The range of an instance's clock, in Unix seconds: from the Unix epoch
// (before it, time(2) returns negative values, -1 being its error value)
// to before 2262-01-01T00:00:00Z. The Clock and every program in the shell
// that counts int64 nanoseconds since the epoch (Python's time.time_ns and
// datetime, Go) overflow at 2262-04-11T23:47:16Z; in Go's UnixNano the
// overflow wraps (9999-12-31 read as 1816); the margin leaves the clock
// ticking in a shell command (libfaketime) room to run.
const (
	minClockUnix = 0
	maxClockUnix = 9214646400 // 2262-01-01T00:00:00Z, excluded
)

// ErrClockRange is wrapped by the errors for instants an instance's clock
// cannot represent.
var ErrClockRange = errors.New("outside the range an instance's clock can represent")

// checkClock refuses an instant outside the clock's range.
func checkClock(t time.Time) error {
	if s := t.Unix(); s < minClockUnix || s >= maxClockUnix {
		return fmt.Errorf("%s is %w: from %s to before %s (the shell's programs count int64 nanoseconds since 1970)", t.UTC().Format(time.RFC3339), ErrClockRange,
			time.Unix(minClockUnix, 0).UTC().Format(time.RFC3339), time.Unix(maxClockUnix, 0).UTC().Format(time.RFC3339))
	}
	return nil
}
