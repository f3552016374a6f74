// Package vision is the offline vision tool: it turns a product image into
// text for text-only policies (the paper's harness offers a vision tool). It
// is procedural, not a model: it reads the picture's pixels and reports the
// body colour and whether a lit display panel is visible. A model-backed
// describer plugs in behind the same Describe signature in a later wave.
package vision

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // decode JPEG photos too
	_ "image/png"  // decode PNG
	"math"
)

// Description is what Describe sees in an image.
type Description struct {
	BodyColor  string  `json:"body_color"`  // nearest colour name
	BodyHex    string  `json:"body_hex"`    // "#rrggbb"
	Display    bool    `json:"display"`     // a lit display panel is visible
	DisplayPct float64 `json:"display_pct"` // share of pixels that look like a lit screen
	Text       string  `json:"text"`
	// Ablated is set when the image's information was removed (Ablated):
	// the visual attributes above are unknown, not "no display".
	Ablated bool `json:"ablated,omitempty"`
}

// Ablated returns the description of an image whose information was
// removed: nothing about its look is known.
func Ablated() *Description {
	return &Description{Ablated: true, Text: "[image withheld: nothing about the picture can be seen]"}
}

var named = []struct {
	name    string
	r, g, b float64
}{
	{"white", 245, 245, 245}, {"light grey", 200, 200, 200}, {"grey", 150, 150, 150}, {"dark grey", 90, 90, 90},
	{"black", 25, 25, 25}, {"red", 200, 40, 40}, {"blue", 40, 80, 160}, {"green", 40, 150, 60},
	{"yellow", 230, 200, 40}, {"beige", 220, 200, 160}, {"silver", 190, 195, 200},
}

// Describe reports the body colour and display panel of a product photo.
func Describe(img []byte) (*Description, error) {
	m, _, err := image.Decode(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("vision: not an image: %w", err)
	}
	b := m.Bounds()
	if b.Dx() < 8 || b.Dy() < 8 {
		return nil, fmt.Errorf("vision: image %dx%d is too small", b.Dx(), b.Dy())
	}
	bg := rgb(m.At(b.Min.X, b.Min.Y))
	counts := map[[3]uint8]int{}
	screen, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgb(m.At(x, y))
			total++
			if c == bg {
				continue
			}
			counts[c]++
			// A lit screen: bright, cyan-green or backlit blue/green, clearly
			// not grey (saturated) and not the red switch.
			r, g, bl := int(c[0]), int(c[1]), int(c[2])
			if g > 180 && bl > 180 && r < g-60 {
				screen++
			}
		}
	}
	var body [3]uint8
	best := 0
	for c, n := range counts {
		if n > best || (n == best && less(c, body)) {
			body, best = c, n
		}
	}
	if best == 0 {
		return nil, fmt.Errorf("vision: the image is blank")
	}
	d := &Description{
		BodyColor:  nearest(body),
		BodyHex:    fmt.Sprintf("#%02x%02x%02x", body[0], body[1], body[2]),
		DisplayPct: 100 * float64(screen) / float64(total),
	}
	d.Display = d.DisplayPct >= 0.3
	d.Text = fmt.Sprintf("The product's body is %s (%s).", d.BodyColor, d.BodyHex)
	if d.Display {
		d.Text += " A lit digital display panel is visible on the front."
	} else {
		d.Text += " No display panel is visible."
	}
	return d, nil
}

func less(a, b [3]uint8) bool {
	return a[0] < b[0] || a[0] == b[0] && (a[1] < b[1] || a[1] == b[1] && a[2] < b[2])
}

func rgb(c interface{ RGBA() (r, g, b, a uint32) }) [3]uint8 {
	r, g, b, _ := c.RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func nearest(c [3]uint8) string {
	best, bestD := "", math.Inf(1)
	for _, n := range named {
		dr, dg, db := float64(c[0])-n.r, float64(c[1])-n.g, float64(c[2])-n.b
		if d := dr*dr + dg*dg + db*db; d < bestD {
			best, bestD = n.name, d
		}
	}
	return best
}
