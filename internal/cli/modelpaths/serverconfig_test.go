package modelpaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestServerWithoutToolCallingStopsTheStage: a model server not started
// to call tools (vLLM without --enable-auto-tool-choice) refuses every
// request alike; gating stops at its first refusal with an error naming
// the stage's flag and the server's, instead of recording an
// infrastructure failure per rollout, and writes no outcome.
func TestServerWithoutToolCallingStopsTheStage(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	for _, c := range []struct {
		flag   string
		engine model.Engine
		want   string
	}{
		{"--ensemble-model", model.EngineVLLM, "--enable-auto-tool-choice"},
		{"--judge-model", model.EngineLlamaCpp, "--jinja"},
	} {
		srv := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "done"} })
		srv.SetEngine(c.engine)
		srv.SetToolCalling(false)
		dir := f.TaskDirs["model-pick"]
		os.Remove(filepath.Join(dir, pool.OutcomeFile))
		start := time.Now()
		_, stderr, err := run(t, t.TempDir(), "gate", "--dir", f.Dir, "--task", dir, "--fake-browser", "--max-revisions", "0",
			c.flag, srv.Spec().String())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "for "+c.flag) {
			t.Fatalf("%s on a server without tool calling: %v\n%s", c.flag, err, stderr)
		}
		if _, lerr := pool.LoadOutcome(dir); lerr == nil {
			t.Errorf("%s: an outcome was written for a stage that could not run", c.flag)
		}
		t.Logf("%s stopped after %v and %d requests", c.flag, time.Since(start).Round(time.Millisecond), len(srv.Chats()))
	}
}
