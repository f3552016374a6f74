package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// DiffVersion is the version of the JSON form of Diff.
const DiffVersion = 1

// Diff is the difference between two world states A (before) and B (after).
type Diff struct {
	Version  int             `json:"version"`
	Manifest *ManifestChange `json:"manifest,omitempty"`
	Accounts []AccountChange `json:"accounts,omitempty"`
	DBs      []DBChange      `json:"dbs,omitempty"`
	Tables   []TableDiff     `json:"tables,omitempty"`
	Files    []FileChange    `json:"files,omitempty"`
	// Skipped lists the home entries of either world that were left out
	// of the hash and the diff (Summary.Skipped of each world).
	Skipped []SkippedEntry `json:"skipped,omitempty"`
	Summary map[string]int `json:"summary"`
	hashes  [2]world.ID
}

// Change kinds.
const (
	Added   = "added"
	Changed = "changed"
	Deleted = "deleted"
)

// ManifestChange lists the manifest fields that differ (parent excluded).
type ManifestChange struct {
	Fields []string `json:"fields"`
	Before string   `json:"before"` // persona/day/clock of A
	After  string   `json:"after"`
}

// AccountChange is one account added, changed or deleted.
type AccountChange struct {
	Change   string `json:"change"`
	Site     string `json:"site"`
	Username string `json:"username"`
}

// DBChange is a database present in only one of the worlds.
type DBChange struct {
	Change string `json:"change"`
	DB     string `json:"db"`
}

// TableDiff is the row difference of one table.
type TableDiff struct {
	DB    string `json:"db"`
	Table string `json:"table"`
	// Change is "added" or "deleted" when the table exists in one world only,
	// "changed" otherwise.
	Change string `json:"change"`
	// Key names the columns rows are matched by: the natural key if declared,
	// else the primary key; empty when rows are matched by every column.
	Key           []string    `json:"key,omitempty"`
	SchemaChanged bool        `json:"schema_changed,omitempty"`
	Added         []Row       `json:"added,omitempty"`
	Changed       []RowChange `json:"changed,omitempty"`
	Deleted       []Row       `json:"deleted,omitempty"`
}

// Row maps column names to values: int64, float64, string, nil, or Blob.
type Row map[string]any

// Blob is a BLOB value; it encodes in JSON as {"$base64": "..."}.
type Blob []byte

// MarshalJSON encodes the blob as {"$base64": "..."}.
func (b Blob) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"$base64": base64.StdEncoding.EncodeToString(b)})
}

// RowChange is one row present in both worlds with different values.
type RowChange struct {
	Key    Row      `json:"key"`
	Before Row      `json:"before"` // changed columns only
	After  Row      `json:"after"`
	Cols   []string `json:"columns"`
}

// FileChange is one home entry added, changed or deleted.
type FileChange struct {
	Change string
	// Path is relative to home, slash separated, its exact bytes. In JSON
	// a path that is not valid UTF-8 is quoted (world.QuoteName) in "path"
	// and exact in "path_base64" (world.SplitName), so different paths
	// never encode the same.
	Path       string
	Kind       string // file, dir, symlink
	SizeBefore int64
	SizeAfter  int64
	// What says what changed for a "changed" entry: content, mode, kind, target.
	What []string
}

type fileChangeJSON struct {
	Change string `json:"change"`
	world.PathJSON
	Kind       string   `json:"kind"`
	SizeBefore int64    `json:"size_before,omitempty"`
	SizeAfter  int64    `json:"size_after,omitempty"`
	What       []string `json:"what,omitempty"`
}

// MarshalJSON encodes the change with its path exact.
func (c FileChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(fileChangeJSON{Change: c.Change, PathJSON: world.PathOf(c.Path), Kind: c.Kind, SizeBefore: c.SizeBefore, SizeAfter: c.SizeAfter, What: c.What})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (c *FileChange) UnmarshalJSON(b []byte) error {
	var j fileChangeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := j.Decode()
	if err != nil {
		return err
	}
	*c = FileChange{Change: j.Change, Path: p, Kind: j.Kind, SizeBefore: j.SizeBefore, SizeAfter: j.SizeAfter, What: j.What}
	return nil
}

// SkippedEntry is a home entry of world A ("a") or B ("b") the diff left
// out, and why. Its path is encoded in JSON as world.Skipped's is.
type SkippedEntry struct {
	World string `json:"world"`
	world.Skipped
}

type skippedEntryJSON struct {
	World string `json:"world"`
	world.PathJSON
	Reason string `json:"reason"`
}

// MarshalJSON encodes the entry with its path exact (world.Skipped's
// MarshalJSON, which would otherwise be promoted, drops World).
func (e SkippedEntry) MarshalJSON() ([]byte, error) {
	return json.Marshal(skippedEntryJSON{World: e.World, PathJSON: world.PathOf(e.Path), Reason: e.Reason})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (e *SkippedEntry) UnmarshalJSON(b []byte) error {
	var j skippedEntryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := j.Decode()
	if err != nil {
		return err
	}
	*e = SkippedEntry{World: j.World, Skipped: world.Skipped{Path: p, Reason: j.Reason}}
	return nil
}

// Empty reports whether A and B have equal content.
func (d *Diff) Empty() bool { return d.hashes[0] == d.hashes[1] }

// Compare computes the diff from the world at a to the world at b. Home
// entries the hash leaves out are left out of the diff and listed in Skipped.
// Errors name paths relative to a or b, never a or b.
func Compare(ctx context.Context, a, b string) (*Diff, error) {
	d, err := compare(ctx, a, b)
	return d, hidePaths(err, a, b)
}

func compare(ctx context.Context, a, b string) (*Diff, error) {
	var sa, sb *Summary
	errs := make(chan error, 1)
	go func() {
		var err error
		sb, err = Summarize(ctx, b)
		errs <- err
	}()
	sa, err := Summarize(ctx, a)
	if berr := <-errs; err == nil {
		err = berr
	}
	if err != nil {
		return nil, err
	}
	d := &Diff{Version: DiffVersion, hashes: [2]world.ID{sa.Hash, sb.Hash}}
	for _, s := range sa.Skipped.Entries {
		d.Skipped = append(d.Skipped, SkippedEntry{World: "a", Skipped: s})
	}
	for _, s := range sb.Skipped.Entries {
		d.Skipped = append(d.Skipped, SkippedEntry{World: "b", Skipped: s})
	}
	skipped := sa.Skipped.Count + sb.Skipped.Count
	if sa.Manifest != sb.Manifest {
		if err := d.compareManifests(a, b); err != nil {
			return nil, err
		}
	}
	if sa.Accounts != sb.Accounts {
		if err := d.compareAccounts(a, b); err != nil {
			return nil, err
		}
	}
	for _, name := range unionKeys(sa.DBs, sb.DBs) {
		ha, inA := sa.DBs[name]
		hb, inB := sb.DBs[name]
		switch {
		case !inA:
			d.DBs = append(d.DBs, DBChange{Change: Added, DB: name})
		case !inB:
			d.DBs = append(d.DBs, DBChange{Change: Deleted, DB: name})
		}
		if ha == hb {
			continue
		}
		pa, pb := "", ""
		if inA {
			pa = world.DBPath(a, name)
		}
		if inB {
			pb = world.DBPath(b, name)
		}
		tds, err := compareDB(ctx, name, pa, pb)
		if err != nil {
			return nil, err
		}
		d.Tables = append(d.Tables, tds...)
	}
	if sa.Home != sb.Home {
		fcs, err := compareHomes(ctx, a, b)
		if err != nil {
			return nil, err
		}
		d.Files = fcs
	}
	d.summarize()
	if skipped > 0 {
		d.Summary["skipped"] = skipped
	}
	return d, nil
}

func (d *Diff) summarize() {
	s := map[string]int{"rows_added": 0, "rows_changed": 0, "rows_deleted": 0, "files_added": 0, "files_changed": 0, "files_deleted": 0}
	for _, t := range d.Tables {
		s["rows_added"] += len(t.Added)
		s["rows_changed"] += len(t.Changed)
		s["rows_deleted"] += len(t.Deleted)
	}
	for _, f := range d.Files {
		s["files_"+f.Change]++
	}
	d.Summary = s
}

func (d *Diff) compareManifests(a, b string) error {
	ma, err := world.ReadManifest(a)
	if err != nil {
		return err
	}
	mb, err := world.ReadManifest(b)
	if err != nil {
		return err
	}
	var fields []string
	if ma.Persona != mb.Persona {
		fields = append(fields, "persona")
	}
	if ma.Day != mb.Day {
		fields = append(fields, "day")
	}
	if ma.Clock != mb.Clock {
		fields = append(fields, "clock")
	}
	if ma.Catalog != mb.Catalog {
		fields = append(fields, "catalog")
	}
	pa, _ := json.Marshal(ma.Produces)
	pb, _ := json.Marshal(mb.Produces)
	if !bytes.Equal(pa, pb) {
		fields = append(fields, "produces")
	}
	desc := func(m *world.Manifest) string { return fmt.Sprintf("%s day %d at %s", m.Persona, m.Day, m.Clock) }
	d.Manifest = &ManifestChange{Fields: fields, Before: desc(ma), After: desc(mb)}
	return nil
}

func (d *Diff) compareAccounts(a, b string) error {
	aa, err := world.ReadAccounts(a)
	if err != nil {
		return err
	}
	ab, err := world.ReadAccounts(b)
	if err != nil {
		return err
	}
	key := func(x world.Account) string { return x.Site + "\x00" + x.Username }
	ma, mb := map[string]world.Account{}, map[string]world.Account{}
	for _, x := range aa {
		ma[key(x)] = x
	}
	for _, x := range ab {
		mb[key(x)] = x
	}
	for _, k := range unionKeys(ma, mb) {
		x, inA := ma[k]
		y, inB := mb[k]
		c := AccountChange{Site: x.Site, Username: x.Username}
		switch {
		case !inA:
			c = AccountChange{Change: Added, Site: y.Site, Username: y.Username}
		case !inB:
			c.Change = Deleted
		case x != y:
			c.Change = Changed
		default:
			continue
		}
		d.Accounts = append(d.Accounts, c)
	}
	return nil
}

// dbTables loads the table descriptions of the database at path ("" = none).
type dbSide struct {
	tables map[string]*Table
	q      Querier
	close  func()
}

func openSide(ctx context.Context, path string) (*dbSide, error) {
	s := &dbSide{tables: map[string]*Table{}, close: func() {}}
	if path == "" {
		return s, nil
	}
	db, err := OpenDB(path, true)
	if err != nil {
		return nil, err
	}
	ts, err := Tables(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if seq, err := sqliteSequence(ctx, db); err != nil {
		db.Close()
		return nil, err
	} else if seq != nil {
		ts = append(ts, *seq)
	}
	for i := range ts {
		s.tables[ts[i].Name] = &ts[i]
	}
	s.q, s.close = db, func() { db.Close() }
	return s, nil
}

func compareDB(ctx context.Context, name, pa, pb string) ([]TableDiff, error) {
	sa, err := openSide(ctx, pa)
	if err != nil {
		return nil, fmt.Errorf("diff database %s: %w", name, err)
	}
	defer sa.close()
	sb, err := openSide(ctx, pb)
	if err != nil {
		return nil, fmt.Errorf("diff database %s: %w", name, err)
	}
	defer sb.close()
	var out []TableDiff
	for _, tn := range unionKeys(sa.tables, sb.tables) {
		ta, tb := sa.tables[tn], sb.tables[tn]
		td := TableDiff{DB: name, Table: tn, Change: Changed}
		var ref *Table
		switch {
		case ta == nil:
			td.Change, ref = Added, tb
		case tb == nil:
			td.Change, ref = Deleted, ta
		default:
			ref = tb
			td.SchemaChanged = !slices.Equal(ta.ColumnNames(), tb.ColumnNames()) || !slices.Equal(ta.Key(), tb.Key())
		}
		td.Key = ref.Key()
		if td.SchemaChanged {
			td.Key = nil // match rows by every column when the key changed
		}
		rowsA, orderA, err := loadRows(ctx, sa.q, ta, td.Key)
		if err != nil {
			return nil, fmt.Errorf("diff %s.%s: %w", name, tn, err)
		}
		rowsB, orderB, err := loadRows(ctx, sb.q, tb, td.Key)
		if err != nil {
			return nil, fmt.Errorf("diff %s.%s: %w", name, tn, err)
		}
		for _, k := range orderA {
			ra := rowsA[k]
			rb, ok := rowsB[k]
			if !ok {
				td.Deleted = append(td.Deleted, ra)
				continue
			}
			if rc, changed := compareRow(ra, rb, td.Key); changed {
				td.Changed = append(td.Changed, rc)
			}
		}
		for _, k := range orderB {
			if _, ok := rowsA[k]; !ok {
				td.Added = append(td.Added, rowsB[k])
			}
		}
		if len(td.Added)+len(td.Changed)+len(td.Deleted) > 0 || td.Change != Changed || td.SchemaChanged {
			out = append(out, td)
		}
	}
	return out, nil
}

// loadRows reads every row of t keyed by the encoding of its key columns
// (all columns when key is empty; duplicates then get a counter suffix).
func loadRows(ctx context.Context, q Querier, t *Table, key []string) (map[string]Row, []string, error) {
	rows := map[string]Row{}
	var order []string
	if t == nil {
		return rows, nil, nil
	}
	cols := t.ColumnNames()
	idx := make([]int, 0, len(key))
	for _, k := range key {
		idx = append(idx, slices.Index(cols, k))
	}
	if len(key) == 0 {
		for i := range cols {
			idx = append(idx, i)
		}
	}
	err := scanRows(ctx, q, t, func(vals []any) error {
		var b strings.Builder
		e := encoder{w: &b}
		for _, i := range idx {
			if err := e.value(vals[i]); err != nil {
				return err
			}
		}
		k := b.String()
		for n := 1; rows[k] != nil; n++ {
			k = fmt.Sprintf("%s#%d", b.String(), n)
		}
		r := make(Row, len(cols))
		for i, c := range cols {
			r[c] = jsonValue(vals[i])
		}
		rows[k] = r
		order = append(order, k)
		return nil
	})
	return rows, order, err
}

func jsonValue(v any) any {
	if b, ok := v.([]byte); ok {
		return Blob(b)
	}
	return v
}

func compareRow(a, b Row, key []string) (RowChange, bool) {
	rc := RowChange{Key: Row{}, Before: Row{}, After: Row{}}
	for _, k := range key {
		rc.Key[k] = b[k]
	}
	for _, c := range unionKeys(a, b) {
		va, inA := a[c]
		vb, inB := b[c]
		if inA && inB && valueEqual(va, vb) {
			continue
		}
		rc.Cols = append(rc.Cols, c)
		if inA {
			rc.Before[c] = va
		}
		if inB {
			rc.After[c] = vb
		}
	}
	return rc, len(rc.Cols) > 0
}

func valueEqual(a, b any) bool {
	ba, okA := a.(Blob)
	bb, okB := b.(Blob)
	if okA || okB {
		return okA && okB && bytes.Equal(ba, bb)
	}
	return a == b
}

type homeEntry struct {
	kind   string
	mode   fs.FileMode
	size   int64
	sum    [32]byte
	target string
}

// readHome reads the home entries of the world at root by home-relative
// path; it leaves out what the hash leaves out.
func readHome(ctx context.Context, root string) (map[string]homeEntry, error) {
	out := map[string]homeEntry{}
	_, err := world.Walk(ctx, root, world.HomeDir, func(we *world.Entry) error {
		rel := strings.TrimPrefix(we.Path, world.HomeDir+"/")
		e := homeEntry{mode: we.Perm}
		switch we.Kind {
		case world.EntryDirEnd:
			return nil
		case world.EntryDir:
			e.kind = "dir"
		case world.EntrySymlink:
			e.kind, e.target = "symlink", we.Target
			e.mode = fs.ModePerm // as Lstat reports a symlink's mode on Linux
		case world.EntryFile:
			e.kind, e.size = "file", we.Size
			h := sha256.New()
			if err := we.CopyTo(h, nil); err != nil {
				return err
			}
			copy(e.sum[:], h.Sum(nil))
		}
		out[rel] = e
		return nil
	})
	return out, err
}

func compareHomes(ctx context.Context, a, b string) ([]FileChange, error) {
	ea, err := readHome(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("diff home: %w", err)
	}
	eb, err := readHome(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("diff home: %w", err)
	}
	var out []FileChange
	for _, p := range unionKeys(ea, eb) {
		x, inA := ea[p]
		y, inB := eb[p]
		switch {
		case !inA:
			out = append(out, FileChange{Change: Added, Path: p, Kind: y.kind, SizeAfter: y.size})
		case !inB:
			out = append(out, FileChange{Change: Deleted, Path: p, Kind: x.kind, SizeBefore: x.size})
		default:
			var what []string
			if x.kind != y.kind {
				what = append(what, "kind")
			}
			if x.mode != y.mode && x.kind != "symlink" {
				what = append(what, "mode")
			}
			if x.sum != y.sum {
				what = append(what, "content")
			}
			if x.target != y.target {
				what = append(what, "target")
			}
			if len(what) > 0 {
				out = append(out, FileChange{Change: Changed, Path: p, Kind: y.kind, SizeBefore: x.size, SizeAfter: y.size, What: what})
			}
		}
	}
	return out, nil
}

func unionKeys[V1, V2 any](a map[string]V1, b map[string]V2) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// First describes the first difference: the first differing database, table
// and row, or file. It is "" when the worlds are equal.
func (d *Diff) First() string {
	switch {
	case d.Manifest != nil:
		return fmt.Sprintf("manifest: %s differ (%s vs %s)", strings.Join(d.Manifest.Fields, ", "), d.Manifest.Before, d.Manifest.After)
	case len(d.Accounts) > 0:
		a := d.Accounts[0]
		return fmt.Sprintf("account %s/%s %s", a.Site, a.Username, a.Change)
	case len(d.DBs) > 0:
		return fmt.Sprintf("database %s %s", d.DBs[0].DB, d.DBs[0].Change)
	case len(d.Tables) > 0:
		t := d.Tables[0]
		where := fmt.Sprintf("database %s, table %s", t.DB, t.Table)
		switch {
		case t.Change != Changed:
			return where + " " + t.Change
		case t.SchemaChanged:
			return where + ": schema differs"
		case len(t.Deleted) > 0:
			return fmt.Sprintf("%s, row %s only in A", where, rowText(t.Deleted[0], t.Key))
		case len(t.Changed) > 0:
			c := t.Changed[0]
			return fmt.Sprintf("%s, row %s: column %s differs (%s vs %s)", where, rowText(c.Key, nil), c.Cols[0], valueText(c.Before[c.Cols[0]]), valueText(c.After[c.Cols[0]]))
		case len(t.Added) > 0:
			return fmt.Sprintf("%s, row %s only in B", where, rowText(t.Added[0], t.Key))
		}
		return where + ": rows differ"
	case len(d.Files) > 0:
		f := d.Files[0]
		return fmt.Sprintf("file %s %s %s", world.QuoteName("home/"+f.Path), f.Change, strings.Join(f.What, ","))
	case !d.Empty():
		return "worlds differ (hash only)"
	}
	return ""
}
