package policy

import (
	"regexp"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// readCommandRE is a shell command that only reads: no redirection, no
// pipe into something else, a reading program.
var readCommandRE = regexp.MustCompile(`^\s*(cat|ls|head|tail|grep|wc|sort|jq|find|stat|file)\b[^>|;&]*$`)

// readToolRE is an MCP tool whose name says it reads.
var readToolRE = regexp.MustCompile(`__(list|get|search|find|read|check|query|show|lookup|count|describe)_`)

// EffectSteps are the reference steps that may change the world: file
// writes, shell commands other than plain reads, form submissions and
// clicks (but a login's), and MCP tools whose names do not say they read.
// Each is left out in turn by the coverage check (gate.CoverageGate, with ReplayWithoutStep); one that changed nothing
// (its replay ends in the reference's world) is not held against the task.
func EffectSteps(t *task.Task) []int {
	var out []int
	for i, s := range t.Reference {
		switch {
		case s.Tool == "file.write":
		case s.Tool == "shell.run":
			if cmd, _ := s.Args["command"].(string); readCommandRE.MatchString(cmd) {
				continue
			}
		case s.Tool == "browser.click" || s.Tool == "browser.submit":
			if sel, _ := s.Args["selector"].(string); sel == "#login-submit" {
				continue
			}
		case strings.HasPrefix(s.Tool, "mcp."):
			if readToolRE.MatchString(s.Tool) {
				continue
			}
		default:
			continue
		}
		out = append(out, i)
	}
	return out
}
