package browser

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// windowTimeout bounds the handling of one new page target.
const windowTimeout = 5 * time.Second

// windowGuard keeps the tabs with an origin rule to their own target, at
// the level of the browser: a window such a tab's page opens (a
// target=_blank link or form, window.open) is a target of its own that the
// tab's Fetch interception does not see, so it must never load. Once the
// first tab with a rule exists, Chromium pauses every new page target
// before it loads anything (Target.setAutoAttach on the browser session
// with waitForDebuggerOnStart); the guard closes those in a ruled browser
// context other than the tab's own and lets every other one run.
//
// One guard serves one Chromium: New's tab and all its Tabs share it.
type windowGuard struct {
	mu    sync.Mutex
	on    bool
	ruled map[cdp.BrowserContextID]target.ID // a ruled context: its tab's own target
}

// guard makes tab (an attached chromedp context) a ruled tab: every new
// window of its browser context is closed before it loads.
func (g *windowGuard) guard(root, tab context.Context) error {
	c := chromedp.FromContext(tab)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on {
		attached := chromedp.BrowserEvents(root, target.AttachedToTarget) // subscribe before enabling
		if _, err := chromedp.CallBrowser(root, target.SetAutoAttach, target.SetAutoAttachParams{
			AutoAttach:             true,
			WaitForDebuggerOnStart: true,
			Flatten:                ptr(true), // the only mode at the browser level
			Filter:                 target.Filter{{Type: "page"}},
		}); err != nil {
			return err
		}
		g.on = true
		g.ruled = map[cdp.BrowserContextID]target.ID{}
		go g.serve(root, attached)
	}
	g.ruled[c.BrowserContextID] = c.Target.TargetID
	return nil
}

// forget ends the rule of tab's browser context (the tab closes).
func (g *windowGuard) forget(tab context.Context) {
	c := chromedp.FromContext(tab)
	if c == nil || c.Target == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ruled[c.BrowserContextID] == c.Target.TargetID {
		delete(g.ruled, c.BrowserContextID)
	}
}

// serve answers each page target that Chromium paused at its start.
func (g *windowGuard) serve(root context.Context, attached iter.Seq2[target.EventAttachedToTarget, error]) {
	for ev, err := range attached {
		if err != nil {
			return // the browser ended
		}
		if !ev.WaitingForDebugger {
			continue // an existing target, or chromedp's own attach
		}
		info := ev.TargetInfo
		g.mu.Lock()
		own, ruled := g.ruled[info.BrowserContextID]
		g.mu.Unlock()
		if ruled && info.TargetID != own {
			go closeWindow(root, ev)
		} else {
			go release(root, ev)
		}
	}
}

// closeWindow closes a new window of a ruled tab before it loads anything.
func closeWindow(root context.Context, ev target.EventAttachedToTarget) {
	ctx, cancel := context.WithTimeout(root, windowTimeout)
	defer cancel()
	id := ev.TargetInfo.TargetID
	defer chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id})
	if !ev.TargetInfo.CanAccessOpener {
		return // a window in a renderer of its own: nothing waits for it
	}
	// A window its opener can script starts in the opener's renderer, and
	// that renderer waits with it: the tab's page hangs until the window
	// runs. Run it with every request it makes failed, and close it once
	// it stopped loading (a request still paused at the close would go
	// out: Chromium continues them when the session ends).
	wctx, wcancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
	defer wcancel()
	if err := chromedp.Do(wctx); err != nil {
		return
	}
	paused := chromedp.Events(wctx, fetch.RequestPaused)
	lctx, lcancel := context.WithTimeout(wctx, time.Second)
	defer lcancel()
	loaded := chromedp.Events(lctx, page.LoadEventFired)
	if _, err := chromedp.Call(wctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			chromedp.Call(wctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}
	}()
	if _, err := chromedp.Call(wctx, runtime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
		return
	}
	for range loaded {
		break // the failed document's error page, or the blank one
	}
}

// release lets a paused page target that no rule concerns run: a tab
// being opened, or a window of a tab without a rule.
func release(root context.Context, ev target.EventAttachedToTarget) {
	ctx, cancel := context.WithTimeout(root, windowTimeout)
	defer cancel()
	if ev.TargetInfo.CanAccessOpener {
		// Its opener's renderer waits until it runs, and only a session
		// that runs it (Runtime.runIfWaitingForDebugger) ends the wait:
		// detaching does not.
		wctx, wcancel := chromedp.NewContext(ctx, chromedp.WithTargetID(ev.TargetInfo.TargetID), chromedp.WithDetachOnCancel())
		if err := chromedp.Do(wctx); err == nil {
			chromedp.Call(wctx, runtime.RunIfWaitingForDebugger, cdp.Empty{})
		}
		wcancel()
	}
	chromedp.CallBrowser(ctx, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: ev.SessionID})
}

func ptr[T any](v T) *T { return &v }
