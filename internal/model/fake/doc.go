// Package fake is a local OpenAI-compatible chat server, on httptest, for
// the tests of the model client and of everything that calls a model
// (agents, synthesis stages, judges). It speaks the wire format a real
// server does, vLLM's and SGLang's extensions included, and replies from a
// script.
//
// Glossary:
//   - Server: POST /v1/chat/completions and GET /v1/models. URL is the base
//     URL (ending in /v1) and Spec the model.Spec a client dials.
//   - Engine: whose shapes the server answers in (SetEngine): vLLM's, the
//     default (top-level prompt_token_ids, per-choice token_ids, the
//     message's reasoning), or SGLang's (per-choice prompt_token_ids,
//     token_ids and meta_info with weight_version, matched_stop, the
//     message's reasoning_content).
//   - Turn: one scripted reply: Content, ToolCalls (arguments as a raw
//     string, so that a test can send malformed JSON), FinishReason, token
//     ids, Logprobs (DefaultLogprobs of the ids unless given), a
//     WeightVersion, Usage; or an HTTP error (Status, with an OpenAI error
//     body); a Delay before it; or a Handler that computes the turn from
//     the request.
//   - Script: the turns New takes, one per chat request, in order. A request
//     beyond the script gets a 500 saying the script is exhausted.
//   - Responder: a function from request to Turn (NewResponder), for tests
//     that loop.
//   - Template: the ChatML the server renders and tokenizes with
//     (SetTemplate; Encode, Decode, Completion): chat replies carry its
//     prompt and completion ids, and the token endpoints answer, vLLM's
//     POST /tokenize and POST /v1/completions with a token-id prompt,
//     SGLang's POST /v1/tokenize and POST /generate with input_ids.
//     ReasoningTemplate strips past reasoning and re-serialises tool-call
//     JSON, as Qwen3's template does.
//   - Request: what the server received, decoded (messages, tools, the
//     sampling fields, the extension flags) with its raw body and headers;
//     Requests lists them.
//
// The server checks what a real one would: a served model (404 otherwise,
// as vLLM words it), messages present with known roles, a tool message
// answering an earlier assistant tool call, tools of type function with a
// name, stream_options only with stream, top_logprobs only with logprobs,
// and for SGLang no return_token_ids, return_prompt_token_ids or
// return_meta_info with stream. Such a rejection (400 or 404) consumes no
// turn. A request with "stream": true gets the same turn as server-sent
// events, as OpenAI streams: chat.completion.chunk objects (the role,
// content pieces, each tool call's id and name and then its arguments in
// pieces, the finish reason, a usage chunk when
// stream_options.include_usage is set) and data: [DONE], the tokens'
// logprobs and (vLLM) token ids spread over the chunks; an error turn is
// an HTTP error all the same. Token ids, logprobs and meta_info are sent
// only when the request asks for them.
//
// The package imports model.
package fake
