package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/wildawm/wildawm/internal/world"
)

// MaxWriteFile bounds what write_file writes.
const MaxWriteFile = 8 << 20

// HomeFiles are the files of an instance's home directory, read and
// written on the host through an os.Root, so no path or symlink leaves it;
// what it writes belongs to the sandbox's uid and a replaced file keeps its
// mode. It writes as root: every file of the home is the sandbox user's
// (sandbox.PrepareHome), so that is what the shell could write too.
type HomeFiles struct {
	Dir      string
	UID, GID int
}

func (h HomeFiles) open(rel string) (*os.Root, string, error) {
	clean, err := world.CleanHomePath(rel)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(h.Dir)
	if err != nil {
		return nil, "", fmt.Errorf("%w: open home: %v", ErrInfra, err)
	}
	return root, clean, nil
}

// ReadFile implements Files.
func (h HomeFiles) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	root, clean, err := h.open(rel)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(clean)
	if err != nil {
		return nil, homeErr(rel, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory: list it with the shell (ls %s)", rel, clean)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxWriteFile+1))
	if err != nil {
		return nil, homeErr(rel, err)
	}
	if len(b) > MaxWriteFile {
		return nil, fmt.Errorf("%s is larger than %d bytes: read a part of it with the shell (head, sed -n)", rel, MaxWriteFile)
	}
	return b, nil
}

// WriteFile implements Files: the file is replaced atomically (a temporary
// file renamed over it), parents made as needed.
func (h HomeFiles) WriteFile(ctx context.Context, rel string, data []byte) error {
	if len(data) > MaxWriteFile {
		return fmt.Errorf("%s: %d bytes is more than write_file writes (%d); write it from the shell", rel, len(data), MaxWriteFile)
	}
	root, clean, err := h.open(rel)
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := path.Dir(clean); dir != "." {
		if err := h.mkdirs(root, dir); err != nil {
			return homeErr(rel, err)
		}
	}
	mode := os.FileMode(0o644)
	if st, err := root.Lstat(clean); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", rel)
		}
		if st.Mode().IsRegular() {
			mode = st.Mode().Perm() // a replaced file keeps its mode (a script stays executable)
		} // a symlink is replaced by the file, never followed
	}
	tmp := path.Join(path.Dir(clean), "."+path.Base(clean)+".wildawm-tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return homeErr(rel, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Lchown(tmp, h.UID, h.GID)
	}
	if werr == nil {
		werr = root.Chmod(tmp, mode) // the umask narrowed OpenFile's
	}
	if werr == nil {
		werr = root.Rename(tmp, clean)
	}
	if werr != nil {
		root.Remove(tmp)
		return homeErr(rel, werr)
	}
	return nil
}

func (h HomeFiles) mkdirs(root *os.Root, dir string) error {
	if st, err := root.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s is a file, not a directory", dir)
		}
		return nil
	}
	if parent := path.Dir(dir); parent != "." {
		if err := h.mkdirs(root, parent); err != nil {
			return err
		}
	}
	if err := root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return root.Lchown(dir, h.UID, h.GID)
}

// homeErr says what went wrong with a home path in the agent's terms.
func homeErr(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist (list the home with the shell: ls)", rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return fmt.Errorf("%s leaves the home directory (through a symlink)", rel)
	}
	return fmt.Errorf("%s: %v", rel, err)
}
