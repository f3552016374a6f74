package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
)

// hostileDef is a service definition whose tool hit runs step; extra goes
// after the test world's rows and calls says whether the test world calls
// hit (which runs it at lint time).
func hostileDef(step, extra string, calls bool) string {
	call := ""
	if calls {
		call = "\n  calls:\n    - tool: hit"
	}
	return fmt.Sprintf(`
wildawm_service: 1
name: hostile
title: Hostile
instructions: Numbers.
health_tool: count
tables:
  - name: nums
    columns: [n INTEGER PRIMARY KEY]
    key: [n]
tools:
  - name: count
    description: Counts.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - result: SELECT json_object('n', count(*)) FROM nums
  - name: hit
    description: Hits.
    annotations: {readOnlyHint: false}
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}}
    steps:
      - %s
      - result: SELECT json_object('n', 1)
test:
  self: Alex
  now: "2026-01-01T00:00:00Z"
  sql:
    - WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) INSERT INTO nums SELECT i FROM c%s%s
`, step, extra, call)
}

// lintHostile lints the definition def(host) builds, with host a fresh
// directory, as `service lint` does: it must be refused with want, end
// within a minute, and leave host empty.
func lintHostile(def func(host string) string, want string) func(context.Context, *fixture) (string, error) {
	return func(ctx context.Context, f *fixture) (string, error) {
		host, err := os.MkdirTemp("", "wildawm-attack-sql-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(host)
		src := def(host)
		refusal := func() string {
			d, err := engine.Parse([]byte(src))
			if err != nil {
				return err.Error()
			}
			c, err := engine.Compile(d, engine.Hooks{})
			if err != nil {
				return err.Error()
			}
			r, err := engine.LintWith(ctx, c, engine.LintOptions{SQLTimeout: 500 * time.Millisecond})
			if err != nil {
				return err.Error()
			}
			return strings.Join(r.Problems, "; ")
		}
		ch := make(chan string, 1)
		go func() { ch <- refusal() }()
		var got string
		select {
		case got = <-ch:
		case <-time.After(time.Minute):
			return "", errors.New("lint hung for a minute")
		}
		if ents, _ := os.ReadDir(host); len(ents) > 0 {
			return got, fmt.Errorf("lint created %s on the host", filepath.Join(host, ents[0].Name()))
		}
		if !strings.Contains(got, want) {
			return got, fmt.Errorf("lint: %q, want a refusal containing %q", got, want)
		}
		return "refused: " + got, nil
	}
}

// mcpPost posts one raw JSON-RPC message to a streamable-HTTP MCP endpoint
// in session (none: "") and returns the status, the session id it gave
// and the body.
func (f *fixture) mcpPost(ctx context.Context, endpoint, session, body string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := f.http.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(bytes.TrimSpace(b)), nil
}

// mcpDelete ends a session.
func (f *fixture) mcpDelete(ctx context.Context, endpoint, session string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, endpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", session)
	if res, err := f.http.Do(req); err == nil {
		res.Body.Close()
	}
}

const rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`

// openSession opens a raw session on endpoint and returns its id.
func (f *fixture) openSession(ctx context.Context, endpoint string) (status int, session, body string, err error) {
	st, sid, body, err := f.mcpPost(ctx, endpoint, "", rawInitialize)
	if err != nil || st != http.StatusOK || sid == "" {
		return st, "", body, err
	}
	if st, _, body, err := f.mcpPost(ctx, endpoint, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || st >= 300 {
		f.mcpDelete(ctx, endpoint, sid)
		return st, "", body, fmt.Errorf("initialized: %d %v", st, err)
	}
	return st, sid, body, nil
}

func sqlAttacks(f *fixture) []attack {
	return []attack{
		{
			name: "lint-attach", category: "sql",
			action:  "`service lint` of a definition whose test world and whose tool (called by its example) ATTACH a host file",
			contain: "lint refuses ATTACH with the guard's reason; no file appears on the host",
			try: lintHostile(func(host string) string {
				return hostileDef("exec: ATTACH '"+filepath.Join(host, "step.db")+"' AS x", "\n    - ATTACH '"+filepath.Join(host, "world.db")+"' AS w", true)
			}, "ATTACH"),
		},
		{
			name: "lint-attach-step", category: "sql",
			action:  "`service lint` of a definition whose tool ATTACHes a host file when called",
			contain: "lint refuses ATTACH with the guard's reason; no file appears on the host",
			try: lintHostile(func(host string) string {
				return hostileDef("exec: ATTACH '"+filepath.Join(host, "step.db")+"' AS x", "", true)
			}, "ATTACH"),
		},
		{
			name: "lint-vacuum-into", category: "sql",
			action:  "`service lint` of a definition whose test world runs VACUUM INTO a host file",
			contain: "lint refuses VACUUM; no file appears on the host",
			try: lintHostile(func(host string) string {
				return hostileDef("check: SELECT NULL", "\n    - VACUUM INTO '"+filepath.Join(host, "copy.db")+"'", false)
			}, "VACUUM"),
		},
		{
			name: "lint-pragma-database-list", category: "sql",
			action:  "`service lint` of a tool that reads the host path of its database through pragma_database_list",
			contain: "lint refuses the table-valued pragma",
			try: lintHostile(func(string) string {
				return hostileDef("check: SELECT (SELECT group_concat(file) FROM pragma_database_list) WHERE 0", "", false)
			}, "pragma_database_list"),
		},
		{
			name: "lint-two-statements", category: "sql",
			action:  "`service lint` of a step with a second statement after ';'",
			contain: "lint refuses it: exactly one statement per step",
			try: lintHostile(func(string) string {
				return hostileDef("exec: DELETE FROM nums WHERE n = 1; DELETE FROM nums", "", false)
			}, "exactly one SQL statement"),
		},
		{
			name: "lint-endless-recursion", category: "sql",
			action:  "`service lint` of a tool whose recursive CTE never ends, called by its example",
			contain: "lint ends within the statement bound and reports the call",
			try: lintHostile(func(string) string {
				return hostileDef("check: WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT NULL FROM c WHERE i = 0", "", true)
			}, engine.TimeoutMessage),
		},
		{
			name: "lint-cross-join", category: "sql",
			action:  "`service lint` of a tool whose three-way cross join of 2,000 rows runs for hours, called by its example",
			contain: "lint ends within the statement bound and reports the call",
			try: lintHostile(func(string) string {
				return hostileDef("check: SELECT NULL FROM nums a, nums b, nums c WHERE a.n + b.n = c.n - 100000", "", true)
			}, engine.TimeoutMessage),
		},
		{
			name: "mcp-duplicate-keys", category: "sql",
			action:  `tools/call list_threads on the attacker's live messages service with {"limit": 1, "limit": 100} and {"limit": 1, "l\u0069mit": 100}`,
			contain: "a tool error naming the repeated key; nothing runs",
			try: func(ctx context.Context, f *fixture) (string, error) {
				endpoint := f.a.MCPURL + "/messages"
				st, sid, body, err := f.openSession(ctx, endpoint)
				if err != nil || sid == "" {
					return "", fmt.Errorf("initialize: %d %s %v", st, body, err)
				}
				defer f.mcpDelete(ctx, endpoint, sid)
				var seen []string
				for i, args := range []string{`{"limit": 1, "limit": 100}`, `{"limit": 1, "l\u0069mit": 100}`} {
					call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_threads","arguments":%s}}`, i+2, args)
					st, _, body, err := f.mcpPost(ctx, endpoint, sid, call)
					if err != nil || st != http.StatusOK {
						return "", fmt.Errorf("tools/call: %d %s %v", st, body, err)
					}
					var res struct {
						Result struct {
							IsError bool `json:"isError"`
							Content []struct {
								Text string `json:"text"`
							} `json:"content"`
						} `json:"result"`
					}
					if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Result.Content) == 0 {
						return body, fmt.Errorf("tools/call answer: %v", err)
					}
					text := res.Result.Content[0].Text
					if !res.Result.IsError || !strings.Contains(text, `"limit"`) || !strings.Contains(text, "more than once") {
						return text, fmt.Errorf("%s: %s, want a tool error naming the repeated key", args, text)
					}
					seen = append(seen, text)
				}
				return strings.Join(seen, "; "), nil
			},
		},
		{
			name: "mcp-many-sessions", category: "sql",
			action:  fmt.Sprintf("open %d MCP sessions on the attacker's live messages service and never close them", dbtool.DefaultMaxSessions+10),
			contain: fmt.Sprintf("at most %d are open; the next gets HTTP 503 and a JSON-RPC error saying what to do", dbtool.DefaultMaxSessions),
			try: func(ctx context.Context, f *fixture) (string, error) {
				endpoint := f.a.MCPURL + "/messages"
				var open []string
				defer func() {
					for _, s := range open {
						f.mcpDelete(ctx, endpoint, s)
					}
				}()
				for i := range dbtool.DefaultMaxSessions + 10 {
					st, sid, body, err := f.openSession(ctx, endpoint)
					if err != nil {
						return "", err
					}
					if sid != "" {
						open = append(open, sid)
						continue
					}
					var e struct {
						Error struct {
							Code    int64  `json:"code"`
							Message string `json:"message"`
						} `json:"error"`
					}
					if st != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" {
						return body, fmt.Errorf("session %d: %d %s, want 503 with a JSON-RPC error", i, st, body)
					}
					if len(open) > dbtool.DefaultMaxSessions {
						return body, fmt.Errorf("%d sessions were open before one was refused", len(open))
					}
					return fmt.Sprintf("%d sessions open, the next refused: %d %s", len(open), st, e.Error.Message), nil
				}
				return "", fmt.Errorf("all %d sessions opened", len(open))
			},
		},
	}
}
