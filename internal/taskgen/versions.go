package taskgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/wildawm/wildawm/internal/world"
)

// VersionsDir, beside a run's task directories, keeps their earlier
// versions: VersionsDir/ID/N/ is version N (1, 2, ...) of task ID's
// directory (task.json, the verifier, check.json, gate/ with the outcome
// and every trajectory) as it was when a rerun decided the task again,
// with VersionFile saying why. Whatever a rerun decides, a task's earlier
// outcome and evidence stay there.
const VersionsDir = ".versions"

// VersionFile is a kept version's record, in its directory.
const VersionFile = "version.json"

// Version is a kept version's record.
type Version struct {
	Task string `json:"task"`
	N    int    `json:"n"`
	// Why says what the rerun decided.
	Why string `json:"why"`
}

// HasEvidence reports whether the task directory dir holds an earlier
// stage's decision: a self-check (CheckFile) or a gate's (gate/).
func HasEvidence(dir string) bool {
	for _, name := range []string{CheckFile, "gate"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// KeepVersion copies the task directory dir, as it is, to its next
// version under VersionsDir and returns the version's directory ("" when
// dir does not exist: nothing to keep). The caller then replaces or
// removes what it decides again.
func KeepVersion(dir, why string) (string, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	id := filepath.Base(filepath.Clean(dir))
	if id == "." || id == ".." || id == string(filepath.Separator) || id == VersionsDir {
		return "", fmt.Errorf("taskgen: keep a version of %s: not a task's directory", dir)
	}
	root := filepath.Join(filepath.Dir(dir), VersionsDir, id)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".new-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		return "", fmt.Errorf("taskgen: keep a version of %s: %w", dir, err)
	}
	for range 100 { // versions kept at once by other workers take the next numbers
		n, err := nextVersion(root)
		if err != nil {
			return "", err
		}
		b, _ := json.MarshalIndent(Version{Task: id, N: n, Why: why}, "", "  ")
		if err := world.WriteFileAtomic(filepath.Join(tmp, VersionFile), append(b, '\n'), 0o644); err != nil {
			return "", err
		}
		dst := filepath.Join(root, strconv.Itoa(n))
		if err := os.Rename(tmp, dst); err == nil {
			return dst, nil
		} else if _, serr := os.Stat(dst); serr != nil {
			return "", fmt.Errorf("taskgen: keep a version of %s: %w", dir, err)
		}
	}
	return "", fmt.Errorf("taskgen: keep a version of %s: no free version number under %s", dir, root)
}

// Versions lists the kept versions of the task directory dir, oldest
// first.
func Versions(dir string) ([]Version, error) {
	root := filepath.Join(filepath.Dir(dir), VersionsDir, filepath.Base(dir))
	var out []Version
	for n := 1; ; n++ {
		b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(n), VersionFile))
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var v Version
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("taskgen: %s: %w", filepath.Join(root, strconv.Itoa(n), VersionFile), err)
		}
		out = append(out, v)
	}
}

func nextVersion(root string) (int, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if k, err := strconv.Atoi(e.Name()); err == nil && k > n {
			n = k
		}
	}
	return n + 1, nil
}
