// Command network-operator runs the central controllers: revisions from the user resources, per-node
// configurations and their paced rollout, and (optionally) the validating webhooks:
//
//	network-operator [flags]            the controllers
//	network-operator uninstall [flags]  the chart's pre-delete hook: empty every node
//
// Everything lives in package operator/app; main only wires signals and the exit status.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/network-operator/network-operator/operator/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
