package reset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// The cache of lowers under a Materializer's CacheDir: CacheDir/ID is
// snapshot ID checked out once, read-only, shared by every instance of it
// and every reader (a verifier's worlds, a judge's). Each use touches the
// directory's mtime (from Materializer.Now): the cache's recency, which
// outlives the process. With MaxBytes set, the cache is collected: past
// the bound, the least recently used lowers nobody holds are removed (a
// later use checks the snapshot out again). CacheDir/.lock is locked
// shared by every Materializer using the cache, so one collects only when
// it is the cache's only user.

// LockFile, in CacheDir, is locked shared by every Materializer using the
// cache and exclusively by one that collects it.
const LockFile = ".lock"

// cacheState is a Materializer's view of its cache.
type cacheState struct {
	// held counts each lower's holders: open instances, open scopes, and
	// one for the lowers taken outside a scope (until Close).
	held      map[world.ID]int
	permanent map[world.ID]bool
	// sizes are the bytes of the lowers known to be on disk.
	sizes   map[world.ID]int64
	scanned bool

	lockMu  sync.Mutex // guards lock
	lock    *os.File
	collect sync.Mutex // one collection at a time
	last    CacheReport
}

// holder is who holds a lower: processHold (until Close), a *scope, or
// an *instanceHold.
type holder interface{ isHolder() }

type processHold struct{}

func (processHold) isHolder() {}

type instanceHold struct{}

func (*instanceHold) isHolder() {}

// scope holds the lowers taken through a ctx that carries it until its
// release.
type scope struct {
	mu   sync.Mutex
	done bool
	held map[*Materializer][]world.ID
}

func (*scope) isHolder() {}

type scopeKey struct{}

// Scope returns a ctx under which the lowers a Materializer hands out
// (Lower) are held until release, rather than until the Materializer's
// Close: a unit of work (gating one task, verifying one rollout) releases
// what it read when it ends, and a bounded cache may then collect it.
// A lower taken after release is held until Close.
func Scope(ctx context.Context) (context.Context, func()) {
	s := &scope{held: map[*Materializer][]world.ID{}}
	return context.WithValue(ctx, scopeKey{}, s), s.release
}

func holdOf(ctx context.Context) holder {
	if s, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return s
	}
	return processHold{}
}

func (s *scope) release() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for m, ids := range held {
		m.mu.Lock()
		for _, id := range ids {
			m.cache.held[id]--
		}
		m.mu.Unlock()
	}
}

// holdLocked records that h holds lower id; m.mu is held.
func (m *Materializer) holdLocked(id world.ID, h holder) {
	c := &m.cache
	if c.held == nil {
		c.held, c.permanent, c.sizes = map[world.ID]int{}, map[world.ID]bool{}, map[world.ID]int64{}
	}
	if s, ok := h.(*scope); ok {
		s.mu.Lock()
		if !s.done {
			if !slices.Contains(s.held[m], id) {
				s.held[m] = append(s.held[m], id)
				c.held[id]++
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		h = processHold{} // a released scope: held until Close
	}
	switch h.(type) {
	case processHold:
		if !c.permanent[id] {
			c.permanent[id] = true
			c.held[id]++
		}
	case *instanceHold:
		c.held[id]++
	}
}

// releaseLocked ends an instance's hold on lower id; m.mu is held. Other
// holds end with their scope or Close.
func (m *Materializer) releaseLocked(id world.ID, h holder) {
	if _, ok := h.(*instanceHold); ok {
		m.cache.held[id]--
	}
}

// openCache makes CacheDir and takes the shared lock on it, once.
func (m *Materializer) openCache() error {
	c := &m.cache
	c.lockMu.Lock()
	defer c.lockMu.Unlock()
	if c.lock != nil {
		return nil
	}
	if err := os.MkdirAll(m.CacheDir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(m.CacheDir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return fmt.Errorf("lock the cache %s: %w", m.CacheDir, err)
	}
	c.lock = f
	return nil
}

func (m *Materializer) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// touch records a use of the lower at dir.
func (m *Materializer) touch(dir string) {
	t := m.now()
	os.Chtimes(dir, t, t)
}

// grew records a new lower's size and collects the cache if it is past
// the bound.
func (m *Materializer) grew(id world.ID, dir string) error {
	n, err := treeSize(dir)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.cache.sizes[id] = n
	m.mu.Unlock()
	_, err = m.Collect()
	return err
}

// CacheReport is what a collection found and did.
type CacheReport struct {
	// Bytes and Lowers are the cache's after the collection; Removed and
	// Freed what it removed. Busy is set when another process used the
	// cache, so nothing was removed.
	Bytes   int64 `json:"bytes"`
	Lowers  int   `json:"lowers"`
	Removed int   `json:"removed"`
	Freed   int64 `json:"freed"`
	Busy    bool  `json:"busy,omitempty"`
}

// Collect removes the least recently used lowers nobody holds until the
// cache is within MaxBytes. It does nothing without a bound, and removes
// nothing while another process uses the cache.
func (m *Materializer) Collect() (CacheReport, error) {
	var rep CacheReport
	if m.MaxBytes <= 0 || m.CacheDir == "" {
		return rep, nil
	}
	c := &m.cache
	c.collect.Lock()
	defer c.collect.Unlock()
	if err := m.openCache(); err != nil {
		return rep, err
	}
	if !m.exclusive() {
		rep.Busy = true
		m.mu.Lock()
		c.last = rep
		m.mu.Unlock()
		return rep, nil
	}
	defer m.shared()
	if err := m.scan(); err != nil {
		return rep, err
	}
	m.mu.Lock()
	type lower struct {
		id    world.ID
		size  int64
		mtime time.Time
	}
	var free []lower
	for id, n := range c.sizes {
		rep.Bytes += n
		rep.Lowers++
		if c.held[id] > 0 {
			continue
		}
		fi, err := os.Stat(filepath.Join(m.CacheDir, id.String()))
		if err != nil {
			delete(c.sizes, id) // gone
			rep.Bytes -= n
			rep.Lowers--
			continue
		}
		free = append(free, lower{id, n, fi.ModTime()})
	}
	slices.SortFunc(free, func(a, b lower) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	var trash []string
	for _, l := range free {
		if rep.Bytes <= m.MaxBytes {
			break
		}
		// Renamed aside under the lock, removed after it: a Lower of the
		// same snapshot meanwhile checks it out afresh.
		aside := filepath.Join(m.CacheDir, ".collected-"+l.id.String())
		if err := os.Rename(filepath.Join(m.CacheDir, l.id.String()), aside); err != nil {
			continue
		}
		trash = append(trash, aside)
		delete(c.sizes, l.id)
		delete(m.lowers, l.id)
		delete(m.errs, l.id)
		rep.Bytes -= l.size
		rep.Lowers--
		rep.Removed++
		rep.Freed += l.size
	}
	c.last = rep
	m.mu.Unlock()
	var errs []error
	for _, d := range trash {
		errs = append(errs, removeTree(d))
	}
	return rep, errors.Join(errs...)
}

// LastCollect is the report of the last collection (Collect, or the one a
// checkout or Close ran).
func (m *Materializer) LastCollect() CacheReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache.last
}

// scan learns the sizes of the lowers on disk it does not know (those of
// earlier processes), once; it removes what a collection cut short left.
func (m *Materializer) scan() error {
	m.mu.Lock()
	if m.cache.held == nil {
		m.cache.held, m.cache.permanent, m.cache.sizes = map[world.ID]int{}, map[world.ID]bool{}, map[world.ID]int64{}
	}
	done := m.cache.scanned
	known := make(map[world.ID]bool, len(m.cache.sizes))
	for id := range m.cache.sizes {
		known[id] = true
	}
	m.mu.Unlock()
	if done {
		return nil
	}
	ents, err := os.ReadDir(m.CacheDir)
	if err != nil {
		return err
	}
	found := map[world.ID]int64{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if strings.HasPrefix(e.Name(), ".collected-") {
			removeTree(filepath.Join(m.CacheDir, e.Name()))
			continue
		}
		id, err := world.ParseID(e.Name())
		if err != nil || known[id] {
			continue // a checkout in progress, or a lower this process knows
		}
		if _, err := os.Stat(filepath.Join(m.CacheDir, e.Name(), world.ManifestFile)); err != nil {
			continue
		}
		n, err := treeSize(filepath.Join(m.CacheDir, e.Name()))
		if err != nil {
			return err
		}
		found[id] = n
	}
	m.mu.Lock()
	for id, n := range found {
		if _, ok := m.cache.sizes[id]; !ok {
			m.cache.sizes[id] = n
		}
	}
	m.cache.scanned = true
	m.mu.Unlock()
	return nil
}

// exclusive tries to make the shared lock exclusive: true when no other
// Materializer holds the cache. Converting is not atomic (flock(2)): on
// failure the shared lock is taken again.
func (m *Materializer) exclusive() bool {
	fd := int(m.cache.lock.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return true
	}
	unix.Flock(fd, unix.LOCK_SH)
	return false
}

func (m *Materializer) shared() { unix.Flock(int(m.cache.lock.Fd()), unix.LOCK_SH) }

// Close ends the holds of the lowers taken outside a scope, collects the
// cache to MaxBytes and releases the lock on it. Instances still open keep
// their lowers. The Materializer may be used again afterwards.
func (m *Materializer) Close() error {
	m.mu.Lock()
	for id := range m.cache.permanent {
		m.cache.held[id]--
	}
	m.cache.permanent = map[world.ID]bool{}
	m.mu.Unlock()
	_, err := m.Collect()
	c := &m.cache
	c.lockMu.Lock()
	defer c.lockMu.Unlock()
	if c.lock != nil {
		unix.Flock(int(c.lock.Fd()), unix.LOCK_UN)
		c.lock.Close()
		c.lock = nil
	}
	return err
}

// treeSize is the bytes the files under dir take on disk.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*unix.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// removeTree removes dir, whatever its directories' modes.
func removeTree(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// heldInstance makes in's Close end its hold on its lower, keeping what
// else in implements (LinkBreaker).
func heldInstance(in Instance, release func()) Instance {
	h := &held{Instance: in, release: release}
	if lb, ok := in.(LinkBreaker); ok {
		return &heldLinks{held: h, lb: lb}
	}
	return h
}

type held struct {
	Instance
	once    sync.Once
	release func()
}

func (h *held) Close(ctx context.Context) error {
	err := h.Instance.Close(ctx)
	h.once.Do(h.release)
	return err
}

type heldLinks struct {
	*held
	lb LinkBreaker
}

func (h *heldLinks) BreakLink(rel string) error { return h.lb.BreakLink(rel) }
