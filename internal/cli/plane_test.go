package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlaneRefusesBeyondLoopbackWithoutToken: rl serve and openenv serve
// asked to listen on 0.0.0.0 without --token-file refuse to start, naming
// the flag, before they open anything.
func TestPlaneRefusesBeyondLoopbackWithoutToken(t *testing.T) {
	for _, cmd := range [][]string{{"rl", "serve"}, {"openenv", "serve"}} {
		var stdout, stderr bytes.Buffer
		args := append(cmd, "--dir", filepath.Join(t.TempDir(), "none"), "--addr", "0.0.0.0:0")
		err := Run(context.Background(), args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "--token-file") || !strings.Contains(err.Error(), "beyond loopback") {
			t.Errorf("%s --addr 0.0.0.0:0: %v, want a refusal naming --token-file", strings.Join(cmd, " "), err)
		}
		if stdout.Len() > 0 {
			t.Errorf("%s printed %q", strings.Join(cmd, " "), stdout.String())
		}
	}
}

// TestPlanePrintsBoundAddress: bound on 0.0.0.0:0 with a token, a control
// plane prints the address it really bound (the port the system chose,
// the unspecified host, not 127.0.0.1), says it listens beyond loopback,
// and wants the token the file holds, written fresh there.
func TestPlanePrintsBoundAddress(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	e := &env{stdout: pw, stderr: &stderr}
	pf := &planeFlags{addr: "0.0.0.0:0", tokenFile: tokenFile, maxConns: 8, bodyTimeout: time.Second}
	pl, err := e.listenPlane(pf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	go func() { done <- e.servePlane(ctx, pl, h, "a test", nil) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !(strings.HasPrefix(url, "http://0.0.0.0:") || strings.HasPrefix(url, "http://[::]:")) || strings.HasSuffix(url, ":0") {
		t.Fatalf("printed %q: want the unspecified host and the real port", url)
	}
	port := url[strings.LastIndex(url, ":")+1:]
	b, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(b))
	wantByToken(t, http.DefaultClient, "http://127.0.0.1:"+port+"/v1/state", map[string]int{"": 401, "nope": 401, token: 200})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "BEYOND LOOPBACK") || !strings.Contains(stderr.String(), "wrote a fresh bearer token to "+tokenFile) {
		t.Fatalf("stderr does not say the bind is beyond loopback and where the token is:\n%s", stderr.String())
	}
}

// TestOpenEnvRefusesDuplicatedPoolTask: openenv serve refuses a pool that
// lists a task twice, naming it, with the same rule as rl serve's
// (pool.LoadPool).
func TestOpenEnvRefusesDuplicatedPoolTask(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pool"), 0o755)
	idx := `{"version": 1, "tasks_dir": "../tasks", "tasks": [{"id": "t-1", "dir": "t-1", "split": "rl"}, {"id": "t-1", "dir": "t-1", "split": "rl"}]}`
	if err := os.WriteFile(filepath.Join(dir, "pool", "pool.json"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"openenv", "serve", "--dir", dir, "--addr", "127.0.0.1:0", "--fake-browser"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "task t-1 is listed twice") {
		t.Fatalf("openenv serve on a pool listing t-1 twice: %v, want it named", err)
	}
}

// wantByToken GETs url through client once per bearer token ("" sends
// no Authorization header) and checks the status each gets.
func wantByToken(t *testing.T, client *http.Client, url string, want map[string]int) {
	t.Helper()
	for token, code := range want {
		req, _ := http.NewRequest("GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("token %q: %d, want %d", token, resp.StatusCode, code)
		}
	}
}
