// Package model is wildawm's client for OpenAI-compatible chat-completion
// endpoints: vLLM, SGLang, llama.cpp's server, Ollama, or a hosted API. It
// speaks the wire format through github.com/openai/openai-go/v3 with an
// explicit base URL, and owns retries, timeouts and error messages itself
// (docs/models.md).
//
// Glossary:
//   - Spec: which endpoint and which model, written [ENGINE+]URL#MODEL
//     (http://127.0.0.1:8000/v1#qwen3-8b, sglang+http://...), and the API
//     key, which ParseSpec takes from WILDAWM_API_KEY, else OPENAI_API_KEY,
//     else none.
//   - Engine: the server's software, vllm, sglang or "" (unknown): which
//     extension fields a request carries. Every engine's response shape is
//     read.
//   - Options: the per-request Timeout (120s), MaxRetries (3), the first
//     retry's Backoff (1s, doubling), and default Seed and Temperature; the
//     zero value and nil mean these defaults.
//   - Client: Chat sends one Request and returns one Response; Models lists
//     what the server serves.
//   - Request: Messages (system, user, assistant with its ToolCalls, tool
//     results by ToolCallID), Tools with JSON Schema parameters, ToolChoice,
//     MaxTokens, Temperature, Seed, ReturnTokenIDs (the prompt's and the
//     completion's token ids, a vLLM/SGLang extension) and Logprobs.
//   - Response: the first choice's Content and ToolCalls, FinishReason,
//     Usage, the token ids and the logprobs (aligned, one per completion
//     token) when the server returned them, SGLang's WeightVersion, the
//     Model that answered, Latency and Attempts. A tool call whose arguments are not a
//     JSON object is kept, with ArgError saying why: what the model said is
//     a value, not an error.
//   - Token mode: Generate continues a TokenRequest's prompt ids (vLLM's
//     /v1/completions with a token-id prompt, SGLang's /generate with
//     input_ids) into a TokenResponse (ids, text, logprobs, finish
//     reason, weight version); Tokenize renders messages with the chat
//     template into ids (vLLM's /tokenize; SGLang's /v1/tokenize of the
//     client's RenderChatML); ParseToolText reads Qwen/Hermes
//     <tool_call> blocks from a completion's text. Engine.TokenMode
//     refuses the engines without them (ErrNoTokenMode).
//   - Error: what went wrong talking to the server (endpoint, HTTP status,
//     the server's own message, how many attempts) and a Fix for the user.
//     ErrTimeout marks a request that ran out of Timeout, ErrNotServed a
//     model the server's model list lacks, ErrMisaligned a reply whose
//     token ids and logprobs do not pair up.
//
// Retries: 429, 5xx and connection errors are retried at most MaxRetries
// times, after Backoff, 2*Backoff, 4*Backoff, ... (at most 30s, or the
// server's Retry-After when that is longer, up to 60s): no jitter, nothing
// read from a random source. The SDK's own retries are off: its schedule
// draws jitter from the global random source, it retries 408 and 409 too,
// and it cannot say how many attempts an error took. A timed-out attempt is
// not retried, and cancelling the context stops at once, mid-request or
// mid-backoff.
//
// The package imports nothing else of the project; the fake server tests
// use is in model/fake.
package model
