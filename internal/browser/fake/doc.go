// Package fake is a browser without Chromium for tests and for sites that
// need no script: the methods of internal/browser's Browser (Navigate,
// Click, SetValue, Select, Submit, Text, ImageBytes, HTML, URL, Snapshot,
// Scroll, Back, Screenshot, Close) over net/http with a cookie jar and
// golang.org/x/net/html.
//
// Glossary:
//   - page: the parsed document of the last response; the state of its
//     controls (SetValue, Select, checkboxes) lives in its attributes.
//   - selector: the subset of CSS the repository's callers use: #id, tag,
//     .class, [attr], [attr="v"] (and ^= $= *= ~=), compounds of them, the
//     descendant and child combinators, comma lists; browser.Ref(n).
//   - origin rule: Options.AllowOrigins, as browser.AllowOrigins: a request
//     (a navigation, a form, an image, a redirect's target) to any other
//     origin fails with browser.ErrRefused before it is sent.
//   - snapshot: format 1 (docs/browser.md), the same text the real browser
//     gives for a server-rendered page. The fake runs no script, so a page
//     that needs JavaScript is out of its reach, and it sees only inline
//     style (a style sheet's display: none is Chromium's alone).
//   - screenshot: a 1x1 transparent PNG; the fake draws nothing.
//
// It imports browser (for Ref, Origin and the sentinel errors).
package fake
