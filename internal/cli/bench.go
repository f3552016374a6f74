package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/benchworld"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/loadtest"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// The bench commands measure wall-clock time; they are not part of the
// deterministic core.

func (e *env) benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Measure wildawm's figures on generated benchmark worlds"}
	c.AddCommand(e.benchWorldCmd(), e.benchRuntimeCmd(), e.benchMCPCmd(), e.benchMCPEchoCmd(), e.benchServicesCmd(), e.benchSitesCmd(), e.benchBrowserCmd(), e.benchHarnessCmd(), e.benchRLCmd(), e.benchRLAsyncCmd(), e.benchModelsCmd())
	return c
}

type benchWorldFlags struct {
	days       int
	seed       uint64
	catalogMiB int
	resets     int
	hashRuns   int
	dir        string
	out        string
	replay     bool
}

func (e *env) benchWorldCmd() *cobra.Command {
	var f benchWorldFlags
	c := &cobra.Command{
		Use:   "world",
		Short: "Build the benchmark world's day chain into a fresh store and measure store, reset and hash",
		Long: `Generate the benchmark world from a seed (a shared catalog and one persona's
state over --days days), apply each day's delta with the replay and produces
checks, snapshot every day into a fresh store, then measure:
  - bytes in the store for the chain vs full copies vs the unique content;
  - reset p50/p99 of every strategy side by side, as ratios against cp -a;
  - world hash throughput and time for the full state.
Prints a markdown report (also to --out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return e.benchWorld(cmd.Context(), f) },
	}
	c.Flags().IntVar(&f.days, "days", 30, "days in the chain (day 0 included)")
	c.Flags().Uint64Var(&f.seed, "seed", 1, "generator seed")
	c.Flags().IntVar(&f.catalogMiB, "catalog-mib", 55, "catalog size in MiB")
	c.Flags().IntVar(&f.resets, "resets", 300, "timed resets per strategy")
	c.Flags().IntVar(&f.hashRuns, "hash-runs", 7, "timed hashes of the last day's state")
	c.Flags().StringVar(&f.dir, "dir", "", "work directory (default: a new temporary directory, removed afterwards)")
	c.Flags().StringVar(&f.out, "out", "", "also write the markdown report to this file")
	c.Flags().BoolVar(&f.replay, "replay", true, "run the replay check on every day")
	return c
}

func (e *env) benchWorld(ctx context.Context, f benchWorldFlags) error {
	if f.days < 2 || f.resets < 1 || f.hashRuns < 1 {
		return errors.New("bench world: want --days >= 2, --resets >= 1, --hash-runs >= 1")
	}
	dir := f.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "wildawm-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	st, err := store.Init(filepath.Join(dir, "store"))
	if err != nil {
		return err
	}
	defer st.Close()
	gens := generator.Default()
	var rep strings.Builder
	fmt.Fprintf(&rep, "Benchmark world: seed %d, %d days, catalog %d MiB.\n\n", f.seed, f.days, f.catalogMiB)

	// Catalog.
	start := time.Now()
	catDir := filepath.Join(dir, "catalog")
	e.progress("catalog: generating %d MiB", f.catalogMiB)
	if err := benchworld.WriteCatalog(ctx, catDir, f.seed, int64(f.catalogMiB)<<20, gens); err != nil {
		return err
	}
	catID, catSum, err := snapshotWorld(ctx, st, catDir, store.KindCatalog)
	if err != nil {
		return err
	}
	catBytes, _ := treeSize(catDir)
	afterCatalog, err := st.Stats()
	if err != nil {
		return err
	}
	e.progress("catalog: %.1f MiB, snapshot %s (%s)", mib(catBytes), catID.Short(), time.Since(start).Round(time.Millisecond))

	// The day chain.
	g := benchworld.NewGenerator(f.seed)
	g.Catalog = catSum.Hash
	var (
		parentDir  string
		parentSnap world.ID
		dayDirs    []string
		fullBytes  int64
		applyTimes []time.Duration
		snapTimes  []time.Duration
		lastStats  state.HashStats
	)
	for day := range f.days {
		d := g.Next()
		dayDir := filepath.Join(dir, "days", fmt.Sprintf("%02d", day))
		opts := &delta.Options{Generators: gens, Parent: parentSnap}
		if f.replay && parentDir != "" {
			pd := parentDir
			fresh := func(ctx context.Context, dst string) error { return state.Copy(ctx, pd, dst) }
			scratch, err := os.MkdirTemp(dir, "replay-")
			if err != nil {
				return err
			}
			res, err := delta.Replay(ctx, fresh, d, scratch, opts)
			os.RemoveAll(scratch)
			if err != nil {
				return err
			}
			if !res.Equal {
				return fmt.Errorf("day %d: replay mismatch: %s", day, res.First)
			}
		}
		t0 := time.Now()
		if err := delta.ApplyCopy(ctx, parentDir, dayDir, d, opts); err != nil {
			return fmt.Errorf("day %d: %w", day, err)
		}
		applyTimes = append(applyTimes, time.Since(t0))
		issues, err := delta.CheckProduces(ctx, parentDir, dayDir, &d.Produces)
		if err != nil {
			return err
		}
		if len(issues) > 0 {
			return fmt.Errorf("day %d: %w", day, producesError(issues))
		}
		t0 = time.Now()
		id, sum, err := snapshotWorld(ctx, st, dayDir, store.KindWorld)
		if err != nil {
			return err
		}
		snapTimes = append(snapTimes, time.Since(t0))
		size, err := treeSize(dayDir)
		if err != nil {
			return err
		}
		fullBytes += size
		lastStats = sum.Stats
		e.progress("day %2d: %4d ops, %.2f MiB, world %s, snapshot %s", day, len(d.Ops), mib(size), sum.Hash.Short(), id.Short())
		parentDir, parentSnap = dayDir, id
		dayDirs = append(dayDirs, dayDir)
	}
	chainStats, err := st.Stats()
	if err != nil {
		return err
	}
	storeBytes := chainStats.Bytes - afterCatalog.Bytes
	e.progress("unique content: chunking %d states", len(dayDirs))
	uniqChunks, uniqBlocks, err := uniqueContent(dayDirs)
	if err != nil {
		return err
	}
	fmt.Fprintf(&rep, "## Store: %d-day chain\n\n", f.days)
	fmt.Fprintf(&rep, "Persona state on the last day: %d databases, %d tables, %d rows, %d files, %.2f MiB.\n\n",
		lastStats.DBs, lastStats.Tables, lastStats.Rows, lastStats.Files, mib(lastStats.Bytes()))
	fmt.Fprintf(&rep, "| measure | bytes | MiB | ratio |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&rep, "| %d full copies (sum of state sizes) | %d | %.1f | %.2fx of unique |\n", f.days, fullBytes, mib(fullBytes), float64(fullBytes)/float64(uniqChunks))
	fmt.Fprintf(&rep, "| store (packs + indexes + trees + snapshots) | %d | %.1f | **%.3fx of unique** |\n", storeBytes, mib(storeBytes), float64(storeBytes)/float64(uniqChunks))
	fmt.Fprintf(&rep, "| unique content: distinct chunks (the store's chunker) | %d | %.1f | 1 |\n", uniqChunks, mib(uniqChunks))
	fmt.Fprintf(&rep, "| unique content: distinct aligned 4 KiB blocks | %d | %.1f | %.3fx |\n\n", uniqBlocks, mib(uniqBlocks), float64(uniqBlocks)/float64(uniqChunks))
	fmt.Fprintf(&rep, "Catalog: %.1f MiB, stored once as its own snapshot (%.1f MiB in the store), referenced by hash from every manifest.\n\n", mib(catBytes), mib(afterCatalog.Bytes))
	fmt.Fprintf(&rep, "Apply per day: p50 %s; snapshot per day: p50 %s (day 0: %s).\n\n", fmtDur(p50(applyTimes[1:])), fmtDur(p50(snapTimes[1:])), fmtDur(snapTimes[0]))

	// Checkout and store check.
	last := dayDirs[len(dayDirs)-1]
	lower := filepath.Join(dir, "lower")
	t0 := time.Now()
	if err := st.Checkout(ctx, parentSnap, lower); err != nil {
		return err
	}
	checkout := time.Since(t0)
	var checkTimes [2]time.Duration
	for i, noRestore := range []bool{true, false} {
		t0 = time.Now()
		chk, err := st.CheckWith(ctx, &store.CheckOptions{Hash: state.Hash, NoRestore: noRestore})
		if err != nil {
			return err
		}
		if !chk.OK() {
			return fmt.Errorf("store check failed after the chain:\n%s", chk)
		}
		checkTimes[i] = time.Since(t0)
	}
	fmt.Fprintf(&rep, "Checkout of the last day: %s. `store check` of the whole store: %s, clean (objects and trees only, `--no-restore`: %s).\n\n", fmtDur(checkout), fmtDur(checkTimes[1]), fmtDur(checkTimes[0]))

	// Hash.
	e.progress("hash: %d runs over %.1f MiB", f.hashRuns, mib(lastStats.Bytes()))
	var hashTimes []time.Duration
	for range f.hashRuns {
		t0 := time.Now()
		if _, err := state.Summarize(ctx, last); err != nil {
			return err
		}
		hashTimes = append(hashTimes, time.Since(t0))
	}
	hp := p50(hashTimes)
	t0 = time.Now()
	catSum2, err := state.Summarize(ctx, catDir)
	if err != nil {
		return err
	}
	catHash := time.Since(t0)
	fmt.Fprintf(&rep, "## World hash\n\nFull state of the last day (%.2f MiB: %d rows in %d tables, %d files): p50 %s over %d runs, **%.0f MB/s**.\n\n",
		mib(lastStats.Bytes()), lastStats.Rows, lastStats.Tables, lastStats.Files, fmtDur(hp), f.hashRuns, float64(lastStats.Bytes())/hp.Seconds()/1e6)
	fmt.Fprintf(&rep, "The catalog (%.1f MiB, %d rows, %d images): %s, **%.0f MB/s**.\n\n",
		mib(catSum2.Stats.Bytes()), catSum2.Stats.Rows, catSum2.Stats.Files, fmtDur(catHash), float64(catSum2.Stats.Bytes())/catHash.Seconds()/1e6)

	// Reset.
	hl := &reset.Hardlink{}
	if err := hl.Seal(ctx, lower); err != nil {
		return err
	}
	strategies := []reset.Strategy{reset.CP{}, &reset.Copy{}, hl, reset.SQLiteDeserialize{}}
	if ov := (&reset.Overlay{}); overlayWorks(ctx, ov, lower, dir) {
		strategies = append(strategies, ov)
	} else {
		fmt.Fprintf(&rep, "(overlay unavailable here: not root or no overlayfs; it is left out)\n\n")
	}
	e.progress("reset: %d resets per strategy, round-robin over %d strategies", f.resets, len(strategies))
	rr, err := reset.Bench(ctx, lower, strategies, f.resets)
	if err != nil {
		return err
	}
	fmt.Fprintf(&rep, "## Reset\n\nState of the last day (%d files, %.2f MiB, %d databases), %d resets per strategy after a small write, round-robin:\n\n",
		rr.Files, mib(rr.Bytes), rr.DBs, rr.N)
	rep.WriteString(rr.Markdown())

	fmt.Fprint(e.stdout, rep.String())
	if f.out != "" {
		return os.WriteFile(f.out, []byte(rep.String()), 0o644)
	}
	return nil
}

func overlayWorks(ctx context.Context, ov *reset.Overlay, lower, dir string) bool {
	in, err := ov.New(ctx, lower, filepath.Join(dir, "overlay-probe"))
	if err != nil {
		return false
	}
	in.Close(ctx)
	return true
}

// uniqueContent returns the bytes of distinct chunks (with the store's
// chunker) and of distinct 4 KiB-aligned blocks over all files of all dirs:
// the physical limit of deduplication at those granularities.
func uniqueContent(dirs []string) (chunks, blocks int64, err error) {
	seenC := map[[32]byte]bool{}
	seenB := map[[32]byte]bool{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || !de.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, c := range store.Chunks(b) {
				if h := sha256.Sum256(c); !seenC[h] {
					seenC[h] = true
					chunks += int64(len(c))
				}
			}
			for off := 0; off < len(b); off += 4096 {
				blk := b[off:min(off+4096, len(b))]
				if h := sha256.Sum256(blk); !seenB[h] {
					seenB[h] = true
					blocks += int64(len(blk))
				}
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	return chunks, blocks, nil
}

func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

var _ io.Writer = (*strings.Builder)(nil)

func (e *env) benchRuntimeCmd() *cobra.Command {
	var (
		dir       string
		instances int
		workers   int
		duration  time.Duration
		noShell   bool
		hostMode  string
		shellNice int
		setups    int
		guiMode   string
		profile   string
		steps     int
	)
	c := &cobra.Command{
		Use:   "runtime",
		Short: "Host many live instances of the case-study world under concurrent load and measure the runtime",
		Long: `Build the case-study world (as the demo does), start --instances instances in one
Manager behind one agent listener, then for --duration let --workers clients do
random resets (20%), MCP send_message calls (50%) and shell commands (30%).
Afterwards every instance's final hash must equal a replay of the actions it got
since its last reset on a fresh instance: zero lost or corrupted states.
Reports reset p50/p99 under load against creating a fresh instance by copying,
memory per idle instance, MCP tools/call and shell latencies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if dir == "" {
				tmp, err := os.MkdirTemp("", "wildawm-bench-runtime-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			}
			cs, done, err := e.caseStudy(ctx, dir, true)
			if err != nil {
				return err
			}
			defer done()
			if shellNice < -1 || shellNice > 19 {
				return fmt.Errorf("--shell-nice %d: give 1..19, 0 for the runtime's default (%d) or -1 for the process's own priority", shellNice, runtime.DefaultShellNice)
			}
			if profile != "" && profile != "rl" {
				return fmt.Errorf("--profile %q: the one profile is rl (or leave it out for the random mix)", profile)
			}
			var modes []bool
			switch hostMode {
			case "off":
				modes = []bool{false}
			case "on":
				modes = []bool{true}
			case "both":
				modes = []bool{false, true}
			default:
				return fmt.Errorf("--sandbox-host %q: choose off (sandboxes cloned from the process's namespace), on (from a sandbox host made before the instances) or both (one after the other, side by side)", hostMode)
			}
			var chromium *browser.Browser
			switch guiMode {
			case "http":
			case "chromium":
				if profile != "rl" {
					return fmt.Errorf("--browser chromium: only the rl profile has GUI steps (add --profile rl)")
				}
				if err := e.ensureDeps(ctx, true); err != nil {
					return err
				}
				b, err := browser.New(context.WithoutCancel(ctx), browser.Options{})
				if err != nil {
					return fmt.Errorf("--browser chromium: %w (or --browser http)", err)
				}
				defer b.Close(context.Background())
				chromium = b
			default:
				return fmt.Errorf("--browser %q: choose chromium (one shared Chromium, a tab per rollout) or http (the HTTP browser)", guiMode)
			}
			var reps []*loadtest.Report
			for _, host := range modes {
				e.progress("load with the sandbox host %v", map[bool]string{false: "off", true: "on"}[host])
				rep, err := loadtest.Run(ctx, loadtest.Options{Store: cs.src.Run.Store, Snapshot: cs.w0(), CatalogDir: cs.env.CatalogDir,
					RunDir: cs.env.WorkDir, Self: cs.env.Self, Instances: instances, Workers: workers, Duration: duration, Seed: 1, NoShell: noShell,
					SandboxHost: host, ShellNice: shellNice, MaxShellSetups: setups, Chromium: chromium, Profile: profile, RolloutSteps: steps, Progress: e.progress})
				if err != nil {
					return err
				}
				reps = append(reps, rep)
			}
			var out any = reps[0]
			if len(reps) > 1 {
				out = reps
			}
			if err := writeJSON(e.stdout, out); err != nil {
				return err
			}
			for _, rep := range reps {
				if rep.Lost > 0 || len(rep.Failures) > 0 {
					return fmt.Errorf("%d lost or corrupted states, %d failures", rep.Lost, len(rep.Failures))
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "work directory (default: a temporary one)")
	c.Flags().IntVar(&instances, "instances", 256, "live instances")
	c.Flags().IntVar(&workers, "workers", 8, "concurrent clients")
	c.Flags().DurationVar(&duration, "duration", 30*time.Second, "load duration")
	c.Flags().BoolVar(&noShell, "no-shell", false, "leave shell commands out of the load (resets and MCP calls only)")
	c.Flags().StringVar(&profile, "profile", "", "rl: rollouts instead of the random mix: --workers rollouts at once, each --rollout-steps steps (GUI 40%, MCP 30%, shell 20%, file 10%) on a free instance, then its reset; reports steps per second and p50/p99 by interface")
	c.Flags().StringVar(&guiMode, "browser", "http", "with --profile rl, what the GUI steps go through: http (the HTTP browser) or chromium (one shared Chromium, a tab per rollout)")
	c.Flags().IntVar(&steps, "rollout-steps", 20, "with --profile rl, the steps of a rollout")
	c.Flags().IntVar(&setups, "shell-setups", 0, "cap on the shells' sandboxes set up at once across the instances (0: the runtime's default, one per CPU; -1: uncapped)")
	c.Flags().IntVar(&shellNice, "shell-nice", 0, "the shell commands' CPU priority, 1..19 (0: the runtime's default, 10; -1: the process's own)")
	c.Flags().StringVar(&hostMode, "sandbox-host", "on", "where the shells' sandboxes are cloned from: on (a sandbox host made before the instances), off (the process's own mount namespace), both (off, then on)")
	return c
}
