package gate

import (
	"context"
	"fmt"
	"maps"
	"sync"
)

// FakeJudge is an in-memory ProbeJudge for tests. By default it answers the
// ensemble's verdict (V: 1 -> completed, 0 -> failed) and holds it under
// pressure; Blind and Pressured override its answer per rollout ID. It
// records every call and is safe for concurrent use.
type FakeJudge struct {
	Blind     map[string]Verdict // rollout ID -> blind verdict
	Pressured map[string]Verdict // rollout ID -> verdict under pressure
	Err       error              // returned by every call when set
	// Fixed, when set, makes the judge Deterministic with this reason.
	Fixed string

	mu    sync.Mutex
	calls []FakeCall
}

// FakeCall is one call to a FakeJudge.
type FakeCall struct {
	RolloutID string
	Pressure  string
}

// Judge implements ProbeJudge.
func (f *FakeJudge) Judge(ctx context.Context, r Rollout, pressure string) (Verdict, error) {
	f.mu.Lock()
	f.calls = append(f.calls, FakeCall{RolloutID: r.ID, Pressure: pressure})
	f.mu.Unlock()
	if f.Err != nil {
		return "", f.Err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	over := f.Blind
	if pressure != "" {
		over = f.Pressured
	}
	if v, ok := over[r.ID]; ok {
		return v, nil
	}
	return verdictOf(r.V), nil
}

// Calls returns the calls made so far, in order.
func (f *FakeJudge) Calls() []FakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeCall(nil), f.calls...)
}

// FakeDigests returns a digest function for Probe that returns the given maps
// in turn, one per call, and an error once they run out.
func FakeDigests(steps ...map[string]string) func() (map[string]string, error) {
	var mu sync.Mutex
	i := 0
	return func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if i >= len(steps) {
			return nil, fmt.Errorf("fake digests: call %d, only %d prepared", i+1, len(steps))
		}
		i++
		return maps.Clone(steps[i-1]), nil
	}
}

// Deterministic implements Deterministic: f.Fixed.
func (f *FakeJudge) Deterministic() string { return f.Fixed }
