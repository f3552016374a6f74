package engine

// growStack grows the calling goroutine's stack, in one step, to what a
// tool call needs (64 KiB): it is an assembly function with a frame of 32
// KiB that does nothing, so only its prologue's stack check runs, with no
// frame to zero (stack.s).
//
// The MCP SDK runs each request on a new goroutine, whose stack starts
// small. Left to itself, a call's stack doubles two or three times on its
// way down, the last time inside SQLite's VM (sqlite3VdbeExec) with
// thirty frames or more to copy and adjust; each copy walks every frame's
// stack map. Grown once at the top of the handler, it is copied with the
// SDK's dozen frames and not again (docs/BENCHMARKS.md, "Issue 11, sixth
// round"). CockroachDB's util/growstack does the same for the same reason.
func growStack()
