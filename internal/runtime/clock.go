package runtime

import (
	"sync/atomic"
	"time"
)

// Clock is an instance's clock: a fixed instant the runtime may step
// forward. Safe for concurrent use; it never reads the wall clock.
type Clock struct{ ns atomic.Int64 }

// Now returns the clock's instant, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

func (c *Clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }
