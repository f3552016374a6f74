package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
)

func (e *env) catalogCmd() *cobra.Command {
	c := &cobra.Command{Use: "catalog", Short: "Build the shared, read-only catalog the websites show"}
	var (
		seed uint64
		out  string
	)
	build := &cobra.Command{
		Use:   "build --out DIR [--seed N]",
		Short: "Generate the catalog of the fifteen sites from a seed",
		Long: `Write a catalog directory (docs/world.md's layout, persona "catalog"): the case
study's products and photos, then every generated domain (the shop's and the
device store's products with reviews, recipes, preprints, news, hotels with
nightly rates, flights, a dictionary, courses, sports, code hosting, a model
hub, places) and the web search's index over all their pages. The same seed
gives the same bytes. DIR must not exist or be empty; the catalog is written
to DIR.new and renamed, so an interrupted build leaves no half catalog.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out is required: the directory to write the catalog to")
			}
			if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
				return fmt.Errorf("--out %s is not empty; remove it or name another directory", out)
			}
			tmp := filepath.Clean(out) + ".new"
			if err := os.RemoveAll(tmp); err != nil {
				return err
			}
			began := time.Now()
			counts, err := catalog.Build(cmd.Context(), tmp, generator.Default(), catalog.BuildOptions{Seed: seed,
				Progress: func(domain string, rows int) {
					fmt.Fprintf(e.stderr, "catalog: %-10s %7d rows (%s)\n", domain, rows, time.Since(began).Round(time.Millisecond))
				}})
			if err != nil {
				os.RemoveAll(tmp)
				return err
			}
			os.Remove(out) // empty, if it exists
			if err := os.Rename(tmp, out); err != nil {
				return err
			}
			size, err := catalog.Size(out)
			if err != nil {
				return err
			}
			total := 0
			tables := make([]string, 0, len(counts))
			for t, n := range counts {
				tables = append(tables, t)
				total += n
			}
			slices.Sort(tables)
			for _, t := range tables {
				fmt.Fprintf(e.stdout, "%-20s %7d\n", t, counts[t])
			}
			fmt.Fprintf(e.stdout, "%d records in %d tables, %.1f MiB, in %s: %s\n", total, len(tables), float64(size)/(1<<20), time.Since(began).Round(time.Millisecond), out)
			e.finished(out, "wildawm world hash "+out+"   # its content hash", "wildawm serve --catalog "+out+"   # host instances of the store's worlds over it")
			return nil
		},
	}
	build.Flags().Uint64Var(&seed, "seed", catalog.DefaultSeed, "the seed every generated row is drawn from")
	build.Flags().StringVar(&out, "out", "", "the directory to write the catalog to (must not exist or be empty)")
	c.AddCommand(build)
	return c
}
