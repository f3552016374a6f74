// Package browser drives a headless Chromium for agents and tests through
// the Chrome DevTools Protocol (github.com/chromedp/chromedp v0.23, the
// generic action API).
//
// Glossary:
//   - Browser: one Chromium process with its own fresh profile directory and
//     one tab. It lives until Close or until the ctx given to New ends, so
//     cancelling a rollout tears its browser down.
//   - action timeout: every method runs under Options.Timeout (and the
//     caller's ctx); errors name the selector or URL.
//   - selector: a CSS selector ("#product-image", ".product-card a").
//
// It imports no project package.
package browser
