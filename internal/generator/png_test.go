package generator

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	return img
}

func rgb(c color.Color) [3]uint32 {
	r, g, b, _ := c.RGBA()
	return [3]uint32{r >> 8, g >> 8, b >> 8}
}

func TestPNGShapes(t *testing.T) {
	params := `{"width":300,"height":200,"background":"#ffffff","shapes":[
		{"kind":"rect","x":10,"y":20,"w":40,"h":30,"color":"#ff0000"},
		{"kind":"circle","x":150,"y":100,"r":25,"color":"#00ff00"},
		{"kind":"roundrect","x":200,"y":120,"w":80,"h":60,"r":30,"color":"#0000FF"},
		{"kind":"rect","x":-50,"y":-50,"w":55,"h":55,"color":"#123456"},
		{"kind":"rect","x":290,"y":190,"w":100,"h":100,"color":"#abcdef"}
	]}`
	b, err := PNG().Generate(json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b)
	if got := img.Bounds(); got != image.Rect(0, 0, 300, 200) {
		t.Fatalf("bounds %v, want 300x200", got)
	}
	tests := []struct {
		x, y int
		want [3]uint32
	}{
		{10 + 40/2, 20 + 30/2, [3]uint32{255, 0, 0}}, // rect centre
		{10, 20, [3]uint32{255, 0, 0}},               // rect corner, inclusive
		{50, 20, [3]uint32{255, 255, 255}},           // just right of the rect
		{150, 100, [3]uint32{0, 255, 0}},             // circle centre
		{150 + 25, 100, [3]uint32{0, 255, 0}},        // circle edge
		{150 + 18, 100 + 18, [3]uint32{255, 255, 255}},
		{240, 150, [3]uint32{0, 0, 255}}, // roundrect centre
		{200, 120, [3]uint32{255, 255, 255}},
		{0, 0, [3]uint32{0x12, 0x34, 0x56}},     // clipped at the top left
		{299, 199, [3]uint32{0xab, 0xcd, 0xef}}, // clipped at the bottom right
		{150, 10, [3]uint32{255, 255, 255}},     // background
	}
	for _, tt := range tests {
		if got := rgb(img.At(tt.x, tt.y)); got != tt.want {
			t.Errorf("pixel (%d,%d) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestPNGDefaultBackground(t *testing.T) {
	b, err := PNG().Generate(json.RawMessage(`{"width":1,"height":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := rgb(decodePNG(t, b).At(0, 0)); got != [3]uint32{255, 255, 255} {
		t.Errorf("default background %v, want white", got)
	}
}

func TestProductImage(t *testing.T) {
	gen := func(params string) image.Image {
		t.Helper()
		b, err := ProductImage().Generate(json.RawMessage(params))
		if err != nil {
			t.Fatal(err)
		}
		return decodePNG(t, b)
	}
	with := gen(`{"kind":"surge_protector","body_color":"#f2f2f2","display_panel":true,"outlets":6,"width":400,"height":300}`)
	without := gen(`{"kind":"surge_protector","body_color":"#f2f2f2","display_panel":false,"outlets":6,"width":400,"height":300}`)
	if got := with.Bounds(); got != image.Rect(0, 0, 400, 300) {
		t.Fatalf("bounds %v, want 400x300", got)
	}
	screen := [3]uint32{0x9c, 0xf4, 0xff}
	count := func(img image.Image, c [3]uint32) int {
		n := 0
		for y := range img.Bounds().Dy() {
			for x := range img.Bounds().Dx() {
				if rgb(img.At(x, y)) == c {
					n++
				}
			}
		}
		return n
	}
	if n := count(with, screen); n < 500 {
		t.Errorf("display_panel true: %d screen pixels, want a visible panel", n)
	}
	if n := count(without, screen); n != 0 {
		t.Errorf("display_panel false: %d screen pixels, want none", n)
	}
	if body := [3]uint32{0xf2, 0xf2, 0xf2}; count(with, body) < 1000 {
		t.Error("body colour hardly present")
	}

	// Other attributes change the picture too.
	base := `{"kind":"surge_protector","width":200,"height":150}`
	variants := []string{
		`{"kind":"surge_protector","width":200,"height":150,"outlets":3}`,
		`{"kind":"surge_protector","width":200,"height":150,"body_color":"#222222"}`,
		`{"kind":"generic","width":200,"height":150}`,
	}
	a, _ := ProductImage().Generate(json.RawMessage(base))
	for _, v := range variants {
		b, err := ProductImage().Generate(json.RawMessage(v))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(a, b) {
			t.Errorf("%s renders the same as %s", v, base)
		}
	}
}

func TestProductImageSizes(t *testing.T) {
	// Every size and outlet count within limits renders without panicking.
	for _, kind := range []string{"surge_protector", "generic"} {
		for _, side := range []int{64, 65, 97, 300} {
			for outlets := 0; outlets <= MaxOutlets; outlets += 3 {
				for _, display := range []bool{false, true} {
					p, _ := json.Marshal(map[string]any{"kind": kind, "width": side, "height": side*3/2 + outlets, "outlets": outlets, "display_panel": display})
					if _, err := ProductImage().Generate(p); err != nil {
						t.Fatalf("%s: %v", p, err)
					}
				}
			}
		}
	}
}
