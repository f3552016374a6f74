package generator

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// canvas is an opaque RGBA image with integer-only fill operations, so
// that pixels do not depend on floating-point behaviour of the platform.
type canvas struct {
	img *image.RGBA
}

func newCanvas(w, h int, bg color.RGBA) *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
	c.fillRect(0, 0, w, h, bg)
	return c
}

// fillRect paints [x, x+w) x [y, y+h), clipped to the canvas.
func (c *canvas) fillRect(x, y, w, h int, col color.RGBA) {
	r := image.Rect(x, y, x+w, y+h).Intersect(c.img.Rect)
	if r.Empty() {
		return
	}
	pix := c.img.Pix
	for py := r.Min.Y; py < r.Max.Y; py++ {
		i := c.img.PixOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px++ {
			pix[i], pix[i+1], pix[i+2], pix[i+3] = col.R, col.G, col.B, 255
			i += 4
		}
	}
}

// fillRoundRect paints the rectangle [x, x+w) x [y, y+h) with corners
// rounded to radius rad, clipped to the canvas. rad is clamped to half the
// shorter side.
func (c *canvas) fillRoundRect(x, y, w, h, rad int, col color.RGBA) {
	rad = max(0, min(rad, w/2, h/2))
	if rad == 0 {
		c.fillRect(x, y, w, h, col)
		return
	}
	r := image.Rect(x, y, x+w, y+h).Intersect(c.img.Rect)
	// Corner circle centres in doubled coordinates, where pixel px has its
	// centre at 2*px+1.
	lx, rx := int64(2*(x+rad)), int64(2*(x+w-rad))
	ty, by := int64(2*(y+rad)), int64(2*(y+h-rad))
	rr := int64(2*rad) * int64(2*rad)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		cy := int64(2*py + 1)
		var dy int64
		switch {
		case cy < ty:
			dy = ty - cy
		case cy > by:
			dy = cy - by
		}
		for px := r.Min.X; px < r.Max.X; px++ {
			cx := int64(2*px + 1)
			var dx int64
			switch {
			case cx < lx:
				dx = lx - cx
			case cx > rx:
				dx = cx - rx
			}
			if dx*dx+dy*dy <= rr {
				c.img.SetRGBA(px, py, col)
			}
		}
	}
}

// fillCircle paints the pixels whose centres lie within rad of the centre
// of pixel (cx, cy), clipped to the canvas.
func (c *canvas) fillCircle(cx, cy, rad int, col color.RGBA) {
	r := image.Rect(cx-rad, cy-rad, cx+rad+1, cy+rad+1).Intersect(c.img.Rect)
	rr := int64(rad) * int64(rad)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		dy := int64(py - cy)
		for px := r.Min.X; px < r.Max.X; px++ {
			dx := int64(px - cx)
			if dx*dx+dy*dy <= rr {
				c.img.SetRGBA(px, py, col)
			}
		}
	}
}

// encode returns the canvas as PNG bytes, using a fixed encoder
// configuration so that output is deterministic.
func (c *canvas) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(&b, c.img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// parseColor parses "#rrggbb" (hex digits in either case).
func parseColor(gen, field, s string) (color.RGBA, error) {
	bad := func() (color.RGBA, error) {
		return color.RGBA{}, paramErr(gen, field, "%s is not a colour of the form \"#rrggbb\" (e.g. \"#1f6feb\")", quoteShort(s))
	}
	if len(s) != 7 || s[0] != '#' {
		return bad()
	}
	var v [3]uint8
	for i := range 3 {
		hi, ok1 := hexVal(s[1+2*i])
		lo, ok2 := hexVal(s[2+2*i])
		if !ok1 || !ok2 {
			return bad()
		}
		v[i] = hi<<4 | lo
	}
	return color.RGBA{v[0], v[1], v[2], 255}, nil
}

func hexVal(c byte) (uint8, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// optColor parses s, or returns def when s is empty.
func optColor(gen, field, s string, def color.RGBA) (color.RGBA, error) {
	if s == "" {
		return def, nil
	}
	return parseColor(gen, field, s)
}

// shade scales a colour's channels by num/den (integer arithmetic).
func shade(c color.RGBA, num, den int) color.RGBA {
	f := func(v uint8) uint8 { return uint8(min(255, int(v)*num/den)) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), 255}
}

// imageSize checks a width or height parameter.
func imageSize(gen, field string, p *int, def, lo int) (int, error) {
	if p == nil {
		if def == 0 {
			return 0, paramErr(gen, field, "is required: an integer between %d and %d", lo, MaxImageSide)
		}
		return def, nil
	}
	if *p > MaxImageSide {
		return 0, limitErr(gen, field, "%d is too large: images are at most %dx%d pixels", *p, MaxImageSide, MaxImageSide)
	}
	return checkInt(gen, field, *p, lo, MaxImageSide)
}
