package fake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"
)

// EmbeddingDims is the size of the fake's embeddings.
const EmbeddingDims = 16

// Embedding is the fake's embedding of a text: its words hashed into
// EmbeddingDims buckets, normalised, so that texts sharing words are close.
func Embedding(text string) []float64 {
	v := make([]float64, EmbeddingDims)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbeddingDims]++
	}
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n > 0 {
		for i := range v {
			v[i] /= math.Sqrt(n)
		}
	}
	return v
}

// embeddings answers POST /v1/embeddings as OpenAI does, for a served
// model and an input of one string or an array of strings.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not JSON: "+err.Error(), "BadRequestError", "")
		return
	}
	s.mu.Lock()
	served := slices.Contains(s.models, req.Model)
	s.embedCalls++
	n, embed, failing, engine := s.embedCalls, s.embedder, s.embedFail, s.engine
	s.mu.Unlock()
	if embed == nil {
		embed = Embedding
	}
	if !served {
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", req.Model), "NotFoundError", "")
		return
	}
	if failing != nil {
		t := failing(n)
		if !s.sleep(r, t.Delay) {
			return
		}
		if t.CutAfter > 0 {
			cw := &cutWriter{ResponseWriter: w, left: t.CutAfter}
			defer cw.cut()
			w = cw
		}
		switch {
		case t.Status != 0:
			if t.RetryAfter > 0 {
				w.Header().Set("Retry-After", fmt.Sprint(int(t.RetryAfter.Seconds())))
			}
			writeEngineError(w, engine, t.Status, cmp.Or(t.Error, http.StatusText(t.Status)), t.ErrorType, t.ErrorCode)
			return
		case t.Body != "":
			w.Header().Set("Content-Type", cmp.Or(t.BodyType, "text/html; charset=utf-8"))
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(t.Body))
			return
		}
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "input must be a string or an array of strings", "BadRequestError", "")
			return
		}
		inputs = []string{one}
	}
	type item struct {
		Object    string     `json:"object"`
		Index     int        `json:"index"`
		Embedding []*float64 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	for i, in := range inputs {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: wireVector(embed(in))})
		out.Usage.PromptTokens += len(strings.Fields(in))
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// EmbedCalls is how many embedding requests the server received.
func (s *Server) EmbedCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedCalls
}

// wireVector is v as JSON can carry it: a NaN or an infinity (which JSON
// has no number for) as null, as a server's serialiser sends it.
func wireVector(v []float64) []*float64 {
	out := make([]*float64, len(v))
	for i := range v {
		if !math.IsNaN(v[i]) && !math.IsInf(v[i], 0) {
			out[i] = &v[i]
		}
	}
	return out
}
