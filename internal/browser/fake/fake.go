package fake

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"

	"github.com/wildawm/wildawm/internal/browser"
)

// Options configure a fake Browser. The zero value is valid.
type Options struct {
	// AllowOrigins is the origin rule (browser.AllowOrigins): requests to
	// any other origin are refused before they are sent. Empty: no rule.
	AllowOrigins []string
	// Timeout bounds each method call; zero means browser.DefaultTimeout.
	Timeout time.Duration
	// Transport carries the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
}

// maxBody bounds what the fake reads of one response.
const maxBody = 32 << 20

// Browser is a browser without Chromium: pages fetched over net/http with
// a cookie jar and parsed with golang.org/x/net/html. It runs no script.
// Its methods are safe for concurrent use but run one at a time.
type Browser struct {
	opts    Options
	client  *http.Client
	allowed map[string]bool // nil: no rule
	list    string

	mu      sync.Mutex
	closed  bool
	doc     *html.Node
	page    *url.URL
	history []*url.URL // the pages before this one, oldest first
}

// New returns a fake browser showing no page (about:blank).
func New(opts Options) (*Browser, error) {
	opts.Timeout = cmp.Or(opts.Timeout, browser.DefaultTimeout)
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("start fake browser: %w", err)
	}
	b := &Browser{opts: opts}
	if len(opts.AllowOrigins) > 0 {
		b.allowed = map[string]bool{}
		var names []string
		for _, o := range opts.AllowOrigins {
			n, err := browser.Origin(o)
			if err != nil {
				return nil, fmt.Errorf("start fake browser: allowed origin: %w", err)
			}
			if !b.allowed[n] {
				names = append(names, n)
			}
			b.allowed[n] = true
		}
		slices.Sort(names)
		b.list = strings.Join(names, ", ")
	}
	b.client = &http.Client{
		Transport: cmp.Or[http.RoundTripper](opts.Transport, http.DefaultTransport),
		Jar:       jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 20 {
				return errors.New("stopped after 20 redirects")
			}
			return b.check(req.URL)
		},
	}
	b.page, _ = url.Parse("about:blank")
	b.doc, _ = html.Parse(strings.NewReader(""))
	return b, nil
}

// check applies the origin rule to u.
func (b *Browser) check(u *url.URL) error {
	if b.allowed == nil {
		return nil
	}
	o, err := browser.Origin(u.String())
	if err != nil || !b.allowed[o] {
		return fmt.Errorf("%w: %s is on origin %s, and this tab allows only %s", browser.ErrRefused, u, cmp.Or(o, u.String()), b.list)
	}
	return nil
}

// run runs fn under the lock and the per-call timeout.
func (b *Browser) run(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%s: browser is closed: %w", op, browser.ErrGone)
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	if err := fn(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// find returns the first element matching selector on the current page.
func (b *Browser) find(selector string) (*html.Node, error) {
	sel, err := parseSelector(selector)
	if err != nil {
		return nil, err
	}
	if n := sel.first(b.doc); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("no element on %s matches %s (Snapshot shows the page's elements; browser.Ref(n) selects the one numbered n)", b.page, selector)
}

// fetch sends req (after the origin rule) and returns the final response's
// body and address.
func (b *Browser) fetch(req *http.Request) ([]byte, *http.Response, error) {
	if err := b.check(req.URL); err != nil {
		return nil, nil, err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, browser.ErrRefused) {
			return nil, nil, ue.Err // a redirect off the allowed origins
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", resp.Request.URL, err)
	}
	return body, resp, nil
}

// load makes req's response the current page.
func (b *Browser) load(req *http.Request) error {
	body, resp, err := b.fetch(req)
	if err != nil {
		return err
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("parse %s: %w", resp.Request.URL, err)
	}
	if b.page.String() != "about:blank" {
		b.history = append(b.history, b.page)
	}
	b.doc, b.page = doc, resp.Request.URL
	if req.URL.Fragment != "" && b.page.Fragment == "" {
		c := *b.page
		c.Fragment = req.URL.Fragment
		b.page = &c
	}
	return nil
}

func (b *Browser) get(ctx context.Context, u *url.URL) error {
	if u.String() == "about:blank" {
		if b.page.String() != "about:blank" {
			b.history = append(b.history, b.page)
		}
		b.page = u
		b.doc, _ = html.Parse(strings.NewReader(""))
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	return b.load(req)
}

// Navigate loads url (relative to the current page if it is relative).
func (b *Browser) Navigate(ctx context.Context, rawURL string) error {
	return b.run(ctx, "navigate to "+rawURL, func(ctx context.Context) error {
		ref, err := url.Parse(rawURL)
		if err != nil {
			return err
		}
		return b.get(ctx, b.page.ResolveReference(ref))
	})
}

// Click clicks the first element matching selector: a link (or an element
// inside one) loads its href, a submit button submits its form, a checkbox
// or radio button (or its label) is checked or unchecked. A click on
// anything else does nothing: the fake runs no script.
func (b *Browser) Click(ctx context.Context, selector string) error {
	return b.run(ctx, "click "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		if hasAttr(n, "disabled") {
			return fmt.Errorf("%s is disabled", selector)
		}
		for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
			switch {
			case p.Data == "a" && hasAttr(p, "href"):
				ref, err := url.Parse(strings.TrimSpace(attr(p, "href")))
				if err != nil {
					return err
				}
				return b.get(ctx, b.base().ResolveReference(ref))
			case isSubmitter(p):
				form := formOf(b.doc, p)
				if form == nil {
					return nil // a button outside any form: only script would act
				}
				return b.submit(ctx, form, p)
			case p.Data == "input" && (inputType(p) == "checkbox" || inputType(p) == "radio"):
				b.toggle(p)
				return nil
			case p.Data == "label":
				if c := b.labelled(p); c != nil && c.Data == "input" && (inputType(c) == "checkbox" || inputType(c) == "radio") {
					b.toggle(c)
				}
				return nil
			}
		}
		return nil
	})
}

// labelled is the control label l labels.
func (b *Browser) labelled(l *html.Node) *html.Node {
	if id := attr(l, "for"); id != "" {
		for n := range b.doc.Descendants() {
			if n.Type == html.ElementNode && attr(n, "id") == id {
				return n
			}
		}
		return nil
	}
	for n := range l.Descendants() {
		if n.Type == html.ElementNode && (n.Data == "input" || n.Data == "select" || n.Data == "textarea" || n.Data == "button") {
			return n
		}
	}
	return nil
}

func (b *Browser) toggle(n *html.Node) {
	if inputType(n) == "checkbox" {
		if hasAttr(n, "checked") {
			removeAttr(n, "checked")
		} else {
			setAttr(n, "checked", "")
		}
		return
	}
	form, name := formOf(b.doc, n), attr(n, "name")
	for r := range b.doc.Descendants() {
		if r.Type == html.ElementNode && r.Data == "input" && inputType(r) == "radio" && name != "" && attr(r, "name") == name && formOf(b.doc, r) == form {
			removeAttr(r, "checked")
		}
	}
	setAttr(n, "checked", "")
}

// base is what the page's relative links resolve against.
func (b *Browser) base() *url.URL {
	for n := range b.doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "base" && hasAttr(n, "href") {
			if u, err := url.Parse(strings.TrimSpace(attr(n, "href"))); err == nil {
				return b.page.ResolveReference(u)
			}
		}
	}
	return b.page
}

// Submit submits the form of the first element matching selector (the
// element itself if it is a form) as form.submit() does: without a
// submitter's name and value.
func (b *Browser) Submit(ctx context.Context, selector string) error {
	return b.run(ctx, "submit "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		form := formOf(b.doc, n)
		if form == nil {
			return fmt.Errorf("%s is in no form", selector)
		}
		return b.submit(ctx, form, nil)
	})
}

// submit sends form's data as its method, action and enctype (or the
// submitter's formmethod, formaction and formenctype) say.
func (b *Browser) submit(ctx context.Context, form, submitter *html.Node) error {
	pick := func(key string) string {
		if submitter != nil && hasAttr(submitter, "form"+key) {
			return attr(submitter, "form"+key)
		}
		return attr(form, key)
	}
	action := b.page
	if a := strings.TrimSpace(pick("action")); a != "" {
		ref, err := url.Parse(a)
		if err != nil {
			return fmt.Errorf("the form's action %q: %w", a, err)
		}
		action = b.base().ResolveReference(ref)
	}
	pairs := formData(b.doc, form, submitter)
	if strings.ToLower(strings.TrimSpace(pick("method"))) != "post" {
		u := *action
		u.RawQuery = urlencode(pairs)
		u.Fragment = ""
		return b.get(ctx, &u)
	}
	var body []byte
	var ctype string
	switch enc := strings.ToLower(strings.TrimSpace(pick("enctype"))); enc {
	case "multipart/form-data":
		var err error
		if body, ctype, err = multipartBody(pairs); err != nil {
			return err
		}
	case "text/plain":
		return fmt.Errorf("the form's enctype %s is out of the fake's reach (it sends urlencoded and multipart forms)", enc)
	default:
		body, ctype = []byte(urlencode(pairs)), "application/x-www-form-urlencoded"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", ctype)
	if o, err := browser.Origin(b.page.String()); err == nil {
		req.Header.Set("Origin", strings.TrimSuffix(strings.TrimSuffix(o, ":80"), ":443"))
	}
	req.Header.Set("Referer", b.page.String())
	return b.load(req)
}

// SetValue replaces the value of the input or textarea matching selector
// (of a select: chooses the option of that value).
func (b *Browser) SetValue(ctx context.Context, selector, text string) error {
	return b.run(ctx, "set value of "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		switch n.Data {
		case "input", "textarea":
			setText(n, text)
			return nil
		case "select":
			return b.choose(n, selector, text, false)
		}
		return fmt.Errorf("%s is a <%s>, which has no value (SetValue takes an input, a textarea or a select)", selector, n.Data)
	})
}

// Type appends text to the value of the input or textarea matching
// selector; a "\n" in text submits its form, as Enter does.
func (b *Browser) Type(ctx context.Context, selector, text string) error {
	return b.run(ctx, "type into "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		if n.Data != "input" && n.Data != "textarea" {
			return fmt.Errorf("%s is a <%s>, not a text field", selector, n.Data)
		}
		for i, line := range strings.Split(text, "\n") {
			if i > 0 {
				if n.Data == "textarea" {
					setText(n, value(n)+"\n")
					continue
				}
				if form := formOf(b.doc, n); form != nil {
					return b.submit(ctx, form, nil)
				}
			}
			setText(n, value(n)+line)
		}
		return nil
	})
}

// Select chooses the option of the select matching selector whose value
// or label is value (a value match first).
func (b *Browser) Select(ctx context.Context, selector, value string) error {
	return b.run(ctx, fmt.Sprintf("select %q in %s", value, selector), func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		if n.Data != "select" {
			return fmt.Errorf("%s is a <%s>, not a <select>: use SetValue or Click", selector, n.Data)
		}
		return b.choose(n, selector, value, true)
	})
}

func (b *Browser) choose(sel *html.Node, selector, v string, byLabel bool) error {
	opts := options(sel)
	var pick *html.Node
	for _, o := range opts {
		if optionValue(o) == v {
			pick = o
			break
		}
	}
	for _, o := range opts {
		if pick == nil && byLabel && optionLabel(o) == v {
			pick = o
		}
	}
	if pick == nil {
		var list []string
		for _, o := range opts {
			s := fmt.Sprintf("%q", optionLabel(o))
			if optionValue(o) != optionLabel(o) {
				s += fmt.Sprintf(" (value %q)", optionValue(o))
			}
			list = append(list, s)
		}
		return fmt.Errorf("no option has the value or label %q; the options are %s", v, strings.Join(list, ", "))
	}
	if optionDisabled(pick) {
		return fmt.Errorf("the option %q is disabled", optionLabel(pick))
	}
	choose(sel, pick)
	return nil
}

// Text returns the text of the first element matching selector, white
// space collapsed (hidden elements, scripts and styles left out).
func (b *Browser) Text(ctx context.Context, selector string) (string, error) {
	var s string
	err := b.run(ctx, "text of "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		var sb strings.Builder
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			for c := range n.ChildNodes() {
				switch {
				case c.Type == html.TextNode:
					sb.WriteString(c.Data)
				case c.Type == html.ElementNode && !isHidden(c) && c.Data != "script" && c.Data != "style" && c.Data != "template":
					if snapBlock[c.Data] || c.Data == "br" {
						sb.WriteByte(' ')
					}
					walk(c)
				}
			}
		}
		walk(n)
		s = collapse(sb.String())
		return nil
	})
	return s, err
}

// ImageBytes fetches the src of the <img> matching selector.
func (b *Browser) ImageBytes(ctx context.Context, selector string) ([]byte, error) {
	var out []byte
	err := b.run(ctx, "image bytes of "+selector, func(ctx context.Context) error {
		n, err := b.find(selector)
		if err != nil {
			return err
		}
		if n.Data != "img" {
			return fmt.Errorf("%s is a <%s>, not an <img>", selector, n.Data)
		}
		ref, err := url.Parse(strings.TrimSpace(attr(n, "src")))
		if err != nil {
			return err
		}
		src := b.base().ResolveReference(ref)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.String(), nil)
		if err != nil {
			return err
		}
		body, resp, err := b.fetch(req)
		if err != nil {
			return err
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(mt, "image/") {
			return fmt.Errorf("the image %s did not load: %s, %s", src, resp.Status, cmp.Or(mt, "no content type"))
		}
		out = body
		return nil
	})
	return out, err
}

// HTML returns the current document rendered from the fake's tree (with
// the values SetValue and Select set written as attributes).
func (b *Browser) HTML(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "read the html", func(ctx context.Context) error {
		var buf bytes.Buffer
		if err := html.Render(&buf, b.doc); err != nil {
			return err
		}
		s = buf.String()
		return nil
	})
	return s, err
}

// URL returns the address of the current page.
func (b *Browser) URL(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "read the url", func(ctx context.Context) error {
		s = pageURL(b.page)
		return nil
	})
	return s, err
}

// Snapshot returns the page in snapshot format 1 (docs/browser.md), the
// same text the real browser gives for a page that needs no script,
// numbering the elements as browser.Ref reads them.
func (b *Browser) Snapshot(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "snapshot", func(ctx context.Context) error {
		s = snapshot(b.doc, b.page)
		return nil
	})
	return s, err
}

// Scroll does nothing (the fake lays nothing out) but fail when closed.
func (b *Browser) Scroll(ctx context.Context, dy int) error {
	return b.run(ctx, fmt.Sprintf("scroll by %d", dy), func(ctx context.Context) error { return nil })
}

// Back loads the previous page again (a GET of its address).
func (b *Browser) Back(ctx context.Context) error {
	return b.run(ctx, "go back", func(ctx context.Context) error {
		if len(b.history) == 0 {
			return errors.New("there is no previous page")
		}
		prev := b.history[len(b.history)-1]
		rest := b.history[:len(b.history)-1]
		err := b.get(ctx, prev)
		if err == nil {
			b.history = rest
		}
		return err
	})
}

// Screenshot returns a valid 1x1 transparent PNG: the fake draws nothing.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var out []byte
	err := b.run(ctx, "screenshot", func(ctx context.Context) error {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 1, 1))); err != nil {
			return err
		}
		out = buf.Bytes()
		return nil
	})
	return out, err
}

// Close ends the browser; later calls fail with browser.ErrGone. It is
// safe to call more than once.
func (b *Browser) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.client.CloseIdleConnections()
	return nil
}
