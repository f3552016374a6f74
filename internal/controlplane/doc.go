// Package controlplane serves the HTTP control planes a trainer or an
// environment client drives (wildawm rl serve, wildawm openenv serve) so
// that they can be left running on a shared machine:
//
//   - Listen: the listener, refusing a bind beyond loopback without a
//     bearer token (ErrNeedsToken), and URL, the address it really bound.
//   - Server: an http.Server with header, body and idle timeouts, a cap
//     on a request's body (413), a cap on connections at once (at the cap
//     the connection sending its request the longest is closed, once it
//     has had EvictGrace, so clients that trickle their headers or bodies
//     cannot hold every slot and /health keeps answering), and the bearer
//     token (401) on every path but GET /health. net/http lifts the body
//     deadline once the body is read, so long polls and WebSockets run
//     for as long as their handlers say.
//   - Token: read the token from a file, or write a fresh one there.
//   - DuplicateKey: the strict-decoding check a JSON message must pass
//     before it is decoded (encoding/json keeps the last of a repeated
//     key; a control plane refuses it, naming the key).
//
// It imports world (for its atomic write) only.
package controlplane
