package generator

import (
	"encoding/json"
	"image/color"
)

// ProductImage returns the "product_image" generator: a procedural product
// photo whose visual attributes (body colour, display panel, number of
// outlets, overall silhouette) are set by params, so that two products can
// be told apart by looking at their pictures.
func ProductImage() Generator { return productGen{} }

type productGen struct{}

func (productGen) Name() string { return "product_image" }

type productParams struct {
	Kind         string `json:"kind"`
	BodyColor    string `json:"body_color"`
	DisplayPanel bool   `json:"display_panel"`
	Outlets      *int   `json:"outlets"`
	Width        *int   `json:"width"`
	Height       *int   `json:"height"`
	Background   string `json:"background"`
}

// Product image defaults and bounds.
const (
	productDefaultWidth  = 800
	productDefaultHeight = 600
	productMinSide       = 64
)

// product is a checked product_image request.
type product struct {
	kind    string
	w, h    int
	body    color.RGBA
	bg      color.RGBA
	display bool
	outlets int
	pal     palette
}

func (g productGen) Generate(params json.RawMessage) ([]byte, error) {
	name := g.Name()
	var p productParams
	if err := decodeParams(name, params, &p); err != nil {
		return nil, err
	}
	pr := product{kind: p.Kind, display: p.DisplayPanel, pal: productPalette()}
	defOutlets := 0
	switch p.Kind {
	case "surge_protector":
		defOutlets = 6
	case "generic":
		defOutlets = 2
	case "":
		return nil, paramErr(name, "kind", `is required: "surge_protector" or "generic"`)
	default:
		return nil, paramErr(name, "kind", `%s is not a product kind: expected "surge_protector" or "generic"`, quoteShort(p.Kind))
	}
	var err error
	if pr.w, err = imageSize(name, "width", p.Width, productDefaultWidth, productMinSide); err != nil {
		return nil, err
	}
	if pr.h, err = imageSize(name, "height", p.Height, productDefaultHeight, productMinSide); err != nil {
		return nil, err
	}
	if pr.body, err = optColor(name, "body_color", p.BodyColor, color.RGBA{0xf0, 0xf0, 0xf0, 255}); err != nil {
		return nil, err
	}
	if pr.bg, err = optColor(name, "background", p.Background, color.RGBA{0xff, 0xff, 0xff, 255}); err != nil {
		return nil, err
	}
	pr.outlets = defOutlets
	if p.Outlets != nil {
		if *p.Outlets > MaxOutlets {
			return nil, limitErr(name, "outlets", "%d is too many: at most %d", *p.Outlets, MaxOutlets)
		}
		if pr.outlets, err = checkInt(name, "outlets", *p.Outlets, 0, MaxOutlets); err != nil {
			return nil, err
		}
	}
	c := newCanvas(pr.w, pr.h, pr.bg)
	if pr.kind == "surge_protector" {
		pr.drawSurgeProtector(c)
	} else {
		pr.drawGeneric(c)
	}
	return c.encode()
}

// palette holds the fixed colours of product parts.
type palette struct {
	cord, socket, socketOnDark, switch_, bezel, screen, digit, led color.RGBA
}

func productPalette() palette {
	return palette{
		cord:         color.RGBA{0x33, 0x33, 0x33, 255},
		socket:       color.RGBA{0x26, 0x26, 0x26, 255},
		socketOnDark: color.RGBA{0x9a, 0x9a, 0x9a, 255},
		switch_:      color.RGBA{0xd8, 0x3a, 0x2e, 255},
		bezel:        color.RGBA{0x1c, 0x1c, 0x1c, 255},
		screen:       color.RGBA{0x9c, 0xf4, 0xff, 255},
		digit:        color.RGBA{0x0b, 0x3d, 0x4a, 255},
		led:          color.RGBA{0x35, 0xc2, 0x4a, 255},
	}
}

// drawBody paints a drop shadow, an outline and the body itself.
func (p product) drawBody(c *canvas, x, y, w, h, rad int) {
	b := max(1, h/40)
	s := max(2, h/12)
	c.fillRoundRect(x+s, y+s, w, h, rad, shade(p.bg, 80, 100))
	c.fillRoundRect(x-b, y-b, w+2*b, h+2*b, rad+b, shade(p.body, 60, 100))
	c.fillRoundRect(x, y, w, h, rad, p.body)
}

// drawSurgeProtector paints a long power strip: a cord leaving on the
// right, a red switch, an optional display and a row of outlets.
func (p product) drawSurgeProtector(c *canvas) {
	bw, bh := p.w*82/100, max(12, p.h*30/100)
	bx, by := p.w*6/100, (p.h-bh)/2
	mid := by + bh/2
	cord := max(2, bh/9)
	c.fillRect(bx+bw-1, mid-cord/2, p.w-(bx+bw)+1, cord, p.pal.cord)
	p.drawBody(c, bx, by, bw, bh, bh/5)

	pad := max(1, bh/8)
	cur := bx + pad
	sw, sh := max(2, bh/4), bh/2
	c.fillRoundRect(cur-1, mid-sh/2-1, sw+2, sh+2, sw/4, shade(p.pal.switch_, 60, 100))
	c.fillRoundRect(cur, mid-sh/2, sw, sh, sw/4, p.pal.switch_)
	cur += sw + pad
	if p.display {
		dw, dh := bh*11/10, bh*55/100
		p.drawDisplay(c, cur, mid-dh/2, dw, dh, "120")
		cur += dw + pad
	}
	p.drawOutlets(c, cur, by+bh*20/100, bx+bw-pad-cur, bh*60/100, p.outlets)
}

// drawGeneric paints a boxy device: an optional display at the top, a row
// of ports at the bottom and a power LED.
func (p product) drawGeneric(c *canvas) {
	bw, bh := p.w*50/100, p.h*62/100
	bx, by := (p.w-bw)/2, (p.h-bh)/2
	p.drawBody(c, bx, by, bw, bh, min(bw, bh)/12)
	pad := max(1, min(bw, bh)/12)
	if p.display {
		p.drawDisplay(c, bx+bw*12/100, by+bh*12/100, bw*76/100, bh*28/100, "120")
	}
	p.drawOutlets(c, bx+pad, by+bh*58/100, bw-2*pad, bh*24/100, p.outlets)
	c.fillCircle(bx+bw-2*pad, by+bh-pad, max(1, min(bw, bh)/30), p.pal.led)
}

// drawOutlets spreads n sockets evenly over the zone [x, x+w) x [y, y+h).
// Each socket is a dark rounded rectangle with two slots and a ground hole
// in the body colour.
func (p product) drawOutlets(c *canvas, x, y, w, h, n int) {
	body := p.body
	if n <= 0 || w <= 0 || h <= 0 {
		return
	}
	socket := p.pal.socket
	if luma(body) < 96 {
		socket = p.pal.socketOnDark // keep sockets visible on a dark body
	}
	cell := max(1, w/n)
	ow := max(1, min(cell*70/100, h*80/100))
	for i := range n {
		ox := x + i*cell + (cell-ow)/2
		c.fillRoundRect(ox, y, ow, h, ow/6, socket)
		slotW, slotH := max(1, ow/8), max(1, h*30/100)
		c.fillRect(ox+ow*28/100, y+h*18/100, slotW, slotH, body)
		c.fillRect(ox+ow*64/100, y+h*18/100, slotW, slotH, body)
		c.fillCircle(ox+ow/2, y+h*70/100, max(1, ow/9), body)
	}
}

// drawDisplay paints a bezel and a bright screen showing digits as
// seven-segment marks.
func (p product) drawDisplay(c *canvas, x, y, w, h int, digits string) {
	c.fillRoundRect(x, y, w, h, h/8, p.pal.bezel)
	in := max(1, h/10)
	sx, sy, sw, sh := x+in, y+in, w-2*in, h-2*in
	if sw <= 0 || sh <= 0 {
		return
	}
	c.fillRect(sx, sy, sw, sh, p.pal.screen)
	m := max(1, sh/6)
	n := len(digits)
	dh := sh - 2*m
	dw := dh / 2
	gap := max(1, dw/3)
	if total := n*dw + (n-1)*gap; total > sw-2*m {
		dw = max(1, (sw-2*m-(n-1)*gap)/n)
	}
	total := n*dw + (n-1)*gap
	dx := sx + (sw-total)/2
	for i := range n {
		drawSegments(c, dx+i*(dw+gap), sy+m, dw, dh, digits[i], p.pal.digit)
	}
}

// drawSegments paints digit d ('0'..'9') as seven-segment marks in the
// box [x, x+w) x [y, y+h).
func drawSegments(c *canvas, x, y, w, h int, d byte, col color.RGBA) {
	// Bits 0..6 are segments a (top), b, c, d (bottom), e, f, g (middle).
	masks := [10]uint8{0x3f, 0x06, 0x5b, 0x4f, 0x66, 0x6d, 0x7d, 0x07, 0x7f, 0x6f}
	if d < '0' || d > '9' {
		return
	}
	m := masks[d-'0']
	t := max(1, w/5)
	half := h / 2
	segs := [7][4]int{
		{x + t, y, w - 2*t, t},                 // a
		{x + w - t, y + t, t, half - t},        // b
		{x + w - t, y + half, t, h - half - t}, // c
		{x + t, y + h - t, w - 2*t, t},         // d
		{x, y + half, t, h - half - t},         // e
		{x, y + t, t, half - t},                // f
		{x + t, y + half - t/2, w - 2*t, t},    // g
	}
	for i, s := range segs {
		if m&(1<<i) != 0 {
			c.fillRect(s[0], s[1], s[2], s[3], col)
		}
	}
}

// luma is the Rec. 601 brightness of c, 0..255.
func luma(c color.RGBA) int {
	return (299*int(c.R) + 587*int(c.G) + 114*int(c.B)) / 1000
}
