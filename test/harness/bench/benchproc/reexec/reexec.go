// Package reexec lets a benchmark's test binary stand in for the operator or agent binary.
package reexec

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// Env set to "1" in a test binary's environment makes TestMain (Main) run the binary's command
// instead of the tests: a measurement test starts "the operator" or "the agent" as a process of its own, from the
// test binary, without a go build.
const Env = "NETWORK_OPERATOR_BENCH_REEXEC"

// Main is a TestMain: with Env set it runs command (app.Run of cmd/network-operator or
// cmd/network-agent) with the process's arguments until SIGINT/SIGTERM and exits with its code; else it runs
// the tests.
func Main(m *testing.M, command func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	if os.Getenv(Env) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := command(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
