package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/health"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) worldHealthCmd() *cobra.Command {
	var asJSON bool
	var catalogDir, runDir, servicesDir string
	c := &cobra.Command{
		Use:   "health SNAPSHOT",
		Short: "Boot a snapshot and check its live health: credentials, logins, history pages, MCP services",
		Long: `Boot a fresh instance of SNAPSHOT (an ID or unique prefix) and run the paper's
live health check (layer 4 of the world check): every account in accounts.json
has its username and a matching password in a home file, found through the
sandboxed shell; it logs in on its site; its order history and cart render and
list what the shop database holds; every MCP service database loads and
answers tools/list and a read-only tool call. Every failure is a problem line
naming the account or service and the fix; the command fails when there is one.

The shop needs the catalog: --catalog defaults to the "catalog" directory next
to the store directory (the demo lays out DIR/store and DIR/catalog).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(args[0])
			if err != nil {
				return err
			}
			if catalogDir == "" {
				catalogDir = filepath.Join(filepath.Dir(filepath.Clean(e.storeDir)), "catalog")
			}
			if !isWorldDir(catalogDir) {
				return fmt.Errorf("no catalog at %s: pass --catalog (the demo writes DIR/catalog next to DIR/store)", catalogDir)
			}
			if runDir == "" {
				abs, err := filepath.Abs(e.storeDir)
				if err != nil {
					return err
				}
				runDir = filepath.Join(os.TempDir(), "wildawm-health-"+world.Hash([]byte(abs)).Short())
			}
			// The sandboxed shell runs as an unprivileged uid: the instances'
			// directory must be searchable by it.
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(runDir, 0o755); err != nil {
				return err
			}
			renv := &rollout.Env{
				Store:        st,
				Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(runDir, "cache")},
				CatalogDir:   catalogDir,
				WorkDir:      runDir,
				Services:     library(servicesDir),
				UIDs:         e.uids,
			}
			if renv.Self, err = selfName(ctx, renv.Materializer, id); err != nil {
				return err
			}
			rep, err := health.Check(ctx, renv, id)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(e.stdout, rep); err != nil {
					return err
				}
			} else if err := rep.WriteText(e.stdout); err != nil {
				return err
			}
			if !rep.OK {
				return fmt.Errorf("world %s is not healthy: %d problems", id.Short(), len(rep.Problems))
			}
			return nil
		},
	}
	c.Flags().StringVar(&catalogDir, "catalog", "", `the catalog directory the shop shows (default: "catalog" next to the store directory)`)
	c.Flags().StringVar(&servicesDir, "services", "", "library of service definitions the world may name (DIR/NAME.yaml)")
	c.Flags().StringVar(&runDir, "run-dir", "", "where instances and the snapshot cache live; every directory above it must be searchable by the sandbox uid (default: under the system temporary directory)")
	addJSONFlag(c, &asJSON)
	e.runStoreFlag(c)
	return c
}

// selfName is the persona's name as a message sender: the display name of
// its first account that has one, else the manifest's persona id.
func selfName(ctx context.Context, m *reset.Materializer, id world.ID) (string, error) {
	dir, err := m.Lower(ctx, id)
	if err != nil {
		return "", err
	}
	accts, err := world.ReadAccounts(dir)
	if err == nil {
		for _, a := range accts {
			if a.Display != "" {
				return a.Display, nil
			}
		}
	}
	mf, err := world.ReadManifest(dir)
	if err != nil || mf.Persona == "" {
		return "wildawm", nil // the health check sends no message
	}
	return mf.Persona, nil
}
