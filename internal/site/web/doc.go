// Package web is what the sandbox websites share: a router whose handlers
// return errors to one place that renders them, in-memory sessions with a
// CSRF token each, security headers (CSP) and a request body limit.
//
// Glossary:
//   - HandlerFunc: an HTTP handler that returns an error instead of writing
//     one; *Error carries the status and the message for the user.
//   - Router: http.ServeMux plus the rules every site keeps: unclean paths
//     and unknown routes are 404, a known path with the wrong method is 405,
//     bodies over MaxBody are 413 — all rendered by the site's error page.
//   - Sessions: per-site, in-memory sessions keyed by a crypto/rand token in
//     an HttpOnly, SameSite=Lax cookie. Every session, logged in or not, has
//     a CSRF token that each POST form must echo in the csrf_token field.
//
// Session tokens are not world state, so crypto/rand is used for them; world
// time comes from a world.Clock the site is given. It imports no project
// package.
package web
