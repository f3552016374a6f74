package cli

import (
	"fmt"

	"github.com/wildawm/wildawm/internal/scratch"
)

// scratchPrefix names the scratch roots of the long-lived commands (syn
// worlds, syn tasks, pool run, rl serve, openenv serve, eval, serve,
// demo, sft export) below their work directories: run-PID-RANDOM.
const scratchPrefix = "run-"

// ownScratch is the start-up hygiene of a long-lived command: it sweeps
// parent of the scratch roots of its dead predecessors (their instances'
// overlay and tmpfs mounts unmounted, deepest first, their directories
// removed; a live process's root is never touched) and claims a fresh
// root there, locked for this process's life. Every instance, copy and
// verifier scratch of the command goes below dir; release unmounts what
// is left there and removes it.
func (e *env) ownScratch(parent string) (dir string, release func(), err error) {
	r, rep, err := scratch.Claim(parent, scratchPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("work directory %s: %w", parent, err)
	}
	if rep.Roots > 0 {
		e.progress("swept %d work directories of dead runs under %s (%d mounts)", rep.Roots, parent, rep.Mounts)
	}
	return r.Dir(), func() { r.Release() }, nil
}
