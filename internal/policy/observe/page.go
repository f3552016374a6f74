package observe

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Element is one numbered element of a browser snapshot (docs/browser.md,
// snapshot format 1): `[N] role "name" attrs`.
type Element struct {
	Ref   int
	Role  string
	Name  string
	Href  string
	Value string // value="..." of a control; "" if empty
	// Password marks a password box.
	Password bool
}

// Page is a snapshot as the policy reads it.
type Page struct {
	URL, Title string
	Elements   []Element
	// Text is the page's text lines (not the numbered elements').
	Text []string
}

var elemRE = regexp.MustCompile(`^\[(\d+)\] ([a-z]+) "((?:[^"\\]|\\.)*)"(.*)$`)
var attrRE = regexp.MustCompile(`([a-z]+)="((?:[^"\\]|\\.)*)"`)

// ParsePage reads a snapshot; text that is not one is a page without
// elements.
func ParsePage(snap string) *Page {
	p := &Page{}
	for _, line := range strings.Split(snap, "\n") {
		switch {
		case strings.HasPrefix(line, "URL: "):
			p.URL = strings.TrimPrefix(line, "URL: ")
		case strings.HasPrefix(line, "Title: "):
			p.Title = strings.TrimPrefix(line, "Title: ")
		default:
			m := elemRE.FindStringSubmatch(line)
			if m == nil {
				if t := strings.TrimSpace(line); t != "" {
					p.Text = append(p.Text, t)
				}
				continue
			}
			n, _ := strconv.Atoi(m[1])
			e := Element{Ref: n, Role: m[2], Name: unquote(m[3])}
			for _, a := range attrRE.FindAllStringSubmatch(m[4], -1) {
				switch a[1] {
				case "href":
					e.Href = unquote(a[2])
				case "value":
					e.Value = unquote(a[2])
				}
			}
			e.Password = strings.Contains(" "+m[4]+" ", " password")
			p.Elements = append(p.Elements, e)
		}
	}
	return p
}

func unquote(s string) string {
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s)
}

// isField says whether a role takes typed text.
func isField(role string) bool {
	return role == "textbox" || role == "searchbox" || role == "spinbutton"
}

// Form is a run of fields followed by the button that sends them, as the
// snapshot lists them (a form's controls come in document order).
type Form struct {
	Fields []Element
	Button Element
}

// Forms are the page's field runs that end at a button.
func (p *Page) Forms() []Form {
	var out []Form
	var run []Element
	for _, e := range p.Elements {
		switch {
		case isField(e.Role):
			run = append(run, e)
		case e.Role == "button" && len(run) > 0:
			out = append(out, Form{Fields: run, Button: e})
			run = nil
		default:
			run = nil
		}
	}
	return out
}

// Value is a value the policy has seen and may type or pass as an
// argument: Ctx are the words next to it where it was seen (a JSON key,
// the word before it), Source where (instruction, shell, mcp, page).
type Value struct {
	Text   string
	Source string
	Ctx    []string
}

// Values of each source.
const (
	SrcInstruction = "instr"
	SrcShell       = "shell"
	SrcMCP         = "mcp"
	SrcPage        = "page"
)

var (
	quotedRE = regexp.MustCompile("\"([^\"]{1,80})\"|`([^`]{1,80})`")
	dateRE   = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	idRE     = regexp.MustCompile(`\b[A-Za-z0-9][A-Za-z0-9_.-]*[/@][A-Za-z0-9_.-]*[A-Za-z0-9]\b|\b[A-Z]{1,5}-\d{2,6}\b`)
	nameRE   = regexp.MustCompile(`\b[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}\b`)
	numRE    = regexp.MustCompile(`\b\d{1,9}\b`)
	wordRE   = regexp.MustCompile(`[A-Za-z]+`)
)

// wordsBefore are up to two words before byte i of s, lower-cased.
func wordsBefore(s string, i int) []string {
	ws := wordRE.FindAllString(s[max(0, i-40):i], -1)
	if len(ws) > 2 {
		ws = ws[len(ws)-2:]
	}
	for k := range ws {
		ws[k] = strings.ToLower(ws[k])
	}
	return ws
}

// TextValues are the values of free text: quoted and back-quoted strings,
// dates, identifiers (owner/name, SKU-like codes, emails), names, numbers,
// each with the two words before it and the first word of its line.
func TextValues(text, source string) []Value {
	var out []Value
	for _, line := range strings.Split(text, "\n") {
		head := ""
		if ws := wordRE.FindAllString(line, 1); len(ws) > 0 {
			head = strings.ToLower(ws[0])
		}
		add := func(v string, at int) {
			v = strings.TrimSpace(v)
			if v == "" {
				return
			}
			ctx := wordsBefore(line, at)
			if head != "" && !slices.Contains(ctx, head) {
				ctx = append(ctx, head)
			}
			out = append(out, Value{Text: v, Source: source, Ctx: ctx})
		}
		for _, m := range quotedRE.FindAllStringSubmatchIndex(line, -1) {
			if m[2] >= 0 {
				add(line[m[2]:m[3]], m[0])
			} else {
				add(line[m[4]:m[5]], m[0])
			}
		}
		for _, re := range []*regexp.Regexp{dateRE, idRE, nameRE, numRE} {
			for _, m := range re.FindAllStringIndex(line, -1) {
				add(line[m[0]:m[1]], m[0])
			}
		}
	}
	return out
}

// JSONValues are the string and number leaves of a JSON text, each with
// its key and its parent's key; text that is not JSON is read as text.
func JSONValues(text, source string) []Value {
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return TextValues(text, source)
	}
	var out []Value
	var walk func(v any, key, parent string)
	walk = func(v any, key, parent string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapsKeys(x)) {
				walk(x[k], k, key)
			}
		case []any:
			for _, e := range x {
				walk(e, key, parent)
			}
		case string:
			if x != "" && len(x) <= 80 {
				out = append(out, Value{Text: x, Source: source, Ctx: keyWords(key, parent)})
			}
		case json.Number:
			out = append(out, Value{Text: x.String(), Source: source, Ctx: keyWords(key, parent)})
		}
	}
	walk(v, "", "")
	return out
}

func mapsKeys(m map[string]any) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func keyWords(key, parent string) []string {
	var out []string
	for _, k := range []string{key, parent} {
		for _, w := range wordRE.FindAllString(k, -1) {
			if w = strings.ToLower(w); !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// PageValues are the link names of a page (what one may search for or
// name in a message), with the page's site as their context.
func PageValues(p *Page, site string) []Value {
	var out []Value
	for _, e := range p.Elements {
		if e.Role == "link" && e.Name != "" && len(e.Name) <= 80 {
			out = append(out, Value{Text: e.Name, Source: SrcPage, Ctx: []string{"link", site}})
		}
	}
	return out
}

// words are the lower-case words of s, stemmed to at most 5 letters, of
// at least 3 letters, without repeats.
func words(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(s, -1) {
		if len(w) < 3 {
			continue
		}
		w = stem(w)
		if !slices.Contains(out, w) && !stop[w] {
			out = append(out, w)
		}
	}
	return out
}

func stem(w string) string {
	w = strings.ToLower(w)
	if len(w) > 5 {
		w = w[:5]
	}
	return w
}

var stop = map[string]bool{"the": true, "and": true, "for": true, "you": true, "with": true, "that": true, "this": true, "from": true, "are": true, "one": true, "all": true, "not": true, "whic": true, "what": true, "them": true, "then": true, "each": true}
