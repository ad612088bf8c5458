// Command netop-demo runs the whole network-operator system on this machine (see test/harness/cluster): a real
// control plane, the operator, N namespace nodes with their agents and FRR, an EVPN/VXLAN fabric, tenant
// workloads and Prometheus; then it shows a rollout, connectivity, per-VRF counters, a change and a failed
// change that is rolled back.
//
//	netop-demo [run]   run the scenario; on a terminal wait for Enter or Ctrl-C, then tear down
//	netop-demo up      the same in the background, left running (state in --state-dir)
//	netop-demo down    stop what `up` left running and clean up (also after a crash)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/cluster"
)

const (
	defaultStateDir = "/run/network-operator-demo"
	// preferredPrometheus is where the demo's Prometheus listens when the port is free.
	preferredPrometheus = "127.0.0.1:9090"
	// downGrace bounds the wait for a running demo to tear itself down.
	downGrace = 90 * time.Second
	// upTimeout bounds `up`: start-up plus the scenario.
	upTimeout = 15 * time.Minute
	logName   = "demo.log"
)

func main() {
	// `make demo | head` must not kill the demo before it tears down: writes to a closed pipe just fail.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	mode := "run"
	if len(args) > 0 && (args[0] == "run" || args[0] == "up" || args[0] == "down" || args[0] == "serve") {
		mode, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("netop-demo", flag.ContinueOnError)
	var opts cluster.Options
	stateDir := fs.String("state-dir", defaultStateDir, "where a running demo records what it started (for down)")
	binDir := fs.String("bin-dir", "bin", "directory of network-operator and network-agent")
	fs.IntVar(&opts.Nodes, "nodes", 3, "number of namespace nodes (2..9)")
	install := fs.String("install", string(cluster.InstallHelm), "helm: real kubelet nodes, images and the Helm chart (what users do); processes: the binaries as processes (quick development loop)")
	fs.StringVar(&opts.ImagesDir, "images-dir", "", "helm: directory of the image archives (default _out/images)")
	fs.StringVar(&opts.PrometheusAddr, "prometheus-addr", "", "Prometheus listen address (default "+preferredPrometheus+" when free)")
	fs.BoolVar(&opts.NoFRRScratch, "no-frr-scratch", false, "agents skip validating FRR configs in throw-away daemons")
	keep := fs.Bool("keep-on-failure", false, "on a failure, leave everything running for inspection until Ctrl-C")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "netop-demo: unexpected argument %q\nusage: netop-demo [run|up|down] [flags]\n", fs.Arg(0))
		return 2
	}
	logf := func(format string, a ...any) { fmt.Printf("  "+format+"\n", a...) }
	switch mode {
	case "down":
		if err := cluster.Down(*stateDir, downGrace, logf); err != nil {
			fmt.Fprintln(os.Stderr, "netop-demo down:", err)
			return 1
		}
		fmt.Println("demo: torn down")
		return 0
	case "up":
		return up(*stateDir, os.Args[1:])
	}
	// run and serve: a previous demo is stopped first, so the demo can be re-run.
	if err := cluster.Down(*stateDir, downGrace, logf); err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo: cleaning up an earlier demo:", err)
		return 1
	}
	bins, err := filepath.Abs(*binDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo:", err)
		return 1
	}
	opts.Install = cluster.Install(*install)
	opts.Operator = filepath.Join(bins, "network-operator")
	opts.Agent = filepath.Join(bins, "network-agent")
	opts.StateDir = *stateDir
	opts.Out = os.Stdout
	if opts.PrometheusAddr == "" {
		if ln, err := net.Listen("tcp", preferredPrometheus); err == nil {
			ln.Close()
			opts.PrometheusAddr = preferredPrometheus
		}
	}
	return demo(opts, mode == "serve", *keep)
}

// demo runs the scenario; it leaves the cluster running until Enter/Ctrl-C (run, on a terminal) or SIGTERM
// (serve, the background half of up).
func demo(opts cluster.Options, serve, keep bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	form := "installed with helm on real kubelet nodes"
	if opts.Install == cluster.InstallProcesses {
		form = "operator and agents as processes"
	}
	fmt.Printf("network-operator demo (%s): %d nodes, 2 tenants, an EVPN/VXLAN fabric, the eBPF data plane, Prometheus\n", form, opts.Nodes)
	c, err := cluster.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo:", err)
		return 1
	}
	code := 0
	err = c.Start(ctx)
	if err == nil {
		_, err = c.RunScenario(ctx, os.Stdout)
	}
	if err == nil && opts.Install == cluster.InstallHelm {
		// Tenant pods on the real nodes: their extra interface, MTU tuning, admission, removal (issue 13).
		_, err = c.PodNetworking(ctx, os.Stdout)
	}
	if err != nil {
		code = report(ctx, err)
		if keep && ctx.Err() == nil {
			fmt.Printf("\n== Kept running for inspection (work directory %s); Ctrl-C tears down\n", c.WorkDir())
			<-ctx.Done()
		}
	} else {
		fmt.Printf("\n== Left running\n%s", c.LookAround())
		switch {
		case serve:
			if err := c.MarkReady(); err != nil {
				fmt.Fprintln(os.Stderr, "netop-demo:", err)
			}
			fmt.Println("  Tear down:      make demo-down")
			<-ctx.Done()
		case isTerminal(os.Stdin):
			fmt.Print("\nPress Enter (or Ctrl-C) to tear everything down... ")
			waitEnter(ctx)
			fmt.Println()
		}
	}
	stop() // a second Ctrl-C during teardown kills the demo; `make demo-down` cleans up after that
	fmt.Println("\n== Tearing down")
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo: teardown:", err)
		return 1
	}
	fmt.Println("  done: processes stopped, namespaces deleted, pins and work directory removed")
	return code
}

func report(ctx context.Context, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "\nnetop-demo: interrupted")
		return 130
	}
	fmt.Fprintln(os.Stderr, "\nnetop-demo: FAILED:", err)
	return 1
}

func waitEnter(ctx context.Context) {
	line := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(line)
	}()
	select {
	case <-ctx.Done():
	case <-line:
	}
}

// up starts `netop-demo serve` detached (its own session, output to <state-dir>/demo.log), shows its output
// until the scenario has run and the cluster is left running, and returns.
func up(stateDir string, args []string) int {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo up:", err)
		return 1
	}
	logPath := filepath.Join(stateDir, logName)
	logFile, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo up:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo up:", err)
		return 1
	}
	// args still start with "up": serve gets the same flags.
	cmd := exec.Command(self, append([]string{"serve"}, args[1:]...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo up:", err)
		return 1
	}
	logFile.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	in, err := os.Open(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netop-demo up:", err)
		return 1
	}
	defer in.Close()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(upTimeout)
	for {
		_, _ = io.Copy(os.Stdout, in)
		st, ok, _ := cluster.ReadState(stateDir)
		if ok && st.Ready {
			_, _ = io.Copy(os.Stdout, in)
			fmt.Printf("  (running in the background as pid %d; its output: %s)\n", cmd.Process.Pid, logPath)
			return 0
		}
		select {
		case err := <-exited:
			_, _ = io.Copy(os.Stdout, in)
			fmt.Fprintf(os.Stderr, "netop-demo up: the demo exited (%v); see %s\n", err, logPath)
			return 1
		case <-deadline:
			fmt.Fprintf(os.Stderr, "netop-demo up: not up within %v; see %s (make demo-down cleans up)\n", upTimeout, logPath)
			return 1
		case <-tick.C:
		}
	}
}

// isTerminal reports whether f is a terminal, where the demo can wait for Enter.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
