package browser

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// A fresh tab costs a browser context, a window and a renderer process
// that must start before chromedp's attach gets its first answer (the
// enables after that are a few milliseconds): some 300 ms on a loaded
// 2-core machine, nearly all of it waiting for the renderer. Tab hides it
// by keeping one spare: each call takes the spare made ahead of it (or
// waits for the one in the making) and starts the next in the background.

// spareTab is the spare of one Chromium, made ahead of the next Tab call
// on New's browser.
type spareTab struct {
	mu     sync.Mutex
	next   chan openedTab // nil: none in the making
	closed bool
}

// openedTab is a tab in a browser context of its own, attached, at
// about:blank, that nothing has used.
type openedTab struct {
	tab    context.Context
	cancel context.CancelFunc
	err    error
}

// openTab opens a tab of parent's Chromium in a new browser context. It
// gives up after timeout, or when ctx ends (nil: never).
func openTab(ctx, parent context.Context, timeout time.Duration) openedTab {
	tab, cancel := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	timer := time.AfterFunc(timeout, cancel)
	stop := func() bool { return true }
	if ctx != nil {
		stop = context.AfterFunc(ctx, cancel)
	}
	err := chromedp.Do(tab)
	stop()
	if !timer.Stop() || err != nil {
		cancel()
		if err == nil {
			err = fmt.Errorf("no answer within %v", timeout)
		}
		return openedTab{err: err}
	}
	return openedTab{tab: tab, cancel: cancel}
}

// take returns the spare (waiting for the one in the making, unless ctx
// ends first), or opens a tab itself when there is none or it failed;
// then it starts the next spare.
func (s *spareTab) take(ctx, root context.Context, timeout time.Duration) openedTab {
	s.mu.Lock()
	next := s.next
	s.next = nil
	s.mu.Unlock()
	var t openedTab
	if next != nil {
		select {
		case t = <-next:
		case <-ctx.Done():
			go func() {
				if t := <-next; t.cancel != nil {
					t.cancel()
				}
			}()
			return openedTab{err: ctx.Err()}
		}
	}
	if t.err == nil && t.tab != nil && t.tab.Err() != nil {
		t.cancel() // its target died while it waited
		t = openedTab{err: t.tab.Err()}
	}
	if next == nil || t.err != nil {
		t = openTab(ctx, root, timeout)
	}
	s.mu.Lock()
	if s.next == nil && !s.closed && root.Err() == nil {
		c := make(chan openedTab, 1)
		s.next = c
		go func() { c <- openTab(nil, root, timeout) }()
	}
	s.mu.Unlock()
	return t
}

// close stops making spares and closes the one made or in the making.
func (s *spareTab) close() {
	s.mu.Lock()
	next := s.next
	s.next, s.closed = nil, true
	s.mu.Unlock()
	if next != nil {
		if t := <-next; t.cancel != nil {
			t.cancel()
		}
	}
}
