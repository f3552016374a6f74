package synth

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/world"
)

// shipped are the service definitions the procedural application creator
// ships: applications the built-in services lack.
//
//go:embed defs/*.yaml
var shipped embed.FS

// Definitions is the shared library of service definitions: the directory
// worlds' manifests resolve their definitions in (service.Library), and
// the definitions by name.
type Definitions struct {
	Library *service.Library
	ByName  map[string]skill.Definition
}

// Names returns the definitions' names, sorted.
func (d Definitions) Names() []string {
	var out []string
	for n := range d.ByName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// LibraryEntry is one published definition in the library's index.
type LibraryEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	SHA256  world.ID `json:"sha256"`
	// By names who defined it: "procedural" or the persona and day that
	// needed it.
	By string `json:"by"`
}

// ErrConflict is matched by Publish's error when the name is published
// already with another definition.
var ErrConflict = errors.New("published already with another definition")

// indexFile lists the library's definitions.
const indexFile = "index.json"

// OpenLibrary opens the shared library in dir, publishing the shipped
// definitions first.
func OpenLibrary(dir string) (Definitions, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Definitions{}, err
	}
	files, err := shipped.ReadDir("defs")
	if err != nil {
		return Definitions{}, err
	}
	for _, f := range files {
		src, err := shipped.ReadFile("defs/" + f.Name())
		if err != nil {
			return Definitions{}, err
		}
		if _, err := Publish(dir, src, "procedural"); err != nil {
			return Definitions{}, err
		}
	}
	return LoadLibrary(dir)
}

// LoadLibrary reads the library's index.
func LoadLibrary(dir string) (Definitions, error) {
	d := Definitions{Library: &service.Library{Dir: dir}, ByName: map[string]skill.Definition{}}
	entries, err := readIndex(dir)
	if err != nil {
		return d, err
	}
	for _, e := range entries {
		d.ByName[e.Name] = skill.Definition{Ref: world.ServiceRef{Name: e.Name, SHA256: e.SHA256}, Path: filepath.Join(dir, e.Name+".yaml")}
	}
	return d, nil
}

func readIndex(dir string) ([]LibraryEntry, error) {
	b, err := os.ReadFile(filepath.Join(dir, indexFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var entries []LibraryEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, indexFile), err)
	}
	return entries, nil
}

// Publish validates the definition src (parse and compile) and adds it
// to the library in dir as NAME.yaml. A definition is immutable once
// published: publishing the same bytes again is a no-op, and different
// bytes under a published name are refused (give the new version another
// name, or bump it into NAME_v2). Writes are atomic.
func Publish(dir string, src []byte, by string) (LibraryEntry, error) {
	def, err := engine.Parse(src)
	if err != nil {
		return LibraryEntry{}, fmt.Errorf("publish: %w", err)
	}
	if _, err := engine.Compile(def, engine.Hooks{}); err != nil {
		return LibraryEntry{}, fmt.Errorf("publish %s: %w", def.Name, err)
	}
	e := LibraryEntry{Name: def.Name, Version: def.Version, SHA256: world.Hash(src), By: by}
	entries, err := readIndex(dir)
	if err != nil {
		return e, err
	}
	path := filepath.Join(dir, def.Name+".yaml")
	for _, old := range entries {
		if old.Name != def.Name {
			continue
		}
		if old.SHA256 == e.SHA256 {
			return old, nil
		}
		return e, fmt.Errorf("publish: %s is %w (%s, version %s); publish the new one under a new name such as %s_v2", def.Name, ErrConflict, old.SHA256.Short(), old.Version, def.Name)
	}
	if cur, err := os.ReadFile(path); err == nil && !bytes.Equal(cur, src) {
		return e, fmt.Errorf("publish: %s exists and is not in the library's index (%w); remove it or restore the index", path, ErrConflict)
	}
	if err := writeAtomic(path, src); err != nil {
		return e, err
	}
	entries = append(entries, e)
	slices.SortFunc(entries, func(a, b LibraryEntry) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return e, err
	}
	return e, writeAtomic(filepath.Join(dir, indexFile), append(b, '\n'))
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
