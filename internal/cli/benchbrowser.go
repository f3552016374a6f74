package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/world"
)

type benchBrowserFlags struct {
	catDir string
	tabs   []int
	starts int
	opens  int
	settle time.Duration
	out    string
}

func (e *env) benchBrowserCmd() *cobra.Command {
	var f benchBrowserFlags
	c := &cobra.Command{
		Use:   "browser",
		Short: "Tabs (browser contexts) in one Chromium vs fresh Chromium processes: time to open, memory per context",
		Long: `Serves every site of the registry over loopback HTTP (the catalog from
--catalog, else one built into a temporary directory), then:
  - starts a fresh Chromium --starts times (start, and start plus the first
    page load), and opens --opens tabs in one Chromium (open, and open plus
    the first page load), side by side;
  - in one Chromium, opens tabs up to each count of --tabs (1, 8, 32), each
    in a browser context of its own with the origin rule of its site and a
    site's start page loaded, and reads the memory of Chromium's whole
    process tree from /proc (PSS from smaps_rollup, which splits shared
    pages among the processes that share them, and RSS, which counts them
    in each), the processes and the renderers.
Prints a markdown report (also to --out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return e.benchBrowser(cmd.Context(), f) },
	}
	c.Flags().StringVar(&f.catDir, "catalog", "", "a catalog built by `wildawm catalog build` (default: build one)")
	c.Flags().IntSliceVar(&f.tabs, "tabs", []int{1, 8, 32}, "tab counts at which memory is read")
	c.Flags().IntVar(&f.starts, "starts", 5, "timed starts of a fresh Chromium")
	c.Flags().IntVar(&f.opens, "opens", 20, "timed tab opens")
	c.Flags().DurationVar(&f.settle, "settle", 2*time.Second, "wait before each memory reading")
	c.Flags().StringVar(&f.out, "out", "", "also write the markdown report to this file")
	return c
}

func (e *env) benchBrowser(ctx context.Context, f benchBrowserFlags) error {
	if f.starts < 1 || f.opens < 1 || len(f.tabs) == 0 {
		return errors.New("bench browser: want --starts >= 1, --opens >= 1 and at least one --tabs count")
	}
	slices.Sort(f.tabs)
	if err := browser.Available(); err != nil {
		return fmt.Errorf("bench browser: %w (apt-get install -y chromium)", err)
	}
	tmp, err := os.MkdirTemp("", "wildawm-bench-browser-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if f.catDir == "" {
		f.catDir = filepath.Join(tmp, "catalog")
		fmt.Fprintln(e.stderr, "bench browser: building the catalog (seed 1)")
		if _, err := catalog.Build(ctx, f.catDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
			return err
		}
	}
	var buf strings.Builder
	w := io.MultiWriter(e.stdout, &buf)
	if err := benchBrowser(ctx, w, e.stderr, f, tmp); err != nil {
		return err
	}
	if f.out != "" {
		return os.WriteFile(f.out, []byte(buf.String()), 0o644)
	}
	return nil
}

func benchBrowser(ctx context.Context, out, logw io.Writer, f benchBrowserFlags, tmp string) error {
	clock := world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	dir := filepath.Join(tmp, "world")
	if err := benchWorld(dir); err != nil {
		return err
	}
	var pages []string // every site's start page, each on its own origin
	for _, spec := range site.All() {
		s, err := spec.Open(site.Options{WorldDir: dir, CatalogDir: f.catDir, Clock: clock})
		if err != nil {
			return err
		}
		defer s.Close()
		srv := httptest.NewServer(s)
		defer srv.Close()
		pages = append(pages, srv.URL+"/")
	}
	page := func(i int) string { return pages[i%len(pages)] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

	// Fresh processes.
	var start, startLoad []time.Duration
	for i := range f.starts {
		t0 := time.Now()
		b, err := browser.New(ctx, browser.Options{AllowOrigins: []string{page(i)}})
		if err != nil {
			return err
		}
		t1 := time.Now()
		err = b.Navigate(ctx, page(i))
		t2 := time.Now()
		if cerr := b.Close(context.Background()); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		start, startLoad = append(start, t1.Sub(t0)), append(startLoad, t2.Sub(t0))
	}
	fmt.Fprintf(logw, "bench browser: %d fresh Chromium starts done\n", f.starts)

	parent, err := browser.New(ctx, browser.Options{})
	if err != nil {
		return err
	}
	defer parent.Close(context.Background())
	pid := parent.PID()
	if pid == 0 {
		return errors.New("bench browser: Chromium's process id is unknown")
	}

	// Memory at each tab count, tabs kept open.
	time.Sleep(f.settle)
	base, err := readTree(pid)
	if err != nil {
		return err
	}
	type level struct {
		tabs int
		mem  treeMem
	}
	var levels []level
	var tabs []*browser.Browser
	closeTabs := func() {
		for _, t := range tabs {
			t.Close(context.Background())
		}
		tabs = nil
	}
	defer closeTabs()
	for _, n := range f.tabs {
		for len(tabs) < n {
			p := page(len(tabs))
			tab, err := parent.Tab(ctx, browser.AllowOrigins(p))
			if err != nil {
				return err
			}
			tabs = append(tabs, tab)
			if err := tab.Navigate(ctx, p); err != nil {
				return err
			}
		}
		time.Sleep(f.settle)
		m, err := readTree(pid)
		if err != nil {
			return err
		}
		levels = append(levels, level{n, m})
		fmt.Fprintf(logw, "bench browser: %d tabs: PSS %d MiB\n", n, m.pssKB>>10)
	}

	closeTabs()

	// Tabs in the one process, each opened, loaded and closed.
	var open, openLoad []time.Duration
	for i := range f.opens {
		t0 := time.Now()
		tab, err := parent.Tab(ctx, browser.AllowOrigins(page(i)))
		if err != nil {
			return err
		}
		t1 := time.Now()
		err = tab.Navigate(ctx, page(i))
		t2 := time.Now()
		if cerr := tab.Close(context.Background()); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		open, openLoad = append(open, t1.Sub(t0)), append(openLoad, t2.Sub(t0))
	}
	fmt.Fprintf(logw, "bench browser: %d tab opens done\n", f.opens)

	fmt.Fprintf(out, "## wildawm bench browser\n\n")
	fmt.Fprintf(out, "Chromium %s; %d sites' start pages on %d loopback origins; every tab with the origin rule of its page.\n\n", chromiumVersion(ctx), len(pages), len(pages))
	fmt.Fprintf(out, "| a clean browser for a session | p50 | p90 | p50 with the first page loaded |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| fresh Chromium (%d starts) | %s | %s | %s |\n", f.starts, ms(pctDur(start, 0.5)), ms(pctDur(start, 0.9)), ms(pctDur(startLoad, 0.5)))
	fmt.Fprintf(out, "| tab in a shared Chromium (%d opens) | %s | %s | %s |\n", f.opens, ms(pctDur(open, 0.5)), ms(pctDur(open, 0.9)), ms(pctDur(openLoad, 0.5)))
	fmt.Fprintf(out, "\nTab open is %.0fx faster than a fresh start (p50).\n\n", float64(pctDur(start, 0.5))/float64(max(pctDur(open, 0.5), 1)))
	fmt.Fprintf(out, "Memory of Chromium's process tree (pid %d and its descendants) from /proc/PID/smaps_rollup; the baseline is the process with its own blank tab, before any other: PSS %.0f MiB, RSS %.0f MiB, %d processes.\n\n", pid, kbToMiB(base.pssKB), kbToMiB(base.rssKB), base.procs)
	fmt.Fprintf(out, "| tabs (contexts) | processes | renderers | contexts per renderer | PSS | PSS per context | RSS | RSS per context |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range levels {
		dp := float64(l.mem.pssKB-base.pssKB) / float64(l.tabs)
		dr := float64(l.mem.rssKB-base.rssKB) / float64(l.tabs)
		fmt.Fprintf(out, "| %d | %d | %d | %.2f | %.0f MiB | %.1f MiB | %.0f MiB | %.1f MiB |\n", l.tabs, l.mem.procs, l.mem.renderers, float64(l.tabs)/float64(max(l.mem.renderers-base.renderers, 1)), kbToMiB(l.mem.pssKB), dp/1024, kbToMiB(l.mem.rssKB), dr/1024)
	}
	fmt.Fprintf(out, "\nThe contexts per renderer count the renderers added since the baseline.\n")
	return nil
}

func pctDur(d []time.Duration, f float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(f*float64(len(s))+0.5) - 1
	return s[max(0, min(len(s)-1, i))]
}

func kbToMiB(kb int64) float64 { return float64(kb) / 1024 }

func chromiumVersion(ctx context.Context) string {
	v, err := exec.CommandContext(ctx, browser.DefaultExecPath, "--version").Output()
	if err != nil {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(v))
}

// treeMem is the memory of a process and its descendants.
type treeMem struct {
	pssKB, rssKB int64
	procs        int
	renderers    int
}

// readTree sums PSS and RSS over pid and its descendants, from /proc.
func readTree(pid int) (treeMem, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return treeMem{}, err
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(fields[1])
		children[pp] = append(children[pp], p)
	}
	var m treeMem
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		pss, rss, err := rollup(p)
		if err != nil {
			continue // exited
		}
		m.pssKB += pss
		m.rssKB += rss
		m.procs++
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil && strings.Contains(string(cmd), "--type=renderer") {
			m.renderers++
		}
	}
	if m.procs == 0 {
		return m, fmt.Errorf("bench browser: no process %d in /proc", pid)
	}
	return m, nil
}

func rollup(pid int) (pss, rss int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "Pss":
			pss = n
		case "Rss":
			rss = n
		}
	}
	return pss, rss, sc.Err()
}
