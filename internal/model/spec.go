package model

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// The environment variables ParseSpec reads the API key from, in order.
const (
	EnvAPIKey       = "WILDAWM_API_KEY"
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// specExample is the example every ParseSpec error gives.
const specExample = "http://127.0.0.1:8000/v1#qwen3-8b"

// Spec says which endpoint and which model a Client talks to.
type Spec struct {
	// Engine is the server's software; ParseSpec reads it from a prefix
	// of the URL's scheme (sglang+http://...), and "" means unknown.
	Engine Engine
	// BaseURL is the API's root, without a trailing slash: the chat
	// endpoint is BaseURL + "/chat/completions".
	BaseURL string
	// Model is the model's name as the server serves it.
	Model string
	// APIKey is sent as a bearer token when non-empty; local servers need
	// none. String never shows it.
	APIKey string
}

// ParseSpec parses [ENGINE+]URL#MODEL, e.g. http://127.0.0.1:8000/v1#qwen3-8b
// or sglang+http://127.0.0.1:30000/v1#qwen3-8b (ENGINE one of Engines),
// and takes the API key from the environment (KeyFromEnv).
func ParseSpec(s string) (Spec, error) {
	spec, err := parseSpec(s)
	if err != nil {
		return Spec{}, err
	}
	spec.APIKey = KeyFromEnv(os.Getenv)
	return spec, nil
}

// KeyFromEnv returns the API key getenv gives for EnvAPIKey, else for
// EnvOpenAIAPIKey, else "".
func KeyFromEnv(getenv func(string) string) string {
	if k := getenv(EnvAPIKey); k != "" {
		return k
	}
	return getenv(EnvOpenAIAPIKey)
}

func parseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, specError(s, "is empty")
	}
	raw, name, ok := strings.Cut(s, "#")
	if !ok {
		return Spec{}, specError(s, "names no model: add #MODEL after the URL")
	}
	if name == "" {
		return Spec{}, specError(s, "has no model name after #")
	}
	if strings.ContainsAny(name, " \t\r\n") {
		return Spec{}, specError(s, fmt.Sprintf("has white space in its model name %q", name))
	}
	var engine Engine
	if e, rest, ok := strings.Cut(raw, "+"); ok && !strings.Contains(e, "/") {
		engine, raw = Engine(e), rest
		if err := engine.check(); err != nil {
			return Spec{}, specError(s, err.Error())
		}
	}
	base, err := checkBaseURL(raw)
	if err != nil {
		return Spec{}, specError(s, err.Error())
	}
	return Spec{Engine: engine, BaseURL: base, Model: name}, nil
}

// checkBaseURL returns raw without a trailing slash, or what is wrong with
// it as a chat API's root.
func checkBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("has no URL before #")
	}
	if !strings.Contains(raw, "://") {
		return "", fmt.Errorf("has URL %q, which is not http:// or https://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("has a URL that does not parse (%v)", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("has URL %q, which is not http:// or https://", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("has URL %q with no host", raw)
	}
	if u.RawQuery != "" {
		return "", fmt.Errorf("has URL %q with a query; the URL is the API's root", raw)
	}
	if strings.Trim(u.Path, "/") == "" {
		return "", fmt.Errorf("has URL %q with no path: OpenAI-compatible servers serve under /v1, as in %s/v1", raw, strings.TrimRight(raw, "/"))
	}
	return strings.TrimRight(raw, "/"), nil
}

func specError(s, problem string) error {
	return fmt.Errorf("model spec %q %s; want [ENGINE+]URL#MODEL, e.g. %s", s, problem, specExample)
}

// String returns the spec as ParseSpec reads it, without the API key.
func (s Spec) String() string {
	if s.Engine != EngineAny {
		return string(s.Engine) + "+" + s.BaseURL + "#" + s.Model
	}
	return s.BaseURL + "#" + s.Model
}

// validate reports what is wrong with a spec built by hand.
func (s Spec) validate() error {
	if s.Model == "" {
		return specError(s.String(), "has no model name after #")
	}
	if err := s.Engine.check(); err != nil {
		return specError(s.String(), err.Error())
	}
	if _, err := checkBaseURL(s.BaseURL); err != nil {
		return specError(s.String(), err.Error())
	}
	return nil
}

// GoString is String for %#v, so that no format verb prints the API key.
func (s Spec) GoString() string { return fmt.Sprintf("model.Spec(%q)", s.String()) }
