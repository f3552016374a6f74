package generator

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Limits against hostile params. They bound memory and time; every limit
// error wraps ErrLimit.
const (
	MaxParamsBytes   = 16 << 20  // raw params JSON
	MaxOutputBytes   = 8 << 20   // csv, markdown and text output
	MaxRows          = 100_000   // csv and markdown table rows
	MaxColumns       = 1_000     // csv and markdown table columns
	MaxImageSide     = 4096      // png and product_image width and height, in pixels
	MaxShapes        = 10_000    // png shapes
	MaxPaintedPixels = 256 << 20 // png: sum of the clipped shape areas
	MaxPDFTextBytes  = 256 << 10 // pdf: all text together
	MaxPDFLineBreaks = 10_000    // pdf: "\n" in all text together
	MaxPDFParagraphs = 1_000     // pdf paragraphs
	MaxPDFRows       = 5_000     // pdf table rows
	MaxPDFColumns    = 20        // pdf table columns
	MaxOutlets       = 12        // product_image outlets
)

// Sentinel errors callers may branch on with errors.Is.
var (
	// ErrUnknownGenerator is returned by Registry.Generate for a name the
	// registry does not hold.
	ErrUnknownGenerator = errors.New("unknown generator")
	// ErrLimit is wrapped by every error about params exceeding a limit.
	ErrLimit = errors.New("params exceed a limit")
)

// Generator turns params into file content. Output is a pure function of
// params: identical on every machine and every run.
type Generator interface {
	Name() string
	// Generate returns the file content. params is the raw JSON object from
	// the delta. Errors about params are *ParamError.
	Generate(params json.RawMessage) ([]byte, error)
}

// Registry maps generator names to generators. It is immutable once built
// and safe for concurrent use.
type Registry struct {
	gens  map[string]Generator
	names []string
}

// NewRegistry returns a registry of gens. Names must be non-empty and unique.
func NewRegistry(gens ...Generator) (*Registry, error) {
	r := &Registry{gens: make(map[string]Generator, len(gens))}
	for _, g := range gens {
		n := g.Name()
		if n == "" {
			return nil, errors.New("generator: registry: empty generator name")
		}
		if _, dup := r.gens[n]; dup {
			return nil, fmt.Errorf("generator: registry: duplicate generator %q", n)
		}
		r.gens[n] = g
		r.names = append(r.names, n)
	}
	slices.Sort(r.names)
	return r, nil
}

// Default returns a new registry of the built-in generators: csv, markdown,
// pdf, png, product_image and text.
func Default() *Registry {
	r, err := NewRegistry(CSV(), Markdown(), PDF(), PNG(), ProductImage(), Text())
	if err != nil {
		panic(err) // the built-in names are fixed and distinct
	}
	return r
}

// Lookup returns the generator called name.
func (r *Registry) Lookup(name string) (Generator, bool) {
	g, ok := r.gens[name]
	return g, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Generate runs the generator called name on params. An unknown name yields
// an error wrapping ErrUnknownGenerator that lists the known names.
func (r *Registry) Generate(name string, params json.RawMessage) ([]byte, error) {
	g, ok := r.gens[name]
	if !ok {
		return nil, fmt.Errorf("generator: %w %q (known: %s)", ErrUnknownGenerator, name, strings.Join(r.names, ", "))
	}
	return g.Generate(params)
}
