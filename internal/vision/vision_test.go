package vision

import (
	"encoding/json"
	"testing"

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
		d, err := Describe(img)
		if err != nil {
			t.Fatal(err)
		}
		if d.BodyColor != c.color || d.Display != c.display {
			t.Errorf("%s: got %+v, want %s display=%v", p, d, c.color, c.display)
		}
	}
	if _, err := Describe([]byte("not an image")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestAblatedSaysNothing(t *testing.T) {
	d := Ablated()
	if !d.Ablated || d.BodyColor != "" || d.BodyHex != "" || d.Display || d.DisplayPct != 0 {
		t.Fatalf("an ablated description carries visual information: %+v", d)
	}
}
