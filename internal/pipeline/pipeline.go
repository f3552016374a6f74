package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Options configure a run. The zero value (with Dir) runs the case study.
type Options struct {
	// Dir holds the results: store, catalog, world days, task, rollouts,
	// report.
	Dir string
	// RunDir holds live instances and the snapshot cache. The sandboxed
	// shell runs as an unprivileged uid, so every directory above it must
	// be searchable by that uid (a home under /root is not); the default is
	// a directory under the system temporary directory named after Dir.
	RunDir string
	// Progress, if set, is told about each stage as it goes.
	Progress func(format string, args ...any)
	// Gates configures the gates; the zero value is the paper's (6
	// rollouts, 3 hint-free, hard [0,1], medium [2,2]). It is validated
	// before any work starts.
	Gates gate.Config
}

// Timings is the wall time of each stage.
type Timings struct {
	Catalog   time.Duration            `json:"catalog_ns"`
	World     time.Duration            `json:"world_ns"`
	Task      time.Duration            `json:"task_ns"`
	Reference time.Duration            `json:"reference_ns"`
	Rollouts  map[string]time.Duration `json:"rollouts_ns"`
	Verify    time.Duration            `json:"verify_ns"`
	Judges    time.Duration            `json:"judges_ns"`
	Ablation  time.Duration            `json:"ablation_ns"`
	Gates     time.Duration            `json:"gates_ns"`
}

// Prepared is a built world and an authored task, ready for rollouts.
type Prepared struct {
	Opts        Options
	Store       *store.Store
	Env         *rollout.Env
	Task        *task.Task
	TaskDir     string
	VerifierDir string
	Days        []synth.GrownDay
	CatalogHash world.ID
	Timings     Timings

	// browser is the one Chromium every session opens a fresh tab of.
	browserMu sync.Mutex
	browser   *browser.Browser

	// inspected remembers the offline inspector's verdicts: it is a
	// deterministic judge, its verdict a function of what inspectionKey
	// holds, so a task gated again (a variant of its verifier) is not
	// inspected again. Judges with side effects (Tamper) are never kept.
	inspectedMu sync.Mutex
	inspected   map[inspectionKey]inspection
}

// inspectionKey is everything an offline inspector's verdict depends on:
// what the task asks (its instruction and rubric, read in its initial
// world), the final world, the framing and how the judge weighs it. Its
// phase keeps the probe's blind re-judge apart from the first judgment,
// so within one gating the re-judge is a fresh session that observes
// again; a later gating of the same task reuses both.
type inspectionKey struct {
	phase               string
	instruction, rubric string
	w0, final           world.ID
	pressure            string
	weigh               judge.Pressure
	noVision            bool
}

type inspection struct {
	v  gate.Verdict
	ev []string
}

// inspect is in.Judge(final, pressure) in phase ("judge" or "probe"),
// remembered when in has no side effects.
func (p *Prepared) inspect(ctx context.Context, phase string, in *judge.Inspector, final world.ID, pressure string) (gate.Verdict, []string, error) {
	if in.Pressure == judge.Tamper {
		return in.Judge(ctx, final, pressure)
	}
	k := inspectionKey{phase: phase, instruction: in.Task.Instruction, rubric: strings.Join(in.Task.Rubric, "\x00"),
		w0: in.Task.Provenance.Snapshot, final: final, pressure: pressure, weigh: in.Pressure, noVision: in.NoVision}
	p.inspectedMu.Lock()
	got, ok := p.inspected[k]
	p.inspectedMu.Unlock()
	if ok {
		return got.v, slices.Clone(got.ev), nil
	}
	v, ev, err := in.Judge(ctx, final, pressure)
	if err != nil {
		return v, ev, err
	}
	p.inspectedMu.Lock()
	if p.inspected == nil {
		p.inspected = map[inspectionKey]inspection{}
	}
	p.inspected[k] = inspection{v: v, ev: slices.Clone(ev)}
	p.inspectedMu.Unlock()
	return v, ev, nil
}

// newTab opens a fresh, isolated tab of the run's Chromium, starting it on
// first use (or again, if it died).
func (p *Prepared) newTab(ctx context.Context, origins []string) (rollout.Browser, error) {
	p.browserMu.Lock()
	defer p.browserMu.Unlock()
	if p.browser != nil {
		tab, err := p.browser.Tab(ctx, browser.AllowOrigins(origins...))
		if err == nil {
			return tab, nil
		}
		if ctx.Err() != nil || !errors.Is(err, browser.ErrGone) {
			return nil, err
		}
		// Chromium died: start another.
		p.browser.Close(context.WithoutCancel(ctx))
		p.browser = nil
	}
	b, err := browser.New(context.WithoutCancel(ctx), browser.Options{})
	if err != nil {
		return nil, err
	}
	p.browser = b
	return b.Tab(ctx, browser.AllowOrigins(origins...))
}

// Close stops the run's Chromium.
func (p *Prepared) Close(ctx context.Context) error {
	p.browserMu.Lock()
	defer p.browserMu.Unlock()
	if p.browser == nil {
		return nil
	}
	err := p.browser.Close(ctx)
	p.browser = nil
	return err
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// Prepare builds the catalog, grows the persona's world through the store
// and authors the task.
func Prepare(ctx context.Context, opts Options) (*Prepared, error) {
	if opts.Dir == "" {
		return nil, errors.New("pipeline: Options.Dir is required")
	}
	if err := opts.Gates.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: gate configuration: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if opts.RunDir == "" {
		abs, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, err
		}
		opts.RunDir = filepath.Join(os.TempDir(), "wildawm-run-"+world.Hash([]byte(abs)).Short())
	}
	if err := ownDir(opts.RunDir); err != nil {
		return nil, err
	}
	st, err := store.Init(filepath.Join(opts.Dir, "store"))
	if err != nil {
		return nil, err
	}
	p := &Prepared{Opts: opts, Store: st, Timings: Timings{Rollouts: map[string]time.Duration{}}}
	gens := generator.Default()

	// Catalog: rebuilt each run (deterministic, about 3 s), swapped in whole.
	t0 := time.Now()
	catDir := filepath.Join(opts.Dir, "catalog")
	tmp := catDir + ".new"
	os.RemoveAll(tmp)
	catRows, err := catalog.Build(ctx, tmp, gens, catalog.BuildOptions{Seed: catalog.DefaultSeed})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	os.RemoveAll(catDir)
	if err := os.Rename(tmp, catDir); err != nil {
		return nil, err
	}
	catSum, err := state.Summarize(ctx, catDir)
	if err != nil {
		return nil, err
	}
	if _, err := st.Snapshot(ctx, catDir, store.Meta{Kind: store.KindCatalog, WorldHash: catSum.Hash, Persona: catalog.Persona}); err != nil {
		return nil, err
	}
	p.CatalogHash = catSum.Hash
	p.Timings.Catalog = time.Since(t0)
	total := 0
	for _, n := range catRows {
		total += n
	}
	opts.progress("catalog: %d records (%d products), hash %s (%s)", total, catRows["products"], catSum.Hash.Short(), p.Timings.Catalog.Round(time.Millisecond))

	// World: the persona's days, each checked and stored.
	t0 = time.Now()
	persona := synth.CaseStudyPersona()
	rows, filler := specRows(catalog.Products())
	candidates := [2]string{catalog.CandidateWhite, catalog.CandidateBlack}
	picks, err := webPicks(ctx, catDir)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	plan, err := synth.AddWebHistory(synth.CaseStudyPlan(persona, rows, candidates, filler), persona, picks)
	if err != nil {
		return nil, err
	}
	deltas, err := synth.Deltas(persona, plan, synth.Skills(), catSum.Hash)
	if err != nil {
		return nil, err
	}
	days, err := synth.Grow(ctx, deltas, synth.GrowOptions{Store: st, Generators: gens, WorkDir: filepath.Join(opts.Dir, "world"), Progress: opts.Progress})
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	p.Days = days
	p.Timings.World = time.Since(t0)
	w0 := days[len(days)-1]

	// Task.
	t0 = time.Now()
	t, scripts, err := synth.CaseStudyTask(synth.TaskInput{Persona: persona, Day: w0.Day, Snapshot: w0.Snapshot, Catalog: catSum.Hash,
		Rows: rows, Candidates: candidates, ShopUser: persona.Accounts[0].Username, ShopPass: persona.Accounts[0].Password})
	if err != nil {
		return nil, err
	}
	p.TaskDir = filepath.Join(opts.Dir, "task")
	p.VerifierDir = filepath.Join(p.TaskDir, "verifier")
	if err := writeTask(t, scripts, p.TaskDir); err != nil {
		return nil, err
	}
	p.Task = t
	p.Timings.Task = time.Since(t0)
	opts.progress("task %s: %d sub-tasks over %v, %d verifier criteria", t.ID, len(t.Subtasks), t.Interfaces, len(t.Verifier.Criteria))

	p.Env = &rollout.Env{
		Store:        st,
		Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(opts.RunDir, "cache")},
		CatalogDir:   catDir,
		WorkDir:      opts.RunDir,
		Self:         persona.Name,
		NewBrowser:   p.newTab,
	}
	return p, nil
}

// ownDir creates dir (mode 0755) or checks that it is a real directory
// owned by this user: a directory under a shared /tmp that another user
// made first must not become root's work area.
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("run directory %s is not a directory owned by uid %d: remove it or choose another with RunDir", dir, os.Geteuid())
	}
	return os.Chmod(dir, 0o755)
}

// writeTask saves the task and its verifier directory, replacing old ones.
func writeTask(t *task.Task, scripts map[string]string, dir string) error {
	tmp := dir + ".new"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "verifier", "scripts"), 0o755); err != nil {
		return err
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(tmp, "verifier", "scripts", name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := verify.WriteSDK(filepath.Join(tmp, "verifier")); err != nil {
		return err
	}
	if err := t.Save(tmp); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// specRows turns the catalog's surge protectors into spec-sheet rows, and
// picks a cable as an earlier purchase.
func specRows(ps []catalog.Product) ([]synth.SpecRow, synth.OrderItem) {
	var rows []synth.SpecRow
	var filler synth.OrderItem
	for _, p := range ps {
		if p.Category != catalog.CategorySurge {
			if filler.SKU == "" && p.Category == "cables" {
				filler = synth.OrderItem{SKU: p.SKU, Qty: 4, PriceCents: int(p.PriceCents)}
			}
			continue
		}
		j, _ := p.Specs.Int("joules")
		o, _ := p.Specs.Int("outlets")
		u, _ := p.Specs.Int("rack_units")
		rows = append(rows, synth.SpecRow{SKU: p.SKU, Title: p.Title, Joules: int(j), Outlets: int(o), RackUnits: int(u), PriceCents: int(p.PriceCents)})
	}
	if filler.SKU == "" {
		for _, p := range ps {
			if p.Category != catalog.CategorySurge {
				filler = synth.OrderItem{SKU: p.SKU, Qty: 1, PriceCents: int(p.PriceCents)}
				break
			}
		}
	}
	return rows, filler
}

// W0 is the task's initial snapshot.
func (p *Prepared) W0() world.ID { return p.Task.Provenance.Snapshot }

// Reference runs the task's reference completion on a fresh W0 and returns
// the final world's snapshot.
func (p *Prepared) Reference(ctx context.Context) (world.ID, *agent.Trajectory, error) {
	t0 := time.Now()
	inst, err := p.Env.Start(ctx, p.W0(), "reference")
	if err != nil {
		return world.ID{}, nil, err
	}
	defer inst.Close(context.WithoutCancel(ctx))
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: p.Task.ID, Rollout: "reference", Policy: "reference-completion", Start: p.W0()}
	sess, err := p.Env.Open(ctx, inst, traj)
	if err != nil {
		return world.ID{}, nil, err
	}
	for i, s := range p.Task.Reference {
		if err := sess.Env.Do(ctx, s.Tool, s.Args); err != nil {
			sess.Close(ctx)
			return world.ID{}, traj, fmt.Errorf("reference step %d (%s): %w", i, s.Tool, err)
		}
	}
	sess.Close(ctx)
	traj.Outcome = "done"
	final, err := rollout.SnapshotWorld(ctx, p.Store, inst.Dir(), p.W0())
	p.Timings.Reference = time.Since(t0)
	return final, traj, err
}

// ReplayJudge returns the replay judge for a reference final snapshot.
func (p *Prepared) ReplayJudge(ctx context.Context, ref world.ID) (*judge.ReplayJudge, error) {
	w0, err := p.Env.Materializer.Lower(ctx, p.W0())
	if err != nil {
		return nil, err
	}
	r, err := p.Env.Materializer.Lower(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &judge.ReplayJudge{W0: w0, Ref: r}, nil
}

// webPicks chooses the case study persona's web history from the built
// catalog: a recipe, a hotel room free for the two install nights (with
// their price), and the venue on the map.
func webPicks(ctx context.Context, catDir string) (synth.WebPicks, error) {
	w := synth.WebPicks{CheckIn: "2026-03-09", Nights: 2}
	db, err := state.OpenDB(world.DBPath(catDir, catalog.DBName), true)
	if err != nil {
		return w, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT slug FROM recipes WHERE cuisine = 'Italian' ORDER BY rating_x10 DESC, id LIMIT 1`).Scan(&w.RecipeSlug); err != nil {
		return w, fmt.Errorf("a recipe for the web history: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT h.slug, r.id, sum(rr.price_cents) FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id
		JOIN room_rates rr ON rr.room_id = r.id AND rr.night >= ? AND rr.night < date(?, '+' || ? || ' days')
		GROUP BY r.id HAVING count(*) = ? AND min(rr.available) > 0 ORDER BY h.rating_x10 DESC, r.id LIMIT 1`, w.CheckIn, w.CheckIn, w.Nights, w.Nights).
		Scan(&w.HotelSlug, &w.RoomID, &w.TotalCents); err != nil {
		return w, fmt.Errorf("a hotel room for the web history: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT id FROM places WHERE kind = 'cinema' ORDER BY id LIMIT 1`).Scan(&w.PlaceID); err != nil {
		return w, fmt.Errorf("a place for the web history: %w", err)
	}
	return w, nil
}
