// Command network-agent is the per-node agent. For now it carries the data-plane CLI:
//
//	network-agent dataplane attach|apply|dump|detach|uninstall ...
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/network-operator/network-operator/agent/dpctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "dataplane" {
		fmt.Fprintln(os.Stderr, "Usage: network-agent dataplane <command> [flags]   (network-agent dataplane help)")
		return 2
	}
	err := dpctl.Run(ctx, args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, dpctl.ErrUsage):
		fmt.Fprintln(os.Stderr, "network-agent:", err)
		return 2
	default:
		fmt.Fprintln(os.Stderr, "network-agent:", err)
		return 1
	}
}
