package sandbox

import (
	"os"
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
