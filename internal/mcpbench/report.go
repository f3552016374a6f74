package mcpbench

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the report as a markdown section: the setup, then one
// table row per case with p50, p99 and the ratio to the reference server on
// the same transport, measured with the same client.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## MCP tools/call latency\n\n")
	fmt.Fprintf(&b, "%d timed calls per case after %d warm-up calls, all cases called in turn (round robin) in one run. ", r.Calls, r.Warmup)
	fmt.Fprintf(&b, "wildawm messages service on a database of %d threads and %d messages (%.1f KiB); read_thread reads one %d-message thread (and marks it read, a write transaction), send_message appends to another. ",
		r.Threads, r.Messages, float64(r.DBBytes)/1024, r.Messages/r.Threads)
	fmt.Fprintf(&b, "Worlds on %s, ephemeral as the runtime's instances (`mcp serve --ephemeral` over stdio); the durable case writes with a journal file and fsync on %s. ", r.Medium, r.DiskMedium)
	for _, s := range []struct {
		who, command string
		own          bool
	}{{"our server", "`mcp serve --http`", r.HTTPOwnProcess}, {"the floor's", "`bench mcp-echo-server --http`", r.FloorHTTPOwnProcess}} {
		if s.own {
			fmt.Fprintf(&b, "Over HTTP %s runs in a process of its own (%s), as the reference server does. ", s.who, s.command)
		} else {
			fmt.Fprintf(&b, "Over HTTP %s runs in the benchmark's process. ", s.who)
		}
	}
	fmt.Fprintf(&b, "Clients: the go-sdk %s client (go-sdk), and a raw JSON-RPC client (raw) that writes the request and stops the clock at the response's last byte, parsing and checking it afterwards; %s, GOMAXPROCS %d, %s", r.SDKVersion, r.GoVersion, r.GOMAXPROCS, r.GC)
	if r.NodeVersion != "" {
		fmt.Fprintf(&b, "; reference servers on Node %s", r.NodeVersion)
		for _, n := range []string{MemoryPackage, EverythingPackage} {
			if v, ok := r.Versions[n]; ok {
				fmt.Fprintf(&b, ", %s@%s", n, v)
			}
		}
	}
	fmt.Fprintf(&b, ".\n\n")
	b.WriteString("| server | transport | client | tool | kind | response | p50 | p99 | mean | p50 ratio vs reference |\n|---|---|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Cases {
		ratio := "—"
		switch {
		case c.Reference:
			ratio = "1 (reference)"
		case c.Ratio > 0:
			ratio = fmt.Sprintf("**%.2fx**", c.Ratio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Server, c.Transport, c.Client, c.Tool, c.Kind, fmtBytes(c.Bytes), fmtDur(c.P50), fmtDur(c.P99), fmtDur(c.Mean), ratio)
	}
	b.WriteString("\nRatio: our p50 over the p50 of the reference server on the same transport with the same client (stdio: server-memory's create_entities; http: server-everything's echo); below 1 is faster. In process has no reference. Response: the JSON-RPC response message's size (go-sdk: the SDK's re-encoding of the result; raw: the bytes received).\n")
	r.baselineTable(&b)
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "\nSkipped: %s", s)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nRun took %s.\n", r.Elapsed.Round(time.Millisecond))
	return b.String()
}

// fmtBytes prints n in bytes below a KiB, else in KiB.
func fmtBytes(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// fmtDur prints d in µs below a millisecond, else in ms.
func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// baselineTable writes, when the run had a baseline build, our p50 and p99
// over the baseline's for each transport, client and tool.
func (r *Report) baselineTable(b *strings.Builder) {
	type key struct{ transport, client, tool string }
	base := map[key]Case{}
	for _, c := range r.Cases {
		if strings.Contains(c.Server, "(baseline ") {
			base[key{c.Transport, c.Client, c.Tool}] = c
		}
	}
	if len(base) == 0 {
		return
	}
	b.WriteString("\nAgainst the baseline build (the same calls in the same round robin):\n\n| transport | client | tool | p50 | baseline p50 | ratio | p99 | baseline p99 | ratio |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Cases {
		bc, ok := base[key{c.Transport, c.Client, c.Tool}]
		if !ok || c.Server != "wildawm messages" {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | **%.2fx** | %s | %s | %.2fx |\n", c.Transport, c.Client, c.Tool, fmtDur(c.P50), fmtDur(bc.P50),
			float64(c.P50)/float64(bc.P50), fmtDur(c.P99), fmtDur(bc.P99), float64(c.P99)/float64(bc.P99))
	}
	b.WriteString("\nRatio: this build over the baseline; below 1 is faster.\n")
}
