package dbtool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A JSON-RPC 2.0 request whose id is null is still a request, not a
// notification (which has no id member), so the server must answer it;
// MCP forbids null ids, so the answer is an invalid-request error, of id
// null as JSON-RPC prescribes when the id cannot be used. The SDK decodes
// such a message as a notification and never answers it (over streamable
// HTTP it refuses one of a request method with a plain-text 400 and
// accepts one of a notification method with a 202). Both transports here
// answer it before the SDK sees it, so it is never run.

// nullIDMessage is the message of the error that answers a request of id
// null.
const nullIDMessage = `a request with "id": null: MCP request ids are strings or integers; give the request one, or send a notification without an id member`

// hasNullID reports whether msg, one JSON object, is a request (it has a
// method member) whose id member is null.
func hasNullID(msg []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(msg, &members) != nil {
		return false
	}
	// Member names are matched as encoding/json matches struct fields
	// (ignoring case), so "ID": null is caught as the SDK would read it.
	var id json.RawMessage
	ok, isRequest := false, false
	for k, v := range members {
		switch {
		case strings.EqualFold(k, "id"):
			id, ok = v, true
		case strings.EqualFold(k, "method"):
			isRequest = true
		}
	}
	return ok && isRequest && bytes.Equal(bytes.TrimSpace(id), []byte("null"))
}

// anyNullID reports whether body, a JSON-RPC message or a batch of them,
// holds a request of id null.
func anyNullID(body []byte) bool {
	// Most bodies hold no null at all: skip decoding them.
	if !bytes.Contains(body, []byte("null")) {
		return false
	}
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) != nil {
			return false
		}
		for _, m := range batch {
			if hasNullID(m) {
				return true
			}
		}
		return false
	}
	return hasNullID(b)
}

// refuseNullIDs wraps a streamable-HTTP handler: a POST whose body holds a
// request of id null (alone or in a batch, which is then refused whole)
// gets HTTP 400 with a JSON-RPC invalid-request error of id null, and h
// never sees it. Any other request goes to h with its body as read. The
// body is read under the limit the SDK's handler applies; a larger one
// gets 413, as from the SDK. The refusal comes before h's DNS-rebinding
// check, which answers a foreign Host with 403: either way a 4xx, and
// nothing runs.
func refuseNullIDs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.Body == nil {
			h.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, mcp.DefaultMaxRequestBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		if anyNullID(body) {
			data, err := nullIDError()
			if err != nil {
				http.Error(w, nullIDMessage, http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(data)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		h.ServeHTTP(w, req)
	})
}

// errorOfNullID encodes a JSON-RPC error response of id null.
func errorOfNullID(code int64, message string) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: code, Message: message}})
}

// nullIDError is the answer to a request of id null.
func nullIDError() ([]byte, error) {
	return errorOfNullID(jsonrpc.CodeInvalidRequest, nullIDMessage)
}
