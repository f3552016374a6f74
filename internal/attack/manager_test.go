package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
)

// controlToken is the bearer token of the test's control API.
const controlToken = "attack-suite-control-token-0123456789abcdef"

// managed is a runtime.Manager serving two instances on one agent listener
// (as `wildawm serve` does) and its control API on a unix socket.
type managed struct {
	m                *runtime.Manager
	att, vic         runtime.Info // the attacker's and the victim's instance
	victim           *runtime.Instance
	agentURL         string
	controlSock      string
	agentSrv, ctlSrv *httptest.Server
}

func startManaged(ctx context.Context, t *testing.T, f *fixture) *managed {
	t.Helper()
	p := f.p
	// The managed instances' shells are sandboxed from a sandbox.Host (as
	// the RL service's are); the fixture's other instances from the
	// process's namespace: the attacks run against both.
	var host *sandbox.Host
	if os.Geteuid() == 0 {
		h, err := sandbox.NewHost(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		host = h
	}
	mg := &managed{m: runtime.NewManager(runtime.ManagerOptions{Store: p.Store, Materializer: p.Env.Materializer,
		CatalogDir: p.Env.CatalogDir, WorkDir: filepath.Join(f.runDir, "managed"), Self: p.Env.Self, SandboxHost: host})}
	t.Cleanup(func() { mg.m.Close(context.Background()) })
	var err error
	if mg.att, err = mg.m.Create(ctx, p.W0()); err != nil {
		t.Fatal(err)
	}
	if mg.vic, err = mg.m.Create(ctx, p.W0()); err != nil {
		t.Fatal(err)
	}
	if mg.victim, err = mg.m.Instance(mg.vic.ID); err != nil {
		t.Fatal(err)
	}
	mg.agentSrv = httptest.NewServer(mg.m.AgentHandler())
	t.Cleanup(mg.agentSrv.Close)
	mg.agentURL = mg.agentSrv.URL
	mg.controlSock = filepath.Join(f.runDir, "control.sock")
	ln, err := net.Listen("unix", mg.controlSock)
	if err != nil {
		t.Fatal(err)
	}
	mg.ctlSrv = httptest.NewUnstartedServer(mg.m.ControlHandler(controlToken))
	mg.ctlSrv.Listener = ln
	mg.ctlSrv.Start()
	t.Cleanup(mg.ctlSrv.Close)
	return mg
}

// agentShell runs command through the agent listener's shell endpoint of
// instance path (e.g. /i/i1/shell); it returns the status and body.
func (f *fixture) agentShell(ctx context.Context, path, command string) (int, string, error) {
	b, _ := json.Marshal(map[string]string{"command": command})
	return f.post(ctx, f.mg.agentURL+path, "application/json", strings.NewReader(string(b)), int64(len(b)), nil)
}

// control sends a request to the control API over its unix socket.
func (f *fixture) control(ctx context.Context, method, path, auth string) (int, string, error) {
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", f.mg.controlSock)
	}}}
	req, err := http.NewRequestWithContext(ctx, method, "http://control"+path, strings.NewReader(`{}`))
	if err != nil {
		return 0, "", err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	fmt.Fprint(&b, resp.Header.Get("Content-Type"))
	return resp.StatusCode, b.String(), nil
}

// controlBody sends a request to the control API with the right token and
// returns the status and body.
func (f *fixture) controlBody(ctx context.Context, method, path string) (int, string, error) {
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", f.mg.controlSock)
	}}}
	req, err := http.NewRequestWithContext(ctx, method, "http://control"+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+controlToken)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, string(b), err
}

// absPath matches an absolute host path of two or more components.
var absPath = regexp.MustCompile(`(^|[\s"'(=,])/[A-Za-z0-9._-]+/`)

func managerAttacks(f *fixture) []attack {
	_ = f
	return []attack{
		{
			name: "another instance through the agent listener", category: "control",
			action:  "as the agent of instance i1 on the shared agent listener, address i2 by what an agent can know or guess (its control id i2, a forged token, i1's token with a flipped digit): POST /i/X/shell, GET / with Host shop.X.localhost, list_threads on /i/X/mcp/messages",
			contain: "refused: instances are addressed by 128-bit tokens only the control API hands out",
			try: func(ctx context.Context, f *fixture) (string, error) {
				var reached []string
				own := f.mg.att.Token
				flipped := own[:len(own)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", own[len(own)-1])+1)%16])
				for _, x := range []string{f.mg.vic.ID, "00000000000000000000000000000000", flipped} {
					st, body, err := f.agentShell(ctx, "/i/"+x+"/shell", "id -u")
					if err != nil {
						return "", err
					}
					if st == http.StatusOK && strings.Contains(body, `"stdout"`) {
						reached = append(reached, "shell via "+x+" ("+strings.TrimSpace(body)+")")
					}
					req, _ := http.NewRequestWithContext(ctx, "GET", f.mg.agentURL+"/", nil)
					req.Host = "shop." + x + ".localhost"
					if st, _, err := f.do(req); err == nil && st == http.StatusOK {
						reached = append(reached, "shop via "+x)
					}
					if _, err := listThreads(ctx, f.mg.agentURL+"/i/"+x+"/mcp/messages"); err == nil {
						reached = append(reached, "mcp via "+x)
					}
				}
				if len(reached) > 0 {
					return "", fmt.Errorf("i1's agent reached i2's %s", strings.Join(reached, ", "))
				}
				return "refused", nil
			},
		},
		{
			name: "control API on the agent listener", category: "control",
			action:  "GET /health, /instances; POST /instances, /instances/i2/reset; DELETE /instances/i2 on the agent listener, with and without the bearer token",
			contain: "404: the agent listener never serves the control API",
			try: func(ctx context.Context, f *fixture) (string, error) {
				n := 0
				for _, mp := range [][2]string{{"GET", "/health"}, {"GET", "/instances"}, {"POST", "/instances"}, {"POST", "/instances/" + f.mg.vic.ID + "/reset"},
					{"DELETE", "/instances/" + f.mg.vic.ID}, {"POST", "/i/" + f.mg.vic.ID + "/reset"}, {"GET", "/i/" + f.mg.vic.ID + "/diff"}} {
					for _, auth := range []string{"", "Bearer " + controlToken} {
						req, _ := http.NewRequestWithContext(ctx, mp[0], f.mg.agentURL+mp[1], strings.NewReader(`{}`))
						if auth != "" {
							req.Header.Set("Authorization", auth)
						}
						st, _, err := f.do(req)
						if err != nil {
							return "", err
						}
						if st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
							return "", fmt.Errorf("%s %s: %d", mp[0], mp[1], st)
						}
						n++
					}
				}
				if _, err := f.mg.m.Instance(f.mg.vic.ID); err != nil {
					return "", fmt.Errorf("the victim instance is gone: %w", err)
				}
				return fmt.Sprintf("%d requests: 404/405", n), nil
			},
		},
		{
			name: "control API without the token", category: "control",
			action:  "on the control socket: reset and delete i2, list instances, with no, an empty, a wrong, a lower-cased and a prefix of the bearer token",
			contain: "401 for each; nothing reset or deleted",
			try: func(ctx context.Context, f *fixture) (string, error) {
				n := 0
				for _, auth := range []string{"", "Bearer ", "Bearer wrong", "bearer " + controlToken, "Bearer " + controlToken[:10], controlToken} {
					for _, mp := range [][2]string{{"POST", "/instances/" + f.mg.vic.ID + "/reset"}, {"DELETE", "/instances/" + f.mg.vic.ID}, {"GET", "/instances"}} {
						st, _, err := f.control(ctx, mp[0], mp[1], auth)
						if err != nil {
							return "", err
						}
						if st != http.StatusUnauthorized {
							return "", fmt.Errorf("%s %s with %q: %d", mp[0], mp[1], auth, st)
						}
						n++
					}
				}
				if _, err := f.mg.m.Instance(f.mg.vic.ID); err != nil {
					return "", fmt.Errorf("the victim instance is gone: %w", err)
				}
				if st, _, err := f.control(ctx, "GET", "/health", "Bearer "+controlToken); err != nil || st != 200 {
					return "", fmt.Errorf("the right token is refused: %d %v", st, err)
				}
				return fmt.Sprintf("%d requests: 401", n), nil
			},
		},
		{
			name: "listeners from the managed shell", category: "control",
			action:  "from i1's shell (run through the agent listener): connect to the agent listener's port, test for the control socket and token file paths",
			contain: "no network, the run directory does not exist inside the sandbox",
			try: func(ctx context.Context, f *fixture) (string, error) {
				h, port := hostPort(f.mg.agentURL)
				cmd := fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("%s", %s), timeout=3); print("CONNECTED")' 2>/dev/null; test -e %q && echo SOCKET; test -e %q && echo RUNDIR; true`, h, port, f.mg.controlSock, f.runDir)
				st, body, err := f.agentShell(ctx, f.mg.att.ShellPath, cmd)
				if err != nil {
					return "", err
				}
				var res struct {
					Stdout   string `json:"stdout"`
					ExitCode int    `json:"exit_code"`
				}
				if st != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil {
					return "", fmt.Errorf("the attacker's own shell: %d %s", st, body)
				}
				if res.Stdout != "" {
					return "", fmt.Errorf("%s", res.Stdout)
				}
				return "no connection, no control socket, no run directory", nil
			},
		},
		{
			name: "host paths through the control API's errors", category: "control",
			action:  "from i1's shell (through the agent listener): a FIFO and 3,000 nested directories in the home; then the orchestrator diffs i1 over the control socket and reads the answer, as it might relay it to an agent",
			contain: "whatever the diff answers, its body names no host path (neither the run directory nor any other absolute path); a reset through the control API leaves i1 clean",
			try: func(ctx context.Context, f *fixture) (string, error) {
				st, body, err := f.agentShell(ctx, f.mg.att.ShellPath, `mkfifo pipe && python3 -c '
import os
for _ in range(3000):
    os.mkdir("d"); os.chdir("d")
' && echo made`)
				if err != nil {
					return "", err
				}
				if st != http.StatusOK || !strings.Contains(body, `made\n`) {
					return "", fmt.Errorf("the attacker's own shell: %d %s", st, body)
				}
				st, body, err = f.controlBody(ctx, "GET", "/instances/"+f.mg.att.ID+"/diff")
				if err != nil {
					return "", err
				}
				obs := fmt.Sprintf("diff: %d, %d bytes", st, len(body))
				if st != http.StatusOK {
					obs = fmt.Sprintf("diff: %d %.120s", st, body)
				}
				if strings.Contains(body, f.runDir) || strings.Contains(body, os.TempDir()+"/") || absPath.MatchString(body) {
					return obs, fmt.Errorf("the diff's answer names a host path: %.300s", body)
				}
				if st, body, err := f.controlBody(ctx, "POST", "/instances/"+f.mg.att.ID+"/reset"); err != nil || st != http.StatusOK {
					return obs, fmt.Errorf("reset i1: %d %s %v", st, body, err)
				}
				if _, body, err := f.agentShell(ctx, f.mg.att.ShellPath, "ls -A pipe d 2>/dev/null; echo end"); err != nil || !strings.Contains(body, `"end\n"`) {
					return obs, fmt.Errorf("i1 after the reset: %s %v", body, err)
				}
				return obs + "; no host path; i1 reset clean", nil
			},
		},
		{
			name: "confused routing on the agent listener", category: "control",
			action:  "shell requests at /i/i1/../i2/shell, /i/i1%2f..%2fi2/shell, //i/i2/shell, /i/I2/shell, /i/i2x/shell, /i/i1/shell/../../i2/shell; Host shop.i2.localhost.attacker.example",
			contain: "none reaches a shell (404/400); the Host variant is not routed to i2's shop",
			try: func(ctx context.Context, f *fixture) (string, error) {
				paths := []string{"/i/i1/../i2/shell", "/i/i1%2f..%2fi2/shell", "//i/i2/shell", "/i/I2/shell", "/i/i2x/shell", "/i/i1/shell/../../i2/shell"}
				for _, p := range paths {
					st, body, err := f.agentShell(ctx, p, "echo reached")
					if err != nil {
						return "", err
					}
					if strings.Contains(body, "reached") {
						return "", fmt.Errorf("%s reached a shell: %d", p, st)
					}
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", f.mg.agentURL+"/", nil)
				req.Host = f.mg.vic.SiteHosts["shop"] + ".attacker.example"
				if st, _, err := f.do(req); err != nil || st != http.StatusNotFound {
					return "", fmt.Errorf("Host %s: %d %v", req.Host, st, err)
				}
				return fmt.Sprintf("%d paths + 1 host: 404", len(paths)), nil
			},
		},
		{
			name: "oversized and malformed shell requests", category: "control",
			action:  "POST a 1 MiB command, a non-JSON body, unknown fields and GET to the attacker's own /i/i1/shell",
			contain: "4xx, nothing run",
			try: func(ctx context.Context, f *fixture) (string, error) {
				big := `{"command":"echo ` + strings.Repeat("x", 1<<20) + `"}`
				for _, b := range []string{big, "not json", `{"command":"echo x","uid":0}`, `{"command":""}`} {
					st, body, err := f.post(ctx, f.mg.agentURL+f.mg.att.ShellPath, "application/json", strings.NewReader(b), int64(len(b)), nil)
					if err != nil {
						return "", err
					}
					if st < 400 || st >= 500 || strings.Contains(body, `"stdout"`) {
						return "", fmt.Errorf("%.30q: %d", b, st)
					}
				}
				if st, _, err := f.get(ctx, f.mg.agentURL+f.mg.att.ShellPath, nil); err != nil || st != http.StatusMethodNotAllowed {
					return "", fmt.Errorf("GET shell: %d %v", st, err)
				}
				return "5 requests: 4xx", nil
			},
		},
	}
}
