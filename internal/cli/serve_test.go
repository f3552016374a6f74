package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBadLimits: a cap below 1 is refused before anything is
// opened or served, naming the flag.
func TestServeRefusesBadLimits(t *testing.T) {
	st := filepath.Join(t.TempDir(), "store")
	for _, c := range [][]string{{"--max-instances", "0"}, {"--max-instances", "-3"}, {"--instance-inodes", "0"}} {
		_, _, err := run(t, st, append([]string{"serve", "--listen", "127.0.0.1:0"}, c...)...)
		if err == nil || !strings.Contains(err.Error(), c[0]) || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("serve %s: %v", strings.Join(c, " "), err)
		}
	}
}
