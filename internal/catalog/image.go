package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ImageAttrs is what a generated image shows (a row of image_attrs): for
// verifiers and the image's drawing only, never for a page's text.
type ImageAttrs struct {
	Image   string `json:"image"` // its path, e.g. images/products/G00017.png
	Kind    string `json:"kind"`  // products, devices, recipes, hotels
	Colour  string `json:"colour"`
	Panel   bool   `json:"panel"` // a display panel under the items
	Shape   string `json:"shape"` // round, square, rectangular, pill
	Pattern string `json:"pattern"`
	Count   int    `json:"count"` // how many items the picture shows
}

// Size of a generated image.
const (
	GenImageWidth  = 480
	GenImageHeight = 360
)

// ImageAttrs returns the attributes of the generated image at path, or
// ErrNotFound.
func (c *Catalog) ImageAttrs(ctx context.Context, path string) (ImageAttrs, error) {
	a := ImageAttrs{Image: path}
	var panel int
	err := c.db.QueryRowContext(ctx, `SELECT kind, colour, panel, shape, pattern, count FROM image_attrs WHERE image = ?`, path).
		Scan(&a.Kind, &a.Colour, &panel, &a.Shape, &a.Pattern, &a.Count)
	if errors.Is(err, sql.ErrNoRows) || err != nil && strings.Contains(err.Error(), "no such table: image_attrs") {
		return a, ErrNotFound // a catalog of Write alone has no generated images
	}
	if err != nil {
		return a, fmt.Errorf("image %s: %w", path, err)
	}
	a.Panel = panel != 0
	return a, nil
}

// PNGParams are the "png" generator's params that draw a: Count items of
// Shape in Colour, in one row or two, each marked with Pattern, on a light
// ground, and a dark display panel with a lit readout below them when
// Panel. The drawing is integer-only, so the bytes are the same on every
// machine.
func (a ImageAttrs) PNGParams() json.RawMessage {
	type shape struct {
		Kind  string `json:"kind"`
		X     int    `json:"x"`
		Y     int    `json:"y"`
		W     *int   `json:"w,omitempty"`
		H     *int   `json:"h,omitempty"`
		R     *int   `json:"r,omitempty"`
		Color string `json:"color"`
	}
	ip := func(n int) *int { return &n }
	col, ok := colourHex[a.Colour]
	if !ok {
		col = "#808080"
	}
	dark := darken(col)
	n := min(max(a.Count, 1), 6)
	rows := 1
	if n > 3 {
		rows = 2
	}
	perRow := (n + rows - 1) / rows
	areaH := GenImageHeight - 40
	if a.Panel {
		areaH -= 70
	}
	cell := min((GenImageWidth-40)/perRow, (areaH-20)/rows)
	side := cell * 3 / 4
	var ss []shape
	for i := range n {
		r, k := i/perRow, i%perRow
		inRow := perRow
		if r == rows-1 {
			inRow = n - perRow*(rows-1)
		}
		left := (GenImageWidth - inRow*cell) / 2
		cx := left + k*cell + cell/2
		cy := 20 + (areaH-rows*cell)/2 + r*cell + cell/2
		w, h := side, side
		switch a.Shape {
		case "rectangular":
			h = side * 3 / 5
		case "pill":
			h = side / 2
		}
		x, y := cx-w/2, cy-h/2
		switch a.Shape {
		case "round":
			ss = append(ss, shape{Kind: "circle", X: cx, Y: cy, R: ip(side / 2), Color: col})
		case "pill":
			ss = append(ss, shape{Kind: "roundrect", X: x, Y: y, W: ip(w), H: ip(h), R: ip(h / 2), Color: col})
		default:
			ss = append(ss, shape{Kind: "rect", X: x, Y: y, W: ip(w), H: ip(h), Color: col})
		}
		// The pattern, inside the item's inner box.
		bw, bh := w/2, h/2
		bx, by := cx-bw/2, cy-bh/2
		switch a.Pattern {
		case "striped":
			for s := range 3 {
				ss = append(ss, shape{Kind: "rect", X: bx, Y: by + s*bh/3, W: ip(bw), H: ip(max(bh/7, 2)), Color: dark})
			}
		case "dotted":
			for s := range 3 {
				ss = append(ss, shape{Kind: "circle", X: bx + bw/6 + s*bw/3, Y: cy, R: ip(max(bw/12, 2)), Color: dark})
			}
		case "checked":
			q := bw / 2
			ss = append(ss, shape{Kind: "rect", X: bx, Y: by, W: ip(q), H: ip(bh / 2), Color: dark},
				shape{Kind: "rect", X: bx + q, Y: by + bh/2, W: ip(q), H: ip(bh / 2), Color: dark})
		}
	}
	if a.Panel {
		py := GenImageHeight - 90
		ss = append(ss, shape{Kind: "roundrect", X: 60, Y: py, W: ip(GenImageWidth - 120), H: ip(56), R: ip(8), Color: "#15181c"},
			shape{Kind: "rect", X: 90, Y: py + 20, W: ip(GenImageWidth - 180), H: ip(16), Color: "#3ee08f"})
	}
	b, err := json.Marshal(struct {
		Width      int     `json:"width"`
		Height     int     `json:"height"`
		Background string  `json:"background"`
		Shapes     []shape `json:"shapes"`
	}{GenImageWidth, GenImageHeight, "#eef0f2", ss})
	if err != nil {
		panic(err) // plain values: cannot fail
	}
	return b
}

// darken returns #rrggbb at half its brightness (the pattern's colour),
// or a dark grey for a light colour's readability.
func darken(hex string) string {
	var r, g, b int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return "#333333"
	}
	if r+g+b < 120 {
		return "#9a9a9a" // a pattern on black must show
	}
	return fmt.Sprintf("#%02x%02x%02x", r/2, g/2, b/2)
}

// Review is one shopper's review of a generated product.
type Review struct {
	Author   string
	Rating   int // 1 to 5
	Title    string
	Body     string
	PostedOn string
}

// Reviews returns up to limit reviews of product id, newest first; none
// for a catalog without reviews (Write's alone).
func (c *Catalog) Reviews(ctx context.Context, id int64, limit int) ([]Review, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT author, rating, title, body, posted_on FROM reviews WHERE product_id = ? ORDER BY posted_on DESC, id LIMIT ?`, id, limit)
	if err != nil {
		if strings.Contains(err.Error(), "no such table: reviews") {
			return nil, nil
		}
		return nil, fmt.Errorf("reviews of product %d: %w", id, err)
	}
	defer rows.Close()
	var out []Review
	for rows.Next() {
		var r Review
		if err := rows.Scan(&r.Author, &r.Rating, &r.Title, &r.Body, &r.PostedOn); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Categories returns the categories of site's products, by name.
func (c *Catalog) Categories(ctx context.Context, site string) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT DISTINCT category FROM products WHERE site = ? ORDER BY category`, site)
	if err != nil {
		return nil, fmt.Errorf("categories of %s: %w", site, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
