package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The generated catalog: Build writes the case study's products (Write's,
// unchanged, ids first) and then every domain below, drawn from a seeded
// generator, into the same db/catalog.sqlite. Each domain draws from a
// generator of its own (the seed and the domain's name), so a change to
// one domain leaves every other domain's rows as they were.

// BuildOptions choose what Build generates.
type BuildOptions struct {
	// Seed draws every generated row; the same seed gives the same bytes.
	Seed uint64
	// Progress, when set, is told each domain as it is written.
	Progress func(domain string, rows int)
}

// DefaultSeed is the seed of the catalog the demo and tests build.
const DefaultSeed = 1

// domain is one part of the generated catalog: its tables and how its rows
// are drawn.
type domain struct {
	name   string
	schema []string
	gen    func(g *gen) error
}

// Build writes the catalog into dir (which must not exist or be empty):
// Write's case-study products and images, then every domain. It reports
// the rows written per table.
func Build(ctx context.Context, dir string, gens Generators, o BuildOptions) (map[string]int, error) {
	if err := Write(ctx, dir, gens); err != nil {
		return nil, err
	}
	path := world.DBPath(dir, DBName)
	db, err := state.OpenDB(path, false)
	if err != nil {
		return nil, fmt.Errorf("build catalog: %w", err)
	}
	defer db.Close()
	// The file is new and written once: no journal to keep.
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF"); err != nil {
		return nil, fmt.Errorf("build catalog: %w", err)
	}
	counts := map[string]int{}
	for _, d := range domains() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, err := newGen(ctx, db, d.name, o.Seed)
		if err != nil {
			return nil, err
		}
		for _, q := range d.schema {
			if _, err := g.tx.ExecContext(ctx, q); err != nil {
				g.close()
				return nil, fmt.Errorf("build catalog: %s: %w", d.name, err)
			}
		}
		if err := d.gen(g); err != nil {
			g.close()
			return nil, fmt.Errorf("build catalog: %s: %w", d.name, err)
		}
		if err := g.commit(); err != nil {
			return nil, fmt.Errorf("build catalog: %s: %w", d.name, err)
		}
		n := 0
		for t, c := range g.counts {
			counts[t] += c
			n += c
		}
		if o.Progress != nil {
			o.Progress(d.name, n)
		}
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO search_fts(search_fts) VALUES ('rebuild'); ANALYZE"); err != nil {
		return nil, fmt.Errorf("build catalog: %w", err)
	}
	var products int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM products").Scan(&products); err != nil {
		return nil, fmt.Errorf("build catalog: %w", err)
	}
	counts["products"] = products
	return counts, nil
}

// gen draws one domain's rows and inserts them in one transaction.
type gen struct {
	ctx    context.Context
	tx     *sql.Tx
	r      *rand.Rand
	stmts  map[string]*sql.Stmt
	counts map[string]int
}

func newGen(ctx context.Context, db *sql.DB, name string, seed uint64) (*gen, error) {
	h := fnv.New64a()
	h.Write([]byte(name))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &gen{ctx: ctx, tx: tx, r: rand.New(rand.NewPCG(seed, h.Sum64())), stmts: map[string]*sql.Stmt{}, counts: map[string]int{}}, nil
}

// insert adds one row to table; cols and vals pair up.
func (g *gen) insert(table string, cols []string, vals ...any) error {
	key := table + "(" + strings.Join(cols, ",") + ")"
	st, ok := g.stmts[key]
	if !ok {
		q := "INSERT INTO " + key + " VALUES (" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
		var err error
		if st, err = g.tx.PrepareContext(g.ctx, q); err != nil {
			return err
		}
		g.stmts[key] = st
	}
	if _, err := st.ExecContext(g.ctx, vals...); err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	g.counts[table]++
	return nil
}

func (g *gen) close() {
	for _, st := range g.stmts {
		st.Close()
	}
	g.tx.Rollback()
}

func (g *gen) commit() error {
	for _, st := range g.stmts {
		st.Close()
	}
	return g.tx.Commit()
}

// Drawing helpers.

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }
func (g *gen) between(lo, hi int) int    { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool     { return g.r.Float64() < p }

// words joins n picks of list with spaces.
func (g *gen) words(list []string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.pick(list)
	}
	return strings.Join(out, " ")
}

// sentence is a sentence of filler prose about topic.
func (g *gen) sentence(topic string) string {
	s := g.pick(sentenceForms)
	s = strings.ReplaceAll(s, "{t}", topic)
	s = strings.ReplaceAll(s, "{a}", g.pick(adjectives))
	s = strings.ReplaceAll(s, "{b}", g.pick(adjectives))
	s = strings.ReplaceAll(s, "{n}", g.pick(nouns))
	return strings.ToUpper(s[:1]) + s[1:]
}

func (g *gen) paragraph(topic string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.sentence(topic)
	}
	return strings.Join(out, " ")
}

// date is day d of the catalog's calendar (day 0 is 2026-01-01), as
// YYYY-MM-DD; d may be negative.
func date(d int) string { return time.Date(2026, 1, 1+d, 0, 0, 0, 0, time.UTC).Format("2006-01-02") }

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Size reports the bytes of the catalog directory dir.
func Size(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
