package world

import (
	"testing"
	"time"
)

type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

// TestETA: the time left is the steps left at the rate of the steps done
// since the start; steps done before it or skipped do not count.
func TestETA(t *testing.T) {
	c := &stepClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	e := NewETA(c, 2) // 2 of 10 done by an earlier run
	if got := e.String(2, 10); got != "ETA -" {
		t.Errorf("before a step: %q", got)
	}
	c.t = c.t.Add(30 * time.Second)
	if got := e.String(4, 10); got != "ETA 1m30s" { // 2 steps in 30 s, 6 left
		t.Errorf("after two steps in 30 s: %q, want ETA 1m30s", got)
	}
	e.Skip(2) // two read back at no cost
	c.t = c.t.Add(30 * time.Second)
	if left, ok := e.Left(8, 10); !ok || left != 30*time.Second { // 4 ran in 60 s
		t.Errorf("left %v %t, want 30s", left, ok)
	}
	if got := e.String(10, 10); got != "done" {
		t.Errorf("at the end: %q", got)
	}
}
