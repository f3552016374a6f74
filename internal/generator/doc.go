// Package generator turns a named, deterministic file-content generator and
// its JSON params into bytes. World deltas use it for file.write operations
// that say {"generator": {"name": ..., "params": {...}}} instead of inline
// content. Output is a pure function of (name, params): identical on every
// machine and every run, with no clock, randomness or map order involved.
//
// Glossary:
//   - Generator: a named function from a params JSON object to file bytes.
//   - Registry: an immutable name -> Generator map built by NewRegistry or
//     Default (no init() registration, no package-level state).
//   - params: a JSON object decoded strictly: unknown or duplicate keys
//     (case-sensitive), wrong types and trailing data are errors.
//   - ParamError: what is wrong with params, naming the generator and the
//     field path (e.g. `csv: field "rows[3]": has 2 cells, want 3 ...`).
//     Limit violations also wrap ErrLimit.
//
// Generators and their params (see docs/generators.md for examples):
//
//	csv           header []string (required, non-empty); rows [][]cell, each
//	              row as long as header. RFC 4180, "\n" line ends.
//	markdown      title string (required); sections []{heading string,
//	              paragraphs []string, bullets []string, table}.
//	text          lines []string (required, may be empty); each line ends "\n".
//	pdf           title string (required); author string; date RFC 3339
//	              (required, year 1970..9999 in UTC; the creation and
//	              modification date); paragraphs []string; table. A4, Helvetica.
//	png           width, height int (required, 1..4096); background "#rrggbb"
//	              (default white); shapes []{kind "rect"|"roundrect"|"circle",
//	              x, y int, w, h int (rect, roundrect), r int (circle radius;
//	              roundrect corner radius, default min(w,h)/4), color "#rrggbb"}.
//	product_image kind "surge_protector"|"generic" (required); body_color
//	              "#rrggbb" (default #f0f0f0); display_panel bool; outlets int
//	              0..12 (default 6 for surge_protector, 2 for generic); width,
//	              height int 64..4096 (default 800x600); background "#rrggbb".
//
// A table is {"header": []string, "rows": [][]cell}; a cell is a JSON
// string, number (written as it appears in the params), bool or null
// (empty).
//
// Limits are the Max* constants. Golden SHA-256 sums of testdata/cases are
// in testdata/golden.sha256 (go test -update rewrites them); PNG and PDF
// bytes depend on the standard library's compress/flate, so a Go upgrade
// may change them.
//
// The package imports only the standard library and
// codeberg.org/go-pdf/fpdf; it imports nothing else of the project.
package generator
