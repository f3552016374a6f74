package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// defaultRunDir is the run directory every command that works on a run
// (syn, pool, gate, eval, sft, rl, openenv, stats) defaults to: the
// commands of one run agree without a --dir.
const defaultRunDir = "wildawm-worlds"

// env holds what every command shares: the store location and the output.
type env struct {
	storeDir string
	stdout   io.Writer
	stderr   io.Writer
	// uids is the command's one sandbox uid allocator: every sandbox it
	// starts (instances' shells, verifiers' and mutation checks' scripts)
	// has a uid of its own.
	uids *sandbox.UIDs
	// cacheMaxFlag is --cache-max: the bound of a run's cache of
	// materialised snapshots.
	cacheMaxFlag string
	// clock is the wall clock the command line gives the estimates of
	// the time left (world.ETA): the core never reads one.
	clock world.Clock
	// models are --model-timeout, --model-retries and --model-backoff.
	models modelFlags
}

// wallClock is the process's wall clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// defaultStoreDir is $WILDAWM_STORE, else $XDG_DATA_HOME/wildawm/store, else
// ~/.local/share/wildawm/store.
func defaultStoreDir() string {
	if d := os.Getenv("WILDAWM_STORE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "wildawm", "store")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "wildawm", "store")
	}
	return filepath.Join(".wildawm", "store")
}

// openStore opens the store, creating it when create is set.
func (e *env) openStore(create bool) (*store.Store, error) {
	if create {
		return store.Init(e.storeDir)
	}
	s, err := store.Open(e.storeDir)
	if err != nil {
		return nil, fmt.Errorf("%w (set --store or WILDAWM_STORE; `wildawm store init` creates one)", err)
	}
	return s, nil
}

// runStoreFlag gives c the flag --dir RUN: the store is then the run's
// own, RUN/store (what syn worlds, pool run and the demo write), so a user
// of a run never has to name its store. --store naming another is an
// error.
func (e *env) runStoreFlag(c *cobra.Command) {
	var dir string
	c.Flags().StringVar(&dir, "dir", "", "a run's directory (syn worlds --dir, demo --dir): use its own store, DIR/store, instead of --store")
	prev := c.PreRunE
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		if dir != "" {
			own := filepath.Join(dir, "store")
			if cmd.Flags().Changed("store") && filepath.Clean(e.storeDir) != filepath.Clean(own) {
				return fmt.Errorf("--dir %s and --store %s: the run's store is %s; give one of them", dir, e.storeDir, own)
			}
			if _, err := os.Stat(filepath.Join(own, "config.json")); err != nil {
				return fmt.Errorf("--dir %s: no store at %s: give the directory a run wrote (wildawm syn worlds --dir, wildawm demo --dir)", dir, own)
			}
			e.storeDir = own
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// finished ends a long command: where its output is, and the commands a
// user runs next, one "next:" line each (on stderr, beside the progress:
// stdout stays the command's data).
func (e *env) finished(output string, next ...string) {
	e.progress("output: %s", output)
	for _, n := range next {
		e.progress("next: %s", n)
	}
}

func (e *env) progress(format string, args ...any) {
	fmt.Fprintf(e.stderr, format+"\n", args...)
}

// isWorldDir reports whether path is a directory holding a manifest.
func isWorldDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, world.ManifestFile))
	return err == nil
}

// ref is a world named on the command line: a directory, or a snapshot ID
// (or unique prefix) in the store.
type ref struct {
	dir  string   // where the world is readable
	snap world.ID // zero for a directory
	tmp  string   // removed by cleanup
}

func (r *ref) cleanup() {
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
}

// resolve turns a command-line world reference into a readable directory,
// checking a snapshot out into a temporary directory when needed. "empty"
// names the empty world (dir "").
func (e *env) resolve(ctx context.Context, arg string) (*ref, error) {
	if arg == "empty" {
		return &ref{}, nil
	}
	if isWorldDir(arg) {
		return &ref{dir: arg}, nil
	}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory but not a world (no %s)", arg, world.ManifestFile)
	}
	st, err := e.openStore(false)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a world directory nor a snapshot: %w", arg, err)
	}
	defer st.Close()
	id, err := st.Resolve(arg)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a world directory nor a snapshot: %w", arg, err)
	}
	tmp, err := os.MkdirTemp("", "wildawm-"+id.Short()+"-")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(tmp, "world")
	if err := st.Checkout(ctx, id, dir); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &ref{dir: dir, snap: id, tmp: tmp}, nil
}

// snapshotWorld hashes dir and stores it; the parent comes from its manifest.
func snapshotWorld(ctx context.Context, st *store.Store, dir, kind string) (world.ID, *state.Summary, error) {
	sum, err := state.Summarize(ctx, dir)
	if err != nil {
		return world.ID{}, nil, err
	}
	m, err := world.ReadManifest(dir)
	if err != nil {
		return world.ID{}, nil, err
	}
	id, err := st.Snapshot(ctx, dir, store.Meta{Kind: kind, Parent: m.Parent, WorldHash: sum.Hash, Persona: m.Persona, Day: m.Day, Catalog: m.Catalog})
	return id, sum, err
}

func deltaOptions(parent world.ID) *delta.Options {
	return &delta.Options{Generators: generator.Default(), Parent: parent}
}

func readDelta(path string) (*delta.Delta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := delta.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func addJSONFlag(c *cobra.Command, v *bool) {
	c.Flags().BoolVar(v, "json", false, "print JSON for programs instead of text")
}
