package validate

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Stats measure one world state for the worlds' statistics (Table 2).
type Stats struct {
	DBs       int   `json:"dbs"`
	Tables    int   `json:"tables"`
	Rows      int64 `json:"rows"`
	Files     int   `json:"files"`
	DBBytes   int64 `json:"db_bytes"`
	FileBytes int64 `json:"file_bytes"`
	// TextBytes is the state as text: every database value as text and
	// every home file that is text (not PDF, PNG or other binary).
	TextBytes int64 `json:"text_bytes"`
	// Tokens estimates the state's size in model tokens: TextBytes / 4.
	Tokens int64 `json:"tokens"`
}

// Measure measures the world at dir; sum is its summary (for the row and
// byte counts).
func Measure(ctx context.Context, dir string, sum *state.Summary) (Stats, error) {
	s := Stats{DBs: sum.Stats.DBs, Tables: sum.Stats.Tables, Rows: sum.Stats.Rows, Files: sum.Stats.Files,
		DBBytes: sum.Stats.DBBytes, FileBytes: sum.Stats.FileBytes}
	dbs, err := filepath.Glob(filepath.Join(dir, world.DBDir, "*"+world.DBExt))
	if err != nil {
		return s, err
	}
	for _, path := range dbs {
		n, err := dbText(ctx, path)
		if err != nil {
			return s, fmt.Errorf("measure %s: %w", filepath.Base(path), err)
		}
		s.TextBytes += n
	}
	home := filepath.Join(dir, world.HomeDir)
	err = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if isText(b) {
			s.TextBytes += int64(len(b))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return s, err
	}
	s.Tokens = s.TextBytes / 4
	return s, nil
}

// isText reports whether b looks like text: no NUL in its first 8 KiB and
// not a PDF.
func isText(b []byte) bool {
	head := b[:min(len(b), 8192)]
	return !bytes.HasPrefix(b, []byte("%PDF")) && bytes.IndexByte(head, 0) < 0
}

// dbText sums the length of every value of every table as text.
func dbText(ctx context.Context, path string) (int64, error) {
	uri, err := world.DBURI(path, "mode=ro&_pragma=query_only(1)")
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return 0, err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	var total int64
	for _, t := range tables {
		cols, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT name FROM pragma_table_info(%s)`, quote(t)))
		if err != nil {
			return 0, err
		}
		var parts []string
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				cols.Close()
				return 0, err
			}
			parts = append(parts, fmt.Sprintf("coalesce(length(CAST(%s AS TEXT)), 0)", quoteIdent(c)))
		}
		if err := cols.Close(); err != nil {
			return 0, err
		}
		if len(parts) == 0 {
			continue
		}
		var n sql.NullInt64
		q := fmt.Sprintf(`SELECT sum(%s) FROM %s`, strings.Join(parts, " + "), quoteIdent(t))
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return 0, err
		}
		total += n.Int64
	}
	return total, nil
}

func quote(s string) string      { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
