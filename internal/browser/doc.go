// Package browser drives a headless Chromium for agents and tests through
// the Chrome DevTools Protocol (github.com/chromedp/chromedp v0.23, the
// generic action API). docs/browser.md is its contract.
//
// Glossary:
//   - Browser: one Chromium process with its own fresh profile directory and
//     one tab. It lives until Close or until the ctx given to New ends, so
//     cancelling a rollout tears its browser down.
//   - tab: Tab opens another tab of the same process in a browser context of
//     its own (cookies, storage, cache apart), as a Browser whose Close
//     closes only the tab.
//   - origin rule: AllowOrigins (or Options.AllowOrigins): the tab's
//     requests to any other origin are failed inside Chromium by Fetch
//     interception; a refused page is an error wrapping ErrRefused.
//   - window guard: the new windows of a tab with a rule are paused by
//     Chromium before they load (browser-level auto-attach) and closed.
//   - snapshot: the page as text in snapshot format 1, each link, control
//     and image numbered; Ref(n) is the selector of number n.
//   - action timeout: every method runs under Options.Timeout (and the
//     caller's ctx); errors name the selector or URL, and wrap ErrGone when
//     the browser itself is gone.
//   - selector: a CSS selector ("#product-image", ".product-card a").
//
// It imports no project package; internal/browser/fake is the same
// methods without Chromium.
package browser
