package sqlguard

import (
	"fmt"
	"strings"
)

// Tokens and states of SQLite's sqlite3_complete (complete.c), whose
// automaton decides where a statement ends: at a ';' outside quotes and
// comments, except inside the BEGIN ... END of CREATE TRIGGER.
const (
	tkSemi = iota
	tkWS
	tkOther
	tkExplain
	tkCreate
	tkTemp
	tkTrigger
	tkEnd
)

var trans = [8][8]uint8{
	//   SEMI WS OTHER EXPLAIN CREATE TEMP TRIGGER END
	{1, 0, 2, 3, 4, 2, 2, 2}, // 0 INVALID
	{1, 1, 2, 3, 4, 2, 2, 2}, // 1 START
	{1, 2, 2, 2, 2, 2, 2, 2}, // 2 NORMAL
	{1, 3, 3, 2, 4, 2, 2, 2}, // 3 EXPLAIN
	{1, 4, 2, 2, 2, 4, 5, 2}, // 4 CREATE
	{6, 5, 5, 5, 5, 5, 5, 5}, // 5 TRIGGER
	{6, 6, 5, 5, 5, 5, 5, 7}, // 6 SEMI
	{1, 7, 5, 5, 5, 5, 5, 5}, // 7 END
}

// Stmt is one statement of a text (Split).
type Stmt struct {
	// Text is the statement, without its ';'.
	Text string
	// Verb is its first keyword in upper case (after EXPLAIN and EXPLAIN
	// QUERY PLAN): SELECT, WITH, INSERT, CREATE, VACUUM...
	Verb string
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// Split returns the statements of q as SQLite would run them one after
// another; empty statements (a lone ';') are left out.
func Split(q string) []Stmt {
	var out []Stmt
	state := 0
	start := -1           // the current statement's first token
	var words []string    // its first keywords, for Verb
	end := func(to int) { // the current statement ends before q[to]
		if start >= 0 {
			out = append(out, Stmt{Text: strings.TrimSpace(q[start:to]), Verb: verb(words)})
		}
		start, words = -1, nil
	}
	for i := 0; i < len(q); {
		c := q[i]
		tok, j := tkOther, i+1
		switch {
		case c == ';':
			tok = tkSemi
		case c == ' ' || c == '\r' || c == '\t' || c == '\n' || c == '\f':
			tok = tkWS
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			tok, j = tkWS, len(q) // an unterminated comment runs to the end
			if k := strings.Index(q[i+2:], "*/"); k >= 0 {
				j = i + 2 + k + 2
			}
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			tok, j = tkWS, len(q)
			if k := strings.IndexByte(q[i:], '\n'); k >= 0 {
				j = i + k + 1
			}
		case c == '[' || c == '`' || c == '"' || c == '\'':
			close := c
			if c == '[' {
				close = ']'
			}
			j = len(q)
			if k := strings.IndexByte(q[i+1:], close); k >= 0 {
				j = i + 1 + k + 1
			}
		case idChar(c):
			for j < len(q) && idChar(q[j]) {
				j++
			}
			switch w := strings.ToUpper(q[i:j]); w {
			case "CREATE":
				tok = tkCreate
			case "TRIGGER":
				tok = tkTrigger
			case "TEMP", "TEMPORARY":
				tok = tkTemp
			case "END":
				tok = tkEnd
			case "EXPLAIN":
				tok = tkExplain
			}
		}
		prev := state
		state = int(trans[state][tok])
		switch {
		case tok == tkSemi:
			if state == 1 && prev != 0 && prev != 1 {
				end(i)
			}
		case tok != tkWS:
			if start < 0 {
				start = i
			}
			if idChar(c) && len(words) < 4 {
				words = append(words, strings.ToUpper(q[i:j]))
			}
		}
		i = j
	}
	end(len(q))
	return out
}

// verb returns the statement's first keyword after EXPLAIN [QUERY PLAN].
func verb(words []string) string {
	for len(words) > 0 && (words[0] == "EXPLAIN" || words[0] == "QUERY" || words[0] == "PLAN") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	return words[0]
}

// One checks that q is exactly one statement (a trailing ';' is fine) and
// not VACUUM, which SQLite shows no authorizer and whose INTO writes a
// file anywhere on the host, and returns it without its ';'.
func One(q string) (Stmt, error) {
	stmts := Split(q)
	switch {
	case len(stmts) == 0:
		return Stmt{}, Refused("the SQL is empty: want exactly one statement")
	case len(stmts) > 1:
		return Stmt{}, Refused(fmt.Sprintf("exactly one SQL statement may run here, not %d: remove the ';' after %s and what follows", len(stmts), abbrev(stmts[0].Text)))
	case stmts[0].Verb == "VACUUM":
		return Stmt{}, Refused("VACUUM (and VACUUM INTO, which writes a file on the host) is not allowed")
	}
	return stmts[0], nil
}

func abbrev(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}
