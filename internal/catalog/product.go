package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Product is one row of the catalog's products table with its specs decoded.
type Product struct {
	ID          int64  `json:"id"`
	SKU         string `json:"sku"`
	Site        string `json:"site"`
	Title       string `json:"title"`
	Brand       string `json:"brand"`
	Category    string `json:"category"`
	PriceCents  int64  `json:"price_cents"`
	Description string `json:"description"`
	Specs       Specs  `json:"specs"`
	// Image is the photo's path relative to the catalog's home directory:
	// "images/<sku>.png".
	Image string `json:"image"`
}

// ImageFile returns the base name of the product's photo ("<sku>.png").
func (p Product) ImageFile() string { return p.SKU + ".png" }

// Price formats PriceCents as dollars, e.g. "$149.99".
func (p Product) Price() string { return FormatCents(p.PriceCents) }

// FormatCents formats an amount of cents as dollars, e.g. "$149.99".
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s$%d.%02d", sign, c/100, c%100)
}

// Spec is one listed spec. Value is an int64, a bool or a string.
type Spec struct {
	Key   string
	Value any
}

// Label is the human name of the spec, e.g. "Surge energy rating".
func (s Spec) Label() string {
	switch s.Key {
	case "joules":
		return "Surge energy rating"
	case "outlets":
		return "Outlets"
	case "rack_units":
		return "Rack height"
	case "cord_ft":
		return "Power cord length"
	case "usb_ports":
		return "USB charging ports"
	case "ul_listed":
		return "UL listed"
	case "length_ft":
		return "Length"
	case "connector":
		return "Connectors"
	case "gauge_awg":
		return "Wire gauge"
	case "channels":
		return "Channels"
	case "mic_preamps":
		return "Mic preamps"
	case "usb_audio":
		return "USB audio interface"
	case "watts":
		return "Power draw"
	case "dmx_channels":
		return "DMX channels"
	case "beam_deg":
		return "Beam angle"
	case "max_height_in":
		return "Maximum height"
	case "load_lb":
		return "Load capacity"
	case "material":
		return "Material"
	case "from":
		return "From"
	case "to":
		return "To"
	}
	return strings.ReplaceAll(s.Key, "_", " ")
}

// Text formats the value for people, e.g. "2700 J", "1U", "10 ft", "Yes".
func (s Spec) Text() string {
	switch v := s.Value.(type) {
	case bool:
		if v {
			return "Yes"
		}
		return "No"
	case string:
		return v
	case int64:
		n := strconv.FormatInt(v, 10)
		switch {
		case s.Key == "joules":
			return n + " J"
		case s.Key == "rack_units":
			if v == 0 {
				return "None (not rack mounted)"
			}
			return n + "U"
		case strings.HasSuffix(s.Key, "_ft"):
			return n + " ft"
		case strings.HasSuffix(s.Key, "_in"):
			return n + " in"
		case strings.HasSuffix(s.Key, "_lb"):
			return n + " lb"
		case s.Key == "gauge_awg":
			return n + " AWG"
		case s.Key == "watts":
			return n + " W"
		case s.Key == "beam_deg":
			return n + "°"
		}
		return n
	}
	return fmt.Sprint(s.Value)
}

// Specs is a product's listed specs in their listed order. It encodes as a
// JSON object with the keys in that order.
type Specs []Spec

// Get returns the value of key.
func (s Specs) Get(key string) (any, bool) {
	for _, sp := range s {
		if sp.Key == key {
			return sp.Value, true
		}
	}
	return nil, false
}

// Int returns the integer value of key.
func (s Specs) Int(key string) (int64, bool) {
	v, ok := s.Get(key)
	n, isInt := v.(int64)
	return n, ok && isInt
}

// Bool returns the boolean value of key.
func (s Specs) Bool(key string) (bool, bool) {
	v, ok := s.Get(key)
	b, isBool := v.(bool)
	return b, ok && isBool
}

// MarshalJSON encodes s as an object with keys in listed order.
func (s Specs) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, sp := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(sp.Key)
		if err != nil {
			return nil, err
		}
		switch sp.Value.(type) {
		case int64, bool, string:
		default:
			return nil, fmt.Errorf("spec %q: value %T is not an int64, bool or string", sp.Key, sp.Value)
		}
		v, err := json.Marshal(sp.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes an object of integers, booleans and strings,
// keeping the key order.
func (s *Specs) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("specs: want a JSON object")
	}
	out := Specs{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("specs: %w", err)
		}
		key := t.(string) // object keys are always strings
		t, err = dec.Token()
		if err != nil {
			return fmt.Errorf("specs: %w", err)
		}
		var v any
		switch t := t.(type) {
		case json.Number:
			n, err := t.Int64()
			if err != nil {
				return fmt.Errorf("specs: field %q: %s is not an integer", key, t)
			}
			v = n
		case bool, string:
			v = t
		default:
			return fmt.Errorf("specs: field %q: want an integer, boolean or string", key)
		}
		if _, dup := out.Get(key); dup {
			return fmt.Errorf("specs: field %q appears twice", key)
		}
		out = append(out, Spec{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("specs: %w", err)
	}
	*s = out
	return nil
}

// SurgeSpecs is the typed view of a surge protector's listed specs.
type SurgeSpecs struct {
	Joules    int64 `json:"joules"`
	Outlets   int64 `json:"outlets"`
	RackUnits int64 `json:"rack_units"` // 0 for strips
	CordFt    int64 `json:"cord_ft"`
	USBPorts  int64 `json:"usb_ports"`
	ULListed  bool  `json:"ul_listed"`
}

// Surge returns the typed specs of a product in CategorySurge.
func (p Product) Surge() (SurgeSpecs, error) {
	var s SurgeSpecs
	if p.Category != CategorySurge {
		return s, fmt.Errorf("product %s is in category %q, not %q", p.SKU, p.Category, CategorySurge)
	}
	b, err := p.Specs.MarshalJSON()
	if err != nil {
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("product %s: specs: %w", p.SKU, err)
	}
	return s, nil
}
