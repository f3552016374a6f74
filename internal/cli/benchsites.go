package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) benchSitesCmd() *cobra.Command {
	var (
		catDir   string
		calls    int
		worlds   int
		rpsFor   time.Duration
		chromium bool
	)
	c := &cobra.Command{
		Use:   "sites",
		Short: "Page render p50 in process and through Chromium, requests per second and memory per world, for every site",
		Long: `For every site of the registry, over the generated catalog (--catalog, else
one built into a temporary directory): the p50 and p99 of rendering its
start page, a list page and a detail page in process (calls each, round
robin over the sites), the p50 of loading the detail page in Chromium
(with --chromium, when Debian's chromium is installed), requests per second
over loopback HTTP with 8 clients for --rps-for, and the heap each
additional world costs when every site serves it (--worlds worlds, one
request each). The baseline is the shop, the one hand-written site.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			tmp, err := os.MkdirTemp("", "wildawm-bench-sites-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			if catDir == "" {
				catDir = filepath.Join(tmp, "catalog")
				fmt.Fprintln(e.stderr, "bench sites: building the catalog (seed 1)")
				if _, err := catalog.Build(ctx, catDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
					return err
				}
			}
			return benchSites(ctx, e.stdout, e.stderr, catDir, tmp, calls, worlds, rpsFor, chromium)
		},
	}
	c.Flags().StringVar(&catDir, "catalog", "", "a catalog built by `wildawm catalog build` (default: build one)")
	c.Flags().IntVar(&calls, "calls", 200, "timed renders per page")
	c.Flags().IntVar(&worlds, "worlds", 20, "worlds opened for the memory figure")
	c.Flags().DurationVar(&rpsFor, "rps-for", 2*time.Second, "how long each site is loaded for requests per second")
	c.Flags().BoolVar(&chromium, "chromium", true, "also time detail pages in Chromium (skipped when it is not installed)")
	return c
}

// benchWorld writes a world holding every site's database and the shop's
// account.
func benchWorld(dir string) error {
	tw := map[string][]string{}
	for _, s := range site.All() {
		if s.Schema != nil {
			tw[s.Name] = s.Schema()
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := world.WriteManifest(dir, &world.Manifest{Version: world.ManifestVersion, Persona: "bench", Day: 1, Clock: "2026-01-05T09:00:00Z"}); err != nil {
		return err
	}
	for _, d := range []string{world.DBDir, world.HomeDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for name, ddl := range tw {
		db, err := state.OpenDB(world.DBPath(dir, name), false)
		if err != nil {
			return err
		}
		for _, q := range ddl {
			if _, err := db.Exec(q); err != nil {
				db.Close()
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		db.Close()
	}
	return world.WriteAccounts(dir, nil)
}

var firstRecordRE = regexp.MustCompile(`href="(/[a-z-]+/[^"?]+)"`)

type sitePages struct {
	name  string
	h     http.Handler
	paths []string // start, list, detail
}

func benchSites(ctx context.Context, out, logw io.Writer, catDir, tmp string, calls, worlds int, rpsFor time.Duration, chromium bool) error {
	clock := world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	dir := filepath.Join(tmp, "world")
	if err := benchWorld(dir); err != nil {
		return err
	}
	get := func(h http.Handler, p string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		return rec.Code, rec.Body.String()
	}
	var sites []*sitePages
	for _, spec := range site.All() {
		s, err := spec.Open(site.Options{WorldDir: dir, CatalogDir: catDir, Clock: clock})
		if err != nil {
			return err
		}
		defer s.Close()
		sp := &sitePages{name: spec.Name, h: s, paths: []string{"/"}}
		// The list and a detail page: the shop's search and first product;
		// a kit site's first list and its first record.
		var list string
		if spec.Name == shop.DBName {
			list = "/search?q=rack"
		} else if code, body := get(s, "/"); code == http.StatusOK {
			for _, m := range firstRecordRE.FindAllStringSubmatch(body, -1) {
				if !strings.HasPrefix(m[1], "/static/") && !strings.HasPrefix(m[1], "/images/") {
					list = m[1][:strings.LastIndexByte(m[1], '/')]
					break
				}
			}
		}
		if list != "" {
			sp.paths = append(sp.paths, list)
			if code, body := get(s, list); code == http.StatusOK {
				re := regexp.MustCompile(`href="(` + regexp.QuoteMeta(strings.SplitN(list, "?", 2)[0]) + `/[^"?]+|/p/[^"?]+)"`)
				if m := re.FindStringSubmatch(body); m != nil {
					sp.paths = append(sp.paths, m[1])
				}
			}
		}
		for _, p := range sp.paths {
			if code, _ := get(s, p); code != http.StatusOK {
				return fmt.Errorf("bench sites: GET %s on %s: %d", p, spec.Name, code)
			}
		}
		sites = append(sites, sp)
	}

	// In process, round robin.
	durs := map[string][]time.Duration{}
	for i := range calls + 10 {
		for _, sp := range sites {
			for k, p := range sp.paths {
				t0 := time.Now()
				get(sp.h, p)
				if i >= 10 {
					key := sp.name + "\x00" + []string{"start", "list", "detail"}[k]
					durs[key] = append(durs[key], time.Since(t0))
				}
			}
		}
	}
	q := func(d []time.Duration, f float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(math.Ceil(f*float64(len(s))))-1)]
	}

	// Through Chromium: the detail page, navigated to.
	chrome := map[string]time.Duration{}
	chromeNote := ""
	if chromium {
		if err := browser.Available(); err != nil {
			chromeNote = "Chromium: skipped (" + err.Error() + ")"
		} else {
			b, err := browser.New(ctx, browser.Options{})
			if err != nil {
				return err
			}
			defer b.Close(context.Background())
			for _, sp := range sites {
				srv := httptest.NewServer(sp.h)
				target := srv.URL + sp.paths[len(sp.paths)-1]
				var ds []time.Duration
				for i := range 25 {
					t0 := time.Now()
					if err := b.Navigate(ctx, target); err != nil {
						srv.Close()
						return err
					}
					if i >= 5 {
						ds = append(ds, time.Since(t0))
					}
				}
				srv.Close()
				chrome[sp.name] = q(ds, 0.5)
			}
		}
	}

	// Requests per second over loopback, 8 clients, the site's pages in turn.
	rps := map[string]float64{}
	for _, sp := range sites {
		srv := httptest.NewServer(sp.h)
		var n atomic.Int64
		deadline := time.Now().Add(rpsFor)
		var wg sync.WaitGroup
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		for c := range 8 {
			wg.Go(func() {
				for i := c; time.Now().Before(deadline); i++ {
					resp, err := client.Get(srv.URL + sp.paths[i%len(sp.paths)])
					if err != nil {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					n.Add(1)
				}
			})
		}
		wg.Wait()
		srv.Close()
		rps[sp.name] = float64(n.Load()) / rpsFor.Seconds()
	}

	// Memory per additional world: every site open over each world, one
	// request to each site's detail page.
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	base := heap()
	var opened []site.Site
	for w := range worlds {
		wd := filepath.Join(tmp, fmt.Sprintf("w%d", w))
		if err := benchWorld(wd); err != nil {
			return err
		}
		for i, spec := range site.All() {
			s, err := spec.Open(site.Options{WorldDir: wd, CatalogDir: catDir, Clock: clock})
			if err != nil {
				return err
			}
			opened = append(opened, s)
			get(s, sites[i].paths[len(sites[i].paths)-1])
		}
	}
	perWorld := float64(heap()-base) / float64(worlds)
	for _, s := range opened {
		s.Close()
	}

	shopDetail := q(durs[shop.DBName+"\x00detail"], 0.5)
	fmt.Fprintf(out, "## Sites: pages in process and in Chromium, requests per second, memory per world\n\n")
	fmt.Fprintf(out, "%d renders per page in process (round robin over the sites); Chromium: p50 of 20 navigations to the detail page; requests per second: 8 loopback clients for %s over the site's pages in turn; GOMAXPROCS %d. Ratio: the detail page's in-process p50 over the shop's product page's (the hand-written baseline).\n\n", calls, rpsFor, runtime.GOMAXPROCS(0))
	fmt.Fprintf(out, "| site | start p50 | list p50 | list p99 | detail p50 | detail p99 | detail vs shop | Chromium detail p50 | requests/s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sp := range sites {
		cell := func(kind string, f float64) string {
			d := durs[sp.name+"\x00"+kind]
			if len(d) == 0 {
				return "—"
			}
			return q(d, f).Round(time.Microsecond).String()
		}
		ratio := "—"
		if d := durs[sp.name+"\x00detail"]; len(d) > 0 {
			ratio = fmt.Sprintf("%.2fx", float64(q(d, 0.5))/float64(shopDetail))
		}
		ch := "—"
		if d, ok := chrome[sp.name]; ok {
			ch = d.Round(time.Microsecond).String()
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", sp.name, cell("start", 0.5), cell("list", 0.5), cell("list", 0.99), cell("detail", 0.5), cell("detail", 0.99), ratio, ch, rps[sp.name])
	}
	fmt.Fprintf(out, "\nMemory: %.2f MiB of heap per additional world with all %d sites open over it and one request to each (%d worlds).\n", perWorld/(1<<20), len(sites), worlds)
	if chromeNote != "" {
		fmt.Fprintln(out, "\n"+chromeNote)
	}
	return nil
}
