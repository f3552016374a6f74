// Package vision is the offline vision tool: it turns a product image into
// text for text-only policies (the paper's harness offers a vision tool). It
// is procedural, not a model: it reads the picture's pixels and reports the
// body colour and whether a lit display panel is visible. A model-backed
// describer plugs in behind the same Describe signature in a later wave.
//
// Every image it is given is checked before it is decoded (Check): at most
// MaxBytes of PNG, JPEG or GIF, whose header declares at most MaxPixels, so
// a decompression bomb is refused before any pixel buffer exists; decoding
// and analysis stop at the context's end or after Timeout. The analysis
// samples at most MaxSamples pixels.
package vision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // decode GIF too
	_ "image/jpeg" // decode JPEG photos too
	_ "image/png"  // decode PNG
	"io"
	"math"
	"time"
)

// The bounds of an image the vision tool takes (docs/harness.md).
const (
	// MaxBytes is the largest encoded image, in bytes.
	MaxBytes = 8 << 20
	// MaxPixels is the most pixels (width x height) an image may declare:
	// 4096x4096, the generators' largest image. A 16-bit RGBA image of
	// this size decodes to 128 MiB.
	MaxPixels = 4096 * 4096
	// MaxSamples is the most pixels the analysis reads: a larger image is
	// sampled on a regular grid.
	MaxSamples = 1 << 20
	// Timeout bounds one decode and analysis.
	Timeout = 10 * time.Second
)

// ErrRefused is wrapped by the error of an image Check refuses: not an
// image of a known format, or over a bound.
var ErrRefused = errors.New("image refused")

// Config is what Check learnt of an image from its header.
type Config struct {
	Format        string // "png", "jpeg", "gif"
	MIME          string // "image/png"
	Width, Height int
}

// Check reads an image's header only and refuses it (ErrRefused) unless it
// is PNG, JPEG or GIF of at most MaxBytes declaring at most MaxPixels: what
// may then be decoded, or handed to a vision model, is bounded.
func Check(img []byte) (Config, error) {
	if len(img) > MaxBytes {
		return Config{}, fmt.Errorf("%w: %d bytes is more than the vision tool takes (%d MiB)", ErrRefused, len(img), MaxBytes>>20)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return Config{}, fmt.Errorf("%w: not a PNG, JPEG or GIF image (%v)", ErrRefused, err)
	}
	if format != "png" && format != "jpeg" && format != "gif" {
		// Another package of the binary may register a format whose
		// decoder these bounds were not checked against.
		return Config{}, fmt.Errorf("%w: a %s image: the vision tool takes PNG, JPEG or GIF", ErrRefused, format)
	}
	c := Config{Format: format, MIME: "image/" + format, Width: cfg.Width, Height: cfg.Height}
	if c.Width <= 0 || c.Height <= 0 || int64(c.Width)*int64(c.Height) > MaxPixels {
		return c, fmt.Errorf("%w: a %s of %dx%d pixels is larger than the vision tool takes (%d pixels, e.g. 4096x4096)",
			ErrRefused, format, c.Width, c.Height, MaxPixels)
	}
	return c, nil
}

// ctxReader fails its reads once ctx is done, which stops a decoder
// between two reads.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p[:min(len(p), 32<<10)])
}

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
// The image is checked first (Check); decoding and analysis end with ctx,
// or after Timeout.
func Describe(ctx context.Context, img []byte) (*Description, error) {
	if _, err := Check(img); err != nil {
		return nil, fmt.Errorf("vision: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	m, _, err := image.Decode(ctxReader{ctx, bytes.NewReader(img)})
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("vision: decoding the image took too long: %w", cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("vision: not an image: %w", err)
	}
	b := m.Bounds()
	if b.Dx() < 8 || b.Dy() < 8 {
		return nil, fmt.Errorf("vision: image %dx%d is too small", b.Dx(), b.Dy())
	}
	// A grid of at most MaxSamples pixels: every pixel of an image up to
	// that size.
	step := 1
	for (b.Dx()+step-1)/step*((b.Dy()+step-1)/step) > MaxSamples {
		step++
	}
	bg := rgb(m.At(b.Min.X, b.Min.Y))
	counts := map[[3]uint8]int{}
	screen, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += step {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("vision: reading the image took too long: %w", err)
		}
		for x := b.Min.X; x < b.Max.X; x += step {
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
