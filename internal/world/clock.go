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

// ClockOr is c's time, or, when c is nil, the clock of the manifest of the
// world at root (read now: a world's clock moves with its day).
func ClockOr(c Clock, root string) (time.Time, error) {
	if c != nil {
		return c.Now(), nil
	}
	m, err := ReadManifest(root)
	if err != nil {
		return time.Time{}, err
	}
	return m.Time()
}
