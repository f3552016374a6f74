package taskgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// Steps builds a reference completion: the tool names and arguments
// agent.Env.Do replays (docs/trajectory.md).
type Steps []task.Step

func (s *Steps) add(iface, tool string, args map[string]any, note string) {
	*s = append(*s, task.Step{Interface: iface, Tool: tool, Args: args, Note: note})
}

// Fact declares what the last step reads, computes or chooses that later
// steps use (task.Fact: the value as the later steps' arguments or the
// answer carry it, what a careless agent would have instead, the phrase
// of the hint that points at it).
func (s *Steps) Fact(f task.Fact) { s.FactAt(len(*s)-1, f) }

// FactAt declares f at step i (a choice made at the first of the steps
// that act on it).
func (s *Steps) FactAt(i int, f task.Fact) {
	(*s)[i].Facts = append((*s)[i].Facts, f)
}

// Shell runs a command in the home.
func (s *Steps) Shell(command, note string) {
	s.add(task.CLI, "shell.run", map[string]any{"command": command}, note)
}

// MCP calls service's tool.
func (s *Steps) MCP(service, tool string, args map[string]any, note string) {
	if args == nil {
		args = map[string]any{}
	}
	s.add(task.MCP, "mcp."+service+"__"+tool, args, note)
}

// Open opens path on site (agent.SitePrefix: the origin is the instance's).
func (s *Steps) Open(site, path, note string) {
	s.add(task.GUI, "browser.open", map[string]any{"url": "site:" + site + "/" + strings.TrimPrefix(path, "/")}, note)
}

// Read reads an element's text.
func (s *Steps) Read(selector, note string) {
	s.add(task.GUI, "browser.read", map[string]any{"selector": selector}, note)
}

// Fill sets an input's value.
func (s *Steps) Fill(selector, value string) {
	s.add(task.GUI, "browser.fill", map[string]any{"selector": selector, "value": value}, "")
}

// Click clicks an element.
func (s *Steps) Click(selector, note string) {
	s.add(task.GUI, "browser.click", map[string]any{"selector": selector}, note)
}

// Login logs in to a site (every site's login page: docs/sites.md).
func (s *Steps) Login(site string, l Login) {
	s.Open(site, "/login", "log in to "+site)
	s.Fill("#login-username", l.User)
	s.Fill("#login-password", l.Password)
	s.Click("#login-submit", "")
}

// KitAction performs a kit site's action from a record's page: open
// /LIST/KEY, fill the action's inputs by their ids, submit its form.
func (s *Steps) KitAction(site, listPath, key, action string, inputs map[string]string, note string) {
	s.Open(site, strings.TrimSuffix(listPath, "/")+"/"+key, note)
	for _, name := range sortedKeys(inputs) {
		s.Fill(fmt.Sprintf(`[id="/do/%s-%s"]`, action, name), inputs[name])
	}
	s.Click(fmt.Sprintf(`form[action="/do/%s"] button[type="submit"]`, action), "")
}

// WriteFile writes a home file through the shell (a heredoc).
func (s *Steps) WriteFile(path, content, note string) {
	dir := "."
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		dir = path[:i]
	}
	s.Shell(fmt.Sprintf("mkdir -p %s && cat > %s <<'WILDAWM_EOF'\n%sWILDAWM_EOF", dir, path, content), note)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(mapKeys(m)) }
