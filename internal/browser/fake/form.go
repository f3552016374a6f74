package fake

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// The fake keeps a control's state in the document itself: an input's
// value attribute, a textarea's text, an option's selected attribute, a
// checkbox's checked attribute. SetValue, Select and Click change them.

// value is a text control's current value.
func value(n *html.Node) string {
	if n.Data == "textarea" {
		var b strings.Builder
		for c := range n.ChildNodes() {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.ReplaceAll(b.String(), "\r\n", "\n")
	}
	return attr(n, "value")
}

// setText replaces a text control's value.
func setText(n *html.Node, v string) {
	if n.Data == "textarea" {
		for c := n.FirstChild; c != nil; c = n.FirstChild {
			n.RemoveChild(c)
		}
		n.AppendChild(&html.Node{Type: html.TextNode, Data: v})
		return
	}
	setAttr(n, "value", v)
}

// options are a select's options, those in its optgroups included.
func options(sel *html.Node) []*html.Node {
	var out []*html.Node
	for c := range elements(sel) {
		switch c.Data {
		case "option":
			out = append(out, c)
		case "optgroup":
			for o := range elements(c) {
				if o.Data == "option" {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

func optionDisabled(o *html.Node) bool {
	return hasAttr(o, "disabled") || o.Parent != nil && o.Parent.Data == "optgroup" && hasAttr(o.Parent, "disabled")
}

// selected is the selectedness of each option as the DOM computes it: a
// single select shows its last option marked selected, or else its first
// enabled one.
func selected(sel *html.Node) []bool {
	opts := options(sel)
	out := make([]bool, len(opts))
	if hasAttr(sel, "multiple") {
		for i, o := range opts {
			out[i] = hasAttr(o, "selected")
		}
		return out
	}
	last := -1
	for i, o := range opts {
		if hasAttr(o, "selected") {
			last = i
		}
	}
	if last < 0 && !(sizeAttr(sel) > 1) {
		for i, o := range opts {
			if !optionDisabled(o) {
				last = i
				break
			}
		}
	}
	if last >= 0 {
		out[last] = true
	}
	return out
}

func sizeAttr(n *html.Node) int {
	var v int
	fmt.Sscan(attr(n, "size"), &v)
	return v
}

func optionLabel(o *html.Node) string {
	if l := collapse(attr(o, "label")); l != "" {
		return l
	}
	return collapse(textContent(o))
}

func optionValue(o *html.Node) string {
	if v, ok := attrOK(o, "value"); ok {
		return v
	}
	return collapse(textContent(o))
}

// choose makes o the selected option of sel (alone, for a single select).
func choose(sel, o *html.Node) {
	if !hasAttr(sel, "multiple") {
		for _, x := range options(sel) {
			removeAttr(x, "selected")
		}
	}
	setAttr(o, "selected", "")
}

func textContent(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// formOf is the form n belongs to: its form attribute's, or its nearest
// form ancestor (n itself when it is one).
func formOf(doc, n *html.Node) *html.Node {
	if n.Data == "form" {
		return n
	}
	if id := attr(n, "form"); id != "" {
		for f := range doc.Descendants() {
			if f.Type == html.ElementNode && f.Data == "form" && attr(f, "id") == id {
				return f
			}
		}
		return nil
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == "form" {
			return p
		}
	}
	return nil
}

// isSubmitter reports whether clicking n submits its form.
func isSubmitter(n *html.Node) bool {
	switch n.Data {
	case "button":
		t := strings.ToLower(strings.TrimSpace(attr(n, "type")))
		return t == "" || t == "submit"
	case "input":
		t := inputType(n)
		return t == "submit" || t == "image"
	}
	return false
}

type pair struct{ name, value string }

// formData is the form's entry list in tree order (the HTML standard's
// "constructing the entry list"), with submitter's own entry when it has
// a name. Files are not sent.
func formData(doc, form, submitter *html.Node) []pair {
	var out []pair
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || formOf(doc, n) != form || n == form {
			continue
		}
		name := attr(n, "name")
		if name == "" || hasAttr(n, "disabled") || inDisabledFieldset(n) {
			continue
		}
		switch n.Data {
		case "input":
			switch t := inputType(n); t {
			case "submit", "image", "button", "reset":
				if n == submitter && t != "button" && t != "reset" {
					if t == "image" {
						out = append(out, pair{name + ".x", "0"}, pair{name + ".y", "0"})
					} else {
						out = append(out, pair{name, attr(n, "value")})
					}
				}
			case "checkbox", "radio":
				if hasAttr(n, "checked") {
					v, ok := attrOK(n, "value")
					if !ok {
						v = "on"
					}
					out = append(out, pair{name, v})
				}
			case "file":
			default:
				out = append(out, pair{name, attr(n, "value")})
			}
		case "button":
			if n == submitter {
				out = append(out, pair{name, attr(n, "value")})
			}
		case "select":
			sel := selected(n)
			for i, o := range options(n) {
				if sel[i] && !optionDisabled(o) {
					out = append(out, pair{name, optionValue(o)})
				}
			}
		case "textarea":
			out = append(out, pair{name, strings.ReplaceAll(value(n), "\n", "\r\n")})
		}
	}
	return out
}

func inDisabledFieldset(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == "fieldset" && hasAttr(p, "disabled") {
			return true
		}
	}
	return false
}

// urlencode writes pairs as application/x-www-form-urlencoded, in order.
func urlencode(pairs []pair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.value))
	}
	return b.String()
}

// multipartBody writes pairs as multipart/form-data.
func multipartBody(pairs []pair) (body []byte, contentType string, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range pairs {
		if err := w.WriteField(p.name, p.value); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
