package world

import "time"

// Clock is the only source of time the core reads. Production code passes a
// FixedClock at the world's day; nothing in the core calls time.Now.
type Clock interface {
	Now() time.Time
}

// FixedClock always returns the same instant.
type FixedClock time.Time

// Now returns the fixed instant.
func (c FixedClock) Now() time.Time { return time.Time(c) }
