package dbtool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeSeeds are lines a client sends, and near misses of them.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":"t-1"}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	` { "method" : "ping" , "id" : 7 , "jsonrpc" : "2.0" , "params" : { "_meta" : { } } } `,
	`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-42,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":123456789012345,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"\u0041","method":"ping"}`,
	`{"jsonrpc":"2.0","id":"é","method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"me\u0074hod":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":2.0,"id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","extra":[{"a":"}\"]"}]}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"a\\\"b}","n":[1,{"x":[]}]}}`,
	`{}`,
	`[]`,
	`"x"`,
	`1`,
	`null`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 998) + `1` + strings.Repeat(`}`, 998) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat(`}`, 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat(`}`, 1000) + `}`,
}

// checkDecodeRequest fails when decodeRequest answers line differently
// from the SDK.
func checkDecodeRequest(t *testing.T, line []byte) {
	t.Helper()
	if !json.Valid(line) {
		return // the transport answers a parse error before decoding
	}
	got := decodeRequest(line)
	if got == nil {
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatalf("%s: decodeRequest gave %+v, the SDK an error: %v", line, got, err)
	}
	want, ok := msg.(*jsonrpc.Request)
	if !ok {
		t.Fatalf("%s: decodeRequest gave a request, the SDK a %T", line, msg)
	}
	if got.ID != want.ID || got.Method != want.Method || !bytes.Equal(got.Params, want.Params) || (got.Params == nil) != (want.Params == nil) {
		t.Fatalf("%s:\n decodeRequest %v %q %q\n the SDK      %v %q %q", line, got.ID, got.Method, got.Params, want.ID, want.Method, want.Params)
	}
}

func TestDecodeRequestAgreesWithSDK(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecodeRequest(t, []byte(s))
	}
	// Mutations of the seeds: a byte changed, dropped or repeated.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,\ 0123456789.-+eEtrufalsn"` + "\t\x7f\xc3\xa9jsonrpcmethodidparamsresulterror2.")
	for n := 0; n < 200000; n++ {
		b := []byte(decodeSeeds[rng.IntN(len(decodeSeeds)-3)])
		for k := 1 + rng.IntN(3); k > 0 && len(b) > 1; k-- {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i:i], b[i+1:]...)
			default:
				b = append(b[:i+1:i+1], b[i:]...)
			}
		}
		checkDecodeRequest(t, b)
	}
}

// TestDecodeRequestTakesClientRequests holds the fast path to the lines
// clients send: were it to fall back for them, nothing else would notice.
func TestDecodeRequestTakesClientRequests(t *testing.T) {
	for _, s := range decodeSeeds[:8] {
		if decodeRequest([]byte(s)) == nil {
			t.Errorf("%s: decodeRequest fell back to the SDK", s)
		}
	}
	for i, s := range []string{string(rawLine(1, "tools/call", map[string]any{"name": "x", "arguments": map[string]any{"q": "a \"b\" \\ é"}}))} {
		if decodeRequest([]byte(s)) == nil {
			t.Errorf("%d: %s: decodeRequest fell back to the SDK", i, s)
		}
	}
}

func rawLine(id int, method string, params any) []byte {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return b
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkDecodeRequest(t, line) })
}

func BenchmarkDecodeRequest(b *testing.B) {
	line := []byte(decodeSeeds[0])
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeRequest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if decodeRequest(line) == nil {
				b.Fatal("fell back")
			}
		}
	})
}
