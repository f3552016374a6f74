package catalog

import "strings"

// fields splits a search query into words (at most 64 bytes each).
func fields(q string) []string {
	ws := strings.Fields(q)
	for i, w := range ws {
		if len(w) > 64 {
			ws[i] = w[:64]
		}
	}
	return ws
}

// likeEscape escapes the LIKE wildcards of s for ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
