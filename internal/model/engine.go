package model

import (
	"fmt"
	"net/url"
	"strings"
)

// Engine names the server software behind a Spec: which request fields
// that are not OpenAI's it reads (token ids, SGLang's meta_info), what it
// can return, and how to start it. The client sends only its engine's
// extensions; it reads every engine's response shape.
type Engine string

// The engines. EngineAny, an unnamed server, is sent "return_token_ids"
// when token ids are asked for (vLLM and SGLang read it; a server that
// refuses it is sent no extension from then on).
const (
	EngineAny      Engine = ""
	EngineVLLM     Engine = "vllm"
	EngineSGLang   Engine = "sglang"
	EngineOllama   Engine = "ollama"
	EngineLlamaCpp Engine = "llamacpp"
	// EngineOpenAI is a hosted API that refuses fields it does not know:
	// it is sent OpenAI's fields only.
	EngineOpenAI Engine = "openai"
)

// engineInfo is what wildawm knows of one engine (docs/models.md has the
// sources).
type engineInfo struct {
	// name is the software's name as its users write it.
	name string
	// tokenIDs: the server returns the prompt's and the completion's
	// token ids when asked (return_token_ids).
	tokenIDs bool
	// logprobs: the server returns a logprob per completion token when
	// asked (OpenAI's logprobs).
	logprobs bool
	// start is the command that serves a model for an agent, %[1]s the
	// model and %[2]s the port; port is the engine's default.
	start, port string
	// tools is how to turn its tool calling on.
	tools string
	// tokenIn: the server generates from prompt token ids (vLLM's
	// /v1/completions with a token-id prompt, SGLang's native /generate
	// with input_ids); tokenize: it tokenizes (vLLM's /tokenize with the
	// chat template, SGLang's /v1/tokenize of a text). Token mode needs
	// both.
	tokenIn, tokenize bool
}

// engines is every known engine, EngineAny first.
var engines = []struct {
	engine Engine
	info   engineInfo
}{
	{EngineAny, engineInfo{name: "an OpenAI-compatible server", tokenIDs: true, logprobs: true,
		start: "vllm serve %[1]s --port %[2]s --enable-auto-tool-choice --tool-call-parser hermes", port: "8000",
		tools: "vLLM: --enable-auto-tool-choice --tool-call-parser PARSER; SGLang: --tool-call-parser PARSER; llama-server: --jinja"}},
	{EngineVLLM, engineInfo{name: "vLLM", tokenIDs: true, logprobs: true, tokenIn: true, tokenize: true,
		start: "vllm serve %[1]s --port %[2]s --enable-auto-tool-choice --tool-call-parser hermes", port: "8000",
		tools: "start vLLM with --enable-auto-tool-choice --tool-call-parser PARSER (hermes for Qwen2.5 and Qwen3, llama3_json for Llama 3.1+, mistral for Mistral)"}},
	{EngineSGLang, engineInfo{name: "SGLang", tokenIDs: true, logprobs: true, tokenIn: true, tokenize: true,
		start: "python -m sglang.launch_server --model-path %[1]s --port %[2]s --tool-call-parser qwen25", port: "30000",
		tools: "start SGLang with --tool-call-parser PARSER (qwen25 for Qwen2.5 and Qwen3, llama3 for Llama 3.1+, mistral for Mistral)"}},
	{EngineOllama, engineInfo{name: "Ollama", logprobs: true,
		start: "ollama pull %[1]s && ollama serve (it listens on port %[2]s)", port: "11434",
		tools: "Ollama calls tools only for a model whose template has them: pick one that `ollama show MODEL` lists with the tools capability (qwen3, llama3.1, mistral-nemo)"}},
	{EngineLlamaCpp, engineInfo{name: "llama.cpp's llama-server", logprobs: true,
		start: "llama-server -m %[1]s --port %[2]s --jinja -c 32768", port: "8080",
		tools: "start llama-server with --jinja, so that the model's chat template renders the tools"}},
	{EngineOpenAI, engineInfo{name: "a hosted API", logprobs: true,
		start: "", port: "443",
		tools: "the hosted API refused tool calling for this model: pick a model it offers tool calling for"}},
}

// Engines lists the engine prefixes ParseSpec takes, in order.
func Engines() []Engine {
	var out []Engine
	for _, e := range engines[1:] {
		out = append(out, e.engine)
	}
	return out
}

func (e Engine) info() (engineInfo, bool) {
	for _, x := range engines {
		if x.engine == e {
			return x.info, true
		}
	}
	return engineInfo{}, false
}

// check reports an engine that is none of the known ones.
func (e Engine) check() error {
	if _, ok := e.info(); ok {
		return nil
	}
	names := make([]string, 0, len(engines)-1)
	for _, x := range Engines() {
		names = append(names, string(x))
	}
	return fmt.Errorf("names engine %q, which is none of %s", string(e), strings.Join(names, ", "))
}

// Name is the engine's software as its users write it.
func (e Engine) Name() string {
	i, _ := e.info()
	return i.name
}

// TokenIDs says whether the engine returns token ids when asked; an
// unnamed server (EngineAny) may.
func (e Engine) TokenIDs() bool {
	i, _ := e.info()
	return i.tokenIDs
}

// Logprobs says whether the engine returns per-token logprobs.
func (e Engine) Logprobs() bool {
	i, _ := e.info()
	return i.logprobs
}

// Trainable is nil when the engine can serve a policy being trained (its
// replies carry token ids and logprobs), else why not and what to give.
func (e Engine) Trainable() error {
	if e.TokenIDs() && e.Logprobs() {
		return nil
	}
	return fmt.Errorf("%s returns no token ids, which training needs: serve the policy with vLLM or SGLang and give vllm+URL#MODEL or sglang+URL#MODEL", e.Name())
}

// TokenIn says whether the engine generates from prompt token ids; an
// unnamed server is not assumed to.
func (e Engine) TokenIn() bool {
	i, _ := e.info()
	return i.tokenIn
}

// Tokenizes says whether the engine has a tokenize endpoint.
func (e Engine) Tokenizes() bool {
	i, _ := e.info()
	return i.tokenize
}

// TokenMode is nil when the engine can serve token mode (the harness holds
// the token sequence and sends ids), else what to do instead.
func (e Engine) TokenMode() error {
	if e.TokenIn() && e.Tokenizes() {
		return nil
	}
	return fmt.Errorf("%w: %s cannot serve token mode (token in, token out): it needs generation from prompt token ids and a tokenize endpoint; serve the policy with vLLM or SGLang and give vllm+URL#MODEL or sglang+URL#MODEL, or turn token mode off (Harness.TokenMode; sampling.token_in_token_out) to send messages", ErrNoTokenMode, e.Name())
}

// startHint is the fix for a server that does not answer.
func startHint(spec Spec) string {
	info, _ := spec.Engine.info()
	port := info.port
	if u, err := url.Parse(spec.BaseURL); err == nil && u.Port() != "" {
		port = u.Port()
	}
	if info.start == "" {
		return fmt.Sprintf("is %s reachable? check the URL %s and the network", info.name, spec.BaseURL)
	}
	return fmt.Sprintf("is the server running? start it with `%s` (or any OpenAI-compatible server answering at %s)",
		fmt.Sprintf(info.start, spec.Model, port), spec.BaseURL)
}

// toolSignals are the words in which servers refuse tools they were not
// started to call (docs/models.md has the sources).
var toolSignals = []struct {
	engine Engine
	says   string
}{
	{EngineVLLM, "--enable-auto-tool-choice"},
	{EngineVLLM, "--tool-call-parser"},
	{EngineLlamaCpp, "--jinja"},
	{EngineOllama, "does not support tools"},
}

// toolsFix is the fix for a rejection that says the server cannot call
// tools, naming the server flag, or "".
func toolsFix(msg string) string {
	for _, s := range toolSignals {
		if strings.Contains(msg, s.says) {
			info, _ := s.engine.info()
			return "the server was not started to call tools: " + info.tools
		}
	}
	return ""
}
