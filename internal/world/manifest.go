package world

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ManifestVersion is the version of manifest.json this code writes and reads.
const ManifestVersion = 1

// Manifest describes a world state: whose it is, which day, the frozen clock
// of that day, the snapshot it grew from and the catalog it shows.
type Manifest struct {
	Version int    `json:"version"`
	Persona string `json:"persona"`
	Day     int    `json:"day"`
	// Clock is the world's frozen instant (RFC 3339, UTC) after this day.
	Clock string `json:"clock"`
	// Parent is the snapshot this state was derived from; zero for day 0.
	// It is history, not content: the world hash leaves it out.
	Parent ID `json:"parent,omitzero"`
	// Catalog is the content hash of the shared read-only catalog the
	// websites show. The catalog itself is never copied into a world.
	Catalog ID `json:"catalog,omitzero"`
	// Produces is what the delta that made this state declared it writes.
	Produces *Produces `json:"produces,omitempty"`
	// Services are the MCP services the world serves from definition files
	// (docs/services/definition.md) besides the built-in ones, sorted by
	// name; each is pinned by the hash of its file.
	Services []ServiceRef `json:"services,omitempty"`
}

// ServiceRef names a service definition by name (its database is
// db/NAME.sqlite) and the SHA-256 of the definition file's bytes.
type ServiceRef struct {
	Name   string `json:"name"`
	SHA256 ID     `json:"sha256"`
}

// ValidateServices checks refs: valid database names, sorted, each once,
// each with a hash; field names the list in the error.
func ValidateServices(field string, refs []ServiceRef) error {
	for i, r := range refs {
		if err := ValidDBName(r.Name); err != nil {
			return fmt.Errorf("%s[%d].name: %w", field, i, err)
		}
		if r.SHA256.IsZero() {
			return fmt.Errorf("%s[%d].sha256: missing; give the SHA-256 of the definition file of %s", field, i, r.Name)
		}
		if i > 0 && refs[i-1].Name >= r.Name {
			return fmt.Errorf("%s[%d]: %q comes after %q: list services once each, sorted by name", field, i, r.Name, refs[i-1].Name)
		}
	}
	return nil
}

// Time parses Clock.
func (m *Manifest) Time() (time.Time, error) {
	t, err := time.Parse(time.RFC3339, m.Clock)
	if err != nil {
		return time.Time{}, fmt.Errorf("manifest: field clock: %q is not RFC 3339 (e.g. \"2026-03-04T09:00:00Z\")", m.Clock)
	}
	return t.UTC(), nil
}

// Validate returns an error naming the first invalid field.
func (m *Manifest) Validate() error {
	if m.Version != ManifestVersion {
		return fmt.Errorf("manifest: field version: got %d, this build reads version %d", m.Version, ManifestVersion)
	}
	if m.Persona == "" {
		return fmt.Errorf("manifest: field persona: must not be empty")
	}
	if m.Day < 0 {
		return fmt.Errorf("manifest: field day: got %d, must be >= 0", m.Day)
	}
	if _, err := m.Time(); err != nil {
		return err
	}
	if err := ValidateServices("manifest: field services", m.Services); err != nil {
		return err
	}
	return nil
}

// ReadManifest reads and validates the manifest of the world at root.
func ReadManifest(root string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(root, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return ParseManifest(b)
}

// ParseManifest decodes and validates a manifest; unknown fields are errors.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Encode returns the canonical encoding of m (indented JSON, trailing newline).
func (m *Manifest) Encode() []byte {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("encode manifest: %v", err)) // only plain types: cannot fail
	}
	return append(b, '\n')
}

// WriteManifest writes m to the world at root atomically.
func WriteManifest(root string, m *Manifest) error {
	if err := m.Validate(); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(root, ManifestFile), m.Encode(), 0o644)
}
