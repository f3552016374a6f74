package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/world"
)

// TestClientMessageHasNoHostPaths: paths in an instance's world and in a
// snapshot's lower read world-relative, every other absolute path is
// hidden, and a long message is cut.
func TestClientMessageHasNoHostPaths(t *testing.T) {
	const work, cache = "/srv/run/instances", "/srv/run/cache"
	snap := world.Hash([]byte("w0")).String()
	m := &Manager{opts: ManagerOptions{WorkDir: work, Materializer: &reset.Materializer{CacheDir: cache}}, log: slog.New(slog.DiscardHandler),
		insts: map[string]*managed{"i1": {id: "i1", inst: &Instance{inst: &fakeInstance{dir: work + "/i1"}}}}}
	for _, c := range []struct{ err, want string }{
		{"snapshot " + work + "/i1: open " + work + "/i1/home/fifo: unsupported file type", "snapshot .: open home/fifo: unsupported file type"},
		{`lstat "` + work + `/i1/home/a b": no such file`, `lstat "home/a b": no such file`},
		{`stat "` + work + `/i2/x y": no such file`, `stat "<host path>": no such file`},
		{"compare " + cache + "/" + snap + "/db/shop.sqlite and " + work + "/i1/db/shop.sqlite: boom", "compare db/shop.sqlite and db/shop.sqlite: boom"},
		{"mount " + work + "/i1.rw (lower=" + cache + "/" + snap + "): EPERM", "mount <host path> (lower=.): EPERM"},
		{"open " + work + "/i2/home/x: denied; see /etc/passwd,/root", "open <host path>: denied; see <host path>,<host path>"},
		{"checkout into " + cache + "/.tmp-123/home: full", "checkout into <host path>: full"},
		{"no path here: 3 of 4", "no path here: 3 of 4"},
	} {
		got := m.clientMessage("i1", errors.New(c.err))
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.err, got, c.want)
		}
	}
	deep := work + "/i1/home/" + strings.Repeat("d/", 3000)
	got := m.clientMessage("i1", fmt.Errorf("snapshot: %s: too deep", deep))
	if len(got) > maxErrorBody+100 || strings.Contains(got, work) || !strings.HasPrefix(got, "snapshot: home/d/d/") {
		t.Errorf("a deep path: %d bytes: %.200s", len(got), got)
	}
	// Without an instance (a create), its directory is a host path too.
	if got := m.clientMessage("", errors.New("start instance: mkdir "+work+"/i7: exists")); got != "start instance: mkdir <host path>: exists" {
		t.Errorf("create: %s", got)
	}
}

// TestCheckClock: the clock takes 1970 to before 2262, nothing else.
func TestCheckClock(t *testing.T) {
	for _, c := range []struct {
		t  time.Time
		ok bool
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2026, 3, 9, 8, 30, 0, 0, time.UTC), true},
		{time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC), true},
		{time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC), false},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		err := checkClock(c.t)
		if (err == nil) != c.ok || (err != nil && (!errors.Is(err, ErrClockRange) || !strings.Contains(err.Error(), "2262-01-01T00:00:00Z"))) {
			t.Errorf("%s: %v", c.t.Format(time.RFC3339Nano), err)
		}
		if c.ok {
			var clk Clock
			clk.set(c.t)
			if !clk.Now().Equal(c.t) {
				t.Errorf("the clock set to %s reads %s", c.t, clk.Now())
			}
		}
	}
}
