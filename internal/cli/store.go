package cli

import (
	"fmt"

	"github.com/spf13/cobra"
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
	c.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Read and re-hash every object; report corruption, missing objects and garbage",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := st.Check(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprint(e.stdout, rep.String())
			if !rep.OK() {
				return fmt.Errorf("store %s is damaged: see the report above", e.storeDir)
			}
			return nil
		},
	})
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
	return c
}
