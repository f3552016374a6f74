package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) deltaCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "delta",
		Short: "Lint, apply and replay day deltas (docs/delta.md)",
		Long: `A delta is the deterministic transformation of a world from day d-1 to day d.
PARENT below is a world directory, a snapshot ID (or unique prefix) in the
store, or "empty" for the empty world of day 0.`,
	}
	c.AddCommand(e.deltaLintCmd(), e.deltaApplyCmd(), e.deltaReplayCmd())
	return c
}

func (e *env) deltaLintCmd() *cobra.Command {
	var parent string
	var asJSON bool
	c := &cobra.Command{
		Use:   "lint DELTA",
		Short: "Check a delta against its parent world without changing anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := readDelta(args[0])
			if err != nil {
				return err
			}
			if parent == "" {
				if d.Day != 0 {
					return fmt.Errorf("lint %s: day %d needs its parent world: give --parent DIR|SNAPSHOT", args[0], d.Day)
				}
				parent = "empty"
			}
			p, err := e.resolve(ctx, parent)
			if err != nil {
				return err
			}
			defer p.cleanup()
			err = delta.Lint(ctx, p.dir, d, deltaOptions(p.snap))
			var le *delta.LintError
			if asJSON && errors.As(err, &le) {
				writeJSON(e.stdout, le.Issues)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, []delta.Issue{})
			}
			fmt.Fprintf(e.stdout, "ok: %d operations\n", len(d.Ops))
			return nil
		},
	}
	c.Flags().StringVar(&parent, "parent", "", `the parent world (directory, snapshot or "empty"); defaults to "empty" for day 0`)
	addJSONFlag(c, &asJSON)
	return c
}

func (e *env) deltaApplyCmd() *cobra.Command {
	var out string
	var noSnapshot bool
	c := &cobra.Command{
		Use:   "apply PARENT DELTA",
		Short: "Apply a delta to a copy of PARENT, check what it produces, and store the result",
		Long: `Apply DELTA to a fresh copy of PARENT (the parent is never written), run the
produces check, and snapshot the result into the store (printing its ID).
With --out the resulting world is also left in a new directory.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if noSnapshot && out == "" {
				return errors.New("--no-snapshot without --out would throw the result away: give --out DIR")
			}
			if out != "" && exists(out) {
				return fmt.Errorf("--out %s already exists: choose a new directory", out)
			}
			d, err := readDelta(args[1])
			if err != nil {
				return err
			}
			p, err := e.resolve(ctx, args[0])
			if err != nil {
				return err
			}
			defer p.cleanup()
			var st *store.Store
			if !noSnapshot {
				if st, err = e.openStore(true); err != nil {
					return err
				}
				defer st.Close()
				if p.dir != "" && p.snap.IsZero() {
					// Store the parent too, so the new snapshot's chain is whole.
					if p.snap, _, err = snapshotWorld(ctx, st, p.dir, store.KindWorld); err != nil {
						return fmt.Errorf("snapshot parent: %w", err)
					}
				}
			}
			work, err := os.MkdirTemp("", "wildawm-apply-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(work)
			result := filepath.Join(work, "world")
			e.progress("applying %d operations of day %d", len(d.Ops), d.Day)
			if err := delta.ApplyCopy(ctx, p.dir, result, d, deltaOptions(p.snap)); err != nil {
				return err
			}
			issues, err := delta.CheckProduces(ctx, p.dir, result, &d.Produces)
			if err != nil {
				return err
			}
			if len(issues) > 0 {
				return producesError(issues)
			}
			if st != nil {
				id, sum, err := snapshotWorld(ctx, st, result, store.KindWorld)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", id)
				e.progress("day %d: snapshot %s, world %s", d.Day, id.Short(), sum.Hash.Short())
			}
			if out != "" {
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					return err
				}
				if err := os.Rename(result, out); err != nil {
					if err := state.Copy(ctx, result, out); err != nil {
						return err
					}
				}
				e.progress("world written to %s", out)
			}
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "also leave the resulting world in this new directory")
	c.Flags().BoolVar(&noSnapshot, "no-snapshot", false, "do not store the result (needs --out)")
	return c
}

func producesError(issues []delta.Issue) error {
	lines := make([]string, len(issues))
	for i, is := range issues {
		lines[i] = "  " + is.String()
	}
	return fmt.Errorf("produces check failed: %d declared write(s) missing:\n%s", len(issues), strings.Join(lines, "\n"))
}

func (e *env) deltaReplayCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "replay PARENT DELTA",
		Short: "Apply a delta twice to two fresh copies of PARENT and compare the hashes",
		Long: `The replay check: apply DELTA to two fresh checkouts of PARENT and compare the
two content hashes. On a mismatch it names the first differing database, table
and row, or file. It also runs the produces check. Nothing is stored.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := readDelta(args[1])
			if err != nil {
				return err
			}
			fresh, parentDir, cleanup, err := e.freshParent(ctx, args[0])
			if err != nil {
				return err
			}
			defer cleanup()
			scratch, err := os.MkdirTemp("", "wildawm-replay-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(scratch)
			res, err := delta.Replay(ctx, fresh, d, scratch, deltaOptions(world.ID{}))
			if err != nil {
				return err
			}
			issues, err := delta.CheckProduces(ctx, parentDir, filepath.Join(scratch, "replay-0"), &d.Produces)
			if err != nil {
				return err
			}
			if asJSON {
				writeJSON(e.stdout, map[string]any{"replay": res, "produces": issues})
			} else {
				fmt.Fprintf(e.stdout, "replay: %s %s\n", res.Hashes[0].Short(), res.Hashes[1].Short())
			}
			if !res.Equal {
				return fmt.Errorf("replay mismatch: %s", res.First)
			}
			if len(issues) > 0 {
				return producesError(issues)
			}
			if !asJSON {
				fmt.Fprintln(e.stdout, "ok: deterministic, and every declared write exists and changed")
			}
			return nil
		},
	}
	addJSONFlag(c, &asJSON)
	return c
}

// freshParent returns a function making fresh copies of the parent (store
// checkouts for a snapshot), a readable copy of the parent, and a cleanup.
func (e *env) freshParent(ctx context.Context, arg string) (delta.Fresh, string, func(), error) {
	p, err := e.resolve(ctx, arg)
	if err != nil {
		return nil, "", nil, err
	}
	switch {
	case p.dir == "":
		return func(ctx context.Context, dst string) error { return nil }, "", p.cleanup, nil
	case p.snap.IsZero():
		return func(ctx context.Context, dst string) error { return state.Copy(ctx, p.dir, dst) }, p.dir, p.cleanup, nil
	}
	st, err := e.openStore(false)
	if err != nil {
		p.cleanup()
		return nil, "", nil, err
	}
	fresh := func(ctx context.Context, dst string) error { return st.Checkout(ctx, p.snap, dst) }
	return fresh, p.dir, func() { st.Close(); p.cleanup() }, nil
}
