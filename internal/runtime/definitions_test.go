package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// tally is a service with no Go code: named counters.
const tally = `wildawm_service: 1
name: tally
title: Tally
instructions: Counters of {{self}}.
health_tool: list_counters
tables:
  - name: counters
    columns: [id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER NOT NULL DEFAULT 0]
    key: [name]
tools:
  - name: list_counters
    description: Lists the counters.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output: {type: object, properties: {counters: {type: array, items: {type: object}}}, required: [counters]}
    steps:
      - rows: SELECT json_object('name', name, 'n', n) FROM counters ORDER BY name
        as: counters
      - result: SELECT json_object('counters', json(:counters))
  - name: bump
    description: Adds one to a counter.
    annotations: {readOnlyHint: false}
    input: {type: object, properties: {name: {type: string}}, required: [name]}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - row: SELECT id AS c FROM counters WHERE name = :name
        missing: SELECT format('no counter %q', :name)
      - exec: UPDATE counters SET n = n + 1 WHERE id = :c
      - result: SELECT json_object('n', n) FROM counters WHERE id = :c
`

// TestInstanceServesDefinitions: a day adds a service from a definition
// file to the case study's world; an instance of the new state serves it
// at MCPURL/NAME beside the built-in ones, and a reset restores it. Without
// the library the instance does not start, and says why.
func TestInstanceServesDefinitions(t *testing.T) {
	ctx := context.Background()
	p, m := caseStudyManager(t, runtime.ManagerOptions{IdleTimeout: time.Hour})
	defer m.Close(ctx)
	lib := &service.Library{Dir: t.TempDir()}
	path := filepath.Join(lib.Dir, "tally.yaml")
	if err := os.WriteFile(path, []byte(tally), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := service.Ref(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := engine.Parse([]byte(tally))
	if err != nil {
		t.Fatal(err)
	}

	w0 := filepath.Join(t.TempDir(), "w0")
	if err := p.Store.Checkout(ctx, p.W0(), w0); err != nil {
		t.Fatal(err)
	}
	pm, err := world.ReadManifest(w0)
	if err != nil {
		t.Fatal(err)
	}
	clock, _ := pm.Time()
	day := &delta.Delta{Version: delta.Version, Persona: pm.Persona, Day: pm.Day + 1, Clock: clock.Add(24 * time.Hour).Format(time.RFC3339),
		Services: []world.ServiceRef{ref}, Ops: []delta.Op{d.CreateOp(),
			{Op: delta.OpDBInsert, DB: "tally", Table: "counters", Key: map[string]delta.Value{"name": delta.Lit("runs")}, Values: map[string]delta.Value{"n": delta.Lit(4)}}}}
	w1 := filepath.Join(t.TempDir(), "w1")
	if err := delta.ApplyCopy(ctx, w0, w1, day, &delta.Options{Parent: p.W0()}); err != nil {
		t.Fatal(err)
	}
	h, err := state.Hash(ctx, w1)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := p.Store.Snapshot(ctx, w1, store.Meta{Kind: store.KindWorld, Parent: p.W0(), WorldHash: h, Persona: pm.Persona, Day: pm.Day + 1, Catalog: pm.Catalog})
	if err != nil {
		t.Fatal(err)
	}

	start := func(name string, lib *service.Library) (*runtime.Instance, error) {
		return runtime.Start(ctx, runtime.Options{Materializer: p.Env.Materializer, Snapshot: snap, CatalogDir: p.Env.CatalogDir,
			Dir: filepath.Join(t.TempDir(), name), Self: p.Env.Self, Services: lib, SandboxUID: 65534, SandboxGID: 65534})
	}
	if inst, err := start("nolib", nil); err == nil {
		inst.Close(ctx)
		t.Fatal("an instance of a world naming a definition started without a library")
	} else if !strings.Contains(err.Error(), "--services") {
		t.Errorf("start without a library: %v", err)
	}
	inst, err := start("lib", lib)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: inst.MCPURL + "/tally", DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	bump := func(cs *mcp.ClientSession) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bump", Arguments: map[string]any{"name": "runs"}})
		if err != nil || res.IsError {
			t.Fatalf("bump: %v %+v", err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	cs := connect()
	if got := bump(cs); got != `{"n":5}` {
		t.Errorf("bump = %s, want 5 (the day's row plus one)", got)
	}
	cs.Close()
	if err := inst.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	cs = connect()
	defer cs.Close()
	if got := bump(cs); got != `{"n":5}` {
		t.Errorf("bump after reset = %s, want 5", got)
	}
	// The built-in services are still there.
	ms, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: inst.MCPURL + "/messages", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms.Close()
}
