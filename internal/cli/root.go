// Package cli is wildawm's command line: one file per command group. Run is
// the whole CLI, callable in-process by tests.
package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/sandbox"
)

// Run executes the wildawm command line with args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "wildawm",
		Short:         "Synthesize, store and serve personal-computer worlds for computer-use agents",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	e := &env{stdout: stdout, stderr: stderr, uids: &sandbox.UIDs{}, clock: wallClock{}}
	root.PersistentFlags().StringVar(&e.storeDir, "store", defaultStoreDir(), "the snapshot store directory (env WILDAWM_STORE)")
	root.PersistentFlags().StringVar(&e.cacheMaxFlag, "cache-max", defaultCacheMax, "the bound of a run's cache of materialised snapshots, DIR/cache: past it the least recently used ones nothing holds are removed (0: no bound)")
	e.models.register(root)
	root.AddCommand(e.worldCmd(), e.storeCmd(), e.deltaCmd(), e.benchCmd(), e.demoCmd(), e.setupCmd(), e.serveCmd(), e.mcpCmd(), e.serviceCmd(), e.catalogCmd(), e.synCmd(), e.statsCmd(), e.rolloutCmd(), e.verifyCmd(), e.gateCmd(), e.poolCmd(), e.evalCmd(), e.sftCmd(), e.rlCmd())
	root.AddCommand(e.openenvCmd())
	addExamples(root)
	return root
}
