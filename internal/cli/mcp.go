package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) mcpCmd() *cobra.Command {
	c := &cobra.Command{Use: "mcp", Short: "Serve a world's MCP services to external agent harnesses"}
	var worldDir, name, self, httpAddr, servicesDir string
	var ephemeral bool
	serve := &cobra.Command{
		Use:   "serve --world DIR --service NAME [--http ADDR]",
		Short: "Serve one MCP service of a world over stdio or streamable HTTP (for agent harnesses)",
		Long: `Serve the MCP service NAME over the world at DIR on stdin/stdout, or with
--http ADDR over streamable HTTP at http://ADDR/mcp (the URL is printed as the
first line of the output; port 0 picks a free port) until interrupted. Bind a
loopback address: the endpoint has no authentication. The service reads and
writes DIR/db/NAME.sqlite in place with the world's frozen clock (its
manifest's clock): point it at a copy or an instance, not at a stored state.
Writes are crash-safe (a journal file and fsync) unless --ephemeral says the
world is a throwaway copy.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if worldDir == "" || name == "" {
				return fmt.Errorf("give --world DIR and --service NAME")
			}
			m, err := world.ReadManifest(worldDir)
			if err != nil {
				return err
			}
			specs, err := service.ForWorld(m, library(servicesDir))
			if err != nil {
				return err
			}
			i := slices.IndexFunc(specs, func(s service.Spec) bool { return s.Name == name })
			if i < 0 {
				names := make([]string, len(specs))
				for j, s := range specs {
					names[j] = s.Name
				}
				return fmt.Errorf("unknown service %q; known: %s (the built-in ones and those this world names)", name, strings.Join(names, ", "))
			}
			spec := specs[i]
			t, err := m.Time()
			if err != nil {
				return err
			}
			if self == "" {
				self = m.Persona
				if accts, err := world.ReadAccounts(worldDir); err == nil && len(accts) > 0 && accts[0].Display != "" {
					self = accts[0].Display
				}
			}
			svc, err := spec.Open(service.Options{WorldDir: worldDir, Clock: world.FixedClock(t), Self: self, Ephemeral: ephemeral})
			if err != nil {
				return err
			}
			if httpAddr != "" {
				return serveMCPHTTP(cmd.Context(), httpAddr, svc.HTTPHandler(), e.stdout)
			}
			return svc.RunStdio(cmd.Context())
		},
	}
	serve.Flags().StringVar(&worldDir, "world", "", "the world directory")
	serve.Flags().StringVar(&name, "service", "", "the service: messages, ...")
	serve.Flags().StringVar(&self, "self", "", "the persona's name in the service (default: the first account's display name)")
	serve.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080, or 127.0.0.1:0 for a free port) instead of stdio")
	serve.Flags().StringVar(&servicesDir, "services", "", "library of service definitions the world may name (DIR/NAME.yaml)")
	serve.Flags().BoolVar(&ephemeral, "ephemeral", false, "the world is a throwaway copy: keep write journals in memory and skip fsync (a crash may tear a database)")
	c.AddCommand(serve)
	return c
}
