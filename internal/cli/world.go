package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) worldCmd() *cobra.Command {
	c := &cobra.Command{Use: "world", Short: "Hash, snapshot, check out, log and diff world states"}
	c.AddCommand(e.worldHashCmd(), e.worldSnapshotCmd(), e.worldCheckoutCmd(), e.worldLogCmd(), e.worldDiffCmd(), e.worldHealthCmd(), e.worldValidateCmd())
	return c
}

func (e *env) worldHashCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "hash DIR",
		Short: "Print the logical content hash of a world directory",
		Long: `Print the content hash of the world at DIR. Databases are hashed logically
(schema, then rows in primary-key order with typed values), files by path,
mode and content; mtimes and SQLite page layout do not count.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sum, err := state.Summarize(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, sum)
			}
			fmt.Fprintf(e.stdout, "%s\n", sum.Hash)
			st := sum.Stats
			e.progress("%d databases, %d tables, %d rows, %d files, %.1f MiB", st.DBs, st.Tables, st.Rows, st.Files, float64(st.Bytes())/(1<<20))
			return nil
		},
	}
	addJSONFlag(c, &asJSON)
	return c
}

func (e *env) worldSnapshotCmd() *cobra.Command {
	var kind string
	c := &cobra.Command{
		Use:   "snapshot DIR",
		Short: "Store the world at DIR as a snapshot and print its ID",
		Long: `Store the world at DIR in the content-addressed store. The snapshot's parent
is the manifest's parent. Identical content with the same parent gives the same
snapshot ID and stores nothing new.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(true)
			if err != nil {
				return err
			}
			defer st.Close()
			id, sum, err := snapshotWorld(cmd.Context(), st, args[0], kind)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", id)
			e.progress("snapshot %s of world %s", id.Short(), sum.Hash.Short())
			return nil
		},
	}
	c.Flags().StringVar(&kind, "kind", store.KindWorld, `"world" or "catalog"`)
	return c
}

func (e *env) worldCheckoutCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "checkout ID DIR",
		Short: "Materialise snapshot ID (or a unique prefix) into the new directory DIR",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(args[0])
			if err != nil {
				return err
			}
			if err := st.Checkout(cmd.Context(), id, args[1]); err != nil {
				return err
			}
			e.progress("checked out %s into %s", id.Short(), args[1])
			return nil
		},
	}
	e.runStoreFlag(c)
	return c
}

func (e *env) worldLogCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "log [ID]",
		Short: "List snapshots: all of them, or ID and its ancestors",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			var entries []store.SnapshotEntry
			if len(args) == 1 {
				id, err := st.Resolve(args[0])
				if err != nil {
					return err
				}
				entries, err = st.Log(id)
				if err != nil {
					return err
				}
			} else if entries, err = st.List(); err != nil {
				return err
			}
			if asJSON {
				type row struct {
					ID world.ID `json:"id"`
					store.Snapshot
				}
				rows := make([]row, len(entries))
				for i, en := range entries {
					rows[i] = row{en.ID, en.Snapshot}
				}
				return writeJSON(e.stdout, rows)
			}
			for _, en := range entries {
				parent := "-"
				if !en.Parent.IsZero() {
					parent = en.Parent.Short()
				}
				fmt.Fprintf(e.stdout, "%s  %-7s %-20s day %-3d parent %-12s world %s\n", en.ID.Short(), en.Kind, en.Persona, en.Day, parent, en.WorldHash.Short())
			}
			return nil
		},
	}
	addJSONFlag(c, &asJSON)
	e.runStoreFlag(c)
	return c
}

func (e *env) worldDiffCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Show rows and files added, changed and deleted from world A to world B",
		Long: `Show the difference from A to B, each a world directory or a snapshot ID.
Rows are matched by natural key where the table declares one (a unique index
named TABLE_nk or a UNIQUE constraint), else by primary key.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := e.resolve(ctx, args[0])
			if err != nil {
				return err
			}
			defer a.cleanup()
			b, err := e.resolve(ctx, args[1])
			if err != nil {
				return err
			}
			defer b.cleanup()
			if a.dir == "" || b.dir == "" {
				return fmt.Errorf("diff needs two worlds; \"empty\" is not one")
			}
			d, err := state.Compare(ctx, a.dir, b.dir)
			if err != nil {
				return err
			}
			if asJSON {
				return d.WriteJSON(e.stdout)
			}
			return d.WriteText(e.stdout)
		},
	}
	addJSONFlag(c, &asJSON)
	e.runStoreFlag(c)
	return c
}
