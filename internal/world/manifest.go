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
