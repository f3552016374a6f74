package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// DefaultExecPath is the Chromium binary New starts unless told otherwise.
const DefaultExecPath = "/usr/bin/chromium"

// Defaults of Options.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultStartTimeout = 30 * time.Second
	DefaultWidth        = 1280
	DefaultHeight       = 900
	// navSettle is how long Click and Submit wait for a navigation to start.
	navSettle = 250 * time.Millisecond
)

// Log attribute keys.
const (
	LogURL      = "url"
	LogSelector = "selector"
	LogElapsed  = "elapsed"
)

// ErrUnavailable is wrapped by Available and New when Chromium is missing.
var ErrUnavailable = errors.New("chromium is not available")

// ErrGone is wrapped by a method's error when the browser itself is gone
// (closed, its tab or process dead) rather than the page refusing the
// action: the harness's failure, not the agent's.
var ErrGone = errors.New("the browser is gone")

// Options configure a Browser. The zero value is valid.
type Options struct {
	// ExecPath is the Chromium binary; empty means DefaultExecPath.
	ExecPath string
	// Timeout bounds each method call; zero means DefaultTimeout.
	Timeout time.Duration
	// StartTimeout bounds starting Chromium; zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// Width and Height are the window size; zero means 1280x900.
	Width, Height int
	// Logger receives lifecycle messages. Nil discards.
	Logger *slog.Logger
	// AllowOrigins is the origin rule of New's own tab (see AllowOrigins);
	// empty means no rule.
	AllowOrigins []string
}

// Available reports whether Chromium is present at DefaultExecPath.
func Available() error { return available(DefaultExecPath) }

func available(path string) error {
	if _, err := exec.LookPath(path); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Browser is one headless Chromium process with one tab. Its methods are
// safe for concurrent use but run one at a time.
type Browser struct {
	opts       Options
	log        *slog.Logger
	profile    string
	tab        context.Context // chromedp context of the tab
	cancelTab  context.CancelFunc
	cancelProc context.CancelFunc
	rule       *originRule     // nil: no origin rule
	root       context.Context // chromedp context of New's tab, for browser-level calls
	windows    *windowGuard    // shared by New's tab and all its Tabs
	spare      *spareTab       // New's browser only: the next Tab

	mu     sync.Mutex
	closed bool
}

// New starts Chromium headless with a fresh profile directory. The browser
// stops when Close is called or when ctx ends.
func New(ctx context.Context, opts Options) (*Browser, error) {
	opts.ExecPath = cmp.Or(opts.ExecPath, DefaultExecPath)
	opts.Timeout = cmp.Or(opts.Timeout, DefaultTimeout)
	opts.StartTimeout = cmp.Or(opts.StartTimeout, DefaultStartTimeout)
	opts.Width = cmp.Or(opts.Width, DefaultWidth)
	opts.Height = cmp.Or(opts.Height, DefaultHeight)
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	if err := available(opts.ExecPath); err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	var rule *originRule
	if len(opts.AllowOrigins) > 0 {
		var err error
		if rule, err = newOriginRule(opts.AllowOrigins); err != nil {
			return nil, fmt.Errorf("start browser: %w", err)
		}
	}
	profile, err := os.MkdirTemp("", "wildawm-chromium-")
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	flags := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(opts.ExecPath),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(opts.Width, opts.Height),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// No back-forward cache: a page it restores has no new document
		// for chromedp's queries to find (Back).
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,BackForwardCache"),
	)
	procCtx, cancelProc := chromedp.NewExecAllocator(ctx, flags...)
	tab, cancelTab := chromedp.NewContext(procCtx, chromedp.WithErrorf(func(format string, args ...any) {
		if strings.HasPrefix(format, "executor for %q doesn't exist") {
			return // the detach of a session the window guard released
		}
		log.Warn("chromedp: " + fmt.Sprintf(format, args...))
	}))
	b := &Browser{opts: opts, log: log, profile: profile, tab: tab, cancelTab: cancelTab, cancelProc: cancelProc, rule: rule, root: tab, windows: &windowGuard{}, spare: &spareTab{}}

	// The first Do starts the process and binds it to tab, so the start
	// timeout cancels through a timer, not a derived context.
	start := time.Now()
	timer := time.AfterFunc(opts.StartTimeout, cancelTab)
	err = chromedp.Do(tab)
	stopped := timer.Stop()
	if err != nil {
		b.shutdown()
		if !stopped {
			err = fmt.Errorf("no answer within %v: %w", opts.StartTimeout, err)
		}
		return nil, fmt.Errorf("start browser %s: %w", opts.ExecPath, err)
	}
	if rule != nil {
		if err := b.enforce(); err != nil {
			b.shutdown()
			return nil, fmt.Errorf("start browser: %w", err)
		}
	}
	log.Debug("browser started", LogElapsed, time.Since(start))
	return b, nil
}

// Tab opens a fresh tab of b's Chromium in a browser context of its own
// (cookies, storage and cache apart, as in an incognito window), as a
// Browser whose Close closes only the tab. Sessions that need a clean
// browser (judges, probes, rollouts) share one process this way. On New's
// browser, Tab returns a spare made ahead of the call (a context nothing
// has used, at about:blank) and starts the next one in the background, so
// a call returns in milliseconds unless calls come faster than a tab
// starts (some 300 ms); the spare costs one idle context while b lives.
// A tab has the origin rule its options give (AllowOrigins), never its
// parent's.
func (b *Browser) Tab(ctx context.Context, opts ...TabOption) (*Browser, error) {
	var allow []string
	for _, o := range opts {
		allow = append(allow, o.allow...)
	}
	var rule *originRule
	if len(allow) > 0 {
		var err error
		if rule, err = newOriginRule(allow); err != nil {
			return nil, fmt.Errorf("open tab: %w", err)
		}
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed || b.tab.Err() != nil {
		return nil, fmt.Errorf("open tab: %w", ErrGone)
	}
	var o openedTab
	if b.spare != nil {
		o = b.spare.take(ctx, b.tab, b.opts.StartTimeout)
	} else {
		o = openTab(ctx, b.tab, b.opts.StartTimeout) // a tab of a tab
	}
	if o.err != nil {
		return nil, fmt.Errorf("open tab: %w", o.err)
	}
	tab, cancel := o.tab, o.cancel
	t := &Browser{opts: b.opts, log: b.log, tab: tab, cancelTab: cancel, cancelProc: func() {}, rule: rule, root: b.root, windows: b.windows}
	if rule != nil {
		if err := t.enforce(); err != nil {
			cancel()
			return nil, fmt.Errorf("open tab: %w", err)
		}
	}
	return t, nil
}

// enforce puts b's tab under its origin rule: Fetch interception on the
// tab, and the window guard on its browser context.
func (b *Browser) enforce() error {
	if err := b.rule.enforce(b.tab); err != nil {
		return err
	}
	if err := b.windows.guard(b.root, b.tab); err != nil {
		return fmt.Errorf("enable the origin rule: guard new windows: %w", err)
	}
	return nil
}

// PID returns the process id of the Chromium b runs in (a tab's is its
// parent's), or 0 if it is unknown. Benchmarks read the process tree's
// memory from /proc with it.
func (b *Browser) PID() int {
	c := chromedp.FromContext(b.tab)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		return 0
	}
	return c.Browser.Process().Pid
}

// Close stops Chromium and removes its profile directory (for a Tab: closes
// the tab and its browser context). It is safe to call more than once.
func (b *Browser) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	done := make(chan error, 1)
	go func() { done <- b.shutdown() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("close browser: %w", ctx.Err())
	}
}

func (b *Browser) shutdown() error {
	if b.rule != nil {
		b.windows.forget(b.tab)
	}
	b.cancelTab() // kills the process the tab started and waits for it
	if b.spare != nil {
		b.spare.close() // its tab ended with the process
	}
	b.cancelProc() // waits for the allocator's goroutines
	if b.profile == "" {
		return nil // a tab: the process is its parent's
	}
	if err := os.RemoveAll(b.profile); err != nil {
		return fmt.Errorf("close browser: remove profile: %w", err)
	}
	return nil
}

// run runs fn on the tab under the per-call timeout and the caller's ctx.
func (b *Browser) run(ctx context.Context, op string, fn func(tctx context.Context) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%s: browser is closed: %w", op, ErrGone)
	}
	if b.tab.Err() != nil {
		return fmt.Errorf("%s: %w: %v", op, ErrGone, context.Cause(b.tab))
	}
	tctx, cancel := context.WithTimeout(b.tab, b.opts.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if err := fn(tctx); err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case b.tab.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, chromedp.ErrTargetDetached) || errors.Is(err, chromedp.ErrChannelClosed):
			// The caller goes on but the tab, its target or the connection
			// to Chromium ended under the call.
			return fmt.Errorf("%s: %w: %v", op, ErrGone, err)
		case errors.Is(err, context.DeadlineExceeded):
			// A missing element, or a renderer that no longer answers: ask
			// the tab something trivial to tell them apart.
			if !b.answers() {
				return fmt.Errorf("%s: %w: the tab does not answer: %v", op, ErrGone, err)
			}
			return fmt.Errorf("%s: not done within %v (is the element on the page?): %w", op, b.opts.Timeout, err)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// navigate is run for an action that may load a new page: a page the
// origin rule refused on the way makes the action's error.
func (b *Browser) navigate(ctx context.Context, op string, fn func(tctx context.Context) error) error {
	if b.rule == nil {
		return b.run(ctx, op, fn)
	}
	return b.run(ctx, op, func(tctx context.Context) error {
		b.rule.take()
		nctx, cancel := context.WithCancel(tctx)
		defer cancel()
		stop := b.rule.watch(cancel)
		err := fn(nctx)
		stop()
		for _, f := range b.rule.take() {
			if f.top {
				return b.rule.refusedError(f)
			}
		}
		return err
	})
}

// answers reports whether the tab evaluates a trivial expression within a
// few seconds.
func (b *Browser) answers() bool {
	pctx, cancel := context.WithTimeout(b.tab, 3*time.Second)
	defer cancel()
	n, err := chromedp.Run(pctx, chromedp.Evaluate[int](`1`))
	return err == nil && n == 1
}

// Navigate loads url and waits for its load event.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	return b.navigate(ctx, fmt.Sprintf("navigate to %s", url), func(tctx context.Context) error {
		return chromedp.Do(tctx, chromedp.Navigate(url))
	})
}

// Click clicks the first element matching selector. If the click starts a
// navigation, Click waits for the new page to load.
func (b *Browser) Click(ctx context.Context, selector string) error {
	return b.navigate(ctx, fmt.Sprintf("click %s", selector), func(tctx context.Context) error {
		return waitNavigation(tctx, chromedp.Click(chromedp.CSS(selector)))
	})
}

// Submit submits the form of the first element matching selector and waits
// for the resulting page to load.
func (b *Browser) Submit(ctx context.Context, selector string) error {
	return b.navigate(ctx, fmt.Sprintf("submit %s", selector), func(tctx context.Context) error {
		return waitNavigation(tctx, chromedp.Submit(chromedp.CSS(selector)))
	})
}

// SetValue sets the value of the input matching selector, replacing any.
func (b *Browser) SetValue(ctx context.Context, selector, text string) error {
	return b.run(ctx, fmt.Sprintf("set value of %s", selector), func(tctx context.Context) error {
		return chromedp.Do(tctx, chromedp.SetValue(chromedp.CSS(selector), text))
	})
}

// Type focuses the element matching selector and types text as key events,
// appending to its value. "\n" presses Enter.
func (b *Browser) Type(ctx context.Context, selector, text string) error {
	return b.navigate(ctx, fmt.Sprintf("type into %s", selector), func(tctx context.Context) error {
		return waitNavigation(tctx, chromedp.SendKeys(chromedp.CSS(selector), text))
	})
}

// Text returns the visible text of the first element matching selector.
func (b *Browser) Text(ctx context.Context, selector string) (string, error) {
	var s string
	err := b.run(ctx, fmt.Sprintf("text of %s", selector), func(tctx context.Context) (err error) {
		// A node id the query found can go stale when a navigation replaces
		// the document under it ("No node with given id found"): query
		// again, in the new document.
		for try := 0; ; try++ {
			s, err = chromedp.Run(tctx, chromedp.Text(chromedp.CSS(selector)))
			if err == nil || try == 2 || !staleNode(err) || tctx.Err() != nil {
				return err
			}
		}
	})
	return s, err
}

// staleNode reports whether err is CDP's refusal of a node id that a
// navigation made stale.
func staleNode(err error) bool {
	return strings.Contains(err.Error(), "No node with given id found")
}

// URL returns the address of the current page.
func (b *Browser) URL(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "read the url", func(tctx context.Context) (err error) {
		s, err = chromedp.Run(tctx, chromedp.Location())
		return err
	})
	return s, err
}

// HTML returns the current document's outer HTML.
func (b *Browser) HTML(ctx context.Context) (string, error) {
	var s string
	err := b.run(ctx, "read the html", func(tctx context.Context) (err error) {
		// Evaluate rather than query a node: a node id from a document that a
		// navigation just replaced is stale ("No node with given id found").
		s, err = chromedp.Run(tctx, chromedp.Evaluate[string](`document.readyState === "loading" ? "" : document.documentElement.outerHTML`))
		if err == nil && s == "" {
			err = errors.New("the page is still loading")
		}
		return err
	})
	return s, err
}

// Screenshot returns a PNG of the viewport.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := b.run(ctx, "screenshot", func(tctx context.Context) (err error) {
		png, err = chromedp.Run(tctx, chromedp.CaptureScreenshot())
		return err
	})
	return png, err
}

// ImageBytes returns the bytes of the <img> matching selector exactly as the
// page loaded them (from the page's resource cache, not a new request).
func (b *Browser) ImageBytes(ctx context.Context, selector string) ([]byte, error) {
	var out []byte
	err := b.run(ctx, fmt.Sprintf("image bytes of %s", selector), func(tctx context.Context) error {
		if err := chromedp.Do(tctx, chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
			return err
		}
		src, err := chromedp.Run(tctx, chromedp.PollFunction[string](`(sel) => {
			const el = document.querySelector(sel);
			if (!el) throw new Error("no element " + sel);
			if (!(el instanceof HTMLImageElement)) throw new Error(sel + " is a <" + el.tagName.toLowerCase() + ">, not an <img>");
			if (!el.complete) return false;
			if (el.naturalWidth === 0) throw new Error("the image " + el.currentSrc + " did not load");
			return el.currentSrc;
		}`, chromedp.WithPollingArgs(selector)))
		if err != nil {
			return err
		}
		tree, err := chromedp.Call(tctx, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		res, err := chromedp.Call(tctx, page.GetResourceContent, page.GetResourceContentParams{FrameID: tree.FrameTree.Frame.ID, URL: src})
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		out = res.Content
		return nil
	})
	return out, err
}

// waitNavigation runs trigger; if the page starts loading a new document
// within navSettle, it waits for that document's load event.
func waitNavigation(ctx context.Context, trigger chromedp.Action[chromedp.Void]) error {
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	loaded := chromedp.Events(lctx, page.LoadEventFired)
	started := chromedp.Events(sctx, page.FrameStartedLoading)
	if err := chromedp.Do(ctx, trigger); err != nil {
		return err
	}
	timer := time.AfterFunc(navSettle, scancel)
	defer timer.Stop()
	nav := false
	for _, err := range started {
		nav = err == nil
		break
	}
	if !nav {
		return ctx.Err() // nil: the trigger did not navigate
	}
	for _, err := range loaded {
		return err
	}
	return ctx.Err()
}

// Select chooses the <option> of the <select> matching selector whose value
// or visible label is value (a value match first), as a user would: the
// page sees input and change events. No such option is an error that
// lists the options.
func (b *Browser) Select(ctx context.Context, selector, value string) error {
	return b.run(ctx, fmt.Sprintf("select %q in %s", value, selector), func(tctx context.Context) error {
		if err := chromedp.Do(tctx, chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
			return err
		}
		args, err := json.Marshal([]string{selector, value})
		if err != nil {
			return err
		}
		msg, err := chromedp.Run(tctx, chromedp.Evaluate[string](`((sel, v) => {
			const el = document.querySelector(sel);
			if (!el) return "no element matches " + sel;
			if (el.localName !== "select") return sel + " is a <" + el.localName + ">, not a <select>: use SetValue or Click";
			const label = o => (o.getAttribute("label") || o.textContent).replace(/[ \t\n\r\f]+/g, " ").trim();
			const opts = Array.from(el.options);
			const o = opts.find(o => o.value === v) || opts.find(o => label(o) === v);
			if (!o) return "no option has the value or label " + JSON.stringify(v) + "; the options are " + opts.map(o => JSON.stringify(label(o)) + (o.value !== label(o) ? " (value " + JSON.stringify(o.value) + ")" : "")).join(", ");
			if (o.disabled) return "the option " + JSON.stringify(label(o)) + " is disabled";
			o.selected = true;
			el.dispatchEvent(new Event("input", {bubbles: true}));
			el.dispatchEvent(new Event("change", {bubbles: true}));
			return "";
		}).apply(null, `+string(args)+`)`))
		if err != nil {
			return err
		}
		if msg != "" {
			return errors.New(msg)
		}
		return nil
	})
}

// Scroll scrolls the page by dy pixels (negative: up).
func (b *Browser) Scroll(ctx context.Context, dy int) error {
	return b.run(ctx, fmt.Sprintf("scroll by %d", dy), func(tctx context.Context) error {
		_, err := chromedp.Run(tctx, chromedp.Evaluate[bool](fmt.Sprintf(`(window.scrollBy(0, %d), true)`, dy)))
		return err
	})
}

// Back goes to the previous page of the tab's history and waits for it to
// load. With no previous page it is an error.
func (b *Browser) Back(ctx context.Context) error {
	return b.navigate(ctx, "go back", func(tctx context.Context) error {
		h, err := chromedp.Run(tctx, chromedp.NavigationEntries())
		if err != nil {
			return err
		}
		i := int(h.CurrentIndex) - 1
		if i < 0 || i >= len(h.Entries)-1 || i == 0 && h.Entries[0].URL == "about:blank" {
			return errors.New("there is no previous page")
		}
		prev := h.Entries[i]
		if _, err := chromedp.Call(tctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: prev.ID}); err != nil {
			return err
		}
		// A page restored from the back-forward cache fires no load
		// event: wait for the document itself.
		want, err := json.Marshal(prev.URL)
		if err != nil {
			return err
		}
		for {
			// The document is replaced under the check: an error is a
			// context that just went away, so ask again.
			done, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`location.href === `+string(want)+` && document.readyState === "complete"`))
			if err == nil && done {
				return nil
			}
			select {
			case <-tctx.Done():
				return tctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
}
