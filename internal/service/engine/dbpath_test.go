package engine_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestDBPathOutsideAWorld serves a database file that is not in a world's
// db/ directory (Options.DBPath), and refuses it without a world when the
// definition reads another database.
func TestDBPathOutsideAWorld(t *testing.T) {
	// The shelf without its read of the library (and the tool that reads it).
	src := strings.Replace(shelf, "reads: [library]\n", "", 1)
	src = src[:strings.Index(src, "  - name: loans")] + src[strings.Index(src, "resources:"):]
	c := compileShelf(t, src)
	clock := world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "lone.sqlite")
	state.ExecTest(t, path, append(c.Def.Schema(), c.Def.Test.SQL...)...)
	svc, err := engine.New(c, engine.Options{DBPath: path, Clock: clock, Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, svc)
	servicetest.ResultText(mustCall(t, cs, "mark_read", map[string]any{"isbn": "978-1"}))
	if got := servicetest.ResultText(mustCall(t, cs, "list_books", nil)); got != `{"books":[{"isbn":"978-1","read":true},{"isbn":"978-2","read":true}]}` {
		t.Errorf("list_books = %s", got)
	}

	reads := compileShelf(t, shelf)
	if _, err := engine.New(reads, engine.Options{DBPath: path, Clock: clock, Self: "Alex"}); err == nil || !strings.Contains(err.Error(), "WorldDir is required: the service reads library") {
		t.Errorf("New with reads and no world = %v", err)
	}
}
