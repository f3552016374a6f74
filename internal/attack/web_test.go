package attack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/synth"
)

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// login logs into the shop at base as the persona and returns the session
// cookie and its CSRF token.
func (f *fixture) login(ctx context.Context, base string) (*http.Cookie, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/login", nil)
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfRE.FindSubmatch(body)
	cookie := sessionCookie(resp)
	if m == nil || cookie == nil {
		return nil, "", errors.New("login form: no csrf token or session cookie")
	}
	acct := synth.CaseStudyPersona().Accounts[0]
	form := url.Values{"csrf_token": {string(m[1])}, "username": {acct.Username}, "password": {acct.Password}}
	req, _ = http.NewRequestWithContext(ctx, "POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookie)
	resp, err = f.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, "", fmt.Errorf("login: %d", resp.StatusCode)
	}
	if c := sessionCookie(resp); c != nil {
		cookie = c
	}
	// The logged-in session's CSRF token.
	st, page, err := f.get(ctx, base+"/cart", []*http.Cookie{cookie})
	if err != nil || st != http.StatusOK {
		return nil, "", fmt.Errorf("cart after login: %d %v", st, err)
	}
	tok := csrfRE.FindStringSubmatch(page)
	if tok == nil {
		return nil, "", errors.New("no csrf token on the cart page")
	}
	return cookie, tok[1], nil
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == shop.SessionCookie {
			return c
		}
	}
	return nil
}

// post sends a body with a content type and extra headers.
func (f *fixture) post(ctx context.Context, u, ctype string, body io.Reader, length int64, hdr map[string]string, cookies ...*http.Cookie) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", u, body)
	if err != nil {
		return 0, "", err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", ctype)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return f.do(req)
}

// mcpHeaders are the headers of a streamable-HTTP MCP POST.
func mcpHeaders(session string) map[string]string {
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	if session != "" {
		h["Mcp-Session-Id"] = session
		h["Mcp-Protocol-Version"] = "2025-06-18"
	}
	return h
}

// worldSame runs fn and checks that A's world is unchanged by it.
func (f *fixture) aUnchanged(ctx context.Context, fn func() (string, error)) (string, error) {
	before, err := state.Hash(ctx, f.a.Dir())
	if err != nil {
		return "", err
	}
	obs, err := fn()
	if err != nil {
		return obs, err
	}
	after, err := state.Hash(ctx, f.a.Dir())
	if err != nil {
		return obs, err
	}
	if after != before {
		return obs, errors.New("A's world changed")
	}
	if err := f.alive(ctx, f.a); err != nil {
		return obs, fmt.Errorf("A: %w", err)
	}
	return obs, nil
}

func webAttacks(f *fixture) []attack {
	_ = f
	return []attack{
		{
			name: "path traversal on /images and /static", category: "web",
			action:  "GET /images/ and /static/ with ../, %2e%2e, %2f, %252e, backslash, NUL and absolute variants aiming at db/shop.sqlite, manifest.json, /etc/passwd",
			contain: "404 or 400, never a file outside the catalog's images",
			try: func(ctx context.Context, f *fixture) (string, error) {
				paths := []string{"/images/../db/shop.sqlite", "/images/%2e%2e/db/shop.sqlite", "/images/%2e%2e%2fmanifest.json",
					"/images/..%2f..%2f..%2fetc%2fpasswd", "/images/%252e%252e%252fmanifest.json", "/images/..%5c..%5cmanifest.json",
					"/images/%2fetc%2fpasswd", "/images/RG8-1001.png%00.png", "/images/.%2e/.%2e/db/shop.sqlite", "/static/../../db/shop.sqlite",
					"/static/%2e%2e%2f%2e%2e%2fmanifest.json", "//etc/passwd", "/images//etc/passwd", "/p/..%2f..%2fdb%2fshop.sqlite"}
				for _, base := range []string{f.a.SiteURL("shop"), f.b.SiteURL("shop")} {
					for _, p := range paths {
						st, body, err := f.get(ctx, base+p, nil)
						if err != nil {
							return "", fmt.Errorf("GET %s: %w", p, err)
						}
						if st != 404 && st != 400 || strings.Contains(body, "SQLite format") || strings.Contains(body, "root:") || strings.Contains(body, `"persona"`) {
							return "", fmt.Errorf("GET %s: %d %.80q", p, st, body)
						}
					}
				}
				return fmt.Sprintf("%d paths x 2 shops: all 404/400", len(paths)), nil
			},
		},
		{
			name: "A's session cookie on B", category: "web",
			action:  "log in on A, send A's shop_session cookie to B's /cart and /orders, and POST /cart/add to B with A's cookie and CSRF token",
			contain: "B treats it as no session: redirect to /login, POST refused 403, B's world unchanged",
			try: func(ctx context.Context, f *fixture) (string, error) {
				cookie, csrf, err := f.login(ctx, f.a.SiteURL("shop"))
				if err != nil {
					return "", err
				}
				for _, p := range []string{"/cart", "/orders"} {
					st, body, err := f.get(ctx, f.b.SiteURL("shop")+p, []*http.Cookie{cookie})
					if err != nil {
						return "", err
					}
					if st != http.StatusSeeOther || strings.Contains(body, "alex") {
						return "", fmt.Errorf("B %s with A's cookie: %d", p, st)
					}
				}
				form := url.Values{"csrf_token": {csrf}, "sku": {"RG8-1001"}, "qty": {"3"}}.Encode()
				st, _, err := f.post(ctx, f.b.SiteURL("shop")+"/cart/add", "application/x-www-form-urlencoded", strings.NewReader(form), int64(len(form)), nil, cookie)
				if err != nil {
					return "", err
				}
				if st != http.StatusForbidden {
					return "", fmt.Errorf("B accepted a cart add with A's cookie and token: %d", st)
				}
				return "B: 303 to /login for /cart and /orders, 403 for the POST", nil
			},
		},
		{
			name: "forged session cookies", category: "web",
			action:  "send B empty, guessed, 1 MiB and cookie-splitting shop_session values",
			contain: "not logged in (303 to /login) or rejected 4xx; never a 5xx",
			try: func(ctx context.Context, f *fixture) (string, error) {
				for _, v := range []string{"", "admin", "alex.rivera", "0000000000000000000000000000000000000000000000000000000000000000", strings.Repeat("A", 1<<20), "x;y=z"} {
					req, _ := http.NewRequestWithContext(ctx, "GET", f.b.SiteURL("shop")+"/cart", nil)
					req.Header.Set("Cookie", shop.SessionCookie+"="+v)
					st, _, err := f.do(req)
					if err != nil {
						return "", err
					}
					if st != http.StatusSeeOther && (st < 400 || st >= 500) {
						return "", fmt.Errorf("cookie %.20q: %d", v, st)
					}
				}
				return "303 to /login or 431/400", nil
			},
		},
		{
			name: "A's MCP session id on B", category: "mcp",
			action:  "open an MCP session on A, then POST tools/call list_threads to B's endpoint with A's Mcp-Session-Id",
			contain: "B rejects the unknown session (404), no tool runs",
			try: func(ctx context.Context, f *fixture) (string, error) {
				cs, err := mcpConnect(ctx, f.a.MCPURL+"/messages")
				if err != nil {
					return "", err
				}
				defer cs.Close()
				body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_threads","arguments":{}}}`
				st, resp, err := f.post(ctx, f.b.MCPURL+"/messages", "application/json", strings.NewReader(body), int64(len(body)), mcpHeaders(cs.ID()))
				if err != nil {
					return "", err
				}
				if st < 400 || strings.Contains(resp, "thread") {
					return "", fmt.Errorf("B answered A's session: %d %.200s", st, resp)
				}
				return fmt.Sprintf("B: %d %s", st, strings.TrimSpace(resp)), nil
			},
		},
		{
			name: "oversized shop bodies", category: "web",
			action:  "POST 2 MiB to /cart/add and /login on A and B, with and without Content-Length (chunked)",
			contain: "413, nothing written, the shops keep serving",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return f.aUnchanged(ctx, func() (string, error) {
					big := "sku=RG8-1001&qty=1&pad=" + strings.Repeat("x", 2<<20)
					for _, base := range []string{f.a.SiteURL("shop"), f.b.SiteURL("shop")} {
						for _, p := range []string{"/cart/add", "/login"} {
							for _, n := range []int64{int64(len(big)), -1} {
								st, _, err := f.post(ctx, base+p, "application/x-www-form-urlencoded", strings.NewReader(big), n, nil)
								if err != nil {
									return "", err
								}
								if st != http.StatusRequestEntityTooLarge {
									return "", fmt.Errorf("POST %s (length %d): %d", p, n, st)
								}
							}
						}
					}
					return "8 requests: 413", nil
				})
			},
		},
		{
			name: "oversized MCP bodies", category: "mcp",
			action:  "POST a 6 MiB JSON-RPC message to A's and B's MCP endpoints, with and without Content-Length",
			contain: "413 (the SDK's 4 MiB limit), the services keep working",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return f.aUnchanged(ctx, func() (string, error) {
					big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 6<<20) + `"}}`
					for _, u := range []string{f.a.MCPURL + "/messages", f.b.MCPURL + "/messages"} {
						for _, n := range []int64{int64(len(big)), -1} {
							st, _, err := f.post(ctx, u, "application/json", strings.NewReader(big), n, mcpHeaders(""))
							if err != nil {
								return "", err
							}
							if st != http.StatusRequestEntityTooLarge {
								return "", fmt.Errorf("MCP %d-byte body: %d", len(big), st)
							}
						}
					}
					return "4 requests: 413", nil
				})
			},
		},
		{
			name: "malformed JSON-RPC", category: "mcp",
			action:  "inside a live session and without one: not JSON, jsonrpc 1.0, unknown method, batch of garbage, empty batch, a 100k-digit id, 100k-deep nesting, tools/call with arguments of the wrong type and an unknown tool",
			contain: "each is a 4xx or a JSON-RPC error, never a 5xx or a dropped connection; the service keeps working",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return f.aUnchanged(ctx, func() (string, error) {
					cs, err := mcpConnect(ctx, f.a.MCPURL+"/messages")
					if err != nil {
						return "", err
					}
					defer cs.Close()
					msgs := []string{
						`this is not json`,
						`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
						`{"jsonrpc":"2.0","id":1,"method":"no/such/method"}`,
						`[1, "x", null, {"a": 1}]`,
						`[]`,
						`{"jsonrpc":"2.0","id":` + strings.Repeat("9", 100000) + `,"method":"tools/list"}`,
						strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
						`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_threads","arguments":"not an object"}}`,
						`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":12345}}}`,
						`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}`,
						`{"jsonrpc":"2.0","id":{"nested":"object"},"method":"tools/list"}`,
						"\x00\xff\xfe",
					}
					n := 0
					for _, session := range []string{cs.ID(), ""} {
						for _, m := range msgs {
							st, body, err := f.post(ctx, f.a.MCPURL+"/messages", "application/json", strings.NewReader(m), int64(len(m)), mcpHeaders(session))
							if err != nil {
								return "", fmt.Errorf("%.40q: %w", m, err)
							}
							if st >= 500 {
								return "", fmt.Errorf("%.40q: %d %.200s", m, st, body)
							}
							if st == 200 && !strings.Contains(body, `"error"`) && !strings.Contains(body, `"isError":true`) {
								return "", fmt.Errorf("%.40q accepted: %.200s", m, body)
							}
							n++
						}
					}
					if _, err := callTool(ctx, cs, "list_threads", map[string]any{}); err != nil {
						return "", fmt.Errorf("the session after the garbage: %w", err)
					}
					return fmt.Sprintf("%d messages: 4xx or JSON-RPC errors; the session still works", n), nil
				})
			},
		},
		{
			name: "DNS rebinding Host header", category: "mcp",
			action:  "POST initialize to A's MCP with Host: attacker.example",
			contain: "403 from the SDK's localhost protection",
			try: func(ctx context.Context, f *fixture) (string, error) {
				body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
				h := mcpHeaders("")
				h["Host"] = "attacker.example"
				st, resp, err := f.post(ctx, f.a.MCPURL+"/messages", "application/json", strings.NewReader(body), int64(len(body)), h)
				if err != nil {
					return "", err
				}
				if st != http.StatusForbidden {
					return "", fmt.Errorf("%d %.200s", st, resp)
				}
				return "403", nil
			},
		},
		{
			name: "SQL-looking arguments", category: "mcp",
			action:  "search_messages and read_thread with quotes, OR 1=1, UNION SELECT, DROP TABLE, LIKE wildcards; shop /search and /p/ with the same",
			contain: "plain text to the services (bound parameters): empty results or tool errors, A's world unchanged",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return f.aUnchanged(ctx, func() (string, error) {
					cs, err := mcpConnect(ctx, f.a.MCPURL+"/messages")
					if err != nil {
						return "", err
					}
					defer cs.Close()
					inj := []string{`'; DROP TABLE messages; --`, `%' OR 1=1 --`, `" OR ""="`, `x' UNION SELECT name, sql FROM sqlite_master --`, `%`, `_`}
					for _, q := range inj {
						out, err := callTool(ctx, cs, "search_messages", map[string]any{"query": q})
						if err != nil {
							return "", fmt.Errorf("search %q: %w", q, err)
						}
						if strings.Contains(out, "CREATE TABLE") {
							return "", fmt.Errorf("search %q leaked the schema", q)
						}
						if _, err := callTool(ctx, cs, "read_thread", map[string]any{"thread": q}); err == nil {
							return "", fmt.Errorf("read_thread %q succeeded", q)
						}
						st, body, err := f.get(ctx, f.a.SiteURL("shop")+"/search?q="+url.QueryEscape(q), nil)
						if err != nil || st != 200 || strings.Contains(body, "CREATE TABLE") {
							return "", fmt.Errorf("shop search %q: %d %v", q, st, err)
						}
						if st, _, _ := f.get(ctx, f.a.SiteURL("shop")+"/p/"+url.PathEscape(q), nil); st != 404 {
							return "", fmt.Errorf("shop product %q: %d", q, st)
						}
					}
					return fmt.Sprintf("%d payloads x 4 entry points: no effect", len(inj)), nil
				})
			},
		},
	}
}

// openInBrowser opens url in a rollout browser session on A, as a policy
// would through agent.Env.Open, and returns the page text.
func openInBrowser(ctx context.Context, f *fixture, u string) (string, error) {
	sess, err := f.p.Env.Open(ctx, f.a, &agent.Trajectory{Version: agent.TrajectoryVersion})
	if err != nil {
		return "", err
	}
	defer sess.Close(ctx)
	if err := sess.Env.Open(ctx, u); err != nil {
		return "", err
	}
	return sess.Env.Read(ctx, "body")
}

func browserAttacks(f *fixture) []attack {
	_ = f
	return []attack{
		{
			name: "open B's shop in A's browser", category: "browser",
			action:  "from a rollout session on A, agent.Env.Open(B's shop SiteURL + \"/login\")",
			contain: "refused: the agent's browser reaches only its own instance",
			needs:   "chromium",
			try: func(ctx context.Context, f *fixture) (string, error) {
				txt, err := openInBrowser(ctx, f, f.b.SiteURL("shop")+"/login")
				if err == nil && txt != "" {
					return "", fmt.Errorf("A's browser loaded B's shop: %.60q", txt)
				}
				return fmt.Sprintf("refused: %v", err), nil
			},
		},
		{
			name: "read the verifier through file://", category: "browser",
			action:  "from a rollout session on A, agent.Env.Open(\"file://\" + the task's verifier scripts directory)",
			contain: "refused: no file:// URL is opened",
			needs:   "chromium",
			try: func(ctx context.Context, f *fixture) (string, error) {
				txt, err := openInBrowser(ctx, f, "file://"+f.p.VerifierDir+"/scripts/")
				if err == nil && txt != "" {
					return "", fmt.Errorf("A's browser listed the verifier: %.80q", txt)
				}
				return fmt.Sprintf("refused: %v", err), nil
			},
		},
	}
}
