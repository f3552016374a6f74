package mail

import (
	"fmt"
	"strings"
)

// checkAddress returns what is wrong with a mail address, or "" when it is
// usable: one '@' with text on both sides, a dot in the domain, no spaces,
// commas, angle brackets or quotes, at most MaxAddressChars bytes.
func checkAddress(addr string) string {
	switch {
	case addr == "":
		return "an address is empty"
	case len(addr) > MaxAddressChars:
		return fmt.Sprintf("address of %d bytes; an address has at most %d", len(addr), MaxAddressChars)
	case strings.ContainsAny(addr, " \t\r\n,;<>\"()[]\\"):
		return fmt.Sprintf("%q is not a plain address: give just the address, like \"maya@example.com\", without name, spaces or separators", addr)
	}
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || !strings.Contains(domain, ".") ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return fmt.Sprintf("%q is not a mail address like \"maya@example.com\"", addr)
	}
	return ""
}

// joinAddrs stores a list of addresses as a comma list.
func joinAddrs(addrs []string) string { return strings.Join(addrs, ", ") }

// splitAddrs reads a comma list of addresses; never nil.
func splitAddrs(s string) []string {
	out := []string{}
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
