package dbtool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A tools/call whose arguments repeat a key, at the top level or inside an
// argument, written plainly or with an escape, is a tool error naming the
// key: encoding/json would keep the last one silently.
func TestArgsRefuseRepeatedKeys(t *testing.T) {
	a := NewArgs("greet", schemaOf(t, greetInput))
	for _, c := range []struct{ args, want string }{
		{`{"name": "bo", "name": "../x"}`, `argument "name" of greet is given more than once`},
		{`{"name": "bo", "n\u0061me": "x"}`, `argument "name" of greet is given more than once`},
		{`{"name": "bo", "count": 1, "loud": true, "count": 2}`, `argument "count" of greet is given more than once`},
	} {
		_, err := a.Check(json.RawMessage(c.args))
		var te *ToolError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a tool error containing %q", c.args, err, c.want)
		}
	}
	for raw, want := range map[string]string{
		`{"a": {"k": 1, "k": 2}}`:             "a.k",
		`{"a": [{"k": 1}, {"j": 1, "j": 2}]}`: "a[1].j",
		`{"a": {"k": 1}, "b": {"k": 2}}`:      "",
		`{"a": "x:y", "b": ":"}`:              "",
		`[1, 2]`:                              "",
		`{"a": 1,`:                            "",
	} {
		if got := duplicateKey([]byte(raw)); got != want {
			t.Errorf("duplicateKey(%s) = %q, want %q", raw, got, want)
		}
	}
	if err := duplicateKeyError("t", "a[1].j"); !strings.Contains(err.Error(), `key "a[1].j" appears more than once in argument "a" of t`) {
		t.Errorf("nested: %v", err)
	}
}
