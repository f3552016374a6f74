package vision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/generator"
)

func TestDescribeProductImages(t *testing.T) {
	g := generator.Default()
	cases := []struct {
		params  map[string]any
		color   string
		display bool
	}{
		{map[string]any{"kind": "surge_protector", "body_color": "#f4f4f4", "display_panel": true, "outlets": 8}, "white", true},
		{map[string]any{"kind": "surge_protector", "body_color": "#1e1e1e", "display_panel": false, "outlets": 8}, "black", false},
		{map[string]any{"kind": "surge_protector", "body_color": "#1e1e1e", "display_panel": true, "outlets": 6}, "black", true},
		{map[string]any{"kind": "surge_protector", "body_color": "#f4f4f4", "display_panel": false, "outlets": 10}, "white", false},
		{map[string]any{"kind": "generic", "body_color": "#2a4d8f", "display_panel": false, "width": 320, "height": 240}, "blue", false},
	}
	for _, c := range cases {
		p, _ := json.Marshal(c.params)
		img, err := g.Generate("product_image", p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Describe(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		if d.BodyColor != c.color || d.Display != c.display {
			t.Errorf("%s: got %+v, want %s display=%v", p, d, c.color, c.display)
		}
	}
	if _, err := Describe(context.Background(), []byte("not an image")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestAblatedSaysNothing(t *testing.T) {
	d := Ablated()
	if !d.Ablated || d.BodyColor != "" || d.BodyHex != "" || d.Display || d.DisplayPct != 0 {
		t.Fatalf("an ablated description carries visual information: %+v", d)
	}
}

// TestBombRefusedBeforeDecoding: a kilobyte PNG declaring 100000x100000
// pixels (80 GB decoded) is refused from its header, at once and with the
// bound in words; before the check, image.Decode tried to allocate it and
// the host process died (issue 29). A bomb within the pixel bound but
// over the byte bound, and garbage, are refused too.
func TestBombRefusedBeforeDecoding(t *testing.T) {
	bomb := BombPNG(100000, 100000)
	if len(bomb) > 2000 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	done := make(chan error, 1)
	go func() { _, err := Describe(context.Background(), bomb); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "100000x100000") || !strings.Contains(err.Error(), "4096x4096") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the bomb is still decoding after 5s")
	}
	if _, err := Check(BombPNG(4097, 4096)); !errors.Is(err, ErrRefused) {
		t.Fatalf("4097x4096: %v", err)
	}
	if _, err := Check(append(BombPNG(64, 64), make([]byte, MaxBytes)...)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "8 MiB") {
		t.Fatalf("over the byte bound: %v", err)
	}
	if c, err := Check(BombPNG(4096, 4096)); err != nil || c.MIME != "image/png" {
		t.Fatalf("4096x4096: %+v %v", c, err)
	}
}

// TestDescribeStopsAtTheDeadline: a context already done stops decoding
// before it starts.
func TestDescribeStopsAtTheDeadline(t *testing.T) {
	img, err := generator.Default().Generate("product_image", []byte(`{"kind":"generic","body_color":"#2a4d8f","width":320,"height":240}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Describe(ctx, img); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestDescribeLargeImageSampled: the largest image taken (4096x4096) is
// described right from a sample of at most MaxSamples pixels.
func TestDescribeLargeImageSampled(t *testing.T) {
	img, err := generator.Default().Generate("product_image", []byte(`{"kind":"surge_protector","body_color":"#f4f4f4","display_panel":true,"width":4096,"height":4096}`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d, err := Describe(context.Background(), img)
	if err != nil || d.BodyColor != "white" || !d.Display {
		t.Fatalf("%+v %v", d, err)
	}
	t.Logf("4096x4096 described in %s", time.Since(start))
}

// BenchmarkRefuseBomb is what refusing the 100000x100000 bomb costs.
func BenchmarkRefuseBomb(b *testing.B) {
	bomb := BombPNG(100000, 100000)
	for b.Loop() {
		if _, err := Describe(context.Background(), bomb); !errors.Is(err, ErrRefused) {
			b.Fatal(err)
		}
	}
}

// BenchmarkDescribe is the offline tool on a default product photo
// (800x600) and on the largest image it takes (4096x4096, sampled).
func BenchmarkDescribe(b *testing.B) {
	for _, side := range [][2]int{{800, 600}, {4096, 4096}} {
		img, err := generator.Default().Generate("product_image", fmt.Appendf(nil, `{"kind":"surge_protector","body_color":"#f4f4f4","display_panel":true,"width":%d,"height":%d}`, side[0], side[1]))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx%d", side[0], side[1]), func(b *testing.B) {
			for b.Loop() {
				if _, err := Describe(context.Background(), img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
