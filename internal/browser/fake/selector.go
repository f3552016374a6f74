package fake

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// supported is what the error of a selector the matcher cannot read says.
const supported = `the fake reads #id, tag, .class, [attr], [attr="v"] (also ^= $= *= ~=), ` +
	`compounds of them (form[action="/x"]), the descendant (a b) and child (a > b) combinators and comma lists`

// selector is a parsed comma list of complex selectors.
type selector []complexSel

// complexSel is compounds joined by combinators, left to right:
// parts[i] is related to parts[i-1] by combs[i-1].
type complexSel struct {
	parts []compound
	combs []byte // ' ' descendant, '>' child
}

type compound struct {
	tag     string // "" or "*": any
	id      string
	classes []string
	attrs   []attrSel
}

type attrSel struct {
	name, op, val string // op "" means presence
}

// parseSelector reads s, or says what it cannot read and what it can.
func parseSelector(s string) (selector, error) {
	p := &selParser{s: s}
	var out selector
	for {
		c, err := p.complex()
		if err != nil {
			return nil, fmt.Errorf("selector %q: %v (%s)", s, err, supported)
		}
		out = append(out, c)
		p.space()
		if p.eof() {
			return out, nil
		}
		if p.s[p.i] != ',' {
			return nil, fmt.Errorf("selector %q: unexpected %q at %d (%s)", s, p.s[p.i], p.i, supported)
		}
		p.i++
	}
}

type selParser struct {
	s string
	i int
}

func (p *selParser) eof() bool { return p.i >= len(p.s) }

func (p *selParser) space() bool {
	start := p.i
	for !p.eof() && strings.IndexByte(" \t\n\r\f", p.s[p.i]) >= 0 {
		p.i++
	}
	return p.i > start
}

func (p *selParser) complex() (complexSel, error) {
	var c complexSel
	p.space()
	for {
		comp, err := p.compound()
		if err != nil {
			return c, err
		}
		c.parts = append(c.parts, comp)
		sp := p.space()
		if p.eof() || p.s[p.i] == ',' {
			return c, nil
		}
		switch p.s[p.i] {
		case '>':
			p.i++
			p.space()
			c.combs = append(c.combs, '>')
		case '+', '~':
			return c, fmt.Errorf("the sibling combinator %q is not supported", p.s[p.i])
		default:
			if !sp {
				return c, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
			}
			c.combs = append(c.combs, ' ')
		}
	}
}

func isIdent(b byte) bool {
	return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

func (p *selParser) ident() string {
	start := p.i
	for !p.eof() && (isIdent(p.s[p.i]) || p.s[p.i] == '\\' && p.i+1 < len(p.s)) {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	return strings.ReplaceAll(p.s[start:p.i], `\`, "")
}

func (p *selParser) compound() (compound, error) {
	var c compound
	start := p.i
	if !p.eof() && p.s[p.i] == '*' {
		p.i++
		c.tag = "*"
	} else if t := p.ident(); t != "" {
		c.tag = strings.ToLower(t)
	}
	for !p.eof() {
		switch p.s[p.i] {
		case '#':
			p.i++
			if c.id = p.ident(); c.id == "" {
				return c, fmt.Errorf("an empty #id at %d", p.i)
			}
		case '.':
			p.i++
			cl := p.ident()
			if cl == "" {
				return c, fmt.Errorf("an empty .class at %d", p.i)
			}
			c.classes = append(c.classes, cl)
		case '[':
			p.i++
			a, err := p.attr()
			if err != nil {
				return c, err
			}
			c.attrs = append(c.attrs, a)
		case ':':
			return c, fmt.Errorf("pseudo-classes (%s) are not supported", p.s[p.i:])
		default:
			if p.i == start {
				return c, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
			}
			return c, nil
		}
	}
	if p.i == start {
		return c, fmt.Errorf("an empty selector")
	}
	return c, nil
}

func (p *selParser) attr() (attrSel, error) {
	var a attrSel
	p.space()
	if a.name = strings.ToLower(p.ident()); a.name == "" {
		return a, fmt.Errorf("an attribute without a name at %d", p.i)
	}
	p.space()
	if p.eof() {
		return a, fmt.Errorf("an unclosed [")
	}
	if p.s[p.i] == ']' {
		p.i++
		return a, nil
	}
	for _, op := range []string{"=", "^=", "$=", "*=", "~="} {
		if strings.HasPrefix(p.s[p.i:], op) {
			a.op = op
			p.i += len(op)
			break
		}
	}
	if a.op == "" {
		return a, fmt.Errorf("the attribute operator at %d is not supported", p.i)
	}
	p.space()
	if p.eof() {
		return a, fmt.Errorf("an unclosed [")
	}
	if q := p.s[p.i]; q == '"' || q == '\'' {
		end := strings.IndexByte(p.s[p.i+1:], q)
		if end < 0 {
			return a, fmt.Errorf("an unclosed quote")
		}
		a.val = p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
	} else {
		a.val = p.ident()
	}
	p.space()
	if p.eof() || p.s[p.i] != ']' {
		return a, fmt.Errorf("an unclosed [")
	}
	p.i++
	return a, nil
}

// first returns the first element under root, in document order, that
// matches sel.
func (sel selector) first(root *html.Node) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && sel.matches(n) {
			return n
		}
	}
	return nil
}

func (sel selector) matches(n *html.Node) bool {
	for _, c := range sel {
		if c.matches(n, len(c.parts)-1) {
			return true
		}
	}
	return false
}

// matches reports whether n matches parts[i] and what is left of it
// matches n's ancestors.
func (c complexSel) matches(n *html.Node, i int) bool {
	if !c.parts[i].matches(n) {
		return false
	}
	if i == 0 {
		return true
	}
	for p := n.Parent; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if c.matches(p, i-1) {
			return true
		}
		if c.combs[i-1] == '>' {
			return false
		}
	}
	return false
}

func (c compound) matches(n *html.Node) bool {
	if c.tag != "" && c.tag != "*" && n.Data != c.tag {
		return false
	}
	if c.id != "" && attr(n, "id") != c.id {
		return false
	}
	if len(c.classes) > 0 {
		have := strings.Fields(attr(n, "class"))
		for _, want := range c.classes {
			found := false
			for _, h := range have {
				found = found || h == want
			}
			if !found {
				return false
			}
		}
	}
	for _, a := range c.attrs {
		v, ok := attrOK(n, a.name)
		if !ok {
			return false
		}
		switch a.op {
		case "=":
			ok = v == a.val
		case "^=":
			ok = a.val != "" && strings.HasPrefix(v, a.val)
		case "$=":
			ok = a.val != "" && strings.HasSuffix(v, a.val)
		case "*=":
			ok = a.val != "" && strings.Contains(v, a.val)
		case "~=":
			ok = false
			for _, f := range strings.Fields(v) {
				ok = ok || f == a.val
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// attrOK returns n's attribute key and whether it has it.
func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := attrOK(n, key)
	return ok
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr = append(n.Attr[:i], n.Attr[i+1:]...)
			return
		}
	}
}
