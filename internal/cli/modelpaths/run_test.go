package modelpaths

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/cli"
)

// run runs the wildawm command line in process with its store at
// storeDir.
func run(t *testing.T, storeDir string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := cli.Run(context.Background(), append([]string{"--store", storeDir}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, storeDir string, args ...string) string {
	t.Helper()
	out, stderr, err := run(t, storeDir, args...)
	if err != nil {
		t.Fatalf("wildawm %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return out
}
