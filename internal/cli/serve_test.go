package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// syncBuffer is a bytes.Buffer safe to write from a command's goroutine
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeRefusesBadLimits: a cap below 1 is refused before anything is
// opened or served, naming the flag.
func TestServeRefusesBadLimits(t *testing.T) {
	st := filepath.Join(t.TempDir(), "store")
	for _, c := range [][]string{{"--max-instances", "0"}, {"--max-instances", "-3"}, {"--instance-inodes", "0"}} {
		_, _, err := run(t, st, append([]string{"serve", "--listen", "127.0.0.1:0"}, c...)...)
		if err == nil || !strings.Contains(err.Error(), c[0]) || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("serve %s: %v", strings.Join(c, " "), err)
		}
	}
}

// TestServeKeepsItsTokenFile: serve reads the token of an existing
// --token-file, as rl serve and openenv serve do, instead of overwriting
// it: an orchestrator's token survives a restart. The control listener
// wants that token; a fresh file is written when there is none.
func TestServeKeepsItsTokenFile(t *testing.T) {
	tmp := t.TempDir()
	catalogDir := filepath.Join(tmp, "catalog")
	if err := os.MkdirAll(catalogDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(catalogDir, world.ManifestFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, filepath.Join(tmp, "store"), "store", "init")
	for _, existing := range []string{"kept-orchestrator-token-0123", ""} {
		tokenFile := filepath.Join(tmp, "token-"+strconv.Itoa(len(existing)))
		if existing != "" {
			if err := os.WriteFile(tokenFile, []byte(existing+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		sock := filepath.Join(tmp, "c"+strconv.Itoa(len(existing))+".sock")
		ctx, cancel := context.WithCancel(context.Background())
		var stderr syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, []string{"--store", filepath.Join(tmp, "store"), "serve", "--listen", "127.0.0.1:0", "--catalog", catalogDir,
				"--run-dir", filepath.Join(tmp, "run"), "--control", "unix:" + sock, "--token-file", tokenFile, "--unsafe-shell"}, io.Discard, &stderr)
		}()
		client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
		var token string
		for i := 0; ; i++ {
			if b, err := os.ReadFile(tokenFile); err == nil && strings.Contains(stderr.String(), "control: ") {
				token = strings.TrimSpace(string(b))
				break
			}
			select {
			case err := <-done:
				t.Fatalf("serve ended before it served: %v\n%s", err, stderr.String())
			case <-time.After(25 * time.Millisecond):
			}
			if i == 400 {
				cancel()
				t.Fatalf("serve never started: %v\n%s", <-done, stderr.String())
			}
		}
		if existing != "" && token != existing {
			t.Errorf("serve replaced the token file's %q with %q", existing, token)
		}
		if existing == "" && (len(token) < 32 || !strings.Contains(stderr.String(), "wrote a fresh bearer token to "+tokenFile)) {
			t.Errorf("no fresh token written (%q), or not said:\n%s", token, stderr.String())
		}
		wantByToken(t, client, "http://control/instances", map[string]int{"wrong": http.StatusUnauthorized, token: http.StatusOK})
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
