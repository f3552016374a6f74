package browser_test

import (
	"bytes"
	"context"
	"image/png"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestKitSitesInChromium: for every kit site of the registry, a real
// Chromium logs in, does the site's main state change (its first action,
// on the first record of its first list or on its start page), and the
// world database changes; the screenshot of the page after is not blank.
func TestKitSitesInChromium(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	catDir := filepath.Join(t.TempDir(), "catalog")
	if _, err := catalog.Build(ctx, catDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	clock := world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	n := 0
	for _, spec := range site.All() {
		probe, err := spec.Open(site.Options{WorldDir: t.TempDir(), CatalogDir: catDir, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		ks, ok := probe.(*kit.Site)
		probe.Close()
		if !ok {
			continue // the shop: TestShopEndToEnd
		}
		n++
		sp := ks.Spec()
		t.Run(sp.Name, func(t *testing.T) {
			w := kit.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), sp)
			s, err := kit.New(sp, kit.Options{WorldDir: w, CatalogDir: catDir, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			srv := httptest.NewServer(s)
			defer srv.Close()
			tab, err := b.Tab(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close(context.Background())
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(tab.Navigate(ctx, srv.URL+"/login"))
			must(tab.SetValue(ctx, "#login-username", kit.TestUser))
			must(tab.SetValue(ctx, "#login-password", kit.TestPassword))
			must(tab.Click(ctx, "#login-submit"))
			if txt, err := tab.Text(ctx, ".account strong"); err != nil || txt != kit.TestUser {
				t.Fatalf("after login: %q, %v", txt, err)
			}
			a := sp.Actions[0]
			if a.On != "" {
				must(tab.Navigate(ctx, srv.URL+sp.Lists[0].Path))
				must(tab.Click(ctx, "#results tbody a"))
				if _, err := tab.Text(ctx, "#record-title"); err != nil {
					t.Fatal(err)
				}
			} else {
				must(tab.Navigate(ctx, srv.URL+"/"))
			}
			form := `form[action="/do/` + a.Name + `"]`
			for _, in := range a.Inputs {
				if in.Kind == "text" && in.Default == "" {
					v := "Written in Chromium"
					if in.Name == "name" {
						v = "chromium-project"
					}
					must(tab.SetValue(ctx, form+` [name="`+in.Name+`"]`, v))
				}
			}
			before, err := state.Hash(ctx, w)
			must(err)
			must(tab.Click(ctx, form+" button"))
			if txt, err := tab.Text(ctx, "#flash"); err != nil || txt != a.Done {
				html, _ := tab.HTML(ctx)
				t.Fatalf("after %s: flash %q, %v\n%.1500s", a.Label, txt, err, html)
			}
			after, err := state.Hash(ctx, w)
			must(err)
			if after == before {
				t.Errorf("%s in Chromium did not change the world", a.Label)
			}
			shot, err := tab.Screenshot(ctx)
			must(err)
			img, err := png.Decode(bytes.NewReader(shot))
			must(err)
			colours := map[uint32]bool{}
			bd := img.Bounds()
			for y := bd.Min.Y; y < bd.Max.Y; y += 5 {
				for x := bd.Min.X; x < bd.Max.X; x += 5 {
					r, g, b, _ := img.At(x, y).RGBA()
					colours[r>>8<<16|g>>8<<8|b>>8] = true
				}
			}
			if len(colours) < 8 {
				t.Errorf("the screenshot after %s has %d colours: blank", a.Label, len(colours))
			}
			if html, err := tab.HTML(ctx); err != nil || !strings.Contains(html, "<table") && sp.Actions[0].Then != "" {
				t.Errorf("the page after %s has no table: %v", a.Label, err)
			}
		})
	}
	if n < 14 {
		t.Errorf("%d kit sites, want 14", n)
	}
}
