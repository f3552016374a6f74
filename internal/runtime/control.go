package runtime

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
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
			m.fail(w, r, http.StatusBadRequest, "field snapshot: ", err)
			return
		}
		info, err := m.Create(r.Context(), id)
		switch {
		case errors.Is(err, store.ErrNoSnapshot):
			m.fail(w, r, http.StatusNotFound, "field snapshot: ", err)
			return
		case errors.Is(err, ErrNotWorld):
			m.fail(w, r, http.StatusBadRequest, "field snapshot: ", err)
			return
		case errors.Is(err, ErrTooManyInstances):
			m.fail(w, r, http.StatusServiceUnavailable, "", err)
			return
		case err != nil:
			m.fail(w, r, http.StatusInternalServerError, "", err)
			return
		}
		writeJSON(w, http.StatusCreated, info)
	})
	mux.HandleFunc("POST /instances/{id}/reset", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Reset(r.Context(), r.PathValue("id")); err != nil {
			m.writeErr(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	})
	mux.HandleFunc("POST /instances/{id}/snapshot", func(w http.ResponseWriter, r *http.Request) {
		id, err := m.Snapshot(r.Context(), r.PathValue("id"))
		if err != nil {
			m.writeErr(w, r, err)
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
		switch err := m.StepClock(r.PathValue("id"), t); {
		case errors.Is(err, ErrNoInstance):
			m.writeErr(w, r, err)
			return
		case errors.Is(err, ErrClockRange):
			m.fail(w, r, http.StatusBadRequest, "field clock: ", err)
			return
		case err != nil:
			m.fail(w, r, http.StatusConflict, "field clock: ", err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"clock": t.UTC()})
	})
	mux.HandleFunc("GET /instances/{id}/diff", func(w http.ResponseWriter, r *http.Request) {
		d, err := m.Diff(r.Context(), r.PathValue("id"))
		if err != nil {
			m.writeErr(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, d)
	})
	mux.HandleFunc("DELETE /instances/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := m.Destroy(r.Context(), r.PathValue("id")); err != nil {
			m.writeErr(w, r, err)
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

// writeErr answers err of an operation on an instance: 404 for an unknown
// or closed one, else 500.
func (m *Manager) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrNoInstance) || errors.Is(err, reset.ErrClosed) {
		code = http.StatusNotFound
	}
	m.fail(w, r, code, "", err)
}

// fail logs err whole and answers prefix and err's message as the client
// may read it (see clientMessage).
func (m *Manager) fail(w http.ResponseWriter, r *http.Request, code int, prefix string, err error) {
	level := slog.LevelInfo
	if code >= 500 {
		level = slog.LevelError
	}
	m.log.Log(r.Context(), level, "control request failed", "method", r.Method, "path", r.URL.Path, "status", code, "error", err)
	writeError(w, code, prefix+m.clientMessage(r.PathValue("id"), err))
}

// maxErrorBody bounds an error message sent to a control client (a path
// 3,000 directories deep makes a long one); the log has it whole.
const maxErrorBody = 2048

// hostPath matches an absolute path in an error message: quoted whole
// ("/a b/c", as %q prints it), or else from a slash at the start or after
// a space, quote, parenthesis, bracket, comma or '=', up to a space, quote,
// colon, comma, semicolon, parenthesis or bracket.
var hostPath = regexp.MustCompile(`"/[^"]*"|(^|[\s'(\[=,])/[^\s"'(),:;\[\]]*`)

// clientMessage is err's message without host paths, which tell a client
// (or an agent a client relays them to) how the server is laid out: a path
// in the world of instance id, or in a snapshot's checked-out lower, reads
// as world-relative ("home/notes.md", or "." for the world itself); any
// other absolute path reads "<host path>". The message is cut at
// maxErrorBody bytes.
func (m *Manager) clientMessage(id string, err error) string {
	var worlds []string // directories whose paths read world-relative
	if id != "" {
		if in, err := m.Instance(id); err == nil {
			worlds = append(worlds, in.Dir())
		}
	}
	cache := ""
	if m.opts.Materializer != nil && m.opts.Materializer.CacheDir != "" {
		cache = filepath.Clean(m.opts.Materializer.CacheDir)
	}
	relative := func(p string) string {
		p = filepath.Clean(p)
		for _, d := range worlds {
			if rel, ok := within(p, d); ok {
				return rel
			}
		}
		// CACHE/SNAPSHOT-ID/... is a snapshot's lower.
		if rest, ok := within(p, cache); ok && rest != "." {
			first, sub, _ := strings.Cut(rest, "/")
			if _, err := world.ParseID(first); err == nil {
				return cmp.Or(sub, ".")
			}
		}
		return "<host path>"
	}
	msg := hostPath.ReplaceAllStringFunc(err.Error(), func(s string) string {
		if strings.HasPrefix(s, `"`) {
			return `"` + relative(s[1:len(s)-1]) + `"`
		}
		i := strings.IndexByte(s, '/')
		return s[:i] + relative(s[i:])
	})
	if len(msg) > maxErrorBody {
		msg = strings.ToValidUTF8(msg[:maxErrorBody], "") + "... (cut; the server's log has the whole error)"
	}
	return msg
}

// within returns p relative to dir (slash separated, "." for dir itself)
// when p is dir or below it.
func within(p, dir string) (string, bool) {
	if dir == "" || dir == "/" {
		return "", false
	}
	if p == dir {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
		return rest, true
	}
	return "", false
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
