package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// sessionsOf opens every service over a world whose databases have the
// services' schemas and no rows, and returns a session with each.
func sessionsOf(t *testing.T) map[string]*mcp.ClientSession {
	t.Helper()
	dir := state.MakeTestWorld(t, t.TempDir(), state.TestWorld{})
	sessions := map[string]*mcp.ClientSession{}
	for _, spec := range service.All() {
		state.ExecTest(t, world.DBPath(dir, spec.Name), spec.Schema()...)
		svc, err := spec.Open(service.Options{WorldDir: dir, Clock: messages.TestClock(), Self: messages.TestSelf})
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		sessions[spec.Name] = servicetest.ConnectMemory(t, svc)
	}
	return sessions
}

func listTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("no tools")
	}
	return res.Tools
}

// Every tool of every service can be handed as it is to the
// function-calling APIs of OpenAI, Gemini and Anthropic
// (servicetest.SchemaProblems has the rules and where each comes from).
func TestToolSchemasFitModelAdapters(t *testing.T) {
	for name, cs := range sessionsOf(t) {
		for _, tool := range listTools(t, cs) {
			for _, p := range servicetest.SchemaProblems(tool) {
				t.Errorf("%s %s: %s", name, tool.Name, p)
			}
		}
	}
}

// Every bounded argument says its range in the schema (minimum and
// maximum), and a value outside it, 0 included, is a tool error that names
// the argument and the range; every page size (limit) is bounded.
func TestBoundedArgumentsAreRefusedOutOfRange(t *testing.T) {
	bounded := 0
	for name, cs := range sessionsOf(t) {
		for _, tool := range listTools(t, cs) {
			props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
			for arg, p := range props {
				p := p.(map[string]any)
				lo, hasLo := p["minimum"].(float64)
				hi, hasHi := p["maximum"].(float64)
				if arg == "limit" && (!hasLo || !hasHi) {
					t.Errorf("%s %s: limit has no minimum and maximum in its schema: %v", name, tool.Name, p)
				}
				if !hasLo && !hasHi {
					continue
				}
				bounded++
				if desc, _ := p["description"].(string); hasLo && hasHi && !strings.Contains(desc, fmt.Sprintf("%v to %v", lo, hi)) {
					t.Errorf("%s %s: %s is %v to %v, and its description says otherwise: %q", name, tool.Name, arg, lo, hi, desc)
				}
				var bad []float64
				if hasLo {
					bad = append(bad, lo-1)
				}
				if hasHi {
					bad = append(bad, hi+1)
				}
				if arg == "limit" {
					bad = append(bad, 0)
				}
				for _, v := range bad {
					msg := servicetest.CallError(t, cs, tool.Name, map[string]any{arg: v})
					want := fmt.Sprintf("argument %q of %s must be between %v and %v, not %v", arg, tool.Name, lo, hi, v)
					switch {
					case !hasHi:
						want = fmt.Sprintf("argument %q of %s must be at least %v, not %v", arg, tool.Name, lo, v)
					case !hasLo:
						want = fmt.Sprintf("argument %q of %s must be at most %v, not %v", arg, tool.Name, hi, v)
					}
					if !strings.Contains(msg, want) {
						t.Errorf("%s %s(%s=%v): %q, want it to contain %q", name, tool.Name, arg, v, msg, want)
					}
				}
			}
		}
	}
	if bounded == 0 {
		t.Fatal("no bounded argument found")
	}
}
