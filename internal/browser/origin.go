package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ErrRefused is wrapped by Navigate's (and a navigating Click's or
// Submit's) error when the tab's origin rule refused the page: the agent
// asked for an address it may not visit.
var ErrRefused = errors.New("refused by the origin rule")

// TabOption configures a tab that Tab opens. The zero value changes nothing.
type TabOption struct {
	allow []string
}

// AllowOrigins is the origin rule: the tab lets a request through only when
// its origin (scheme://host:port) is one of origins (each an origin or any
// URL of it) or it is about:blank; Chromium fails every other request
// (navigations, frames, images, scripts, fetch and XHR, form posts, the
// targets of redirects) as blocked by the client before it leaves the
// browser. Without the option a tab has no rule and requests go anywhere.
func AllowOrigins(origins ...string) TabOption {
	return TabOption{allow: slices.Clone(origins)}
}

// Origin returns the origin of raw as scheme://host:port with the scheme
// and host in lower case and the port always written ("http://a.test:80").
func Origin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q has no scheme://host", raw)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port, nil
}

// originRule is a tab's allow list and its record of what it refused.
type originRule struct {
	allowed map[string]bool
	list    string // the allow list as written in errors

	mu      sync.Mutex
	refused []refusal // documents refused since the last take
	onTop   func()    // called when the tab's own page is refused
}

type refusal struct {
	url, origin string
	top         bool // the tab's own page, not a frame in it
}

func newOriginRule(origins []string) (*originRule, error) {
	r := &originRule{allowed: map[string]bool{}}
	var names []string
	for _, o := range origins {
		n, err := Origin(o)
		if err != nil {
			return nil, fmt.Errorf("allowed origin: %w", err)
		}
		if !r.allowed[n] {
			names = append(names, n)
		}
		r.allowed[n] = true
	}
	slices.Sort(names)
	r.list = strings.Join(names, ", ")
	return r, nil
}

// allows reports whether a request for raw may go out, and its origin.
func (r *originRule) allows(raw string) (bool, string) {
	if raw == "about:blank" || strings.HasPrefix(raw, "about:blank#") || strings.HasPrefix(raw, "about:srcdoc") {
		return true, ""
	}
	o, err := Origin(raw)
	if err != nil {
		return false, raw
	}
	return r.allowed[o], o
}

// watch makes fn the call for a refused top-level document, until the
// returned stop.
func (r *originRule) watch(fn func()) (stop func()) {
	r.mu.Lock()
	r.onTop = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.onTop = nil
		r.mu.Unlock()
	}
}

// take returns and forgets the refused top-level documents.
func (r *originRule) take() []refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.refused
	r.refused = nil
	return out
}

// refusedError is the error for a refused page.
func (r *originRule) refusedError(f refusal) error {
	return fmt.Errorf("%w: %s is on origin %s, and this tab allows only %s", ErrRefused, f.url, f.origin, r.list)
}

// enforce turns on Fetch interception on tab (an attached chromedp
// context) and answers every paused request by the rule until tab ends.
// A new window of the tab is closed before it loads (windowGuard); the
// address of one opened with a user gesture (a click on a target=_blank
// link, a form aimed at another window) is refused here like the tab's
// own page when the rule refuses it, so the action that opened it fails.
func (r *originRule) enforce(tab context.Context) error {
	paused := chromedp.Events(tab, fetch.RequestPaused) // subscribe before enabling
	opened := chromedp.Events(tab, page.WindowOpen)
	top := chromedp.FromContext(tab).Target.TargetID
	if _, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return fmt.Errorf("enable the origin rule: %w", err)
	}
	go func() {
		for ev, err := range opened {
			if err != nil {
				return // the tab ended
			}
			if ok, origin := r.allows(ev.URL); !ok && ev.UserGesture {
				r.refuse(refusal{url: ev.URL, origin: origin, top: true})
			}
		}
	}()
	go func() {
		for ev, err := range paused {
			if err != nil {
				return // the tab ended
			}
			ok, origin := r.allows(ev.Request.URL)
			if !ok && ev.ResourceType == network.ResourceTypeDocument {
				r.refuse(refusal{url: ev.Request.URL, origin: origin, top: string(ev.FrameID) == string(top)})
			}
			// Answer concurrently: a page's images and scripts pause
			// together, and each answer is a round trip to Chromium. An
			// answer that fails leaves a request of a tab that ended.
			go func() {
				if ok {
					chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				} else {
					chromedp.Call(tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
				}
			}()
		}
	}()
	return nil
}

// refuse records a refused document; one of the tab's own frame ends the
// wait of the action under way (a script's navigation or a new window
// commits no error page to wait for).
func (r *originRule) refuse(f refusal) {
	r.mu.Lock()
	r.refused = append(r.refused, f)
	onTop := r.onTop
	r.mu.Unlock()
	if f.top && onTop != nil {
		onTop()
	}
}
