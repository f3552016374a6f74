package fake_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/world"
)

// pair is a real browser's tab and a fake doing the same things.
type pair struct {
	t    *testing.T
	real *browser.Browser
	fake *fake.Browser
}

func (p pair) do(what string, f func(b interface {
	Navigate(context.Context, string) error
	Click(context.Context, string) error
	SetValue(context.Context, string, string) error
}) error) {
	p.t.Helper()
	if err := f(p.real); err != nil {
		p.t.Fatalf("%s in Chromium: %v", what, err)
	}
	if err := f(p.fake); err != nil {
		p.t.Fatalf("%s in the fake: %v", what, err)
	}
}

// same checks that both snapshots of the current page are one text.
func (p pair) same(page string) {
	p.t.Helper()
	ctx := p.t.Context()
	r, err := p.real.Snapshot(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	f, err := p.fake.Snapshot(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	if r != f {
		rl, fl := strings.Split(r, "\n"), strings.Split(f, "\n")
		for i := range max(len(rl), len(fl)) {
			var a, b string
			if i < len(rl) {
				a = rl[i]
			}
			if i < len(fl) {
				b = fl[i]
			}
			if a != b {
				p.t.Errorf("%s: the snapshots differ at line %d:\nchromium: %s\nfake:     %s", page, i+1, a, b)
				break
			}
		}
		return
	}
	if strings.Count(r, "\n[") < 3 {
		p.t.Errorf("%s: a snapshot with few elements:\n%s", page, r)
	}
	p.t.Logf("%s: %d lines, %d numbered", page, strings.Count(r, "\n"), strings.Count(r, "\n["))
}

// refOf is the number of the snapshot's first line that starts, after
// its "[N] ", with prefix.
func refOf(t *testing.T, snap, prefix string) int {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "[%d]", &n); err == nil && strings.HasPrefix(line[strings.Index(line, "]")+2:], prefix) {
			return n
		}
	}
	t.Fatalf("no line %q in\n%s", prefix, snap)
	return 0
}

func newPair(t *testing.T, real *browser.Browser, origin string) pair {
	t.Helper()
	tab, err := real.Tab(t.Context(), browser.AllowOrigins(origin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close(context.Background()) })
	return pair{t: t, real: tab, fake: newFake(t, fake.Options{AllowOrigins: []string{origin}})}
}

// TestSnapshotSameAsChromium: on the pages of the repository's sites (the
// shop's login, search and product pages; every kit site's start, list
// and detail pages), the fake's snapshot is Chromium's, and a ref taken
// from it clicks through in both.
func TestSnapshotSameAsChromium(t *testing.T) {
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, fmt.Sprintf("skipping: %v (apt-get install -y chromium, which puts it at %s)", err, browser.DefaultExecPath))
	}
	ctx := t.Context()
	real, err := browser.New(ctx, browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close(context.Background())

	t.Run("shop", func(t *testing.T) {
		catDir := catalog.WriteTest(t)
		w := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
		s, err := shop.New(shop.Options{CatalogDir: catDir, WorldDir: w, Clock: world.FixedClock(time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		p := newPair(t, real, srv.URL)
		type b = interface {
			Navigate(context.Context, string) error
			Click(context.Context, string) error
			SetValue(context.Context, string, string) error
		}
		p.do("open the login page", func(b b) error { return b.Navigate(ctx, srv.URL+"/login") })
		p.same("shop /login")
		p.do("log in", func(b b) error {
			if err := b.SetValue(ctx, "#login-username", shop.TestUser); err != nil {
				return err
			}
			if err := b.SetValue(ctx, "#login-password", shop.TestPassword); err != nil {
				return err
			}
			return b.Click(ctx, "#login-submit")
		})
		p.same("shop after login")
		p.do("search", func(b b) error { return b.Navigate(ctx, srv.URL+"/search?q=rack+surge") })
		p.same("shop search")
		p.do("open a product", func(b b) error { return b.Navigate(ctx, srv.URL+"/p/"+catalog.CandidateWhite) })
		p.same("shop product page")
		snap, err := p.fake.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ref := refOf(t, snap, `link "Cart`)
		p.real.Snapshot(ctx) // number the real page too
		p.do("open the cart by its ref", func(b b) error { return b.Click(ctx, browser.Ref(ref)) })
		p.same("shop cart")
	})

	catDir := filepath.Join(t.TempDir(), "catalog")
	if _, err := catalog.Build(ctx, catDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	clock := world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	for _, spec := range site.All() {
		probe, err := spec.Open(site.Options{WorldDir: t.TempDir(), CatalogDir: catDir, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		ks, ok := probe.(*kit.Site)
		probe.Close()
		if !ok {
			continue
		}
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
			p := newPair(t, real, srv.URL)
			type b = interface {
				Navigate(context.Context, string) error
				Click(context.Context, string) error
				SetValue(context.Context, string, string) error
			}
			p.do("open the start page", func(b b) error { return b.Navigate(ctx, srv.URL+"/") })
			p.same(sp.Name + " /")
			p.do("log in", func(b b) error {
				if err := b.Navigate(ctx, srv.URL+"/login"); err != nil {
					return err
				}
				if err := b.SetValue(ctx, "#login-username", kit.TestUser); err != nil {
					return err
				}
				if err := b.SetValue(ctx, "#login-password", kit.TestPassword); err != nil {
					return err
				}
				return b.Click(ctx, "#login-submit")
			})
			if len(sp.Lists) == 0 {
				return
			}
			p.do("open the list", func(b b) error { return b.Navigate(ctx, srv.URL+sp.Lists[0].Path) })
			p.same(sp.Name + " list")
			p.do("open the first record", func(b b) error { return b.Click(ctx, "#results tbody a") })
			p.same(sp.Name + " detail")
		})
	}
}
