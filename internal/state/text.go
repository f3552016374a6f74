package state

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// maxRowsShown bounds the rows Text prints per table and change kind.
const maxRowsShown = 20

// WriteText writes the diff for people, one change a line. Paths are
// printed by world.QuoteName: as they are when plain, else Go-quoted, so a
// name holding a newline or invalid UTF-8 cannot forge or merge lines.
func (d *Diff) WriteText(w io.Writer) error {
	p := &printer{w: w}
	if d.Empty() {
		p.printf("no differences\n")
		d.writeSkipped(p)
		return p.err
	}
	if m := d.Manifest; m != nil {
		p.printf("manifest: %s changed (%s -> %s)\n", strings.Join(m.Fields, ", "), m.Before, m.After)
	}
	for _, a := range d.Accounts {
		p.printf("account %s %s/%s\n", sign(a.Change), a.Site, a.Username)
	}
	for _, db := range d.DBs {
		p.printf("database %s %s\n", sign(db.Change), db.DB)
	}
	for _, t := range d.Tables {
		key := "all columns"
		if len(t.Key) > 0 {
			key = strings.Join(t.Key, ",")
		}
		p.printf("%s.%s (by %s): +%d ~%d -%d", t.DB, t.Table, key, len(t.Added), len(t.Changed), len(t.Deleted))
		if t.Change != Changed {
			p.printf(" [table %s]", t.Change)
		}
		if t.SchemaChanged {
			p.printf(" [schema changed]")
		}
		p.printf("\n")
		for i, r := range t.Added {
			if i == maxRowsShown {
				p.printf("  + ... %d more\n", len(t.Added)-i)
				break
			}
			p.printf("  + %s\n", rowText(r, t.Key))
		}
		for i, c := range t.Changed {
			if i == maxRowsShown {
				p.printf("  ~ ... %d more\n", len(t.Changed)-i)
				break
			}
			parts := make([]string, len(c.Cols))
			for j, col := range c.Cols {
				parts[j] = fmt.Sprintf("%s: %s -> %s", col, valueText(c.Before[col]), valueText(c.After[col]))
			}
			p.printf("  ~ %s %s\n", rowText(c.Key, nil), strings.Join(parts, "; "))
		}
		for i, r := range t.Deleted {
			if i == maxRowsShown {
				p.printf("  - ... %d more\n", len(t.Deleted)-i)
				break
			}
			p.printf("  - %s\n", rowText(r, t.Key))
		}
	}
	for _, f := range d.Files {
		switch f.Change {
		case Changed:
			p.printf("file ~ %s (%s; %d -> %d bytes)\n", world.QuoteName(f.Path), strings.Join(f.What, ","), f.SizeBefore, f.SizeAfter)
		case Added:
			p.printf("file + %s (%s, %d bytes)\n", world.QuoteName(f.Path), f.Kind, f.SizeAfter)
		default:
			p.printf("file - %s (%s, %d bytes)\n", world.QuoteName(f.Path), f.Kind, f.SizeBefore)
		}
	}
	d.writeSkipped(p)
	keys := make([]string, 0, len(d.Summary))
	for k := range d.Summary {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, d.Summary[k]))
	}
	p.printf("summary: %s\n", strings.Join(parts, " "))
	return p.err
}

// writeSkipped lists the entries left out of the diff.
func (d *Diff) writeSkipped(p *printer) {
	for _, s := range d.Skipped {
		p.printf("skipped in %s: %s: %s\n", strings.ToUpper(s.World), world.QuoteName(s.Path), s.Reason)
	}
	if n := d.Summary["skipped"]; n > len(d.Skipped) {
		p.printf("skipped: %d more entries not listed\n", n-len(d.Skipped))
	}
}

// WriteJSON writes the diff for programs (indented, stable key order).
func (d *Diff) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func sign(change string) string {
	switch change {
	case Added:
		return "+"
	case Deleted:
		return "-"
	}
	return "~"
}

// rowText prints the key columns of r ({k: v, ...}) or the whole row when
// key is empty.
func rowText(r Row, key []string) string {
	cols := key
	if len(cols) == 0 {
		cols = make([]string, 0, len(r))
		for c := range r {
			cols = append(cols, c)
		}
		sort.Strings(cols)
	}
	parts := make([]string, 0, len(cols))
	for _, c := range cols {
		if v, ok := r[c]; ok || slices.Contains(key, c) {
			parts = append(parts, fmt.Sprintf("%s=%s", c, valueText(v)))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func valueText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		return fmt.Sprintf("%q", v)
	case Blob:
		return fmt.Sprintf("<blob %d bytes>", len(v))
	}
	return fmt.Sprint(v)
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
