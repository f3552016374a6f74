package taskgen

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// ErrIDClash is a family's bug: two different sketches authored under one
// task ID. The run goes on; the second sketch is rejected with the error.
var ErrIDClash = errors.New("diversity: task ID clash")

// Embedder turns texts into vectors for the diversity gate: an
// OpenAI-compatible embeddings endpoint when one is configured, else
// HashEmbedding, offline and deterministic.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// HashDims is the size of HashEmbedding's vectors.
const HashDims = 512

// HashEmbedding embeds a text as its words and word pairs hashed into
// HashDims buckets, normalised: texts sharing most words and phrases are
// close, whatever their order. Offline and deterministic.
type HashEmbedding struct{}

// Embed implements Embedder.
func (HashEmbedding) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		v := make([]float64, HashDims)
		words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '/' && r != '.'
		})
		add := func(s string, w float64) {
			h := fnv.New64a()
			h.Write([]byte(s))
			x := h.Sum64()
			sign := 1.0
			if x>>63 == 1 {
				sign = -1
			}
			v[x%HashDims] += sign * w
		}
		for j, w := range words {
			add(w, 1)
			if j > 0 {
				add(words[j-1]+" "+w, 1.5)
			}
		}
		norm := 0.0
		for _, x := range v {
			norm += x * x
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for k := range v {
				v[k] /= norm
			}
		}
		out[i] = v
	}
	return out, nil
}

// ErrBadEmbedding is an embedding the gate cannot compare: the wrong
// count of vectors, a dimension other than the run's, a NaN or an
// infinity, or a zero vector.
var ErrBadEmbedding = errors.New("diversity: unusable embedding")

// unit checks the one vector an embedder gave for one text and returns it
// normalised (servers need not normalise: cosine here is a dot product of
// unit vectors); dims is the run's dimension so far (0: none yet).
func unit(vs [][]float64, dims int) ([]float64, error) {
	if len(vs) != 1 {
		return nil, fmt.Errorf("%w: %d vectors for one text", ErrBadEmbedding, len(vs))
	}
	v := vs[0]
	if len(v) == 0 || (dims != 0 && len(v) != dims) {
		return nil, fmt.Errorf("%w: a vector of %d dimensions where the run's have %d (has the model behind the embeddings URL changed?)", ErrBadEmbedding, len(v), dims)
	}
	norm := 0.0
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: element %d is %v", ErrBadEmbedding, i, x)
		}
		norm += x * x
	}
	if norm == 0 {
		return nil, fmt.Errorf("%w: a zero vector, which is no direction to compare", ErrBadEmbedding)
	}
	norm = math.Sqrt(norm)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / norm
	}
	return out, nil
}

// embed is the gate's unit vector of s.
func (d *Diversity) embed(ctx context.Context, s Sketch) ([]float64, error) {
	vs, err := d.embedder().Embed(ctx, []string{SketchText(s)})
	if err != nil {
		return nil, fmt.Errorf("diversity: embed: %w", err)
	}
	d.mu.Lock()
	dims := d.dims
	d.mu.Unlock()
	v, err := unit(vs, dims)
	if err != nil {
		return nil, fmt.Errorf("%w; sketch %q: check the embedding model the --embeddings URL serves (leave --embeddings out for the offline embedding)", err, s.Title)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dims == 0 {
		d.dims = len(v)
	} else if d.dims != len(v) {
		return nil, fmt.Errorf("%w: a vector of %d dimensions where the run's have %d; sketch %q: check the embedding model the --embeddings URL serves", ErrBadEmbedding, len(v), d.dims, s.Title)
	}
	return v, nil
}

func cosine(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// DefaultMaxSimilarity is the diversity gate's threshold within one
// persona's world: a sketch whose text is this close to an accepted task
// or one in flight on the same persona is a near-duplicate.
const DefaultMaxSimilarity = 0.75

// MaxSimilarityAcross is the threshold across personas: the same kind of
// task on another person's data is another task, unless it reads the
// same.
const MaxSimilarityAcross = 0.97

// Diversity is the diversity gate shared by every worker of a run: a
// sketch is kept only if, against the accepted tasks and the candidates in
// flight in other workers, it shares no core action or artifact with one
// of the same persona, is not too similar to one of the same persona
// (MaxSimilarity), and does not read the same as any (MaxSimilarityAcross);
// so duplicates are dropped before anything is written. It is safe for
// concurrent use.
type Diversity struct {
	Embedder      Embedder
	MaxSimilarity float64 // 0 means DefaultMaxSimilarity

	mu   sync.Mutex
	kept map[string]kept // by key: accepted and in flight
	dims int             // of every vector so far
}

type kept struct {
	text     string
	persona  string
	core     []string
	vec      []float64
	accepted bool
}

// Verdict is the diversity gate's decision on one sketch.
type Verdict struct {
	Keep bool `json:"keep"`
	// Nearest is the closest kept task and its similarity; Shared the core
	// items it shares with it.
	Nearest    string   `json:"nearest,omitempty"`
	Similarity float64  `json:"similarity"`
	Shared     []string `json:"shared,omitempty"`
}

// SketchText is what the gate embeds of a sketch.
func SketchText(s Sketch) string {
	return s.Family + ": " + s.Title + ". " + strings.Join(s.Core, "; ")
}

// Reserve decides on s, a sketch on persona's world, under key; a kept
// sketch is in flight until Accept or Release.
func (d *Diversity) Reserve(ctx context.Context, key, persona string, s Sketch) (Verdict, error) {
	vec, err := d.embed(ctx, s)
	if err != nil {
		return Verdict{}, err
	}
	limit := d.MaxSimilarity
	if limit == 0 {
		limit = DefaultMaxSimilarity
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kept == nil {
		d.kept = map[string]kept{}
	}
	// The nearest kept task: the most shared core items, then the most
	// similar text; the same persona's first.
	v := Verdict{Similarity: -1, Keep: true}
	if o, ok := d.kept[key]; ok {
		if o.text != SketchText(s) {
			return Verdict{}, fmt.Errorf("%w: two sketches under one task ID %q (%q and %q): a family's task IDs must tell its sketches apart", ErrIDClash, key, o.text, SketchText(s))
		}
		if o.accepted {
			return Verdict{Keep: true, Nearest: key, Similarity: 1}, nil // kept by an earlier run
		}
	}
	for _, k := range slices.Sorted(mapKeys(d.kept)) {
		if k == key {
			continue
		}
		o := d.kept[k]
		var shared []string
		if o.persona == persona {
			for _, c := range s.Core {
				if slices.Contains(o.core, c) {
					shared = append(shared, c)
				}
			}
		}
		sim := cosine(vec, o.vec)
		dup := len(shared) > 0 || sim >= MaxSimilarityAcross || (o.persona == persona && sim >= limit)
		if dup && v.Keep || (dup == !v.Keep && (len(shared) > len(v.Shared) || (len(shared) == len(v.Shared) && sim > v.Similarity))) {
			v.Nearest, v.Similarity, v.Shared, v.Keep = k, sim, shared, !dup
		}
	}
	if v.Keep {
		d.kept[key] = kept{text: SketchText(s), persona: persona, core: slices.Clone(s.Core), vec: vec}
	}
	return v, nil
}

// Keep counts a sketch accepted without a verdict (a task of an earlier
// run).
func (d *Diversity) Keep(ctx context.Context, key, persona string, s Sketch) error {
	vec, err := d.embed(ctx, s)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.kept == nil {
		d.kept = map[string]kept{}
	}
	d.kept[key] = kept{text: SketchText(s), persona: persona, core: slices.Clone(s.Core), vec: vec, accepted: true}
	return nil
}

func (d *Diversity) embedder() Embedder {
	if d.Embedder == nil {
		return HashEmbedding{}
	}
	return d.Embedder
}

// Accept marks a reserved sketch accepted.
func (d *Diversity) Accept(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.kept[key]; ok {
		k.accepted = true
		d.kept[key] = k
	}
}

// Release drops a reserved sketch that did not become a task.
func (d *Diversity) Release(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.kept[key]; ok && !k.accepted {
		delete(d.kept, key)
	}
}
