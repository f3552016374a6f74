// Command wildawm builds, stores and serves personal-computer worlds and
// tasks for computer-use agents. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wildawm/wildawm/internal/cli"
	"github.com/wildawm/wildawm/internal/gcpolicy"
)

func main() {
	gcpolicy.Apply()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wildawm:", err)
		os.Exit(1)
	}
}
