package fake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SetTemplate makes the server render and tokenize with t: chat replies
// carry the template's prompt ids (the messages re-rendered) and the
// completion's ids (Completion of the turn) when the turn has none of its
// own, and the token endpoints answer: vLLM's POST /tokenize (messages,
// add_generation_prompt, tools) and POST /v1/completions with a token-id
// prompt, SGLang's POST /v1/tokenize (prompt text) and POST /generate
// (input_ids). Without a template those endpoints answer 404, as a server
// without them does.
func (s *Server) SetTemplate(t Template) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.template = &t
}

// tokenRequest reads a token endpoint's body, or writes the error and
// returns false.
func (s *Server) tokenRequest(w http.ResponseWriter, r *http.Request, v any) (Request, *Template, bool) {
	body, err := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	tmpl := s.template
	s.mu.Unlock()
	switch {
	case tmpl == nil:
		writeError(w, http.StatusNotFound, "Not Found", "NotFoundError", "")
		return req, nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "the body is not the endpoint's JSON: "+err.Error(), "", "")
		return req, nil, false
	}
	return req, tmpl, true
}

// tokenizeChat is vLLM's POST /tokenize with messages (TokenizeChatRequest
// of vllm/entrypoints/serve/tokenize/protocol.py): the chat template applied,
// the generation prompt added unless add_generation_prompt is false.
func (s *Server) tokenizeChat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model               string          `json:"model"`
		Prompt              *string         `json:"prompt"`
		Messages            json.RawMessage `json:"messages"`
		AddGenerationPrompt *bool           `json:"add_generation_prompt"`
		Tools               json.RawMessage `json:"tools"`
	}
	_, tmpl, ok := s.tokenRequest(w, r, &body)
	if !ok {
		return
	}
	var ids []int
	if body.Prompt != nil {
		ids = Encode(*body.Prompt)
	} else {
		var req Request
		chat, _ := json.Marshal(map[string]any{"model": body.Model, "messages": body.Messages, "tools": body.Tools})
		if problem := decodeChat(chat, &req); problem != "" && !strings.Contains(problem, "tool message") {
			writeError(w, http.StatusBadRequest, problem, "", "")
			return
		}
		gen := body.AddGenerationPrompt == nil || *body.AddGenerationPrompt
		ids = Encode(tmpl.Render(req.Messages, req.Tools, gen))
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": 131072, "tokens": ids})
}

// tokenizeText is SGLang's POST /v1/tokenize (serving_tokenize.py's
// OpenAIServingTokenize): a prompt text, no chat template.
func (s *Server) tokenizeText(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prompt string `json:"prompt"`
	}
	if _, _, ok := s.tokenRequest(w, r, &body); !ok {
		return
	}
	ids := Encode(body.Prompt)
	writeJSON(w, http.StatusOK, map[string]any{"tokens": ids, "count": len(ids), "max_model_len": 131072})
}

// scripted takes the next turn for a token-in request, numbered with the
// chat requests, and applies its delay and handler; false when the
// client went away.
func (s *Server) scripted(w http.ResponseWriter, r *http.Request, req Request) (Turn, bool) {
	s.mu.Lock()
	s.chats++
	req.N = s.chats
	s.requests[len(s.requests)-1] = req
	s.mu.Unlock()
	turn := s.turn(req)
	if !s.sleep(r, turn.Delay) {
		return turn, false
	}
	if turn.Handler != nil {
		turn = turn.Handler(req)
		if !s.sleep(r, turn.Delay) {
			return turn, false
		}
	}
	if turn.Status != 0 {
		msg := turn.Error
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		if turn.RetryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(int(turn.RetryAfter.Seconds())))
		}
		writeError(w, turn.Status, msg, turn.ErrorType, turn.ErrorCode)
		return turn, false
	}
	return turn, true
}

// generated is a turn as the token ids and text an engine returns: the
// turn's own CompletionTokenIDs when it has them (the text is theirs),
// else Completion's.
func generated(t Turn) (text string, ids []int, logprobs []float64, finish string) {
	raw := Completion(t)
	ids = t.CompletionTokenIDs
	if ids == nil {
		ids = Encode(raw)
	}
	logprobs = t.Logprobs
	if logprobs == nil {
		logprobs = DefaultLogprobs(ids)
	}
	finish = "stop"
	if t.FinishReason == "length" {
		finish = "length"
	}
	return Decode(ids, true), ids, logprobs, finish
}

// completions is vLLM's POST /v1/completions with a token-id prompt
// (CompletionRequest.prompt list[int], return_token_ids; the reply's
// CompletionResponseChoice text, token_ids, prompt_token_ids and
// logprobs.token_logprobs, vllm/entrypoints/openai/completion/protocol.py).
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model          string          `json:"model"`
		Prompt         json.RawMessage `json:"prompt"`
		Logprobs       *int            `json:"logprobs"`
		ReturnTokenIDs bool            `json:"return_token_ids"`
		Seed           *int64          `json:"seed"`
	}
	req, _, ok := s.tokenRequest(w, r, &body)
	if !ok {
		return
	}
	if json.Unmarshal(body.Prompt, &req.InputIDs) != nil || len(req.InputIDs) == 0 {
		writeError(w, http.StatusBadRequest, "prompt: give a non-empty list of token ids", "", "")
		return
	}
	req.Model, req.Seed = body.Model, body.Seed
	turn, ok := s.scripted(w, r, req)
	if !ok {
		return
	}
	text, ids, lps, finish := generated(turn)
	choice := map[string]any{"index": 0, "text": text, "finish_reason": finish}
	if body.ReturnTokenIDs {
		choice["token_ids"], choice["prompt_token_ids"] = ids, req.InputIDs
	}
	if body.Logprobs != nil {
		toks := make([]string, len(ids))
		for i, id := range ids {
			toks[i] = TokenText(id)
		}
		choice["logprobs"] = map[string]any{"tokens": toks, "token_logprobs": lps, "text_offset": []int{}, "top_logprobs": nil}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": fmt.Sprintf("cmpl-fake-%d", req.N), "object": "text_completion",
		"created": created, "model": body.Model, "choices": []any{choice},
		"usage": map[string]any{"prompt_tokens": len(req.InputIDs), "completion_tokens": len(ids), "total_tokens": len(req.InputIDs) + len(ids)}})
}

// generate is SGLang's native POST /generate with input_ids
// (GenerateReqInput: input_ids, sampling_params, return_logprob; the reply's
// text, output_ids and meta_info with finish_reason, weight_version and
// output_token_logprobs as [logprob, token id, text] triples).
func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		InputIDs       []int                      `json:"input_ids"`
		SamplingParams map[string]json.RawMessage `json:"sampling_params"`
		ReturnLogprob  bool                       `json:"return_logprob"`
	}
	req, _, ok := s.tokenRequest(w, r, &body)
	if !ok {
		return
	}
	if len(body.InputIDs) == 0 {
		writeError(w, http.StatusBadRequest, "input_ids: give a non-empty list of token ids", "", "")
		return
	}
	req.InputIDs = body.InputIDs
	if raw, ok := body.SamplingParams["sampling_seed"]; ok {
		var seed int64 // exactly: a float64 would round seeds past 2^53
		if json.Unmarshal(raw, &seed) != nil {
			writeError(w, http.StatusBadRequest, "sampling_params.sampling_seed: give an integer", "", "")
			return
		}
		req.Seed = &seed
	}
	turn, ok := s.scripted(w, r, req)
	if !ok {
		return
	}
	text, ids, lps, finish := generated(turn)
	meta := map[string]any{"id": fmt.Sprintf("gen-fake-%d", req.N), "prompt_tokens": len(body.InputIDs),
		"completion_tokens": len(ids), "finish_reason": map[string]any{"type": finish},
		"weight_version": cmpStr(turn.WeightVersion, DefaultWeightVersion)}
	if body.ReturnLogprob {
		triples := make([]any, len(ids))
		for i, id := range ids {
			lp := 0.0
			if i < len(lps) {
				lp = lps[i]
			}
			triples[i] = []any{lp, id, nil}
		}
		meta["output_token_logprobs"] = triples
	}
	writeJSON(w, http.StatusOK, map[string]any{"text": text, "output_ids": ids, "meta_info": meta})
}
