package health

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/world"
)

// Limits of the credential search.
const (
	maxFiles      = 20        // files mentioning a username that are read
	maxFileBytes  = 256 << 10 // bytes read of one file
	maxCandidates = 200       // passwords tried per account
)

// shellFunc runs a command in the instance's sandboxed shell, in home.
type shellFunc func(ctx context.Context, command string) (*sandbox.Result, error)

// credentials is what the workspace says about one account.
type credentials struct {
	// where is "PATH:LINE" of the verified password, relative to home.
	where    string
	password string
	// mentions lists the home files that mention the username.
	mentions []string
}

func (c credentials) found() bool { return c.where != "" }

// findCredentials searches home, as the agent could, for a file that
// mentions a's username with a password next to it that matches a's hash.
func findCredentials(ctx context.Context, shell shellFunc, a world.Account) (credentials, error) {
	var cred credentials
	res, err := shell(ctx, "grep -rIlFZ -e "+shellQuote(a.Username)+" -- . 2>/dev/null")
	if err != nil {
		return cred, fmt.Errorf("health: search home for %s: %w", a.Username, err)
	}
	for _, p := range bytes.Split(res.Stdout, []byte{0}) {
		if len(p) == 0 {
			continue
		}
		if len(cred.mentions) == maxFiles {
			break
		}
		cred.mentions = append(cred.mentions, strings.TrimPrefix(string(p), "./"))
	}
	for _, path := range cred.mentions {
		res, err := shell(ctx, fmt.Sprintf("head -c %d -- %s", maxFileBytes, shellQuote("./"+path)))
		if err != nil {
			return cred, fmt.Errorf("health: read %s: %w", path, err)
		}
		if res.ExitCode != 0 {
			continue
		}
		if line, pw, ok := passwordNear(string(res.Stdout), a); ok {
			cred.where, cred.password = fmt.Sprintf("%s:%d", path, line), pw
			return cred, nil
		}
	}
	return cred, nil
}

// passwordNear looks, around every line of text that mentions a's
// username, for a word that is a's password, and returns its 1-based line.
func passwordNear(text string, a world.Account) (int, string, bool) {
	line, pw, ok, _ := passwordSearch(text, a)
	return line, pw, ok
}

// passwordSearch is passwordNear that also counts the password hashes it
// computed. Each is a PBKDF2 run, so the likeliest places come first: the
// lines that mention the account's site as well as its username (a persona
// with one username on many sites keeps one line per site), and in a
// line, the words after one that says "password".
func passwordSearch(text string, a world.Account) (int, string, bool, int) {
	lines := strings.Split(text, "\n")
	tried := map[string]bool{a.Username: true, "": true}
	var near, far []int
	for i, l := range lines {
		switch {
		case !strings.Contains(l, a.Username):
		case a.Site != "" && strings.Contains(l, a.Site):
			near = append(near, i)
		default:
			far = append(far, i)
		}
	}
	hashes := 0
	for _, i := range append(near, far...) {
		// The same line first, then the two after it, then the one before.
		for _, j := range []int{i, i + 1, i + 2, i - 1} {
			if j < 0 || j >= len(lines) {
				continue
			}
			for _, w := range candidates(lines[j]) {
				if tried[w] || len(tried) > maxCandidates {
					continue
				}
				tried[w] = true
				hashes++
				if world.CheckPassword(a.PasswordHash, w) {
					return j + 1, w, true, hashes
				}
			}
		}
	}
	return 0, "", false, hashes
}

// candidates returns the words of line that could be a password: each
// whitespace-separated word, without surrounding quotes and punctuation,
// and the value of a "key: value" or "key=value" word; those after a word
// that names a password ("password", "pass", "pw") come first.
func candidates(line string) []string {
	var first, rest []string
	after := false
	for _, f := range strings.Fields(line) {
		t := strings.Trim(f, "`'\"*,;.:()[]<>{}")
		words := []string{t, f}
		for _, sep := range []string{":", "="} {
			if _, v, ok := strings.Cut(t, sep); ok {
				words = append(words, strings.Trim(v, "`'\""))
			}
		}
		if after {
			first = append(first, words...)
		} else {
			rest = append(rest, words...)
		}
		k := strings.ToLower(t)
		after = k == "password" || k == "pass" || k == "pw" || k == "pwd" || k == "passwd"
	}
	return append(first, rest...)
}

// shellQuote quotes s as one word for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
