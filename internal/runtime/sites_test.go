package runtime_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/site"
)

// TestInstanceServesEverySite: an instance serves every site of the
// registry, each on a port of its own, before and after a reset; a Manager
// serves each on NAME.TOKEN.localhost of its agent listener. The MCP
// services are at MCPURL/NAME only: MCPURL alone is no service.
func TestInstanceServesEverySite(t *testing.T) {
	ctx := context.Background()
	p, m := caseStudyManager(t, runtime.ManagerOptions{IdleTimeout: time.Hour})
	defer m.Close(ctx)
	var names []string
	for _, spec := range site.All() {
		names = append(names, spec.Name)
	}
	slices.Sort(names)

	get := func(url, host string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	inst, err := p.Env.Start(ctx, p.W0(), "sites")
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	if got := slices.Sorted(maps.Keys(inst.SiteURLs)); !slices.Equal(got, names) {
		t.Fatalf("SiteURLs has %v, want every registered site %v", got, names)
	}
	origins := map[string]string{strings.TrimSuffix(inst.MCPURL, "/mcp"): "MCP"}
	for _, name := range names {
		u := inst.SiteURL(name)
		if other, ok := origins[u]; ok || !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("site %s at %q: want a loopback origin of its own (%s has it)", name, u, other)
		}
		origins[u] = name
	}
	if inst.SiteURL("nope") != "" {
		t.Errorf("SiteURL(nope) = %q, want empty", inst.SiteURL("nope"))
	}
	serves := func(when string) {
		t.Helper()
		for _, name := range names {
			if st := get(inst.SiteURL(name)+"/", ""); st != http.StatusOK {
				t.Errorf("%s: GET / on site %s: %d", when, name, st)
			}
		}
	}
	serves("after start")
	if err := inst.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	serves("after reset")

	if st := get(inst.MCPURL, ""); st != http.StatusNotFound {
		t.Errorf("GET %s (no service named): %d, want 404", inst.MCPURL, st)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: inst.MCPURL + "/messages"}, nil)
	if err != nil {
		t.Fatalf("connect to %s/messages: %v", inst.MCPURL, err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("messages: list tools: %v", err)
	}
	cs.Close()

	info, err := m.Create(ctx, p.W0())
	if err != nil {
		t.Fatal(err)
	}
	agent := httptest.NewServer(m.AgentHandler())
	defer agent.Close()
	if got := slices.Sorted(maps.Keys(info.SiteHosts)); !slices.Equal(got, names) {
		t.Fatalf("Info.SiteHosts has %v, want every registered site %v", got, names)
	}
	for _, name := range names {
		host := info.SiteHosts[name]
		if want := name + "." + info.Token + ".localhost"; host != want {
			t.Errorf("site %s: host %q, want %q", name, host, want)
		}
		if st := get(agent.URL+"/", host); st != http.StatusOK {
			t.Errorf("agent listener: GET / on %s: %d", host, st)
		}
	}
	for _, host := range []string{"nope." + info.Token + ".localhost", info.Token + ".localhost"} {
		if st := get(agent.URL+"/", host); st != http.StatusNotFound {
			t.Errorf("agent listener: GET / on %s: %d, want 404", host, st)
		}
	}
}
