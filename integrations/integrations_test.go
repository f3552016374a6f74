package integrations

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// ranTests reads the count from unittest's "Ran N tests" line.
var ranTests = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)

// TestPython runs the Python tests of each integration from the repository
// root, as a developer would.
func TestPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		const why = "python3 not found: install it (apt-get install python3) to test the Python integrations"
		// As runtime.SkipOutsideCI, without importing the runtime: under CI
		// (WILDAWM_CI set, .ci/run installs python3) a missing python3 fails.
		if os.Getenv("WILDAWM_CI") != "" {
			t.Fatal("WILDAWM_CI is set but " + why)
		}
		t.Skip(why)
	}
	for _, dir := range []string{"integrations/python", "integrations/slime"} {
		t.Run(dir, func(t *testing.T) {
			readInputs(t, filepath.Join("..", dir))
			cmd := exec.CommandContext(t.Context(), python, "-m", "unittest", "discover", "-s", dir, "-v")
			cmd.Dir = ".."
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python3 -m unittest discover -s %s: %v\n%s", dir, err, out)
			}
			m := ranTests.FindSubmatch(out)
			if m == nil {
				t.Fatalf("python3 -m unittest discover -s %s: no \"Ran N tests\" line\n%s", dir, out)
			}
			if n, _ := strconv.Atoi(string(m[1])); n == 0 {
				t.Fatalf("python3 -m unittest discover -s %s ran no test\n%s", dir, out)
			}
			t.Logf("%s: ran %s tests", dir, m[1])
		})
	}
}

// readInputs reads every file under dir (the Python sources and their
// testdata), so that go test's cache, which tracks the files the test
// process opens but not those its python3 child reads, reruns the tests when
// one of them changes.
func readInputs(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return err
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatalf("reading the inputs of %s: %v", dir, err)
	}
}
