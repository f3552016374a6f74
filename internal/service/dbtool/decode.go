package dbtool

import (
	"bytes"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkMaxDepth is the deepest nesting of objects and arrays the SDK's
// decoder takes (internal/json's defaultMaxDepth).
const sdkMaxDepth = 1000

// decodeRequest decodes line, one valid JSON value, as jsonrpc.DecodeMessage
// does when it is a request of the plain form clients send: a JSON object
// whose members are named exactly (no escapes) and each at most once, with
// "jsonrpc" "2.0", a "method" of printable ASCII without escapes, an "id"
// that is absent, null, an integer of at most 15 digits or a string of
// printable ASCII without escapes, "params" absent or an object, and no
// "result" or "error". For anything else it returns nil, and the caller
// asks the SDK.
//
// The SDK's decoder allocates a 32 KiB buffer for every value it decodes
// (segmentio/encoding's Decoder over a bytes.Reader), twice per message:
// on a small tools/call that is most of what a call allocates, and so most
// of the garbage collector's work. decodeRequest allocates the request.
// TestDecodeRequestAgreesWithSDK holds it to jsonrpc.DecodeMessage.
func decodeRequest(line []byte) *jsonrpc.Request {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil
	}
	var version, method, id, params []byte
	i = skipSpace(line, i+1)
	for n := 0; ; n++ {
		if i >= len(line) {
			return nil
		}
		if line[i] == '}' && n == 0 {
			i++
			break
		}
		if line[i] != '"' {
			return nil
		}
		kEnd := stringEnd(line, i)
		if kEnd < 0 {
			return nil
		}
		key := line[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil
		}
		i = skipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return nil
		}
		start := skipSpace(line, i+1)
		end, depth := valueEnd(line, start)
		if end < 0 || depth+1 > sdkMaxDepth {
			return nil
		}
		v := line[start:end]
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "method":
			slot = &method
		case "id":
			slot = &id
		case "params":
			slot = &params
		case "result", "error":
			return nil
		}
		if slot != nil {
			if *slot != nil {
				return nil // a member given twice
			}
			*slot = v
		}
		i = skipSpace(line, end)
		if i >= len(line) {
			return nil
		}
		if line[i] == '}' {
			i++
			break
		}
		if line[i] != ',' {
			return nil
		}
		i = skipSpace(line, i+1)
	}
	if skipSpace(line, i) != len(line) || string(version) != `"2.0"` || !plainString(method) {
		return nil
	}
	if params != nil && params[0] != '{' {
		return nil
	}
	var rid jsonrpc.ID
	var err error
	switch {
	case id == nil || string(id) == "null":
	case plainString(id):
		rid, err = jsonrpc.MakeID(string(id[1 : len(id)-1]))
	case plainInt(id):
		var n int64
		if n, err = strconv.ParseInt(string(id), 10, 64); err == nil {
			rid, err = jsonrpc.MakeID(float64(n)) // as the SDK, which decodes a number as a float64
		}
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return &jsonrpc.Request{ID: rid, Method: string(method[1 : len(method)-1]), Params: params}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i] ('"'),
// or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index after the JSON value that starts at b[i] and
// the depth of the objects and arrays in it (0 for a scalar); -1 if b ends
// first. b is valid JSON.
func valueEnd(b []byte, i int) (end, depth int) {
	if i >= len(b) {
		return -1, 0
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i), 0
	case '{', '[':
		d, maxD := 0, 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1, 0
				}
				j--
			case '{', '[':
				if d++; d > maxD {
					maxD = d
				}
			case '}', ']':
				if d--; d == 0 {
					return j + 1, maxD
				}
			}
		}
		return -1, 0
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j, 0
		}
		j++
	}
	return j, 0
}

// plainString reports whether v is a JSON string of printable ASCII with
// no escapes.
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainInt reports whether v is a JSON integer of at most 15 digits, which
// a float64 (how the SDK decodes an id) holds exactly.
func plainInt(v []byte) bool {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
