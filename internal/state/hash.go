package state

import (
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// HashVersion names the hash encoding; it is the first thing hashed, so a
// change of encoding can never collide with an old hash.
const HashVersion = "wildawm-world-hash-v1"

// HashStats tells what a hash covered.
type HashStats struct {
	DBs       int   `json:"dbs"`
	Tables    int   `json:"tables"`
	Rows      int64 `json:"rows"`
	Files     int   `json:"files"`
	DBBytes   int64 `json:"db_bytes"`   // on-disk size of the databases
	FileBytes int64 `json:"file_bytes"` // bytes of home files
}

// Bytes is the on-disk size of everything hashed.
func (s HashStats) Bytes() int64 { return s.DBBytes + s.FileBytes }

// Summary is a world's hash with the hash of each part, so two worlds can be
// compared part by part without a full diff.
type Summary struct {
	Hash     world.ID            `json:"hash"`
	Manifest world.ID            `json:"manifest"`
	Accounts world.ID            `json:"accounts"`
	DBs      map[string]world.ID `json:"dbs"`
	Home     world.ID            `json:"home"`
	Stats    HashStats           `json:"stats"`
	// Skipped lists the home entries the hash left out (fifos, sockets,
	// devices, entries past world.MaxWalkDepth or world.MaxWalkPath, files
	// that kept changing while read), with the reason; docs/world.md.
	Skipped world.SkipList `json:"skipped,omitzero"`
}

// Hash returns the logical content hash of the world at root.
func Hash(ctx context.Context, root string) (world.ID, error) {
	s, err := Summarize(ctx, root)
	if err != nil {
		return world.ID{}, err
	}
	return s.Hash, nil
}

// Summarize hashes the world at root part by part. Databases are hashed in
// parallel. Home entries the hash cannot cover are left out and listed in
// Skipped, never an error. Errors name paths relative to root, never root.
func Summarize(ctx context.Context, root string) (*Summary, error) {
	s, err := summarize(ctx, root)
	return s, hidePaths(err, root)
}

func summarize(ctx context.Context, root string) (*Summary, error) {
	l, err := ReadLayout(root)
	if err != nil {
		return nil, err
	}
	s := &Summary{DBs: make(map[string]world.ID, len(l.DBs))}

	m, accts, err := readTop(root)
	if err != nil {
		return nil, err
	}
	content := *m
	content.Parent = world.ID{}
	s.Manifest = world.Hash(content.Encode())
	s.Accounts = world.Hash(canonicalAccounts(accts))

	type result struct {
		id    world.ID
		stats HashStats
		err   error
	}
	results := make([]result, len(l.DBs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, name := range l.DBs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &results[i]
			r.id, r.stats, r.err = HashDB(ctx, world.DBPath(root, name))
		}()
	}
	hh := sha256.New()
	homeStats, skipped, homeErr := hashHome(ctx, root, hh.(hashState))
	wg.Wait()
	for i, name := range l.DBs {
		if results[i].err != nil {
			return nil, fmt.Errorf("hash database %s: %w", name, results[i].err)
		}
		s.DBs[name] = results[i].id
		s.Stats.add(results[i].stats)
	}
	if homeErr != nil {
		return nil, fmt.Errorf("hash home: %w", homeErr)
	}
	s.Home = world.ID(hh.Sum(nil))
	s.Stats.add(homeStats)
	s.Skipped = *skipped

	h := sha256.New()
	e := encoder{w: h}
	e.str(HashVersion)
	e.id(s.Manifest)
	e.id(s.Accounts)
	e.uint(uint64(len(l.DBs)))
	for _, name := range l.DBs {
		e.str(name)
		e.id(s.DBs[name])
	}
	e.id(s.Home)
	s.Hash = world.ID(h.Sum(nil))
	return s, nil
}

func (s *HashStats) add(o HashStats) {
	s.DBs += o.DBs
	s.Tables += o.Tables
	s.Rows += o.Rows
	s.Files += o.Files
	s.DBBytes += o.DBBytes
	s.FileBytes += o.FileBytes
}

func canonicalAccounts(accts []world.Account) []byte {
	sorted := slices.Clone(accts)
	slices.SortFunc(sorted, func(a, b world.Account) int {
		if c := strings.Compare(a.Site, b.Site); c != 0 {
			return c
		}
		return strings.Compare(a.Username, b.Username)
	})
	var b strings.Builder
	e := encoder{w: &b}
	e.uint(uint64(len(sorted)))
	for _, a := range sorted {
		e.str(a.Site)
		e.str(a.Username)
		e.str(a.PasswordHash)
		e.str(a.Display)
	}
	return []byte(b.String())
}

// HashDB returns the logical hash of one SQLite database: its user version,
// its schema, then every table's rows in primary-key order with typed values.
func HashDB(ctx context.Context, path string) (world.ID, HashStats, error) {
	var st HashStats
	fi, err := os.Stat(path)
	if err != nil {
		return world.ID{}, st, err
	}
	st.DBs, st.DBBytes = 1, fi.Size()
	db, err := OpenDB(path, true)
	if err != nil {
		return world.ID{}, st, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return world.ID{}, st, err
	}
	defer conn.Close()

	h := sha256.New()
	e := encoder{w: h}
	e.str("db")
	var userVersion int64
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&userVersion); err != nil {
		return world.ID{}, st, err
	}
	e.int(userVersion)
	schema := &Table{Name: "sqlite_schema", Columns: []Column{{Name: "type"}, {Name: "name"}, {Name: "tbl_name"}, {Name: "sql"}}, PK: []string{"type", "name"}}
	if err := hashRows(ctx, conn, schema, &e, nil); err != nil {
		return world.ID{}, st, err
	}
	tables, err := Tables(ctx, conn)
	if err != nil {
		return world.ID{}, st, err
	}
	if seq, err := sqliteSequence(ctx, conn); err != nil {
		return world.ID{}, st, err
	} else if seq != nil {
		tables = append(tables, *seq)
	}
	for i := range tables {
		if err := ctx.Err(); err != nil {
			return world.ID{}, st, err
		}
		if err := hashRows(ctx, conn, &tables[i], &e, &st.Rows); err != nil {
			return world.ID{}, st, err
		}
	}
	st.Tables = len(tables)
	return world.ID(h.Sum(nil)), st, nil
}

func hashRows(ctx context.Context, q Querier, t *Table, e *encoder, count *int64) error {
	e.str("table")
	e.str(t.Name)
	e.uint(uint64(len(t.Columns)))
	for _, c := range t.Columns {
		e.str(c.Name)
	}
	err := scanRows(ctx, q, t, func(row []any) error {
		e.byte('r')
		for _, v := range row {
			if err := e.value(v); err != nil {
				return fmt.Errorf("table %s: %w", t.Name, err)
			}
		}
		if count != nil {
			*count++
		}
		return nil
	})
	e.byte('.')
	return err
}

// hashState is a hash whose state can be saved and restored, so a file that
// changes while it is hashed can be taken out again.
type hashState interface {
	io.Writer
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// hashHome hashes the files under root/home into h: each entry's slash path
// (relative to home), type, mode and content, in the order of WalkHome.
func hashHome(ctx context.Context, root string, h hashState) (HashStats, *world.SkipList, error) {
	var st HashStats
	e := encoder{w: h}
	e.str("home")
	buf := make([]byte, 256<<10)
	skipped, err := world.Walk(ctx, root, world.HomeDir, func(we *world.Entry) error {
		rel := strings.TrimPrefix(we.Path, world.HomeDir+"/")
		switch we.Kind {
		case world.EntryDir:
			e.byte('d')
			e.str(rel)
			e.uint(uint64(we.Perm))
		case world.EntrySymlink:
			e.byte('l')
			e.str(rel)
			e.str(we.Target)
		case world.EntryFile:
			saved, err := h.MarshalBinary()
			if err != nil {
				return err
			}
			e.byte('f')
			e.str(rel)
			e.uint(uint64(we.Perm))
			e.uint(uint64(we.Size))
			if err := we.CopyTo(h, buf); err != nil {
				if rerr := h.UnmarshalBinary(saved); rerr != nil {
					return rerr
				}
				return err
			}
			st.Files++
			st.FileBytes += we.Size
		}
		return nil
	})
	return st, skipped, err
}

// WalkHome calls fn for every entry below home (not home itself), in the
// order the hash covers them: each directory's entries sorted by name, each
// directory's entries right after it (filepath.WalkDir's order). home must be
// the home directory of a world: it leaves out what the hash leaves out
// (world.Walk), never follows a symlink and names paths relative to home. A
// missing home is an empty home.
func WalkHome(home string, fn func(rel string, d fs.DirEntry, fi fs.FileInfo) error) error {
	_, err := world.Walk(context.Background(), filepath.Dir(home), filepath.Base(home), func(we *world.Entry) error {
		if we.Kind == world.EntryDirEnd {
			return nil
		}
		fi := entryInfo{we}
		return fn(strings.TrimPrefix(we.Path, filepath.Base(home)+"/"), fs.FileInfoToDirEntry(fi), fi)
	})
	return hidePaths(err, filepath.Dir(home))
}

// entryInfo is a walk entry as an fs.FileInfo.
type entryInfo struct{ e *world.Entry }

func (i entryInfo) Name() string       { return i.e.Name }
func (i entryInfo) Size() int64        { return i.e.Size }
func (i entryInfo) ModTime() time.Time { return time.Time{} }
func (i entryInfo) Sys() any           { return nil }
func (i entryInfo) IsDir() bool        { return i.e.Kind == world.EntryDir }
func (i entryInfo) Mode() fs.FileMode {
	switch i.e.Kind {
	case world.EntryDir:
		return fs.ModeDir | i.e.Perm
	case world.EntrySymlink:
		return fs.ModeSymlink | fs.ModePerm
	}
	return i.e.Perm
}

// encoder writes an unambiguous, length-prefixed encoding into a hash.
type encoder struct {
	w   io.Writer
	buf [binary.MaxVarintLen64 + 1]byte
}

func (e *encoder) byte(b byte) { e.buf[0] = b; e.w.Write(e.buf[:1]) }
func (e *encoder) uint(v uint64) {
	n := binary.PutUvarint(e.buf[:], v)
	e.w.Write(e.buf[:n])
}
func (e *encoder) int(v int64) {
	n := binary.PutVarint(e.buf[:], v)
	e.w.Write(e.buf[:n])
}
func (e *encoder) str(s string)   { e.uint(uint64(len(s))); io.WriteString(e.w, s) }
func (e *encoder) id(id world.ID) { e.w.Write(id[:]) }

// value encodes one SQLite value with its storage class.
func (e *encoder) value(v any) error {
	switch v := v.(type) {
	case nil:
		e.byte('n')
	case int64:
		e.byte('i')
		e.int(v)
	case float64:
		e.byte('f')
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], math.Float64bits(v))
		e.w.Write(b[:])
	case string:
		e.byte('t')
		e.str(v)
	case []byte:
		e.byte('b')
		e.uint(uint64(len(v)))
		e.w.Write(v)
	default:
		return fmt.Errorf("unexpected value type %T", v)
	}
	return nil
}

var _ hash.Hash = sha256.New()
