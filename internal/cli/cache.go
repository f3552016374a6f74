package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/taskgen"
)

// defaultCacheMax bounds a run's cache of materialised snapshots
// (DIR/cache, docs/runtime.md): 256 MiB holds the worlds of a few hundred
// rollouts at once.
const defaultCacheMax = "256MiB"

// cacheMax is the parsed --cache-max.
func (e *env) cacheMax() (int64, error) {
	n, err := parseBytes(e.cacheMaxFlag)
	if err != nil {
		return 0, fmt.Errorf("--cache-max %q: %w: give a size such as 256MiB, 2GiB or 0 (no bound)", e.cacheMaxFlag, err)
	}
	return n, nil
}

// parseBytes reads a size: a number of bytes, or one with a unit (KiB,
// MiB, GiB, TiB; K, M, G, T mean the same; KB, MB, GB, TB are powers of
// 1000).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("not a size")
	}
	return int64(f * float64(mult)), nil
}

// openSource opens the world-synthesis run at dir as a source of states,
// its snapshots materialised in the run's cache, DIR/cache, bounded by
// --cache-max. close collects the cache to its bound and says what it
// freed.
func (e *env) openSource(ctx context.Context, dir string) (*taskgen.Source, func(), error) {
	max, err := e.cacheMax()
	if err != nil {
		return nil, nil, err
	}
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, nil, err
	}
	src, closeSrc, err := taskgen.OpenSource(ctx, dir, cache)
	if err != nil {
		return nil, nil, err
	}
	src.Materializer.MaxBytes = max
	return src, func() {
		closeSrc()
		m := src.Materializer
		if err := m.Close(); err != nil {
			e.progress("the cache %s: %v", cache, err)
			return
		}
		if rep := m.LastCollect(); max > 0 && !rep.Busy {
			e.progress("cache: %s holds %d snapshots, %.1f MiB (bound --cache-max %s)", cache, rep.Lowers, float64(rep.Bytes)/(1<<20), e.cacheMaxFlag)
		}
	}, nil
}
