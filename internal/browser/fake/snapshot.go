package fake

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/wildawm/wildawm/internal/browser"
)

// This file is snapshot format 1 (docs/browser.md) in Go, line for line the
// JavaScript walk of internal/browser/snapshot.go over the parsed HTML. The
// one difference: the real browser also skips what a style sheet hides
// (computed display: none); the fake reads only inline style attributes.

var snapSkip = setOf("script", "style", "template", "noscript", "head", "title", "meta", "link", "base", "iframe", "object", "embed", "svg", "math", "canvas", "video", "audio", "datalist", "select", "option", "optgroup", "textarea")

var snapBlock = setOf("address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "legend", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul")

var inputTypes = setOf("hidden", "text", "search", "tel", "url", "email", "password", "date", "month", "week", "time", "datetime-local", "number", "range", "color", "checkbox", "radio", "file", "submit", "image", "reset", "button")

func setOf(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

// collapse turns runs of HTML white space into one space and drops a
// leading and a trailing one.
func collapse(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(" \t\n\r\f", s[i]) >= 0 {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(s[i])
	}
	return b.String()
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// inputType is the input's type as the DOM reads it (unknown: text).
func inputType(n *html.Node) string {
	t := strings.ToLower(strings.TrimSpace(attr(n, "type")))
	if inputTypes[t] {
		return t
	}
	return "text"
}

// isHidden: the hidden attribute, a hidden input, a closed dialog, or an
// inline style of display: none.
func isHidden(n *html.Node) bool {
	if hasAttr(n, "hidden") || n.Data == "input" && inputType(n) == "hidden" || n.Data == "dialog" && !hasAttr(n, "open") {
		return true
	}
	for _, decl := range strings.Split(attr(n, "style"), ";") {
		k, v, ok := strings.Cut(decl, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "display") {
			v = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important")))
			if v == "none" {
				return true
			}
		}
	}
	return false
}

func role(n *html.Node) string {
	switch n.Data {
	case "a":
		if hasAttr(n, "href") {
			return "link"
		}
	case "button":
		return "button"
	case "img":
		return "img"
	case "textarea":
		return "textbox"
	case "select":
		if hasAttr(n, "multiple") {
			return "listbox"
		}
		return "combobox"
	case "input":
		switch inputType(n) {
		case "submit", "image", "reset", "button":
			return "button"
		case "checkbox":
			return "checkbox"
		case "radio":
			return "radio"
		case "search":
			return "searchbox"
		case "number":
			return "spinbutton"
		case "range":
			return "slider"
		case "file":
			return "file"
		}
		return "textbox"
	}
	return ""
}

func elements(n *html.Node) func(yield func(*html.Node) bool) {
	return func(yield func(*html.Node) bool) {
		for c := range n.ChildNodes() {
			if c.Type == html.ElementNode && !yield(c) {
				return
			}
		}
	}
}

// textOf is the text of n's descendants, an image's alt standing for it.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := range n.ChildNodes() {
			switch c.Type {
			case html.TextNode:
				b.WriteString(c.Data)
			case html.ElementNode:
				if snapSkip[c.Data] || c.Data == "input" || isHidden(c) {
					continue
				}
				if c.Data == "img" {
					b.WriteString(" " + attr(c, "alt") + " ")
				} else {
					walk(c)
				}
			}
		}
	}
	walk(n)
	return b.String()
}

type snapshotter struct {
	doc   *html.Node
	page  *url.URL // the document's address
	base  *url.URL // what relative links resolve against
	lines []string
	buf   strings.Builder
	n     int
}

func (s *snapshotter) labels(n *html.Node) string {
	var out []string
	if id := attr(n, "id"); id != "" {
		for l := range s.doc.Descendants() {
			if l.Type == html.ElementNode && l.Data == "label" && attr(l, "for") == id {
				out = append(out, textOf(l))
			}
		}
	}
	for p := n.Parent; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if p.Data == "label" {
			if !hasAttr(p, "for") {
				out = append(out, textOf(p))
			}
			break
		}
	}
	return collapse(strings.Join(out, " "))
}

func (s *snapshotter) byID(id string) *html.Node {
	for n := range s.doc.Descendants() {
		if n.Type == html.ElementNode && attr(n, "id") == id {
			return n
		}
	}
	return nil
}

func (s *snapshotter) name(n *html.Node, r string) string {
	if v := collapse(attr(n, "aria-label")); v != "" {
		return v
	}
	if by := collapse(attr(n, "aria-labelledby")); by != "" {
		var parts []string
		for _, id := range strings.Split(by, " ") {
			if e := s.byID(id); e != nil {
				parts = append(parts, textOf(e))
			} else {
				parts = append(parts, "")
			}
		}
		if v := collapse(strings.Join(parts, " ")); v != "" {
			return v
		}
	}
	var v string
	switch tag := n.Data; {
	case tag == "input" && r == "button":
		t := inputType(n)
		switch {
		case t == "image":
			if v = collapse(attr(n, "alt")); v == "" {
				v = "Submit"
			}
		case hasAttr(n, "value"):
			v = collapse(attr(n, "value"))
		case t == "submit":
			v = "Submit"
		case t == "reset":
			v = "Reset"
		}
	case tag == "input" || tag == "select" || tag == "textarea":
		v = s.labels(n)
	case tag == "img":
		v = collapse(attr(n, "alt"))
	default:
		v = collapse(textOf(n))
	}
	if v == "" {
		v = collapse(attr(n, "title"))
	}
	return v
}

func (s *snapshotter) href(n *html.Node) string {
	raw := attr(n, "href")
	ref, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	u := s.base.ResolveReference(ref)
	uo, err1 := browser.Origin(u.String())
	po, err2 := browser.Origin(s.page.String())
	if err1 != nil || err2 != nil || uo != po {
		return u.String()
	}
	out := u.EscapedPath()
	if out == "" {
		out = "/"
	}
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}

func (s *snapshotter) flush() {
	if t := collapse(s.buf.String()); t != "" {
		s.lines = append(s.lines, t)
	}
	s.buf.Reset()
}

func (s *snapshotter) emit(n *html.Node, r string) {
	s.n++
	setAttr(n, browser.RefAttr, strconv.Itoa(s.n))
	line := "[" + strconv.Itoa(s.n) + "] " + r + " " + quote(s.name(n, r))
	switch r {
	case "link":
		line += " href=" + quote(s.href(n))
	case "textbox", "searchbox", "spinbutton", "slider":
		v := value(n)
		if n.Data == "input" && inputType(n) == "password" {
			line += " password"
			if v != "" {
				line += " filled"
			}
		} else if v != "" {
			line += " value=" + quote(collapse(v))
		}
		if p := collapse(attr(n, "placeholder")); p != "" {
			line += " placeholder=" + quote(p)
		}
	case "checkbox", "radio":
		if hasAttr(n, "checked") {
			line += " checked"
		}
	case "combobox", "listbox":
		opts := options(n)
		sel := selected(n)
		var all, chosen []string
		for i, o := range opts {
			all = append(all, quote(optionLabel(o)))
			if sel[i] {
				chosen = append(chosen, quote(optionLabel(o)))
			}
		}
		if len(chosen) == 0 {
			chosen = []string{`""`}
		}
		line += " selected=" + strings.Join(chosen, ",") + " options: " + strings.Join(all, ", ")
	}
	if hasAttr(n, "disabled") {
		line += " disabled"
	}
	s.lines = append(s.lines, line)
}

func (s *snapshotter) images(n *html.Node) {
	for c := range elements(n) {
		if snapSkip[c.Data] || isHidden(c) {
			continue
		}
		if c.Data == "img" {
			s.emit(c, "img")
		} else {
			s.images(c)
		}
	}
}

func (s *snapshotter) walk(n *html.Node) {
	for c := range n.ChildNodes() {
		if c.Type == html.TextNode {
			s.buf.WriteString(c.Data)
			continue
		}
		if c.Type != html.ElementNode {
			continue
		}
		if r := role(c); r != "" && !isHidden(c) {
			s.flush()
			s.emit(c, r)
			if r == "link" || r == "button" {
				s.images(c)
			}
			continue
		}
		if snapSkip[c.Data] || isHidden(c) {
			continue
		}
		if c.Data == "br" {
			s.flush()
			continue
		}
		block := snapBlock[c.Data]
		if block {
			s.flush()
		}
		s.walk(c)
		if block {
			s.flush()
		}
	}
}

// snapshot renders doc, loaded from page, in snapshot format 1, marking
// the numbered elements.
func snapshot(doc *html.Node, page *url.URL) string {
	s := &snapshotter{doc: doc, page: page, base: page}
	var title, body *html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		removeAttr(n, browser.RefAttr)
		switch {
		case n.Data == "title" && title == nil && n.Namespace == "":
			title = n
		case n.Data == "body" && body == nil:
			body = n
		case n.Data == "base" && hasAttr(n, "href") && s.base == page:
			if b, err := url.Parse(strings.TrimSpace(attr(n, "href"))); err == nil {
				s.base = page.ResolveReference(b)
			}
		}
	}
	var t strings.Builder
	if title != nil {
		for c := range title.ChildNodes() {
			if c.Type == html.TextNode {
				t.WriteString(c.Data)
			}
		}
	}
	s.lines = []string{"URL: " + pageURL(page), "Title: " + collapse(t.String())}
	if body != nil {
		s.walk(body)
		s.flush()
	}
	return strings.Join(s.lines, "\n") + "\n"
}

// pageURL writes u as location.href does (a bare host gets its "/").
func pageURL(u *url.URL) string {
	c := *u
	if c.Path == "" && c.RawPath == "" && c.Opaque == "" && c.Host != "" {
		c.Path = "/"
	}
	return c.String()
}
