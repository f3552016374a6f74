package world

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// The on-disk layout of a world state directory (docs/world.md, layout version 1):
//
//	WORLD/
//	  manifest.json        Manifest
//	  accounts.json        []Account, sorted by (site, username)
//	  db/NAME.sqlite       one SQLite database per website and per MCP service
//	  home/...             the persona's home directory
//
// Nothing else may appear at the top level. SQLite databases are kept in
// rollback-journal mode and closed, so no -wal, -shm or -journal files exist
// in a world at rest.
const (
	LayoutVersion = 1
	ManifestFile  = "manifest.json"
	AccountsFile  = "accounts.json"
	DBDir         = "db"
	HomeDir       = "home"
	DBExt         = ".sqlite"
)

var dbNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// ImageFactsDB is the world's provenance database of its images
// (db/imagefacts.sqlite, table image_facts(path, fact, value)): what each
// picture of home shows, written by the skills that draw it, for task
// generation and verification. No site or service serves it and the
// agent's shell sees home only.
const ImageFactsDB = "imagefacts"

// IsProvenance reports whether the database name is a provenance database:
// kept for the orchestrator, served by no site or MCP service.
func IsProvenance(name string) bool { return name == ImageFactsDB }

// ValidDBName reports an error unless name is a valid database name: lowercase
// letters, digits and underscores, starting with a letter, at most 63 bytes.
func ValidDBName(name string) error {
	if !dbNameRE.MatchString(name) {
		return fmt.Errorf("database name %q: want lowercase letters, digits and '_', starting with a letter (e.g. \"shop\")", name)
	}
	return nil
}

// DBPath returns the path of database name in the world at root.
func DBPath(root, name string) string {
	return filepath.Join(root, DBDir, name+DBExt)
}

// DBURI is the SQLite URI of the database file at path with query (such
// as "mode=ro"). The path is made absolute first: a relative one in a
// file: URI would read as its authority (file://worlds/... names host
// "worlds"), which SQLite refuses.
func DBURI(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: query}
	return u.String(), nil
}

// HomePath resolves rel (a slash-separated path relative to home) inside the
// world at root. It fails when rel is absolute, empty, or leaves home.
func HomePath(root, rel string) (string, error) {
	clean, err := CleanHomePath(rel)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, HomeDir, filepath.FromSlash(clean)), nil
}

// CleanHomePath validates and cleans a home-relative path: slash separated,
// not absolute, no "..", no empty or NUL components, no backslashes.
func CleanHomePath(rel string) (string, error) {
	switch {
	case rel == "":
		return "", fmt.Errorf("path is empty: give a path relative to home, e.g. \"docs/notes.md\"")
	case strings.ContainsRune(rel, 0):
		return "", fmt.Errorf("path %q contains a NUL byte", rel)
	case strings.Contains(rel, `\`):
		return "", fmt.Errorf("path %q contains a backslash: use '/' as the separator", rel)
	case path.IsAbs(rel):
		return "", fmt.Errorf("path %q is absolute: paths are relative to home", rel)
	}
	clean := path.Clean(rel)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the home directory", rel)
	}
	return clean, nil
}
