package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Sentinels a caller may branch on, through errors.Is.
var (
	// ErrTimeout: an attempt ran out of Options.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrNotServed: the server's model list lacks the spec's model.
	ErrNotServed = errors.New("model not served")
	// ErrMisaligned: the reply's token ids and logprobs do not pair up.
	ErrMisaligned = errors.New("token ids and logprobs do not align")
	// ErrServerConfig: the server refused what the stage needs in words
	// that say it was not started for it (tool calling off): no retry
	// and no rerun helps until the server is restarted, so a stage stops
	// at it instead of recording an infrastructure failure per call.
	ErrServerConfig = errors.New("the server is not set up for this stage")
)

// Error is a failed exchange with the server: where, what the server said,
// after how many attempts, and what the user can do about it.
type Error struct {
	// Op is "chat" or "models".
	Op string
	// Stage names the stage the client serves (Options.Stage: a command
	// line's flag), "" when unnamed.
	Stage string
	// Endpoint is the spec's base URL, Model its model.
	Endpoint string
	Model    string
	// Status is the HTTP status of the last attempt; 0 when no response
	// came (connection refused, timeout).
	Status int
	// Message, Type and Code are the server's error (its JSON error body's
	// fields, or its body's text), or the transport's message.
	Message string
	Type    string
	Code    string
	// Attempts is how many requests were made.
	Attempts int
	// Fix says what to do, for a user.
	Fix string
	// Err is the cause, when there is one: ErrTimeout, ErrNotServed,
	// ErrMisaligned, a transport error, a decoding error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Stage != "" {
		fmt.Fprintf(&b, "model: %s at %s (model %s, for %s): ", e.Op, e.Endpoint, e.Model, e.Stage)
	} else {
		fmt.Fprintf(&b, "model: %s at %s (model %s): ", e.Op, e.Endpoint, e.Model)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d %s: ", e.Status, http.StatusText(e.Status))
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsOutage reports whether err is a server that failed after every retry:
// no reply (refused, reset, timed out), a 429 or a 5xx, a reply cut
// mid-way or one that does not decode. A stage may record it as
// infrastructure and let a rerun try again. A refusal that a rerun would
// meet again is no outage: a 4xx, a server not set up for the stage
// (ErrServerConfig), a whole reply whose content is unusable (ErrMisaligned,
// a NaN), a cancelled context.
func IsOutage(err error) bool {
	var e *Error
	if !errors.As(err, &e) || errors.Is(err, ErrServerConfig) || errors.Is(err, ErrMisaligned) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		return false
	}
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500 || e.Status == http.StatusOK && e.Err != nil
}

// retryable says whether an attempt that ended with status (0: no
// response) may be tried again.
func retryable(status int) bool {
	return status == 0 || status == http.StatusTooManyRequests || status >= 500
}

// serverError is an error body's fields.
type serverError struct {
	Message, Type, Code string
}

// readServerError reads an error body in the shapes servers use: OpenAI's
// {"error":{"message","type","code"}}, {"error":"..."}, vLLM's older flat
// {"message","type","code"}, FastAPI's {"detail":...}, else its text.
func readServerError(body []byte) serverError {
	var wrapped struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &wrapped) == nil && len(wrapped.Error) > 0 {
		var s string
		if json.Unmarshal(wrapped.Error, &s) == nil {
			return serverError{Message: s}
		}
		if e, ok := flatError(wrapped.Error); ok {
			return e
		}
	}
	if e, ok := flatError(body); ok {
		return e
	}
	var detail struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &detail) == nil && len(detail.Detail) > 0 {
		var s string
		if json.Unmarshal(detail.Detail, &s) == nil {
			return serverError{Message: s}
		}
		return serverError{Message: abbrev(string(detail.Detail), 500)}
	}
	text := strings.TrimSpace(string(body))
	if text == "" {
		return serverError{Message: "(empty body)"}
	}
	return serverError{Message: abbrev(text, 500)}
}

// flatError reads {"message","type","code"}; code may be a string or a
// number.
func flatError(raw []byte) (serverError, bool) {
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return serverError{}, false
	}
	code := strings.Trim(string(e.Code), `"`)
	if code == "null" {
		code = ""
	}
	return serverError{Message: e.Message, Type: e.Type, Code: code}, true
}

// fixFor says what a user can do about a final status and the server's
// message.
func fixFor(spec Spec, status int, msg string) string {
	if fix := toolsFix(msg); fix != "" && status >= 400 {
		return fix
	}
	switch {
	case status == 0:
		return startHint(spec)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Sprintf("the server refused the API key: set %s (or %s) to a key it accepts", EnvAPIKey, EnvOpenAIAPIKey)
	case status == http.StatusNotFound:
		return fmt.Sprintf("check the spec %s: the URL must be the API's root (most servers serve under /v1) and the model one the server serves", spec)
	case status == http.StatusTooManyRequests:
		return "the server is rate-limiting: lower the concurrency, or raise Options.MaxRetries or Options.Backoff"
	case status >= 500:
		return "the server failed: see its log"
	default:
		return "the server rejected the request: see its message"
	}
}

// mentionsModel says whether a rejection may be about the model's name,
// so that the server's model list is worth asking for.
func mentionsModel(status int, msg string) bool {
	if status == http.StatusNotFound {
		return true
	}
	return (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) &&
		strings.Contains(strings.ToLower(msg), "model")
}

// served lists ids for a message.
func served(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	return strings.Join(ids, ", ")
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h http.Header) (seconds int, ok bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
