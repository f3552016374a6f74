package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
)

func (e *env) storeCmd() *cobra.Command {
	c := &cobra.Command{Use: "store", Short: "Create, check and garbage-collect the snapshot store"}
	c.AddCommand(&cobra.Command{
		Use:   "init",
		Short: "Create the store if it does not exist",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(true)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, e.storeDir)
			return st.Close()
		},
	})
	c.AddCommand(e.storeCheckCmd())
	c.AddCommand(&cobra.Command{
		Use:   "gc",
		Short: "Remove what no snapshot references (refuses on a damaged store)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := st.GC(cmd.Context())
			if err != nil {
				return err
			}
			return writeJSON(e.stdout, rep)
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "stats",
		Short: "Print counts and bytes on disk",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Stats()
			if err != nil {
				return err
			}
			return writeJSON(e.stdout, s)
		},
	})
	for _, sub := range c.Commands() {
		if sub.Name() != "init" && sub.Name() != "check" {
			e.runStoreFlag(sub)
		}
	}
	return c
}

func (e *env) storeCheckCmd() *cobra.Command {
	var opts store.CheckOptions
	c := &cobra.Command{
		Use:   "check",
		Short: "Read and re-hash every object, restore and hash every snapshot; report corruption, missing objects and garbage",
		Long: `Read and re-hash every pack, index and snapshot record, walk every
snapshot's trees, then check out every snapshot (each distinct tree once) to
a scratch directory and hash it: a snapshot that does not check out, or whose
checkout's world hash is not the one its record holds, is an error naming it.
Exits non-zero on any error; garbage is listed, not an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Parallel < 1 {
				return fmt.Errorf("store check: --parallel %d: want at least 1", opts.Parallel)
			}
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			opts.Hash = state.Hash
			rep, err := st.CheckWith(cmd.Context(), &opts)
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, rep.String())
			if !rep.OK() {
				return fmt.Errorf("store %s is damaged: see the report above", e.storeDir)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&opts.NoRestore, "no-restore", false, "check objects and trees only: do not restore and hash the snapshots")
	c.Flags().StringVar(&opts.Scratch, "scratch", "", "directory for the scratch checkouts (default: the system's temporary directory)")
	c.Flags().IntVar(&opts.Parallel, "parallel", 2, "snapshots restored and hashed at once")
	e.runStoreFlag(c)
	return c
}
