package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/synth"
)

// TestManagerLifecycle: create, serve, reset, snapshot, diff, destroy,
// idle reclaim and shutdown, through the control API and the agent listener.
func TestManagerLifecycle(t *testing.T) {
	ctx := context.Background()
	p, m := caseStudyManager(t, runtime.ManagerOptions{IdleTimeout: time.Hour})
	work := filepath.Join(p.Env.WorkDir, "managed")
	agent := httptest.NewServer(m.AgentHandler())
	defer agent.Close()
	const token = "s3cret"
	ctl := httptest.NewServer(m.ControlHandler(token))
	defer ctl.Close()

	call := func(method, path, body string, auth bool) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, ctl.URL+path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, _ := call("GET", "/instances", "", false); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, b := call("POST", "/instances", `{"snapshot": "nope"}`, true); code != http.StatusBadRequest || !strings.Contains(string(b), "snapshot") {
		t.Fatalf("bad snapshot: %d %s", code, b)
	}
	var infos []runtime.Info
	for range 3 {
		code, b := call("POST", "/instances", `{"snapshot": "`+p.W0().String()+`"}`, true)
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, b)
		}
		var info runtime.Info
		json.Unmarshal(b, &info)
		infos = append(infos, info)
	}
	shell := func(info runtime.Info, cmd string) string {
		t.Helper()
		resp, err := http.Post(agent.URL+info.ShellPath, "application/json", strings.NewReader(`{"command": `+strconvQuote(cmd)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Stdout string }
		json.NewDecoder(resp.Body).Decode(&out)
		return out.Stdout
	}
	// The shop answers on each instance's own host; an unknown token does
	// not, nor the token without a site's name.
	shopHost := infos[0].SiteHosts["shop"]
	for _, host := range []string{shopHost, "shop." + strings.Repeat("0", 32) + ".localhost", infos[0].Token + ".localhost"} {
		req, _ := http.NewRequest("GET", agent.URL+"/login", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 200, false: 404}[host == shopHost]; resp.StatusCode != want {
			t.Errorf("GET /login on %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	// A write shows in the diff; reset removes it; instances are separate.
	shell(infos[0], "echo hello > new.txt")
	if got := shell(infos[1], "ls new.txt 2>&1"); !strings.Contains(got, "No such file") {
		t.Errorf("instance 2 sees instance 1's file: %q", got)
	}
	code, b := call("GET", "/instances/"+infos[0].ID+"/diff", "", true)
	if code != 200 || !strings.Contains(string(b), `"new.txt"`) {
		t.Fatalf("diff: %d %s", code, b)
	}
	code, b = call("POST", "/instances/"+infos[0].ID+"/snapshot", "", true)
	var snap struct{ Snapshot string }
	json.Unmarshal(b, &snap)
	if code != 200 || len(snap.Snapshot) != 64 {
		t.Fatalf("snapshot: %d %s", code, b)
	}
	if code, _ := call("POST", "/instances/"+infos[0].ID+"/reset", "", true); code != 200 {
		t.Fatalf("reset: %d", code)
	}
	if _, b := call("GET", "/instances/"+infos[0].ID+"/diff", "", true); strings.Contains(string(b), "new.txt") {
		t.Fatalf("reset left the file: %s", b)
	}
	// MCP writes land in the live world across resets: the services hold
	// their connections open (here, opened on the files of the generation
	// before each reset), and a write must not go to the old files (a
	// detached overlay the diff would not see). dbtool's tests cover the
	// suspension that guarantees it where inode numbers repeat.
	tool := func(info runtime.Info, name string, args map[string]any) {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: agent.URL + info.MCPPath + "/messages"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	send := func(info runtime.Info, body string) {
		t.Helper()
		tool(info, "send_message", map[string]any{"thread": synth.ThreadMaya, "body": body})
	}
	messagesChanged := func(info runtime.Info) bool {
		t.Helper()
		code, b := call("GET", "/instances/"+info.ID+"/diff", "", true)
		if code != 200 {
			t.Fatalf("diff: %d %s", code, b)
		}
		var d struct {
			Tables []struct{ DB, Table string }
		}
		json.Unmarshal(b, &d)
		for _, tb := range d.Tables {
			if tb.DB == "messages" && tb.Table == "messages" {
				return true
			}
		}
		return false
	}
	for round := range 2 {
		// A read opens the connection on the files of this generation.
		tool(infos[0], "list_threads", map[string]any{})
		if code, _ := call("POST", "/instances/"+infos[0].ID+"/reset", "", true); code != 200 {
			t.Fatalf("reset: %d", code)
		}
		send(infos[0], fmt.Sprintf("before reset %d", round))
		if !messagesChanged(infos[0]) {
			t.Fatalf("round %d: the diff does not show the message sent over MCP", round)
		}
		if code, _ := call("POST", "/instances/"+infos[0].ID+"/reset", "", true); code != 200 {
			t.Fatalf("reset: %d", code)
		}
		if messagesChanged(infos[0]) {
			t.Fatalf("round %d: the reset left the message sent over MCP", round)
		}
	}
	if code, _ := call("DELETE", "/instances/"+infos[2].ID, "", true); code != 200 {
		t.Fatalf("destroy: %d", code)
	}
	if code, _ := call("POST", "/instances/"+infos[2].ID+"/reset", "", true); code != http.StatusNotFound {
		t.Fatalf("reset of a destroyed instance: %d", code)
	}
	if got := len(m.List()); got != 2 {
		t.Fatalf("%d instances, want 2", got)
	}
	// The clock: frozen at the world's day, stepped forward by the control
	// API, never backward, and back to the world's day on reset.
	day := strings.TrimSpace(shell(infos[0], "date -u +%FT%TZ"))
	if day != infos[0].Clock.Format(time.RFC3339) {
		t.Fatalf("shell date %q, instance clock %s", day, infos[0].Clock)
	}
	if code, b := call("POST", "/instances/"+infos[0].ID+"/clock", `{"clock": "2026-03-09T08:30:00Z"}`, true); code != 200 {
		t.Fatalf("step clock: %d %s", code, b)
	}
	if got := strings.TrimSpace(shell(infos[0], "date -u +%FT%TZ")); got != "2026-03-09T08:30:00Z" {
		t.Errorf("after the step the shell says %q", got)
	}
	if code, _ := call("POST", "/instances/"+infos[0].ID+"/clock", `{"clock": "2026-03-01T00:00:00Z"}`, true); code != http.StatusConflict {
		t.Errorf("a step backwards: %d, want 409", code)
	}
	call("POST", "/instances/"+infos[0].ID+"/reset", "", true)
	if got := strings.TrimSpace(shell(infos[0], "date -u +%FT%TZ")); got != day {
		t.Errorf("after reset the shell says %q, want %q", got, day)
	}
	// Idle instances are reclaimed; a fresh one is not.
	if n := m.ReclaimIdle(time.Now()); n != 0 {
		t.Fatalf("reclaimed %d fresh instances", n)
	}
	if n := m.ReclaimIdle(time.Now().Add(2 * time.Hour)); n != 2 || len(m.List()) != 0 {
		t.Fatalf("reclaimed %d idle instances, %d left", n, len(m.List()))
	}
	call("POST", "/instances", `{"snapshot": "`+p.W0().String()+`"}`, true)
	// Shutdown tears every instance down: nothing stays mounted.
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), work) {
		t.Fatalf("mounts left after Close:\n%s", mounts)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
