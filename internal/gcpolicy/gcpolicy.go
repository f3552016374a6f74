// Package gcpolicy sets the process's garbage-collection policy: a target
// that trades memory for tool-call latency, bounded by a soft memory limit
// derived from the memory the process may use. Only main applies it; the
// environment's GOGC and GOMEMLIMIT win over it.
package gcpolicy

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Percent is the collector's target unless GOGC is set. Serving a tool
// call allocates mostly short-lived JSON buffers (the MCP SDK's decoder
// takes 32 KiB per message): collecting when the heap reaches 5x the live
// data instead of Go's default 2x cut tools/call p50 by up to a quarter
// (docs/BENCHMARKS.md, issue 5). The memory limit bounds the cost.
const Percent = 400

// Apply sets the target and, unless GOMEMLIMIT is set, a soft memory limit
// of half the memory available to the process (the machine's, or its
// cgroup's when that is lower), at which the collector runs whatever the
// target says.
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if avail := Available(); avail > 0 {
			debug.SetMemoryLimit(avail / 2)
		}
	}
}

// Available is the memory the process may use in bytes: the machine's
// physical memory, or its cgroup's limit (v2 memory.max, v1
// memory.limit_in_bytes) when that is lower; 0 if unknown.
func Available() int64 {
	var total int64
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if limit, ok := readLimit(f); ok && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// readLimit reads a cgroup memory limit file: a byte count, or "max".
func readLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}
