package runtime

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// ControlHandler is the orchestrator's API: create, reset, snapshot, diff,
// destroy, list and health. It requires "Authorization: Bearer TOKEN" and
// belongs on its own listener (a unix socket by default) that no instance
// can reach: the agent listener never serves it.
//
//	POST   /instances               {"snapshot": ID}  -> Info
//	GET    /instances                                 -> [Info]
//	POST   /instances/ID/reset                        -> {}
//	POST   /instances/ID/snapshot                     -> {"snapshot": ID}
//	POST   /instances/ID/clock      {"clock": RFC3339}  -> {"clock": ...}
//	GET    /instances/ID/diff                         -> state.Diff (JSON)
//	DELETE /instances/ID                              -> {}
//	GET    /health                                    -> {"ok": true, "instances": N}
func (m *Manager) ControlHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "instances": len(m.List())})
	})
	mux.HandleFunc("GET /instances", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, m.List())
	})
	mux.HandleFunc("POST /instances", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Snapshot string `json:"snapshot"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, `want {"snapshot": "<64 hex ID>"}: `+err.Error())
			return
		}
		id, err := m.resolve(req.Snapshot)
		if err != nil {
			writeError(w, http.StatusBadRequest, "field snapshot: "+err.Error())
			return
		}
		info, err := m.Create(r.Context(), id)
		if errors.Is(err, store.ErrNoSnapshot) {
			writeError(w, http.StatusNotFound, "field snapshot: "+err.Error())
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, info)
	})
	mux.HandleFunc("POST /instances/{id}/reset", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Reset(r.Context(), r.PathValue("id")); err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	})
	mux.HandleFunc("POST /instances/{id}/snapshot", func(w http.ResponseWriter, r *http.Request) {
		id, err := m.Snapshot(r.Context(), r.PathValue("id"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"snapshot": id})
	})
	mux.HandleFunc("POST /instances/{id}/clock", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Clock string `json:"clock"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, `want {"clock": "2026-03-07T09:00:00Z"}: `+err.Error())
			return
		}
		t, err := time.Parse(time.RFC3339, req.Clock)
		if err != nil {
			writeError(w, http.StatusBadRequest, "field clock: not RFC 3339 (e.g. \"2026-03-07T09:00:00Z\")")
			return
		}
		if err := m.StepClock(r.PathValue("id"), t); errors.Is(err, ErrNoInstance) {
			writeErr(w, err)
			return
		} else if err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"clock": t.UTC()})
	})
	mux.HandleFunc("GET /instances/{id}/diff", func(w http.ResponseWriter, r *http.Request) {
		d, err := m.Diff(r.Context(), r.PathValue("id"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, d)
	})
	mux.HandleFunc("DELETE /instances/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Destroy(r.Context(), r.PathValue("id")); err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	})
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (m *Manager) resolve(s string) (world.ID, error) {
	if m.opts.Store != nil && len(s) < 64 {
		return m.opts.Store.Resolve(s)
	}
	return world.ParseID(strings.TrimSpace(s))
}

func writeErr(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNoInstance) || errors.Is(err, reset.ErrClosed) {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
