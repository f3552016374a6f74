package model

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffSchedule(t *testing.T) {
	var got []time.Duration
	for n := 1; n <= 8; n++ {
		got = append(got, backoff(time.Second, n))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("schedule %v; want %v seconds", got, want)
		}
	}
	if d := backoff(time.Minute, 3); d != time.Minute {
		t.Errorf("a base above the cap: %s; want the base", d)
	}
	if d := backoff(time.Second, 1000); d != 30*time.Second {
		t.Errorf("retry 1000: %s", d)
	}
}

func TestWaitHonoursRetryAfter(t *testing.T) {
	c := &Client{backoff: time.Second}
	h := http.Header{}
	if d := c.wait(1, attempt{header: h}); d != time.Second {
		t.Errorf("no Retry-After: %s", d)
	}
	h.Set("Retry-After", "5")
	if d := c.wait(1, attempt{header: h}); d != 5*time.Second {
		t.Errorf("Retry-After 5: %s", d)
	}
	if d := c.wait(4, attempt{header: h}); d != 8*time.Second {
		t.Errorf("Retry-After 5 below the schedule's 8s: %s", d)
	}
	h.Set("Retry-After", "3600")
	if d := c.wait(1, attempt{header: h}); d != maxRetryAfter {
		t.Errorf("Retry-After 3600: %s; want the cap %s", d, maxRetryAfter)
	}
	h.Set("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")
	if d := c.wait(1, attempt{header: h}); d != time.Second {
		t.Errorf("a date Retry-After: %s; want the schedule", d)
	}
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{0: true, 429: true, 500: true, 502: true, 503: true, 400: false, 401: false, 404: false, 408: false, 409: false, 422: false, 200: false} {
		if retryable(status) != want {
			t.Errorf("retryable(%d) = %v", status, !want)
		}
	}
}

func TestReadServerError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want serverError
	}{
		{`{"error":{"message":"bad","type":"BadRequestError","code":400}}`, serverError{"bad", "BadRequestError", "400"}},
		{`{"error":{"message":"bad","type":"invalid_request_error","code":"model_not_found"}}`, serverError{"bad", "invalid_request_error", "model_not_found"}},
		{`{"error":{"message":"bad","code":null}}`, serverError{Message: "bad"}},
		{`{"error":"plain"}`, serverError{Message: "plain"}},
		{`{"object":"error","message":"flat","type":"NotFoundError","code":404}`, serverError{"flat", "NotFoundError", "404"}},
		{`{"detail":"Not Found"}`, serverError{Message: "Not Found"}},
		{`{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, serverError{Message: `[{"loc":["body","messages"],"msg":"field required"}]`}},
		{"Internal Server Error\n", serverError{Message: "Internal Server Error"}},
		{"", serverError{Message: "(empty body)"}},
	} {
		if got := readServerError([]byte(tc.body)); got != tc.want {
			t.Errorf("readServerError(%s) = %+v; want %+v", tc.body, got, tc.want)
		}
	}
}

func TestReadToolCall(t *testing.T) {
	for _, tc := range []struct {
		args, arguments string
		argError        bool
	}{
		{`{"a":1}`, `{"a":1}`, false},
		{"", `{}`, false},
		{"  ", `{}`, false},
		{`{"a":`, "", true},
		{`null`, "null", true},
		{`"x"`, `"x"`, true},
		{`{"a":1} trailing`, "", true},
	} {
		c := readToolCall("id", "f", tc.args)
		if string(c.Arguments) != tc.arguments || (c.ArgError != "") != tc.argError || c.RawArguments != tc.args {
			t.Errorf("readToolCall(%q) = %+v", tc.args, c)
		}
	}
}
