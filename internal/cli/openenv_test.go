package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wildawm/wildawm/internal/openenv"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestOpenEnvServe runs wildawm openenv serve on a real pool: /metadata
// counts the split, a WebSocket reset starts an instance under
// DIR/openenv-work, and interrupting the command tears it down.
func TestOpenEnvServe(t *testing.T) {
	f := pooltest.New(t, []string{"wishlist-balance"})
	defer f.Close()
	f.WritePool(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"openenv", "serve", "--dir", f.Dir, "--fake-browser", "--addr", "127.0.0.1:0", "--max-sessions", "2"}, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL line: %v (stderr: %s; exit: %v)", err, stderr.String(), <-done)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(line)
	resp, err := http.Get(url + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	var m openenv.Metadata
	json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if m.Split != "rl" || m.Tasks != 1 || m.MaxSessions != 2 {
		t.Errorf("/metadata: %+v", m)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	if err := c.Write(dctx, websocket.MessageText, []byte(`{"type": "reset", "data": {}}`)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(dctx)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Type string
		Data openenv.Result
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Type != openenv.TypeObservation || r.Data.Observation.Task == nil || r.Data.Observation.Task.ID != f.Tasks["wishlist-balance"].ID {
		t.Fatalf("reset: %.400s", b)
	}
	instances, _ := filepath.Glob(filepath.Join(f.Dir, "openenv-work", "*", "*", "instances", "openenv-*"))
	if len(instances) == 0 {
		t.Fatal("no instance under DIR/openenv-work/ROOT/PERSONA/instances after a reset")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v (stderr: %s)", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not stop")
	}
	for _, dir := range instances {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is still there after serve stopped", dir)
		}
	}
}
