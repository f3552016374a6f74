package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// Token returns the bearer token of the file at path: its one line, when
// the file exists; else a fresh random token (48 hex digits) written
// there, mode 0600, for the clients to read. created says which.
func Token(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		t := strings.TrimSpace(string(b))
		if t == "" || strings.ContainsAny(t, " \t\r\n") {
			return "", false, fmt.Errorf("%s: not a token: the file holds one line, the token (remove it to have a fresh one written)", path)
		}
		return t, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, err
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	t := hex.EncodeToString(raw)
	if err := world.WriteFileAtomic(path, []byte(t+"\n"), 0o600); err != nil {
		return "", false, err
	}
	return t, true, nil
}
