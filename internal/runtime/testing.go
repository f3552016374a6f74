package runtime

import (
	"os"
	"testing"

	"github.com/wildawm/wildawm/internal/sandbox"
)

// EnvCI, when set (.ci/run sets it), turns a missing prerequisite from a
// skip into a failure (sandbox.EnvCI).
const EnvCI = sandbox.EnvCI

// SkipUnlessInstancesRun skips t, naming what to install, unless live
// instances can run here: as root (overlayfs mounts, the sandbox dropping
// to an unprivileged uid), with bubblewrap and with libfaketime (shells run
// on the world's clock). `wildawm setup` installs the packages. Under CI
// (EnvCI set) it fails instead.
func SkipUnlessInstancesRun(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		SkipOutsideCI(t, "instances mount overlayfs and the sandbox drops from root: run as root (CI does)")
	}
	if err := sandbox.Available(); err != nil {
		SkipOutsideCI(t, "the sandbox cannot run here (wildawm setup, or apt-get install -y bubblewrap): "+err.Error())
	}
	if err := sandbox.ClockAvailable(); err != nil {
		SkipOutsideCI(t, "instances' shells run on the world's clock (wildawm setup): "+err.Error())
	}
}

// SkipOutsideCI skips t with why, or fails it under CI (EnvCI set).
func SkipOutsideCI(t testing.TB, why string) {
	t.Helper()
	sandbox.SkipOutsideCI(t, why)
}
