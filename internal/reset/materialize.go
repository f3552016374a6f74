package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// Checkouter materialises a snapshot into a new directory; *store.Store
// implements it.
type Checkouter interface {
	Checkout(ctx context.Context, id world.ID, dst string) error
}

// Materializer turns snapshots into writable instances: each snapshot is
// checked out once into a shared read-only lower under CacheDir, then every
// instance is made from that lower by Strategy.
//
// The lowers are a cache (see cache.go): with MaxBytes set it is bounded,
// the least recently used lowers that nobody holds removed past the bound,
// and collected once more by Close.
type Materializer struct {
	Store    Checkouter
	CacheDir string
	// Strategy makes instances; nil means Choose's pick, made on first use.
	Strategy Strategy
	// Overlay is the overlay strategy Choose tries first when Strategy is
	// nil (its size and inode caps); nil means &Overlay{}.
	Overlay *Overlay
	// MaxBytes bounds the bytes of the lowers under CacheDir (0: no
	// bound). A checkout that takes the cache past it removes the least
	// recently used lowers nobody holds until it is within it; Close does
	// once more. A lower is held while an instance made from it (New) is
	// open, while the Scope of the ctx it was taken with (Lower) is open,
	// and, taken outside a Scope, until Close: lowers held may keep the
	// cache above the bound. While another process uses the same cache
	// (each holds a shared lock on CacheDir/.lock) nothing is removed.
	MaxBytes int64
	// Now is the clock the lowers' recency is read from (nil: the wall
	// clock); a lower's directory mtime is its last use.
	Now func() time.Time

	mu     sync.Mutex
	lowers map[world.ID]*sync.Once
	errs   map[world.ID]error
	cache  cacheState
}

// Lower returns the read-only lower directory of snapshot id, checking it out
// on first use. Concurrent callers for one id wait for one checkout. The
// lower is held until the Scope of ctx ends (see Scope), or, without one,
// until Close.
func (m *Materializer) Lower(ctx context.Context, id world.ID) (string, error) {
	return m.lower(ctx, id, holdOf(ctx))
}

// lower is Lower with the lower held by h.
func (m *Materializer) lower(ctx context.Context, id world.ID, h holder) (string, error) {
	m.mu.Lock()
	if m.lowers == nil {
		m.lowers, m.errs = map[world.ID]*sync.Once{}, map[world.ID]error{}
	}
	once, ok := m.lowers[id]
	if !ok {
		once = &sync.Once{}
		m.lowers[id] = once
	}
	m.holdLocked(id, h)
	m.mu.Unlock()
	dir := filepath.Join(m.CacheDir, id.String())
	fresh := false
	once.Do(func() {
		var err error
		if err = m.openCache(); err == nil {
			if _, statErr := os.Stat(filepath.Join(dir, world.ManifestFile)); statErr != nil {
				// Checkout materialises into a temporary sibling and renames,
				// so a crash never leaves a half lower behind.
				err = m.Store.Checkout(ctx, id, dir)
				fresh = err == nil
			}
		}
		m.mu.Lock()
		m.errs[id] = err
		if err != nil {
			delete(m.lowers, id) // let a later call retry
		}
		m.mu.Unlock()
	})
	m.mu.Lock()
	err := m.errs[id]
	if err != nil {
		m.releaseLocked(id, h)
	}
	m.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("materialise %s: %w", id.Short(), err)
	}
	m.touch(dir)
	if fresh {
		if err := m.grew(id, dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// New makes a fresh writable instance of snapshot id at dir (which must not
// exist). Its lower is held until the instance is closed.
func (m *Materializer) New(ctx context.Context, id world.ID, dir string) (Instance, error) {
	h := &instanceHold{}
	lower, err := m.lower(ctx, id, h)
	if err != nil {
		return nil, err
	}
	release := func() {
		m.mu.Lock()
		m.releaseLocked(id, h)
		m.mu.Unlock()
	}
	if m.Overlay != nil {
		// An invalid overlay must not pass for an unavailable one.
		if err := m.Overlay.check(); err != nil {
			release()
			return nil, err
		}
	}
	m.mu.Lock()
	if m.Strategy == nil {
		m.Strategy = choose(ctx, m.Overlay, lower, filepath.Dir(dir))
	}
	s := m.Strategy
	m.mu.Unlock()
	in, err := s.New(ctx, lower, dir)
	if err != nil {
		release()
		return nil, err
	}
	return heldInstance(in, release), nil
}

// Choose returns the fastest safe strategy that works here: Overlay when an
// overlay mount over lower succeeds (root, overlayfs present), else Copy,
// which is slower but keeps every write private without any API discipline.
// probeDir is where a trial instance is made and removed.
func Choose(ctx context.Context, lower, probeDir string) Strategy {
	return choose(ctx, nil, lower, probeDir)
}

// choose is Choose trying ov (nil means &Overlay{}).
func choose(ctx context.Context, ov *Overlay, lower, probeDir string) Strategy {
	if ov == nil {
		ov = &Overlay{}
	}
	probe, err := os.MkdirTemp(probeDir, ".probe-")
	if err != nil {
		return &Copy{}
	}
	defer os.RemoveAll(probe)
	in, err := ov.New(ctx, lower, filepath.Join(probe, "i"))
	if err != nil {
		return &Copy{} // ErrUnavailable or a failed mount: copying always works
	}
	in.Close(ctx)
	return ov
}

// Remove removes an instance directory left behind by a process that died
// without closing it: it unmounts an overlay at dir and a tmpfs at dir.rw
// if they are still mounted, then removes both. Removing what does not
// exist is not an error.
func Remove(dir string) error {
	var errs []error
	for _, p := range []string{dir, dir + ".rw"} {
		if isMountPoint(p) {
			if err := unmount(p); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
				continue
			}
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
