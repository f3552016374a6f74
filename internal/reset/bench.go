package reset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// This file measures wall-clock time with time.Now. That is deliberate and
// confined to measurement: package reset is not part of the deterministic
// core (world, store, delta, verify, rl), and nothing it returns depends on
// the time except the figures of a Report.

// BaselineName is the strategy every Report compares with.
const BaselineName = "cp"

// A Report is the result of Bench.
type Report struct {
	Lower   string
	Files   int   // regular files in lower
	Bytes   int64 // their total size
	DBs     int   // db/*.sqlite files
	N       int   // timed resets per strategy
	Results []Result
}

// Result holds one strategy's figures.
type Result struct {
	Strategy string
	New      time.Duration // creating the instance (first materialisation)
	P50, P99 time.Duration // of Reset
	Mean     time.Duration
	Min, Max time.Duration
	// Speedup is the baseline's P50 divided by this P50 (how many times
	// faster than cp -a); 0 when no baseline ran.
	Speedup float64
}

// Bench creates one instance per strategy (in a temporary directory next to
// lower, so that hard links work), then n times, round-robin over the
// strategies so that they run side by side under the same conditions:
// makes a small write in the instance (overwrites the start of a home file
// through OpenWritable and inserts a row into one SQLite database) and
// times Reset. One untimed warm-up round comes first.
func Bench(ctx context.Context, lower string, strategies []Strategy, n int) (*Report, error) {
	if n <= 0 {
		return nil, fmt.Errorf("bench: n = %d: want at least 1 iteration", n)
	}
	rep := &Report{Lower: lower, N: n}
	homeRel, dbRel, err := rep.scan(lower)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(lower)), ".reset-bench-*")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)

	insts := make([]Instance, len(strategies))
	defer func() {
		for _, in := range insts {
			if in != nil {
				in.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	samples := make([][]time.Duration, len(strategies))
	rep.Results = make([]Result, len(strategies))
	for i, s := range strategies {
		start := time.Now()
		in, err := s.New(ctx, lower, filepath.Join(tmp, fmt.Sprintf("%d-%s", i, s.Name())))
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", s.Name(), err)
		}
		rep.Results[i] = Result{Strategy: s.Name(), New: time.Since(start)}
		insts[i] = in
	}
	for iter := -1; iter < n; iter++ {
		for i, in := range insts {
			if err := benchWrite(ctx, in, homeRel, dbRel, iter); err != nil {
				return nil, fmt.Errorf("bench: %s: write: %w", strategies[i].Name(), err)
			}
			start := time.Now()
			err := in.Reset(ctx)
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("bench: %s: %w", strategies[i].Name(), err)
			}
			if iter >= 0 {
				samples[i] = append(samples[i], d)
			}
		}
	}
	var base time.Duration
	for i := range rep.Results {
		r := &rep.Results[i]
		s := samples[i]
		slices.Sort(s)
		var sum time.Duration
		for _, d := range s {
			sum += d
		}
		r.P50, r.P99 = quantile(s, 0.50), quantile(s, 0.99)
		r.Mean, r.Min, r.Max = sum/time.Duration(len(s)), s[0], s[len(s)-1]
		if r.Strategy == BaselineName {
			base = r.P50
		}
	}
	if base > 0 {
		for i := range rep.Results {
			rep.Results[i].Speedup = float64(base) / float64(max(rep.Results[i].P50, 1))
		}
	}
	return rep, nil
}

// quantile returns the q-quantile of sorted s (nearest rank).
func quantile(s []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// scan counts lower's content and picks the home file and the database the
// bench writes to.
func (r *Report) scan(lower string) (homeRel, dbRel string, err error) {
	err = filepath.WalkDir(lower, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		r.Files++
		r.Bytes += info.Size()
		rel, _ := filepath.Rel(lower, p)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasPrefix(rel, world.DBDir+"/") && strings.HasSuffix(rel, world.DBExt):
			r.DBs++
			if dbRel == "" {
				dbRel = rel
			}
		case strings.HasPrefix(rel, world.HomeDir+"/") && homeRel == "":
			homeRel = rel
		}
		return nil
	})
	if err == nil && (homeRel == "" || dbRel == "") {
		err = fmt.Errorf("lower %s needs a file under home/ and a db/*.sqlite to write to", lower)
	}
	return homeRel, dbRel, err
}

// benchWrite makes the small write that gives Reset real work.
func benchWrite(ctx context.Context, in Instance, homeRel, dbRel string, iter int) error {
	if m, ok := in.(*SQLiteInstance); ok {
		return insertRow(ctx, m.Conn(m.Names()[0]), iter)
	}
	f, err := OpenWritable(in, homeRel)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "bench write %d\n", iter)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	p, err := Writable(in, dbRel)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return err
	}
	err = insertRow(ctx, conn, iter)
	return errors.Join(err, conn.Close(), db.Close())
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func insertRow(ctx context.Context, db execer, iter int) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS reset_bench (iter INTEGER)`); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO reset_bench (iter) VALUES (?)`, iter)
	return err
}

// Markdown renders the report as a Markdown table.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lower: %d files (%d SQLite DBs), %.1f MiB; %d resets per strategy, round-robin\n\n",
		r.Files, r.DBs, float64(r.Bytes)/(1<<20), r.N)
	b.WriteString("| strategy | new | reset p50 | reset p99 | mean | min | max | vs cp (p50) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.Results {
		speed := "n/a"
		if x.Speedup > 0 {
			speed = fmt.Sprintf("%.1fx", x.Speedup)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Strategy,
			ms(x.New), ms(x.P50), ms(x.P99), ms(x.Mean), ms(x.Min), ms(x.Max), speed)
	}
	return b.String()
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
