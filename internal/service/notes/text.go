package notes

import (
	"net/url"
	"path"
	"strings"
	"unicode"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
)

// maxTargetBytes is the longest link target link_note takes.
const maxTargetBytes = 2000

// slug turns a title into a note ext_id as create_note does (engine.Slug,
// at most 48 bytes).
func slug(title string) string { return engine.Slug(title, 48) }

// checkTarget returns the trimmed link target, or a tool error unless it is
// an http(s) URL with a host or a clean home-relative slash path.
func checkTarget(t string) (string, error) {
	t = strings.TrimSpace(t)
	switch {
	case t == "":
		return "", badCall("target is empty; pass a file path relative to home (e.g. \"docs/plan.md\") or a URL (e.g. \"https://example.com/page\")")
	case len(t) > maxTargetBytes:
		return "", badCall("target is %d bytes; use at most %d", len(t), maxTargetBytes)
	case strings.ContainsFunc(t, func(r rune) bool { return unicode.IsControl(r) || r == '\\' }):
		return "", badCall("target %q has a control character or a backslash; paths use / between folders", clip(t, 80))
	}
	if scheme, _, ok := strings.Cut(t, "://"); ok && !strings.Contains(scheme, "/") {
		u, err := url.Parse(t)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
			return "", badCall("target %q is not an http or https URL; link a web page (https://...) or a file path relative to home", clip(t, 80))
		case u.Host == "" || strings.ContainsAny(t, " \"<>"):
			return "", badCall("URL %q has no host or has spaces or quotes; pass it as the browser shows it, e.g. \"https://example.com/page\"", clip(t, 80))
		}
		return t, nil
	}
	switch {
	case strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~"):
		return "", badCall("path %q is absolute; pass it relative to home, e.g. \"docs/plan.md\" for ~/docs/plan.md", clip(t, 80))
	case t == "." || t == ".." || strings.HasPrefix(t, "../") || path.Clean(t) != t:
		return "", badCall("path %q is not a clean path inside home; use folder/file form without ., .. or doubled or trailing slashes, e.g. %q", clip(t, 80), cleanSuggestion(t))
	}
	return t, nil
}

func cleanSuggestion(t string) string {
	c := strings.TrimPrefix(path.Clean("/"+t), "/")
	if c == "" {
		return "docs/plan.md"
	}
	return c
}

func clip(s string, n int) string { return engine.Clip(s, n) }

func badCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }
