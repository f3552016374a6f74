package sandbox

import (
	"os"
	"sync"
	"testing"
)

// EnvCI, when set (.ci/run sets it), turns a missing prerequisite from a
// skip into a failure: CI installs everything, so a skip there would hide a
// broken machine.
const EnvCI = "WILDAWM_CI"

// SkipOutsideCI skips t with why, or fails it under CI (EnvCI set).
func SkipOutsideCI(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvCI) != "" {
		t.Fatalf("%s is set but a prerequisite is missing: %s", EnvCI, why)
	}
	t.Skip(why)
}

// DrawUIDs starts workers goroutines that each draw each uids from next
// and fails t on an error or on a uid handed out twice. Its result waits
// for them and returns the distinct uids drawn.
func DrawUIDs(t testing.TB, workers, each int, next func() (int, error)) (wait func() map[int]bool) {
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				uid, err := next()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[uid] {
					t.Errorf("uid %d handed out twice", uid)
				}
				seen[uid] = true
				mu.Unlock()
			}
		}()
	}
	return func() map[int]bool { wg.Wait(); return seen }
}
