package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// TestSuite runs the shared suite for every service of the registry the
// engine serves (with its golden transcript when testdata has a script)
// and for every definition in testdata/defs, which have no Go code.
func TestSuite(t *testing.T) {
	for _, spec := range service.All() {
		t.Run(spec.Name, func(t *testing.T) {
			opts := servicetest.SuiteOptions{}
			if script := filepath.Join("testdata", "scripts", spec.Name+".json"); exists(script) {
				opts = servicetest.SuiteOptions{Script: script, Golden: filepath.Join("testdata", "golden", spec.Name+".json")}
			}
			servicetest.Suite(t, spec.Compiled(), opts)
		})
	}
	defs, _ := filepath.Glob(filepath.Join("testdata", "defs", "*.yaml"))
	for _, path := range defs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d, err := engine.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := engine.Compile(d, engine.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			opts := servicetest.SuiteOptions{}
			if golden := filepath.Join("testdata", "golden", d.Name+".json"); exists(golden) || servicetest.Updating() {
				opts.Golden = golden
			}
			servicetest.Suite(t, c, opts)
		})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
