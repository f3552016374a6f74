package taskgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestDiversityGate: a sketch sharing a core action with a kept one, or
// worded almost alike, is rejected, whether the other is accepted or still
// in flight in another worker; a released one no longer counts; distinct
// sketches pass; concurrent reservations of one duplicate keep exactly one.
func TestDiversityGate(t *testing.T) {
	ctx := context.Background()
	var d Diversity
	a := Sketch{Family: "wishlist-balance", Title: "Buy the dearest wish-list device within half of Savings", Core: []string{"order devices LD-0149", "file decisions/wishlist.csv"}}
	if v, _ := d.Reserve(ctx, "a", "p1", a); !v.Keep {
		t.Fatalf("the first sketch: %+v", v)
	}
	sameCore := Sketch{Family: "other", Title: "Something else entirely about flights", Core: []string{"order devices LD-0149"}}
	if v, _ := d.Reserve(ctx, "b", "p1", sameCore); v.Keep || v.Nearest != "a" || len(v.Shared) != 1 {
		t.Fatalf("a shared core action (a in flight): %+v", v)
	}
	reworded := a
	reworded.Core = []string{"order devices LD-0150", "file decisions/wishlist.csv2"}
	if v, _ := d.Reserve(ctx, "c", "p1", reworded); v.Keep || v.Similarity < DefaultMaxSimilarity {
		t.Fatalf("a near-duplicate wording: %+v", v)
	}
	// The same sketch on another persona's world is another task, unless
	// it reads the same.
	if v, _ := d.Reserve(ctx, "a2", "p2", reworded); !v.Keep {
		t.Fatalf("a like task on another persona: %+v", v)
	}
	if v, _ := d.Reserve(ctx, "a3", "p3", a); v.Keep || v.Similarity < MaxSimilarityAcross {
		t.Fatalf("the same text on another persona: %+v", v)
	}
	distinct := Sketch{Family: "trip-budget", Title: "Book the cheapest hotel night near the conference", Core: []string{"book stays H-12", "file trips/budget.md"}}
	if v, _ := d.Reserve(ctx, "d", "p1", distinct); !v.Keep {
		t.Fatalf("a distinct sketch: %+v", v)
	}
	d.Release("a")
	if v, _ := d.Reserve(ctx, "b", "p1", sameCore); !v.Keep {
		t.Fatalf("after a was released: %+v", v)
	}
	d.Accept("b")
	d.Release("b") // accepted: stays
	if v, _ := d.Reserve(ctx, "e", "p1", sameCore); v.Keep {
		t.Fatalf("an accepted task released: %+v", v)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	kept := 0
	dup := Sketch{Family: "x", Title: "One and the same", Core: []string{"the same core"}}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, _ := d.Reserve(ctx, fmt.Sprint("w", i), "p1", dup); v.Keep {
				mu.Lock()
				kept++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if kept != 1 {
		t.Fatalf("%d of 8 concurrent duplicates kept", kept)
	}
}

// TestDiversityWithAnEmbeddingsEndpoint: with an OpenAI-compatible
// embeddings endpoint configured, the gate embeds through it, and still
// tells duplicates from distinct sketches.
func TestDiversityWithAnEmbeddingsEndpoint(t *testing.T) {
	srv := fake.New(t)
	d := Diversity{Embedder: srv.Client(t, nil)}
	ctx := context.Background()
	a := Sketch{Family: "f", Title: "Buy the dearest wish-list device", Core: []string{"order devices LD-1"}}
	b := Sketch{Family: "g", Title: "Book the cheapest hotel night near the venue", Core: []string{"book stays H-2"}}
	if v, err := d.Reserve(ctx, "a", "p", a); err != nil || !v.Keep {
		t.Fatalf("a: %+v %v", v, err)
	}
	if v, err := d.Reserve(ctx, "b", "p", b); err != nil || !v.Keep {
		t.Fatalf("b: %+v %v", v, err)
	}
	if v, _ := d.Reserve(ctx, "a2", "q", a); v.Keep {
		t.Fatalf("the same text on another persona: %+v", v)
	}
	if srv.EmbedCalls() != 3 {
		t.Fatalf("%d embedding requests, want 3", srv.EmbedCalls())
	}
}

// embedFunc is an Embedder of a function of the text.
type embedFunc func(text string) []float64

func (f embedFunc) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = f(t)
	}
	return out, nil
}

// TestDiversityDistrustsEmbeddings: vectors a server returns unnormalised
// are normalised (they once dropped most sketches as near-duplicates); a
// change of dimension (once a panic), a NaN or a zero vector (once the
// gate switched off) is an error naming the --embeddings server.
func TestDiversityDistrustsEmbeddings(t *testing.T) {
	ctx := context.Background()
	a := Sketch{Family: "f", Title: "Buy the dearest wish-list device", Core: []string{"order devices LD-1"}}
	b := Sketch{Family: "g", Title: "Book the cheapest hotel night near the venue", Core: []string{"book stays H-2"}}
	scaled := embedFunc(func(s string) []float64 {
		v, _ := HashEmbedding{}.Embed(ctx, []string{s})
		for i := range v[0] {
			v[0][i] *= 37
		}
		return v[0]
	})
	d := Diversity{Embedder: scaled}
	for _, c := range []struct {
		key string
		s   Sketch
	}{{"a", a}, {"b", b}} {
		if v, err := d.Reserve(ctx, c.key, "p", c.s); err != nil || !v.Keep {
			t.Fatalf("%s with unnormalised vectors: %+v %v; want kept", c.key, v, err)
		}
	}
	if v, err := d.Reserve(ctx, "a2", "q", a); err != nil || v.Keep || v.Similarity < 0.999 {
		t.Fatalf("a duplicate with unnormalised vectors: %+v %v", v, err)
	}
	n := 0
	for _, c := range []struct {
		name string
		f    embedFunc
		want string
	}{
		{"other dimensions", func(string) []float64 {
			n++
			return make([]float64, 8+n)
		}, "dimensions where the run's have"},
		{"NaN", func(string) []float64 { return []float64{1, math.NaN(), 0} }, "element 1 is NaN"},
		{"zero", func(string) []float64 { return make([]float64, 3) }, "a zero vector"},
	} {
		d := Diversity{Embedder: embedFunc(func(s string) []float64 {
			if s == SketchText(a) && c.name == "other dimensions" {
				return []float64{1, 0, 0}
			}
			return c.f(s)
		})}
		d.Reserve(ctx, "a", "p", a)
		_, err := d.Reserve(ctx, "b", "p", b)
		if !errors.Is(err, ErrBadEmbedding) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--embeddings") {
			t.Errorf("%s: %v; want ErrBadEmbedding saying %q and naming --embeddings", c.name, err, c.want)
		}
	}
}
