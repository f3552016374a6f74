package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func TestWriteDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b := catalog.WriteTest(t), catalog.WriteTest(t)
	ha, err := state.Hash(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := state.Hash(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if ha != hb {
		d, _ := state.Compare(ctx, a, b)
		t.Fatalf("two writes hash %s and %s; first difference: %s", ha.Short(), hb.Short(), d.First())
	}
	m, err := world.ReadManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Persona != catalog.Persona || m.Day != 0 || m.Clock != catalog.Clock {
		t.Errorf("manifest = %+v", m)
	}
	if _, err := state.ReadLayout(a); err != nil {
		t.Errorf("layout: %v", err)
	}
	if err := catalog.Write(ctx, a, nil); err == nil {
		t.Error("Write into a non-empty directory succeeded")
	}
}

func TestCandidates(t *testing.T) {
	ctx := context.Background()
	dir := catalog.WriteTest(t)
	ps, err := catalog.Load(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 45 || len(ps) > 60 {
		t.Errorf("%d products, want about 50", len(ps))
	}
	if !slices.EqualFunc(ps, catalog.Products(), func(a, b catalog.Product) bool { return a.SKU == b.SKU && a.ID == b.ID && a.Image == b.Image }) {
		t.Error("Load and Products disagree")
	}
	surge := 0
	var white, black catalog.Product
	for _, p := range ps {
		if p.Category == catalog.CategorySurge {
			surge++
			if _, err := p.Surge(); err != nil {
				t.Errorf("Surge: %v", err)
			}
		}
		if p.Site != "shop" || p.Image != "images/"+p.SKU+".png" {
			t.Errorf("%s: site %q image %q", p.SKU, p.Site, p.Image)
		}
		switch p.SKU {
		case catalog.CandidateWhite:
			white = p
		case catalog.CandidateBlack:
			black = p
		}
	}
	if surge < 12 || surge > 16 {
		t.Errorf("%d surge protectors, want about 14", surge)
	}
	if white.SKU == "" || black.SKU == "" {
		t.Fatal("candidates missing")
	}
	// Equal except id, sku and image.
	w, b := white, black
	w.ID, w.SKU, w.Image = 0, "", ""
	b.ID, b.SKU, b.Image = 0, "", ""
	wj, bj := mustJSON(t, w), mustJSON(t, b)
	if !bytes.Equal(wj, bj) {
		t.Errorf("candidates differ:\n%s\n%s", wj, bj)
	}
	s, err := white.Surge()
	if err != nil {
		t.Fatal(err)
	}
	if want := (catalog.SurgeSpecs{Joules: 2700, Outlets: 8, RackUnits: 1, CordFt: 10, USBPorts: 0, ULListed: true}); s != want {
		t.Errorf("specs = %+v, want %+v", s, want)
	}
	visual := regexp.MustCompile(`(?i)white|black|colou?r|display|screen|panel|readout|digital|lcd|led`)
	for _, p := range []catalog.Product{white, black} {
		text := p.Title + " " + p.Description + " " + string(mustJSON(t, p.Specs)) + " " + p.Image
		if m := visual.FindString(text); m != "" {
			t.Errorf("%s: text names a visual attribute: %q", p.SKU, m)
		}
	}
	wp, err := os.ReadFile(filepath.Join(dir, "home", white.Image))
	if err != nil {
		t.Fatal(err)
	}
	bp, err := os.ReadFile(filepath.Join(dir, "home", black.Image))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(wp, bp) || !bytes.HasPrefix(wp, []byte("\x89PNG")) {
		t.Error("candidate photos are equal or not PNG")
	}
}

func TestRank(t *testing.T) {
	ps, err := catalog.Load(context.Background(), catalog.WriteTest(t))
	if err != nil {
		t.Fatal(err)
	}
	r := catalog.Rank(ps)
	if len(r) < 4 {
		t.Fatalf("only %d ranked products: the candidates need near rivals", len(r))
	}
	// The approved look-alike must not come first in any text order: a
	// photo-blind pick of the first tied model is then wrong.
	got := []string{r[0].SKU, r[1].SKU}
	if want := []string{catalog.CandidateBlack, catalog.CandidateWhite}; !slices.Equal(got, want) {
		t.Fatalf("top two = %v, want %v (the approved %s second)", got, want, catalog.CandidateWhite)
	}
	second := func(order string, skus []string) {
		t.Helper()
		b, w := slices.Index(skus, catalog.CandidateBlack), slices.Index(skus, catalog.CandidateWhite)
		if b < 0 || w < 0 || w < b {
			t.Errorf("%s order puts the approved %s (at %d) before %s (at %d)", order, catalog.CandidateWhite, w, catalog.CandidateBlack, b)
		}
	}
	var byID []string
	for _, p := range ps {
		byID = append(byID, p.SKU)
	}
	second("product id (the spec sheet's)", byID)
	key := func(p catalog.Product) [2]int64 {
		s, _ := p.Surge()
		return [2]int64{s.Joules, p.PriceCents}
	}
	if key(r[0]) != key(r[1]) {
		t.Error("top two do not tie")
	}
	for _, p := range r[2:] {
		if key(p) == key(r[0]) {
			t.Errorf("%s ties with the candidates", p.SKU)
		}
	}
}

func TestCatalogSearch(t *testing.T) {
	ctx := context.Background()
	c, err := catalog.Open(catalog.WriteTest(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ps, err := c.Search(ctx, "shop", "rack SURGE", 100)
	if err != nil {
		t.Fatal(err)
	}
	var skus []string
	for _, p := range ps {
		skus = append(skus, p.SKU)
	}
	if b, w := slices.Index(skus, catalog.CandidateBlack), slices.Index(skus, catalog.CandidateWhite); b < 0 || w < b {
		t.Errorf("search rack surge = %v: want both look-alikes, the approved %s after %s (no text order may single it out)", skus, catalog.CandidateWhite, catalog.CandidateBlack)
	}
	for _, q := range []string{"%", "_", `\`, "zzz nothing"} {
		ps, err := c.Search(ctx, "shop", q, 100)
		if err != nil || len(ps) != 0 {
			t.Errorf("search %q = %d results, %v", q, len(ps), err)
		}
	}
	if _, err := c.Product(ctx, "shop", "nope"); !strings.Contains(err.Error(), "no such product") {
		t.Errorf("unknown sku: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
