package service

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/world"
)

// Library is a directory of service definitions (DIR/NAME.yaml) that
// worlds name in their manifests: the services a synthesizer defined for
// one persona and published for later days and other personas. A
// definition from a file has no Go hooks. The zero Library (or a nil one)
// holds nothing.
type Library struct {
	// Dir holds NAME.yaml files.
	Dir string

	mu       sync.Mutex
	compiled map[world.ID]*engine.Compiled // by the file's hash
}

// Ref returns the manifest reference of the definition file path: its
// name (after checking the definition) and the hash of its bytes.
func Ref(path string) (world.ServiceRef, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return world.ServiceRef{}, err
	}
	d, err := engine.Parse(src)
	if err != nil {
		return world.ServiceRef{}, fmt.Errorf("%s: %w", path, err)
	}
	return world.ServiceRef{Name: d.Name, SHA256: world.Hash(src)}, nil
}

// Resolve returns the Spec of the definition ref names: DIR/NAME.yaml,
// whose bytes must hash to ref.SHA256 (a world pins its definitions).
// Definitions are compiled once per hash.
func (l *Library) Resolve(ref world.ServiceRef) (Spec, error) {
	if l == nil || l.Dir == "" {
		return Spec{}, fmt.Errorf("the world serves the service %s from a definition, and no definitions library is given: pass --services DIR, a directory with %s.yaml", ref.Name, ref.Name)
	}
	path := filepath.Join(l.Dir, ref.Name+".yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("service %s: %w (the world names it; put its definition in %s)", ref.Name, err, l.Dir)
	}
	if h := world.Hash(src); h != ref.SHA256 {
		return Spec{}, fmt.Errorf("service %s: %s has hash %s, the world was made with the definition %s; restore that file (a world keeps its definitions)", ref.Name, path, h, ref.SHA256)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.compiled[ref.SHA256]; ok {
		return FromDefinition(c), nil
	}
	d, err := engine.Parse(src)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	if d.Name != ref.Name {
		return Spec{}, fmt.Errorf("%s defines the service %q, not %q", path, d.Name, ref.Name)
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	if l.compiled == nil {
		l.compiled = map[world.ID]*engine.Compiled{}
	}
	l.compiled[ref.SHA256] = c
	return FromDefinition(c), nil
}

// ForWorld returns the services of a world with manifest m: the built-in
// ones and those its manifest names, resolved in lib.
func ForWorld(m *world.Manifest, lib *Library) ([]Spec, error) {
	all := All()
	for i, ref := range m.Services {
		if slices.ContainsFunc(all, func(s Spec) bool { return s.Name == ref.Name }) {
			return nil, fmt.Errorf("manifest: field services[%d]: %s is a built-in service; give the definition another name", i, ref.Name)
		}
		if world.IsProvenance(ref.Name) {
			return nil, fmt.Errorf("manifest: field services[%d]: %s is the world's provenance database, which no service may serve; give the definition another name", i, ref.Name)
		}
		spec, err := lib.Resolve(ref)
		if err != nil {
			return nil, fmt.Errorf("manifest: field services[%d]: %w", i, err)
		}
		all = append(all, spec)
	}
	return all, nil
}
