package generator

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
)

// PNG returns the "png" generator: a background colour and a list of
// filled shapes (rect, roundrect, circle) painted in order.
func PNG() Generator { return pngGen{} }

type pngGen struct{}

func (pngGen) Name() string { return "png" }

type pngParams struct {
	Width      *int         `json:"width"`
	Height     *int         `json:"height"`
	Background string       `json:"background"`
	Shapes     []shapeParam `json:"shapes"`
}

type shapeParam struct {
	Kind  string `json:"kind"`
	X     *int   `json:"x"`
	Y     *int   `json:"y"`
	W     *int   `json:"w"`
	H     *int   `json:"h"`
	R     *int   `json:"r"`
	Color string `json:"color"`
}

// Coordinates may lie outside the image (shapes are clipped) but within
// this bound, which keeps all arithmetic far from overflow.
const maxCoord = 1 << 16

type shape struct {
	kind       string
	x, y, w, h int // rect, roundrect
	r          int // circle radius, or roundrect corner radius
	col        color.RGBA
}

func (g pngGen) Generate(params json.RawMessage) ([]byte, error) {
	name := g.Name()
	var p pngParams
	if err := decodeParams(name, params, &p); err != nil {
		return nil, err
	}
	w, err := imageSize(name, "width", p.Width, 0, 1)
	if err != nil {
		return nil, err
	}
	h, err := imageSize(name, "height", p.Height, 0, 1)
	if err != nil {
		return nil, err
	}
	bg, err := optColor(name, "background", p.Background, color.RGBA{255, 255, 255, 255})
	if err != nil {
		return nil, err
	}
	if len(p.Shapes) > MaxShapes {
		return nil, limitErr(name, "shapes", "has %d shapes, more than the limit of %d", len(p.Shapes), MaxShapes)
	}
	bounds := image.Rect(0, 0, w, h)
	shapes := make([]shape, len(p.Shapes))
	painted := 0
	for i, sp := range p.Shapes {
		s, err := sp.check(name, fmt.Sprintf("shapes[%d]", i))
		if err != nil {
			return nil, err
		}
		painted += s.bounds().Intersect(bounds).Dx() * s.bounds().Intersect(bounds).Dy()
		if painted > MaxPaintedPixels {
			return nil, limitErr(name, "shapes", "shapes cover more than %d pixels in total", MaxPaintedPixels)
		}
		shapes[i] = s
	}
	c := newCanvas(w, h, bg)
	for _, s := range shapes {
		s.paint(c)
	}
	return c.encode()
}

func (sp shapeParam) check(gen, path string) (shape, error) {
	s := shape{kind: sp.Kind}
	f := func(n string) string { return path + "." + n }
	switch sp.Kind {
	case "rect", "roundrect", "circle":
	case "":
		return s, paramErr(gen, f("kind"), `is required: one of "rect", "roundrect", "circle"`)
	default:
		return s, paramErr(gen, f("kind"), `%s is not a shape kind: expected "rect", "roundrect" or "circle"`, quoteShort(sp.Kind))
	}
	var err error
	if s.col, err = parseColor(gen, f("color"), sp.Color); err != nil {
		if sp.Color == "" {
			return s, paramErr(gen, f("color"), "is required: a colour of the form \"#rrggbb\"")
		}
		return s, err
	}
	if s.x, err = requireInt(gen, f("x"), sp.X, -maxCoord, maxCoord); err != nil {
		return s, err
	}
	if s.y, err = requireInt(gen, f("y"), sp.Y, -maxCoord, maxCoord); err != nil {
		return s, err
	}
	notUsed := func(field string) error {
		return paramErr(gen, f(field), "is not used by kind %q", sp.Kind)
	}
	switch sp.Kind {
	case "rect", "roundrect":
		if s.w, err = requireInt(gen, f("w"), sp.W, 1, maxCoord); err != nil {
			return s, err
		}
		if s.h, err = requireInt(gen, f("h"), sp.H, 1, maxCoord); err != nil {
			return s, err
		}
		switch {
		case sp.Kind == "rect" && sp.R != nil:
			return s, notUsed("r")
		case sp.Kind == "roundrect" && sp.R == nil:
			s.r = min(s.w, s.h) / 4
		case sp.Kind == "roundrect":
			if s.r, err = checkInt(gen, f("r"), *sp.R, 0, maxCoord); err != nil {
				return s, err
			}
		}
	case "circle":
		if sp.W != nil {
			return s, notUsed("w")
		}
		if sp.H != nil {
			return s, notUsed("h")
		}
		if s.r, err = requireInt(gen, f("r"), sp.R, 0, maxCoord); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (s shape) bounds() image.Rectangle {
	if s.kind == "circle" {
		return image.Rect(s.x-s.r, s.y-s.r, s.x+s.r+1, s.y+s.r+1)
	}
	return image.Rect(s.x, s.y, s.x+s.w, s.y+s.h)
}

func (s shape) paint(c *canvas) {
	switch s.kind {
	case "rect":
		c.fillRect(s.x, s.y, s.w, s.h, s.col)
	case "roundrect":
		c.fillRoundRect(s.x, s.y, s.w, s.h, s.r, s.col)
	case "circle":
		c.fillCircle(s.x, s.y, s.r, s.col)
	}
}
