package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// MaxWriteFile bounds what write_file writes, and MaxReadFile what
// read_file and describe_image read, in bytes: a larger file is refused
// before a byte of it is read.
const (
	MaxWriteFile = 8 << 20
	MaxReadFile  = 8 << 20
)

// HomeFiles are the files of an instance's home directory, read and
// written on the host by descriptors (world.OpenHomeFile, world.OpenHomeDir):
// no path or symlink leaves it, no symlink is followed, and nothing but a
// regular file is opened, so a fifo or a lease cannot hold a host thread.
// What it writes belongs to the sandbox's uid and a replaced file keeps its
// mode. It writes as root: every file of the home is the sandbox user's
// (sandbox.PrepareHome), so that is what the shell could write too.
type HomeFiles struct {
	Dir      string
	UID, GID int
}

// ReadFile implements Files: a regular file of at most MaxReadFile bytes.
func (h HomeFiles) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	b, err := world.ReadHomeFile(h.Dir, rel, world.HomeOpen{MaxSize: MaxReadFile})
	if err != nil {
		return nil, h.err(rel, err)
	}
	return b, nil
}

// WriteFile implements Files: the file is replaced atomically (a temporary
// file renamed over it), parents made as needed. The temporary file is
// created O_EXCL|O_NOFOLLOW under a random name in the file's directory,
// opened by descriptor, so no fifo or symlink the agent made there can
// hold or redirect the write; whatever non-directory the path named (a
// symlink, a fifo) is replaced, never opened.
func (h HomeFiles) WriteFile(ctx context.Context, rel string, data []byte) error {
	if len(data) > MaxWriteFile {
		return fmt.Errorf("%s: %d bytes is more than write_file writes (%d); write it from the shell", rel, len(data), MaxWriteFile)
	}
	clean, err := world.CleanHomePath(rel)
	if err != nil {
		return err
	}
	dir, err := world.OpenHomeDir(h.Dir, path.Dir(clean), func(fd int) error { return unix.Fchown(fd, h.UID, h.GID) })
	if err != nil {
		return h.err(rel, err)
	}
	defer unix.Close(dir)
	base := path.Base(clean)
	mode := uint32(0o644)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return fmt.Errorf("%s is a directory", rel)
		case unix.S_IFREG:
			mode = st.Mode & 0o777 // a replaced file keeps its mode (a script stays executable)
		}
	}
	var fd int
	var tmp string
	for range 8 {
		tmp = "." + base + ".wildawm-" + rand.Text()[:16]
		if len(tmp) > 255 {
			tmp = ".wildawm-" + rand.Text()
		}
		fd, err = unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return h.err(rel, &fs.PathError{Op: "create", Path: rel, Err: err})
	}
	werr := unix.Fchown(fd, h.UID, h.GID)
	if werr == nil {
		werr = unix.Fchmod(fd, mode) // the umask narrowed Openat's
	}
	f := os.NewFile(uintptr(fd), tmp)
	if werr == nil {
		_, werr = f.Write(data)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dir, tmp, dir, base)
	}
	if werr != nil {
		unix.Unlinkat(dir, tmp, 0)
		return h.err(rel, werr)
	}
	return nil
}

// err says what went wrong with a home path in the agent's terms, with the
// way on: a refused file is an error the agent sees, never ErrInfra (but
// the home itself missing is).
func (h HomeFiles) err(rel string, err error) error {
	var he *world.HomeFileError
	switch {
	case errors.As(err, &he) && errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w (list the home with the shell: ls)", err)
	case errors.As(err, &he) && errors.Is(err, world.ErrTooLarge):
		return fmt.Errorf("%w: read a part of it with the shell (head, sed -n)", err)
	case errors.As(err, &he):
		return err
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", rel)
	}
	if _, serr := os.Stat(h.Dir); serr != nil {
		return fmt.Errorf("%w: open home: %v", ErrInfra, serr)
	}
	return fmt.Errorf("%s: %v", rel, err)
}
