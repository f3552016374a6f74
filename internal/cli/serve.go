package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/controlplane"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) serveCmd() *cobra.Command {
	var (
		listen, control, catalogDir, runDir, tokenFile, self, servicesDir string
		idle                                                              time.Duration
		unsafeShell                                                       bool
		maxInstances, inodes                                              int
		tmpfsSize                                                         string
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Host live instances of stored worlds for agents, with a control API for the orchestrator",
		Long: `Serve instances of stored world snapshots, hundreds per process.

Agent listener (--listen): site NAME of instance ID answers on Host
NAME.ID.localhost (any port; the shop on shop.ID.localhost), its MCP service
NAME at /i/ID/mcp/NAME (streamable HTTP) and its sandboxed shell at
POST /i/ID/shell {"command": "..."}. Nothing else.

Control listener (--control, a unix socket by default so that no browser or
sandbox can reach it): create, reset, snapshot, diff, destroy, list, health,
with "Authorization: Bearer TOKEN"; the token is written to --token-file
(mode 0600). See docs/runtime.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if maxInstances < 1 {
				return fmt.Errorf("--max-instances %d: give at least 1", maxInstances)
			}
			if inodes < 1 {
				return fmt.Errorf("--instance-inodes %d: give at least 1", inodes)
			}
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			defer st.Close()
			if catalogDir == "" {
				catalogDir = filepath.Join(filepath.Dir(e.storeDir), "catalog")
			}
			if !isWorldDir(catalogDir) {
				return fmt.Errorf("--catalog %s is not a catalog directory (the demo writes DIR/catalog beside DIR/store)", catalogDir)
			}
			if runDir == "" {
				runDir = filepath.Join(os.TempDir(), "wildawm-serve-"+world.Hash([]byte(e.storeDir)).Short())
			}
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(runDir, 0o755); err != nil {
				return err
			}
			if tokenFile == "" {
				tokenFile = filepath.Join(runDir, "control.token")
			}
			// The same token file as rl serve and openenv serve: its line
			// when it exists (an orchestrator keeps its token across
			// restarts), else a fresh token written there.
			token, created, err := controlplane.Token(tokenFile)
			if err != nil {
				return fmt.Errorf("--token-file: %w", err)
			}
			if created {
				e.progress("wrote a fresh bearer token to %s (mode 0600): give it to the orchestrator", tokenFile)
			}
			mat := &reset.Materializer{Store: st, CacheDir: filepath.Join(runDir, "cache"), Overlay: &reset.Overlay{Size: tmpfsSize, Inodes: inodes}}
			// The instances go below a root of this process's own; the
			// roots of killed predecessors are swept first.
			work, release, err := e.ownScratch(filepath.Join(runDir, "instances"))
			if err != nil {
				return err
			}
			defer release()
			m := runtime.NewManager(runtime.ManagerOptions{Store: st, Materializer: mat, CatalogDir: catalogDir, Services: library(servicesDir), WorkDir: work,
				Self: self, IdleTimeout: idle, UnsafeShell: unsafeShell, MaxInstances: maxInstances, UIDs: e.uids})
			defer m.Close(context.WithoutCancel(ctx))

			agentLn, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			ctlLn, ctlAddr, err := listenControl(control, runDir)
			if err != nil {
				agentLn.Close()
				return err
			}
			// Both listeners are hardened as rl serve's and openenv serve's
			// (header and body timeouts, a connection cap, a body cap); the
			// control handler checks the token itself.
			servers := []*controlplane.Server{
				controlplane.New(agentLn, m.AgentHandler(), controlplane.Options{}),
				controlplane.New(ctlLn, m.ControlHandler(token), controlplane.Options{}),
			}
			errc := make(chan error, 2)
			for _, s := range servers {
				go func() { errc <- s.Serve() }()
			}
			e.progress("agents:  http://%s  (site NAME: Host NAME.ID.localhost; MCP service NAME: /i/ID/mcp/NAME; shell: POST /i/ID/shell)", agentLn.Addr())
			e.progress("control: %s  (bearer token in %s)", ctlAddr, tokenFile)
			select {
			case <-ctx.Done():
			case err = <-errc:
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			for _, s := range servers {
				s.Shutdown(sctx)
			}
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			return err
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8470", "agent listener address")
	c.Flags().StringVar(&control, "control", "", "control listener: unix:PATH (default unix:RUN-DIR/control.sock) or HOST:PORT")
	c.Flags().StringVar(&catalogDir, "catalog", "", "catalog directory (default: DIR/catalog beside the store)")
	c.Flags().StringVar(&runDir, "run-dir", "", "instances and snapshot cache (must be searchable by unprivileged uids)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "where to write the control bearer token (default RUN-DIR/control.token)")
	c.Flags().StringVar(&self, "self", "Alex Rivera", "the persona's name as a message sender")
	c.Flags().StringVar(&servicesDir, "services", "", "library of service definitions worlds may name (DIR/NAME.yaml; docs/services/definition.md)")
	c.Flags().DurationVar(&idle, "idle", 30*time.Minute, "reclaim instances idle this long")
	c.Flags().IntVar(&maxInstances, "max-instances", runtime.DefaultMaxInstances, "refuse to create more live instances than this (HTTP 503)")
	c.Flags().StringVar(&tmpfsSize, "instance-size", "256m", "bytes an instance's changes may take (its tmpfs's size=); past it, writes fail with ENOSPC")
	c.Flags().IntVar(&inodes, "instance-inodes", reset.DefaultInodes, "files, directories and links an instance's changes may hold (its tmpfs's nr_inodes=); past it, creating one fails with ENOSPC")
	c.Flags().BoolVar(&unsafeShell, "unsafe-shell", false, "without bubblewrap, run agents' shell commands unsandboxed (refused otherwise)")
	return c
}

func listenControl(spec, runDir string) (net.Listener, string, error) {
	if spec == "" {
		spec = "unix:" + filepath.Join(runDir, "control.sock")
	}
	if path, ok := strings.CutPrefix(spec, "unix:"); ok {
		os.Remove(path)
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, "", fmt.Errorf("--control %s: %w", spec, err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, "", err
		}
		return ln, spec, nil
	}
	ln, err := net.Listen("tcp", spec)
	if err != nil {
		return nil, "", fmt.Errorf("--control %s: %w", spec, err)
	}
	return ln, "http://" + ln.Addr().String(), nil
}
