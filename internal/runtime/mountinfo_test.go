package runtime_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/runtime"
)

// TestShellMountinfoShowsNoHostPath: what a shell command reads in
// /proc/self/mountinfo names neither the run directory, nor the instance's
// directory, nor the snapshot's id (the overlay's layers are descriptors;
// the home is a bind of a directory within the overlay).
func TestShellMountinfoShowsNoHostPath(t *testing.T) {
	ctx := context.Background()
	p, _, _, inst := caseStudyInstance(t, runtime.ManagerOptions{})
	res, err := inst.Shell(ctx, "cat /proc/self/mountinfo /proc/mounts")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	out := string(res.Stdout)
	if !strings.Contains(out, " /home/user ") {
		t.Fatalf("no home in the mount table:\n%s", out)
	}
	id := p.W0().String()
	for _, s := range []string{p.Env.WorkDir, inst.Dir(), filepath.Dir(inst.Dir()), id, id[:12]} {
		if strings.Contains(out, s) {
			t.Errorf("the shell's mount table shows %s:\n%s", s, out)
		}
	}
}
