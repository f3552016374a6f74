package world

import (
	"fmt"
	"time"
)

// ETA estimates when a job of a known number of steps ends, from a Clock
// (injected: the core never reads the wall clock): the time left is the
// steps left at the rate of the steps done since the ETA was made. Steps
// done before it (a resumed run's) or that cost nothing (Skip) do not
// count toward the rate.
type ETA struct {
	clock Clock
	start time.Time
	base  int
}

// NewETA starts an estimate at clock's now, done steps being done already.
func NewETA(clock Clock, done int) *ETA {
	return &ETA{clock: clock, start: clock.Now(), base: done}
}

// Skip counts n more steps that took no time (read back, not run).
func (e *ETA) Skip(n int) { e.base += n }

// Left is the time left when done of total steps are done; false until a
// step has been done since the start.
func (e *ETA) Left(done, total int) (time.Duration, bool) {
	ran := done - e.base
	if ran <= 0 {
		return 0, false
	}
	if done >= total {
		return 0, true
	}
	per := e.clock.Now().Sub(e.start) / time.Duration(ran)
	return per * time.Duration(total-done), true
}

// String is "ETA 4m10s", "ETA -" before the first step, or "done".
func (e *ETA) String(done, total int) string {
	if done >= total {
		return "done"
	}
	left, ok := e.Left(done, total)
	if !ok {
		return "ETA -"
	}
	return fmt.Sprintf("ETA %s", left.Round(time.Second))
}
