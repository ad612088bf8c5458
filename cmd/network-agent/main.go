// Command network-agent is the per-node agent: it applies this node's NodeNetworkConfig (Kubernetes mode), or a
// node config file without Kubernetes (--config-file), and carries the data-plane CLI:
//
//	network-agent [flags]                               Kubernetes mode (--node-name / $NODE_NAME)
//	network-agent --config-file node.yaml [--once|--dry-run]
//	network-agent dataplane attach|apply|dump|detach|uninstall ...
//
// Everything lives in package agent/app; main only wires signals and the exit status.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/network-operator/network-operator/agent/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
