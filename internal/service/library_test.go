package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/world"
)

// tally is the smallest useful definition: named counters.
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
`

func TestLibrary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tally.yaml")
	if err := os.WriteFile(path, []byte(tally), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := service.Ref(path)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Name != "tally" || ref.SHA256 != world.Hash([]byte(tally)) {
		t.Fatalf("Ref = %+v", ref)
	}
	lib := &service.Library{Dir: dir}
	m := &world.Manifest{Services: []world.ServiceRef{ref}}
	specs, err := service.ForWorld(m, lib)
	if err != nil {
		t.Fatal(err)
	}
	if last := specs[len(specs)-1]; last.Name != "tally" || last.Compiled == nil || last.ReadTool != "list_counters" || len(specs) != len(service.All())+1 {
		t.Errorf("ForWorld = %d specs, last %+v", len(specs), last)
	}
	for _, tc := range []struct {
		lib  *service.Library
		refs []world.ServiceRef
		want string
	}{
		{nil, []world.ServiceRef{ref}, "pass --services DIR"},
		{&service.Library{Dir: t.TempDir()}, []world.ServiceRef{ref}, "put its definition in"},
		{lib, []world.ServiceRef{{Name: "tally", SHA256: world.Hash([]byte("other"))}}, "restore that file"},
		{lib, []world.ServiceRef{{Name: "notes", SHA256: ref.SHA256}}, "built-in service"},
	} {
		if _, err := service.ForWorld(&world.Manifest{Services: tc.refs}, tc.lib); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ForWorld(%+v) = %v, want %q", tc.refs, err, tc.want)
		}
	}
}
