package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// maxTopFile bounds what readTopFile reads of manifest.json and
// accounts.json.
const maxTopFile = 64 << 20

// readTop reads the manifest and accounts of the world at root, opening
// them without following symlinks.
func readTop(root string) (*world.Manifest, []world.Account, error) {
	b, err := readTopFile(root, world.ManifestFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := world.ParseManifest(b)
	if err != nil {
		return nil, nil, err
	}
	b, err = readTopFile(root, world.AccountsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil, nil // no accounts
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read accounts: %w", err)
	}
	var accts []world.Account
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&accts); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", world.AccountsFile, err)
	}
	return m, accts, nil
}

// readTopFile reads the regular file name at the top of the world at root,
// refusing a symlink or anything but a regular file. Errors name only name.
func readTopFile(root, name string) ([]byte, error) {
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: ".", Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink: it must be a regular file", name)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s must be a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTopFile+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if len(b) > maxTopFile {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxTopFile>>20)
	}
	return b, nil
}

// hidePaths keeps the world directories roots out of err's message, which
// the runtime hands to agents: a path below a root is shown relative to it,
// a root itself as ".". Only absolute roots are hidden (a relative one is
// what the caller typed). errors.Is and errors.As still see err.
func hidePaths(err error, roots ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	hidden := msg
	for _, r := range roots {
		r = filepath.Clean(r)
		if !filepath.IsAbs(r) || r == "/" {
			continue
		}
		hidden = replacePath(hidden, r)
	}
	if hidden == msg {
		return err
	}
	return &hiddenPathError{msg: hidden, err: err}
}

// replacePath replaces root+"/" by "" and root alone (followed by the end or
// a character that cannot continue a path name) by ".".
func replacePath(s, root string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, root)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(root):]
		switch {
		case strings.HasPrefix(rest, "/"):
			rest = rest[1:]
		case rest == "" || strings.ContainsRune(": \"'\n,)", rune(rest[0])):
			b.WriteString(".")
		default:
			b.WriteString(root) // a longer name that starts like root
		}
		s = rest
	}
}

type hiddenPathError struct {
	msg string
	err error
}

func (e *hiddenPathError) Error() string { return e.msg }
func (e *hiddenPathError) Unwrap() error { return e.err }
