package delta

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// entryKind is what a home path holds at a point of the day.
type entryKind int

const (
	absent entryKind = iota
	regular
	directory
	symlink
)

// kindOfMode maps a file mode to an entryKind. Any other type (a FIFO, a
// socket, a device) counts as a regular file: no operation may pass through
// it, and the world's snapshot decides whether it may exist at all.
func kindOfMode(m fs.FileMode) entryKind {
	switch {
	case m&fs.ModeSymlink != 0:
		return symlink
	case m.IsDir():
		return directory
	}
	return regular
}

// pathRole is how a file operation uses a path.
type pathRole int

const (
	roleWrite    pathRole = iota // file.write and file.append: the file is written
	roleDelete                   // file.delete: the entry is removed
	roleMoveFrom                 // file.move from
	roleMoveTo                   // file.move to
)

// checkHomePath is the one rule for the home path of a file operation. Lint
// calls it with its model of home as the day goes, apply with the disk, so
// they accept and refuse the same operations with the same words. kindOf
// reports what a cleaned home-relative path holds. It returns the cleaned
// path.
//
// A delta never follows a symlink: no operation passes through one, and a
// write, an append or a move of a symlink is refused. file.delete of a
// symlink removes the link itself, never its target.
func checkHomePath(role pathRole, rel string, kindOf func(clean string) (entryKind, error)) (string, error) {
	clean, err := world.CleanHomePath(rel)
	if err != nil {
		return "", err
	}
	parts := strings.Split(clean, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		k, err := kindOf(dir)
		if err != nil {
			return "", err
		}
		switch k {
		case symlink:
			return "", fmt.Errorf("%q passes through the symlink %s; deltas never follow symlinks", clean, dir)
		case regular:
			return "", fmt.Errorf("%q: %s is a file, not a directory", clean, dir)
		}
		if k == absent {
			break
		}
	}
	k, err := kindOf(clean)
	if err != nil {
		return "", err
	}
	switch role {
	case roleWrite:
		switch k {
		case symlink:
			return "", fmt.Errorf("%q is a symlink; deltas never write through one: delete it first with file.delete", clean)
		case directory:
			return "", fmt.Errorf("%q is a directory", clean)
		}
	case roleDelete:
		switch k {
		case absent:
			return "", fmt.Errorf("%q does not exist at this point of the day", clean)
		case directory:
			return "", fmt.Errorf("%q is a directory; delete its files one by one", clean)
		}
	case roleMoveFrom:
		switch k {
		case absent:
			return "", fmt.Errorf("%q does not exist at this point of the day", clean)
		case directory:
			return "", fmt.Errorf("%q is a directory; move its files one by one", clean)
		case symlink:
			return "", fmt.Errorf("%q is a symlink; deltas never move one: delete it and write the file", clean)
		}
	case roleMoveTo:
		if k != absent {
			return "", fmt.Errorf("%q already exists; delete it first or choose another name", clean)
		}
	}
	return clean, nil
}

// diskKind reports what the home-relative path clean holds on disk in the
// world at root, without following a symlink.
func diskKind(root string) func(clean string) (entryKind, error) {
	return func(clean string) (entryKind, error) {
		fi, err := os.Lstat(filepath.Join(root, world.HomeDir, filepath.FromSlash(clean)))
		if errors.Is(err, fs.ErrNotExist) {
			return absent, nil
		}
		if err != nil {
			return absent, fmt.Errorf("home/%s: %w", clean, errors.Unwrap(err))
		}
		return kindOfMode(fi.Mode()), nil
	}
}
