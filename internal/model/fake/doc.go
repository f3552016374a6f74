// Package fake is a local OpenAI-compatible chat server, on httptest, for
// the tests of the model client and of everything that calls a model
// (agents, synthesis stages, judges). It speaks the wire format a real
// server does, vLLM's token-id extension included, and replies from a
// script.
//
// Glossary:
//   - Server: POST /v1/chat/completions and GET /v1/models. URL is the base
//     URL (ending in /v1) and Spec the model.Spec a client dials.
//   - Turn: one scripted reply: Content, ToolCalls (arguments as a raw
//     string, so that a test can send malformed JSON), FinishReason, token
//     ids, Usage; or an HTTP error (Status, with an OpenAI error body); a
//     Delay before it; or a Handler that computes the turn from the request.
//   - Script: the turns New takes, one per chat request, in order. A request
//     beyond the script gets a 500 saying the script is exhausted.
//   - Responder: a function from request to Turn (NewResponder), for tests
//     that loop.
//   - Request: what the server received, decoded (messages, tools, the
//     sampling fields) with its raw body and headers; Requests lists them.
//
// The server checks what a real one would: a served model (404 otherwise,
// as vLLM words it), messages present with known roles, a tool message
// answering an earlier assistant tool call, tools of type function with a
// name. Such a rejection (400 or 404) consumes no turn. A request with
// "stream": true gets the same turn as server-sent events, as OpenAI
// streams: chat.completion.chunk objects (the role, content pieces, each
// tool call's id and name and then its arguments in pieces, the finish
// reason, a usage chunk when stream_options.include_usage is set) and
// data: [DONE]; an error turn is an HTTP error all the same. Token ids are
// sent only when the request asks for them ("return_token_ids": true), as
// vLLM does.
//
// The package imports model.
package fake
