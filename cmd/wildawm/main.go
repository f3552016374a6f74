// Command wildawm builds, stores and serves personal-computer worlds and
// tasks for computer-use agents. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/cli"
)

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wildawm:", err)
		os.Exit(1)
	}
}

// gcPercent is the garbage collector's target unless GOGC is set. Serving
// a tool call allocates mostly short-lived JSON buffers (the MCP SDK's
// decoder takes 32 KiB per message): collecting when the heap reaches 5x
// the live data instead of Go's default 2x cuts tools/call p50 by about a
// fifth (docs/BENCHMARKS.md, issue 5). The memory limit below bounds the
// cost.
const gcPercent = 400

// tuneGC sets the collector's target and, unless GOMEMLIMIT is set, a soft
// memory limit of half the machine's memory, at which the collector runs
// whatever the target says.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		var si unix.Sysinfo_t
		if unix.Sysinfo(&si) == nil && si.Totalram > 0 {
			debug.SetMemoryLimit(int64(si.Totalram) * int64(si.Unit) / 2)
		}
	}
}
