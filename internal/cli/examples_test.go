package cli

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestHelpExamples: the main commands' --help shows examples, and every
// example parses: its command exists, its flags are the command's and its
// arguments are what the command takes.
func TestHelpExamples(t *testing.T) {
	for _, main := range []string{"demo", "syn worlds", "syn tasks", "pool run", "gate", "eval", "sft export", "rl serve", "openenv serve", "verify", "world checkout", "world log", "rollout", "serve"} {
		if len(examples[main]) == 0 {
			t.Errorf("wildawm %s --help has no example: add one to examples", main)
		}
	}
	for path, lines := range examples {
		out, _, err := run(t, t.TempDir(), append(strings.Fields(path), "--help")...)
		if err != nil || !strings.Contains(out, "Examples:") || !strings.Contains(out, lines[0]) {
			t.Errorf("wildawm %s --help: %v; shows no example:\n%s", path, err, out)
		}
		for _, line := range lines {
			args := shellWords(t, line)
			if len(args) == 0 || args[0] != "wildawm" {
				t.Errorf("example %q does not start with wildawm", line)
				continue
			}
			root := newRoot(io.Discard, io.Discard)
			cmd, rest, err := root.Find(args[1:])
			if err != nil || strings.TrimPrefix(cmd.CommandPath(), "wildawm ") != path {
				t.Errorf("example %q: finds %q (%v), want wildawm %s", line, cmd.CommandPath(), err, path)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("example %q: %v", line, err)
				continue
			}
			if cmd.Args != nil {
				if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
					t.Errorf("example %q: %v", line, err)
				}
			}
		}
	}
}

// shellWords splits an example as a shell would (single quotes; a " #"
// starts a comment).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	var out []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			inQuote, inWord = !inQuote, true
		case r == ' ' && !inQuote:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inQuote {
		t.Fatalf("example %q: an unclosed quote", line)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return slices.Clip(out)
}
