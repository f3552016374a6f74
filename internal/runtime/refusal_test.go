package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// lockedBuffer is a log sink safe for the manager's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// anyHostPath matches an absolute path of more than one component.
var anyHostPath = regexp.MustCompile(`(^|[\s"'(=,])/[A-Za-z0-9._-]+/`)

// TestManagerRefusals: the control API refuses, with a clear message and
// changing nothing, an instance past the cap, a catalog snapshot as a
// world and a clock the shell cannot represent; its error bodies carry no
// host path (the log has them); instances are mounted nosuid,nodev.
func TestManagerRefusals(t *testing.T) {
	ctx := context.Background()
	var logs lockedBuffer
	p, m := caseStudyManager(t, runtime.ManagerOptions{MaxInstances: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	work := filepath.Join(p.Env.WorkDir, "managed")
	defer m.Close(ctx)
	const token = "s3cret"
	ctl := httptest.NewServer(m.ControlHandler(token))
	defer ctl.Close()
	agent := httptest.NewServer(m.AgentHandler())
	defer agent.Close()
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ctl.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	create := func() (int, string, runtime.Info) {
		t.Helper()
		code, b := call("POST", "/instances", `{"snapshot": "`+p.W0().String()+`"}`)
		var info runtime.Info
		json.Unmarshal([]byte(b), &info)
		return code, b, info
	}
	shell := func(info runtime.Info, cmd string) string {
		t.Helper()
		resp, err := http.Post(agent.URL+info.ShellPath, "application/json", strings.NewReader(`{"command": `+strconvQuote(cmd)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Stdout, Stderr string }
		json.NewDecoder(resp.Body).Decode(&out)
		return strings.TrimSpace(out.Stdout + out.Stderr)
	}

	t.Run("catalog snapshot", func(t *testing.T) {
		entries, err := p.Store.List()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(entries, func(e store.SnapshotEntry) bool { return e.Kind == store.KindCatalog })
		if i < 0 {
			t.Fatal("the case study stores no catalog snapshot")
		}
		code, b := call("POST", "/instances", `{"snapshot": "`+entries[i].ID.String()+`"}`)
		if code != http.StatusBadRequest || !strings.Contains(b, "field snapshot") || !strings.Contains(b, `\"catalog\"`) || !strings.Contains(b, "only \\\"world\\\" snapshots") {
			t.Fatalf("a catalog snapshot as a world: %d %s", code, b)
		}
		if n := len(m.List()); n != 0 {
			t.Errorf("%d instances after the refusal", n)
		}
		if des, _ := os.ReadDir(work); len(des) != 0 {
			t.Errorf("the refusal left %d entries in the work directory", len(des))
		}
	})

	var infos []runtime.Info
	t.Run("instance cap", func(t *testing.T) {
		for range 2 {
			code, b, info := create()
			if code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, b)
			}
			infos = append(infos, info)
		}
		code, b, _ := create()
		if code != http.StatusServiceUnavailable || !strings.Contains(b, "at most 2") || !strings.Contains(b, "--max-instances") {
			t.Fatalf("a third instance with MaxInstances 2: %d %s", code, b)
		}
		if n := len(m.List()); n != 2 {
			t.Fatalf("%d instances after the refusal, want 2", n)
		}
		if code, b := call("DELETE", "/instances/"+infos[1].ID, ""); code != http.StatusOK {
			t.Fatalf("destroy: %d %s", code, b)
		}
		code, b, info := create()
		if code != http.StatusCreated {
			t.Fatalf("create after a destroy: %d %s", code, b)
		}
		infos[1] = info
	})
	if len(infos) != 2 {
		t.Fatal("no instances to go on with")
	}

	t.Run("clock range", func(t *testing.T) {
		day := shell(infos[0], "date -u +%FT%TZ")
		for _, c := range []string{"9999-12-31T00:00:00Z", "2262-04-12T00:00:00Z", "2262-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z"} {
			code, b := call("POST", "/instances/"+infos[0].ID+"/clock", `{"clock": "`+c+`"}`)
			if code != http.StatusBadRequest || !strings.Contains(b, "field clock") || !strings.Contains(b, "1970-01-01T00:00:00Z") || !strings.Contains(b, "2262-01-01T00:00:00Z") {
				t.Errorf("step to %s: %d %s", c, code, b)
			}
		}
		if got := shell(infos[0], "date -u +%FT%TZ"); got != day {
			t.Errorf("after the refused steps the shell says %q, was %q", got, day)
		}
		if code, b := call("POST", "/instances/"+infos[0].ID+"/clock", `{"clock": "2261-12-31T00:00:00Z"}`); code != http.StatusOK {
			t.Fatalf("step to the end of the range: %d %s", code, b)
		}
		got := shell(infos[0], `date -u +%FT%TZ; python3 -c 'import datetime, time; print(datetime.datetime.fromtimestamp(time.time(), datetime.timezone.utc).date())'`)
		if !strings.HasPrefix(got, "2261-12-31T00:00:") || !strings.HasSuffix(got, "\n2261-12-31") {
			t.Errorf("at the end of the range the shell says %q", got)
		}
		call("POST", "/instances/"+infos[0].ID+"/reset", "")
	})

	t.Run("nosuid nodev", func(t *testing.T) {
		in, err := m.Instance(infos[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		mounts, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{in.Dir(), in.Dir() + ".rw"} {
			var opts string
			for line := range strings.Lines(string(mounts)) {
				if f := strings.Fields(line); len(f) > 5 && f[4] == dir {
					opts = f[5]
				}
			}
			o := strings.Split(opts, ",")
			if !slices.Contains(o, "nosuid") || !slices.Contains(o, "nodev") {
				t.Errorf("%s is mounted %q, want nosuid and nodev", dir, opts)
			}
		}
	})

	t.Run("no host paths in error bodies", func(t *testing.T) {
		in, err := m.Instance(infos[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		// What no agent can do (the manifest is outside home) but a broken
		// instance may show: snapshot and diff fail on the missing file.
		if err := os.Remove(filepath.Join(in.Dir(), world.ManifestFile)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(in.Dir(), world.HomeDir, "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mp := range [][2]string{{"POST", "/instances/" + infos[0].ID + "/snapshot"}, {"GET", "/instances/" + infos[0].ID + "/diff"}} {
			code, b := call(mp[0], mp[1], "")
			if code != http.StatusInternalServerError {
				t.Errorf("%s %s of a broken instance: %d %s", mp[0], mp[1], code, b)
				continue
			}
			var body struct{ Error string }
			if err := json.Unmarshal([]byte(b), &body); err != nil || body.Error == "" {
				t.Errorf("%s %s: body %s", mp[0], mp[1], b)
			}
			if strings.Contains(b, work) || strings.Contains(b, p.Env.WorkDir) || strings.Contains(b, os.TempDir()+"/") || anyHostPath.MatchString(body.Error) {
				t.Errorf("%s %s: the error body names a host path: %s", mp[0], mp[1], b)
			}
			t.Logf("%s %s: %s", mp[0], mp[1], body.Error)
		}
		// The log has the whole error (state may already word it
		// world-relative; TestClientMessageHasNoHostPaths covers the rest).
		for _, want := range []string{"path=/instances/" + infos[0].ID + "/snapshot status=500 error=", "path=/instances/" + infos[0].ID + "/diff status=500 error=", world.ManifestFile} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("the server's log lacks %q:\n%s", want, logs.String())
			}
		}
		if code, b := call("POST", "/instances/"+infos[0].ID+"/reset", ""); code != http.StatusOK {
			t.Fatalf("reset: %d %s", code, b)
		}
		if code, b := call("GET", "/instances/"+infos[0].ID+"/diff", ""); code != http.StatusOK {
			t.Fatalf("diff after the reset: %d %s", code, b)
		}
	})
}
