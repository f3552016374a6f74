package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

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
type Materializer struct {
	Store    Checkouter
	CacheDir string
	// Strategy makes instances; nil means Choose's pick, made on first use.
	Strategy Strategy
	// Overlay is the overlay strategy Choose tries first when Strategy is
	// nil (its size and inode caps); nil means &Overlay{}.
	Overlay *Overlay

	mu     sync.Mutex
	lowers map[world.ID]*sync.Once
	errs   map[world.ID]error
}

// Lower returns the read-only lower directory of snapshot id, checking it out
// on first use. Concurrent callers for one id wait for one checkout.
func (m *Materializer) Lower(ctx context.Context, id world.ID) (string, error) {
	m.mu.Lock()
	if m.lowers == nil {
		m.lowers, m.errs = map[world.ID]*sync.Once{}, map[world.ID]error{}
	}
	once, ok := m.lowers[id]
	if !ok {
		once = &sync.Once{}
		m.lowers[id] = once
	}
	m.mu.Unlock()
	dir := filepath.Join(m.CacheDir, id.String())
	once.Do(func() {
		var err error
		if _, statErr := os.Stat(filepath.Join(dir, world.ManifestFile)); statErr != nil {
			if err = os.MkdirAll(m.CacheDir, 0o755); err == nil {
				// Checkout materialises into a temporary sibling and renames,
				// so a crash never leaves a half lower behind.
				err = m.Store.Checkout(ctx, id, dir)
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
	m.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("materialise %s: %w", id.Short(), err)
	}
	return dir, nil
}

// New makes a fresh writable instance of snapshot id at dir (which must not
// exist).
func (m *Materializer) New(ctx context.Context, id world.ID, dir string) (Instance, error) {
	lower, err := m.Lower(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.Overlay != nil {
		// An invalid overlay must not pass for an unavailable one.
		if err := m.Overlay.check(); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	if m.Strategy == nil {
		m.Strategy = choose(ctx, m.Overlay, lower, filepath.Dir(dir))
	}
	s := m.Strategy
	m.mu.Unlock()
	return s.New(ctx, lower, dir)
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
