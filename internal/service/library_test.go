package service_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/world"
)

func TestLibrary(t *testing.T) {
	// A library holding one of the definitions testdata ships.
	src, err := os.ReadFile(filepath.Join("testdata", "defs", "habits.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "habits.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := service.Ref(path)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Name != "habits" || ref.SHA256 != world.Hash(src) {
		t.Fatalf("Ref = %+v", ref)
	}
	lib := &service.Library{Dir: dir}
	m := &world.Manifest{Services: []world.ServiceRef{ref}}
	specs, err := service.ForWorld(m, lib)
	if err != nil {
		t.Fatal(err)
	}
	if last := specs[len(specs)-1]; last.Name != "habits" || last.Compiled().Def.Name != "habits" || last.ReadTool() == "" || len(specs) != len(service.All())+1 {
		t.Errorf("ForWorld = %d specs, last %+v", len(specs), last)
	}
	for _, tc := range []struct {
		lib  *service.Library
		refs []world.ServiceRef
		want string
	}{
		{nil, []world.ServiceRef{ref}, "pass --services DIR"},
		{&service.Library{Dir: t.TempDir()}, []world.ServiceRef{ref}, "put its definition in"},
		{lib, []world.ServiceRef{{Name: "habits", SHA256: world.Hash([]byte("other"))}}, "restore that file"},
		{lib, []world.ServiceRef{{Name: "notes", SHA256: ref.SHA256}}, "built-in service"},
		{lib, []world.ServiceRef{{Name: world.ImageFactsDB, SHA256: ref.SHA256}}, "provenance database"},
	} {
		if _, err := service.ForWorld(&world.Manifest{Services: tc.refs}, tc.lib); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ForWorld(%+v) = %v, want %q", tc.refs, err, tc.want)
		}
	}
}

// TestRegistryNames holds the registry's names (known before a definition
// is compiled) to the names its definitions give.
func TestRegistryNames(t *testing.T) {
	for _, spec := range service.All() {
		if got := spec.Compiled().Def.Name; got != spec.Name {
			t.Errorf("the registry names %q a service whose definition is named %q", spec.Name, got)
		}
	}
}
