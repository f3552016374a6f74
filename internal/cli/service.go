package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
)

func (e *env) serviceCmd() *cobra.Command {
	c := &cobra.Command{Use: "service", Short: "Check and list MCP service definitions (docs/services/definition.md)"}
	lint := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Check service definitions: the format, their SQL against their schema, their example calls",
		Long: `Check each definition file (YAML or JSON, docs/services/definition.md): every
field (errors name it), every SQL text prepared against the schema, and every
example call of its test world run through an MCP client. A definition read
from a file has no Go hooks, except that of a built-in service (same name),
which is checked with the built-in's hooks. Exits non-zero when any file has
a problem.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				d, err := engine.Load(path)
				if err == nil {
					// A built-in service's file is checked with its Go hooks.
					hooks := engine.Hooks{}
					if spec, lerr := service.Lookup(d.Name); lerr == nil {
						hooks = spec.Compiled().Hooks()
					}
					var c *engine.Compiled
					if c, err = engine.Compile(d, hooks); err == nil {
						var r *engine.LintReport
						if r, err = engine.Lint(cmd.Context(), c); err == nil {
							if len(r.Problems) == 0 {
								fmt.Fprintf(e.stdout, "ok %s (%s): %d tools, %d resources, %d synthesis ops, %d example calls\n", path, d.Name, r.Tools, r.Resources, r.Ops, r.Calls)
								continue
							}
							err = engine.Problems(r.Problems)
						}
					}
				}
				bad++
				fmt.Fprintf(e.stdout, "FAIL %s: %v\n", path, err)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d definitions have problems", bad, len(args))
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in services",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range service.All() {
				fmt.Fprintf(e.stdout, "%-10s definition: %d tools\n", s.Name, len(s.Compiled().Def.Tools))
			}
			return nil
		},
	}
	c.AddCommand(lint, list)
	return c
}

// library is the definitions library at dir; nil when dir is empty.
func library(dir string) *service.Library {
	if dir == "" {
		return nil
	}
	return &service.Library{Dir: dir}
}
