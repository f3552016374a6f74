package catalog

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/wildawm/wildawm/internal/generator"
)

// TestImagesShowTheirAttributes: a drawn image shows what its attributes
// say and nothing else tells: counting the blobs of its colour gives its
// count, and the panel is there exactly when panel is set.
func TestImagesShowTheirAttributes(t *testing.T) {
	for _, colour := range []string{"red", "white"} {
		for _, shape := range shapes {
			for _, pattern := range patterns {
				for _, count := range []int{1, 4, 6} {
					for _, panel := range []bool{count%2 == 0} {
						a := ImageAttrs{Colour: colour, Shape: shape, Pattern: pattern, Count: count, Panel: panel}
						b, err := generator.PNG().Generate(a.PNGParams())
						if err != nil {
							t.Fatalf("%+v: %v", a, err)
						}
						img, err := png.Decode(bytes.NewReader(b))
						if err != nil {
							t.Fatal(err)
						}
						if got := blobs(img, hexColour(colourHex[colour])); got != count {
							t.Fatalf("%+v: %d blobs of %s, want %d", a, got, colour, count)
						}
						if got := blobs(img, hexColour("#3ee08f")) == 1; got != panel {
							t.Fatalf("%+v: a lit panel is drawn: %v", a, got)
						}
					}
				}
			}
		}
	}
}

func hexColour(s string) color.RGBA {
	var c color.RGBA
	for i, p := range []*uint8{&c.R, &c.G, &c.B} {
		v := 0
		for _, ch := range s[1+2*i : 3+2*i] {
			v *= 16
			switch {
			case ch >= '0' && ch <= '9':
				v += int(ch - '0')
			default:
				v += int(ch-'a') + 10
			}
		}
		*p = uint8(v)
	}
	c.A = 255
	return c
}

// blobs counts the 4-connected regions of pixels of exactly colour c.
func blobs(img image.Image, c color.RGBA) int {
	b := img.Bounds()
	seen := make([]bool, b.Dx()*b.Dy())
	is := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B
	}
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := (y-b.Min.Y)*b.Dx() + (x - b.Min.X)
			if seen[i] || !is(x, y) {
				continue
			}
			n++
			stack := [][2]int{{x, y}}
			seen[i] = true
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, d := range [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
					qx, qy := p[0]+d[0], p[1]+d[1]
					if qx < b.Min.X || qy < b.Min.Y || qx >= b.Max.X || qy >= b.Max.Y {
						continue
					}
					j := (qy-b.Min.Y)*b.Dx() + (qx - b.Min.X)
					if !seen[j] && is(qx, qy) {
						seen[j] = true
						stack = append(stack, [2]int{qx, qy})
					}
				}
			}
		}
	}
	return n
}
