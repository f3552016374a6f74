package mail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/world"
)

func badCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }

// attachment is one attached file as send_mail stores and returns it.
type attachment struct {
	Filename string `json:"filename"`
	HomePath string `json:"home_path"`
}

// checkAttachments resolves send_mail's attachment paths: each must name a
// regular file inside worldDir/home after following symlinks, and no two
// may share a file name. It returns them cleaned, in the order given; a
// path the model can fix is a tool error.
func checkAttachments(worldDir string, paths []string) ([]attachment, error) {
	out := []attachment{}
	if len(paths) == 0 {
		return out, nil
	}
	home, err := filepath.EvalSymlinks(filepath.Join(worldDir, world.HomeDir))
	if err != nil {
		return nil, fmt.Errorf("home directory: %w", err)
	}
	seen := map[string]string{}
	for _, p := range paths {
		if len(p) > MaxPathChars {
			return nil, badCall("attachment path of %d bytes; paths have at most %d", len(p), MaxPathChars)
		}
		clean, err := world.CleanHomePath(p)
		if err != nil {
			return nil, badCall("attachment: %v; attach files inside your home directory by a path relative to it, e.g. \"docs/report.pdf\"", err)
		}
		real, err := filepath.EvalSymlinks(filepath.Join(home, filepath.FromSlash(clean)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, badCall("attachment %q does not exist in your home directory; check the path (relative to home, e.g. \"docs/report.pdf\")", p)
		case err != nil:
			return nil, badCall("attachment %q cannot be read (%s); attach a regular file inside your home directory", p, errText(err))
		}
		if rel, err := filepath.Rel(home, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, badCall("attachment %q leaves your home directory through a symlink; attach only files inside home", p)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, badCall("attachment %q cannot be read (%s); attach a regular file inside your home directory", p, errText(err))
		}
		if !fi.Mode().IsRegular() {
			return nil, badCall("attachment %q is not a regular file (a directory?); attach files one by one", p)
		}
		name := path.Base(clean)
		if prev, dup := seen[name]; dup {
			return nil, badCall("attachments %q and %q have the same file name %q; a mail's attachments need distinct names", prev, p, name)
		}
		seen[name] = p
		out = append(out, attachment{Filename: name, HomePath: clean})
	}
	return out, nil
}

// errText is the part of a path error a user can act on, without the
// world's absolute paths.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return "unreadable"
}
