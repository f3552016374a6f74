package trainer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/controlplane"
)

// MaxRequestBytes bounds a request body.
const MaxRequestBytes = 1 << 20

// DefaultWait and MaxWait bound a long poll.
const (
	DefaultWait = 30 * time.Second
	MaxWait     = 300 * time.Second
)

// Handler serves the rollout service's HTTP API (docs/segment.md):
//
//	POST /v1/batches              request a step's batch (202, or 200 when done)
//	GET  /v1/batches/{id}?wait=S  long-poll it (200 done or failed, 202 running)
//	GET  /v1/state?step=N         the scheduler state saved after step N (404 if never saved)
//	GET  /health
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/batches", s.postBatch)
	mux.HandleFunc("GET /v1/batches/{id}", s.getBatch)
	mux.HandleFunc("GET /v1/state", s.getState)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		steps, _ := s.Steps()
		last := 0
		if len(steps) > 0 {
			last = steps[len(steps)-1]
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": SchemaVersion, "split": s.opts.Split, "tasks": len(s.tasks), "last_step": last})
	})
	return mux
}

// DecodeRequest decodes a POST /v1/batches body strictly: one JSON
// object, no unknown field, no key given twice (encoding/json would keep
// the last), each error naming the field. Validate checks the values.
func DecodeRequest(body []byte) (Request, error) {
	var req Request
	if err := controlplane.DuplicateKey(body); err != nil {
		return req, fmt.Errorf("request body: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("request body: %v: send a JSON object with step, tasks, g, engine (docs/segment.md)", err)
	}
	if dec.More() {
		return req, errors.New("request body: more than one JSON value: send one request object")
	}
	return req, nil
}

type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error":"encode response"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

func (s *Service) postBatch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		if controlplane.TooLarge(err) {
			writeJSON(w, http.StatusRequestEntityTooLarge, apiError{"request body: " + controlplane.BodyTooLarge(err)})
			return
		}
		writeJSON(w, http.StatusBadRequest, apiError{fmt.Sprintf("request body: %v", err)})
		return
	}
	req, err := DecodeRequest(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	b, done, err := s.Submit(req)
	var reqErr *RequestError
	var gap *GapError
	switch {
	case errors.As(err, &gap):
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "missing_step": gap.Missing})
		return
	case errors.Is(err, ErrConflict):
		writeJSON(w, http.StatusConflict, apiError{err.Error()})
		return
	case errors.As(err, &reqErr):
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	case errors.Is(err, ErrClosed), errors.Is(err, ErrBusy):
		writeJSON(w, http.StatusServiceUnavailable, apiError{err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, apiError{err.Error()})
		return
	}
	b, _, done, outage, _ := s.lookup(req.Step)
	select {
	case <-done:
		if outage != "" {
			s.writeOutage(w, b, Progress{}, outage)
			return
		}
		writeJSON(w, http.StatusOK, b)
	default:
		// Accepted and running, an outage or not: the long poll says.
		reply := map[string]any{"id": b.ID, "step": b.Step, "status": StatusRunning}
		if outage != "" {
			reply["outage"] = outage
		}
		writeJSON(w, http.StatusAccepted, reply)
	}
}

// writeOutage answers a step whose engine is unreachable, or that failed
// in a way a re-POST retries: 503, retriable, with Retry-After.
func (s *Service) writeOutage(w http.ResponseWriter, b *Batch, prog Progress, why string) {
	wait := cmp.Or(s.opts.OutageBackoff, DefaultOutageBackoff)
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()))))
	status := StatusRunning
	fix := "the step goes on by itself when the engine answers: ask again after Retry-After"
	if b.Status == StatusFailed {
		status = StatusFailed
		fix = "the step was not saved and its finished rollouts are kept: POST the same request again"
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"id": b.ID, "step": b.Step, "status": status, "retriable": true,
		"error": why + ": " + fix, "progress": prog})
}

func (s *Service) getBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	step, err := strconv.Atoi(strings.TrimPrefix(id, "step-"))
	if !strings.HasPrefix(id, "step-") || err != nil || step < 1 {
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("batch %q: ids are step-NNNNNN, as POST /v1/batches returns", id)})
		return
	}
	wait := DefaultWait
	if v := r.URL.Query().Get("wait"); v != "" {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || !(sec >= 0) || sec > MaxWait.Seconds() {
			writeJSON(w, http.StatusBadRequest, apiError{fmt.Sprintf("wait=%q: give seconds, 0..%d", v, int(MaxWait.Seconds()))})
			return
		}
		wait = time.Duration(sec * float64(time.Second))
	}
	b, _, done, _, ok := s.lookup(step)
	if !ok {
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("batch %s was not requested: POST /v1/batches first", id)})
		return
	}
	// The poll waits out an outage too: a client's retries then span
	// waits, not backoffs.
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	b, prog, done, outage, _ := s.lookup(step)
	if outage != "" {
		s.writeOutage(w, b, prog, outage)
		return
	}
	select {
	case <-done:
		writeJSON(w, http.StatusOK, b)
	default:
		writeJSON(w, http.StatusAccepted, map[string]any{"id": b.ID, "step": b.Step, "status": StatusRunning, "progress": prog})
	}
}

func (s *Service) getState(w http.ResponseWriter, r *http.Request) {
	step, err := strconv.Atoi(r.URL.Query().Get("step"))
	if err != nil || step < 0 {
		writeJSON(w, http.StatusBadRequest, apiError{"step: give the train step whose saved state you want (?step=N)"})
		return
	}
	st, err := s.LoadState(step)
	var never *NeverSavedError
	switch {
	case errors.As(err, &never):
		writeJSON(w, http.StatusNotFound, map[string]any{"error": err.Error(), "last_saved": never.Last})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, st)
}
