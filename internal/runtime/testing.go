package runtime

import (
	"os"
	"testing"

	"github.com/wildawm/wildawm/internal/sandbox"
)

// SkipUnlessInstancesRun skips t, naming what to install, unless live
// instances can run here: as root (overlayfs mounts, the sandbox dropping
// to an unprivileged uid), with bubblewrap and with libfaketime (shells run
// on the world's clock). `wildawm setup` installs the packages.
func SkipUnlessInstancesRun(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("instances mount overlayfs and the sandbox drops from root: run as root (CI does)")
	}
	if err := sandbox.Available(); err != nil {
		t.Skipf("the sandbox cannot run here (wildawm setup, or apt-get install -y bubblewrap): %v", err)
	}
	if err := sandbox.ClockAvailable(); err != nil {
		t.Skipf("instances' shells run on the world's clock (wildawm setup): %v", err)
	}
}
