package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBenchModels: the matrix is computed from what each path did, so
// its cells differ where the paths and the engines do: a retried outage
// of one reply is done, a call written as text the agent's format
// failure, a policy on an engine without token ids no signal, a NaN
// embedding an error, an outage of every reply an infrastructure failure.
func TestBenchModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every cell of the matrix (30 s)")
	}
	out := filepath.Join(t.TempDir(), "matrix.md")
	mustRun(t, t.TempDir(), "bench", "models", "--out", out, "--turns", "0")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	section := func(name string) string {
		i := strings.Index(md, "### "+name)
		if i < 0 {
			t.Fatalf("no section %q:\n%s", name, md)
		}
		s := md[i+4:]
		if j := strings.Index(s, "### "); j >= 0 {
			s = s[:j]
		}
		return s
	}
	row := func(sec, name string) []string {
		m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \|(.*)\|$`).FindStringSubmatch(section(sec))
		if m == nil {
			t.Fatalf("%s: no row %q", sec, name)
		}
		cells := strings.Split(m[1], "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells // unnamed, vllm, sglang, ollama, llamacpp, openai
	}
	for _, c := range []struct {
		sec, row string
		want     []string
	}{
		{pathAgent, "HTTP 503", []string{"done (+1)", "done (+1)", "done (+1)", "done (+1)", "done (+1)", "done (+1)"}},
		{pathAgent, "tool call written as text", []string{"format", "format", "format", "format", "format", "format"}},
		{pathAgent, "outage (every reply 503)", []string{"infra", "infra", "infra", "infra", "infra", "infra"}},
		{pathRL, "healthy", []string{"done", "done", "done", "refused", "refused", "refused"}},
		{pathRL, "no token ids", []string{"no signal", "no signal", "no signal", "refused", "refused", "refused"}},
		{pathJudge, "text only", []string{"done (+1)", "done (+1)", "done (+1)", "done (+1)", "done (+1)", "done (+1)"}},
		{pathEmbeddings, "NaN", []string{"error", "error", "error", "error", "error", "error"}},
		{pathEmbeddings, "unnormalised", []string{"done", "done", "done", "done", "done", "done"}},
		{pathEmbeddings, "embeddings outage", []string{"infra", "infra", "infra", "infra", "infra", "infra"}},
	} {
		if got := row(c.sec, c.row); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s / %s: %v, want %v", c.sec, c.row, got, c.want)
		}
	}
	if !strings.Contains(section(pathAgent), "start llama-server with --jinja") {
		t.Errorf("the agent's refusals do not name llama-server's flag:\n%s", section(pathAgent))
	}
}
