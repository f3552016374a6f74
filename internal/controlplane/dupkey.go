package controlplane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DuplicateKeyError is a JSON object that names a key twice.
type DuplicateKeyError struct {
	// Path is the object's JSON path from the document's root ("" for
	// the root, "data.args", "items[2]"); Key the repeated key.
	Path, Key string
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("%s: key %q appears twice in one object: send each key once", e.Field(), e.Key)
}

// Field is the repeated key's own path ("data.args.command").
func (e *DuplicateKeyError) Field() string {
	if e.Path == "" {
		return e.Key
	}
	return e.Path + "." + e.Key
}

// maxDepth bounds the nesting walked, as encoding/json bounds what it
// decodes (10000): a deeper document is left to the decoder, which
// refuses it.
const maxDepth = 10000

var errTooDeep = errors.New("too deep")

// DuplicateKey walks the JSON document b token by token and returns a
// *DuplicateKeyError for the first object that repeats a key (keys
// compare as decoded strings, so "a" and "\u0061" are the same key), nil
// when there is none. A document that is not valid JSON is the decoder's
// business: DuplicateKey returns nil for it and leaves the error to the
// decoding that follows.
func DuplicateKey(b []byte) error {
	if !json.Valid(b) {
		return nil
	}
	w := walker{dec: json.NewDecoder(bytes.NewReader(b))}
	w.dec.UseNumber()
	var dup *DuplicateKeyError
	if err := w.value(); errors.As(err, &dup) {
		return dup
	}
	return nil
}

// walker walks one document; path is the stack of keys and indices above
// the value being read, made a string only for an error.
type walker struct {
	dec  *json.Decoder
	path []string
}

func (w *walker) pathString() string {
	var b strings.Builder
	for _, p := range w.path {
		if !strings.HasPrefix(p, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// value reads one value, checking every object in it.
func (w *walker) value() error {
	if len(w.path) > maxDepth {
		return errTooDeep
	}
	tok, err := w.dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if seen[k] {
				return &DuplicateKeyError{Path: w.pathString(), Key: k}
			}
			seen[k] = true
			w.path = append(w.path, k)
			err = w.value()
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	case '[':
		for i := 0; w.dec.More(); i++ {
			w.path = append(w.path, "["+strconv.Itoa(i)+"]")
			err := w.value()
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	}
	_, err = w.dec.Token() // the closing delimiter
	return err
}
