package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/agent/cleanup"
	"github.com/network-operator/network-operator/agent/cri"
	"github.com/network-operator/network-operator/agent/dpctl"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	"github.com/network-operator/network-operator/pkg/loader"
)

// runCleanup is `network-agent cleanup`: remove everything of ours from this node (uninstall). With --wait it
// then writes --done-file and stays until SIGTERM, so a DaemonSet's readiness shows every node is clean.
func runCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl, code, ok := parseCleanupFlags(args, stderr)
	if !ok {
		return code
	}
	ns, links, err := openNetns(fl.netnsName)
	if err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	defer links.Close()
	if ns > 0 {
		defer ns.Close()
	}
	nc, err := nodenet.New(links, nodenet.Settings{NetNS: ns})
	if err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	o := cleanupOptions(fl, nc, links, ns, stderr)
	if fl.podNetwork {
		finder, err := cri.New(fl.criSocket, cri.Options{Source: cri.Source(fl.podNetns)})
		if err != nil {
			fmt.Fprintln(stderr, "network-agent cleanup:", err)
			return ExitUsage
		}
		defer finder.Close()
		if err := addPodCleanup(&o, fl, finder, links, ns); err != nil {
			fmt.Fprintln(stderr, "network-agent cleanup:", err)
			return ExitFailed
		}
	}
	plan, err := cleanup.PlanCleanup(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	defer plan.Close()
	fmt.Fprint(stdout, plan)
	if fl.dryRun {
		return ExitOK
	}
	if err := cleanup.Apply(ctx, o, plan, stdout); err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	after, err := cleanup.PlanCleanup(ctx, o)
	if err == nil {
		defer after.Close()
	}
	if err != nil || !after.Empty() {
		fmt.Fprintf(stderr, "network-agent cleanup: still left after cleaning (%v):\n%s", err, after)
		return ExitFailed
	}
	fmt.Fprintln(stdout, "node clean")
	if !fl.wait {
		return ExitOK
	}
	return waitAfterClean(ctx, fl.doneFile, stderr)
}

// cleanupFlags are the command-line flags of `network-agent cleanup`.
type cleanupFlags struct {
	pinDir, stateFile, frrStateDir, netnsName      string
	dryRun, wait                                   bool
	doneFile                                       string
	podNetwork                                     bool
	criSocket, podNetns, podStateDir, podSysctlDir string
}

// parseCleanupFlags parses the command line of `network-agent cleanup`. When it does not run (help, a usage
// error), ok is false and code is the exit code.
func parseCleanupFlags(args []string, stderr io.Writer) (fl *cleanupFlags, code int, ok bool) {
	fl = &cleanupFlags{}
	fs := flag.NewFlagSet("network-agent cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&fl.pinDir, "pin-dir", loader.DefaultPinDir, "bpffs directory of the eBPF router's pins")
	fs.StringVar(&fl.stateFile, "state-file", lastapplied.DefaultPath, "the agent's last good state")
	fs.StringVar(&fl.frrStateDir, "frr-state-dir", "/var/lib/network-operator/frr", "where the agent kept the last applied FRR config")
	fs.StringVar(&fl.netnsName, "netns", "", "network namespace to clean (name under /run/netns or a path); default: our own")
	fs.BoolVar(&fl.dryRun, "dry-run", false, "print what would be removed and change nothing")
	fs.BoolVar(&fl.wait, "wait", false, "after cleaning, write --done-file and stay until SIGTERM")
	fs.StringVar(&fl.doneFile, "done-file", "/tmp/cleanup-done", "with --wait: written once the node is clean")
	fs.BoolVar(&fl.podNetwork, "pod-network", false, "also remove what pod networking made (pods' interfaces and tuning, host veth ends, records)")
	fs.StringVar(&fl.criSocket, "cri-socket", cri.DefaultSocket, "--pod-network: the container runtime's CRI socket")
	fs.StringVar(&fl.podNetns, "pod-netns", string(cri.SourceAuto), "--pod-network: how a pod's network namespace is reached: auto, path or pid")
	fs.StringVar(&fl.podStateDir, "pod-state-dir", podrecords.DefaultDir, "--pod-network: the per-pod records")
	fs.StringVar(&fl.podSysctlDir, "pod-sysctl-dir", podnet.DefaultSysctlDir, "--pod-network: the sysctl tree written from inside pods' namespaces")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ExitOK, false
		}
		return nil, ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "network-agent cleanup: unexpected argument %q\n", fs.Arg(0))
		return nil, ExitUsage, false
	}
	return fl, ExitOK, true
}

// cleanupOptions sets up the cleanup of the node's namespace (nc, links, ns): its objects, eBPF pins and the
// agent's state files; dpctl's uninstall reports to stderr.
func cleanupOptions(fl *cleanupFlags, nc *nodenet.Manager, links *netlink.Handle, ns netns.NsHandle, stderr io.Writer) cleanup.Options {
	return cleanup.Options{Netlink: nc, Mirror: mirror.New(links, ns), PinDir: fl.pinDir,
		Files: []string{fl.stateFile, fl.frrStateDir, filepath.Join(filepath.Dir(fl.stateFile), cleanup.FRRDaemonDir)},
		Uninstall: func(ctx context.Context, dir string) error {
			return dpctl.Run(ctx, []string{"uninstall", "--pin-dir", dir}, io.Discard, stderr)
		}}
}

// addPodCleanup extends o to what pod networking made (--pod-network): pods' interfaces, reached through the
// container runtime (finder), and the per-pod records.
func addPodCleanup(o *cleanup.Options, fl *cleanupFlags, finder *cri.Client, links *netlink.Handle, ns netns.NsHandle) error {
	var err error
	if o.Pods, err = podnet.New(links, podnet.Options{Store: podrecords.New(fl.podStateDir), HostNS: ns, SysctlDir: fl.podSysctlDir}); err != nil {
		return err
	}
	o.PodNetns = func(ctx context.Context, uid string) (netns.NsHandle, error) {
		n, err := finder.PodNetns(ctx, uid)
		if err != nil {
			return 0, err
		}
		return n.Open()
	}
	o.Files = append(o.Files, fl.podStateDir)
	return nil
}

// waitAfterClean, for --wait, writes doneFile and stays until SIGTERM (or an interrupt) or ctx's end, so a
// DaemonSet's readiness can tell the node is clean.
func waitAfterClean(ctx context.Context, doneFile string, stderr io.Writer) int {
	if err := os.WriteFile(doneFile, []byte("clean\n"), 0o644); err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	sig, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-sig.Done()
	return ExitOK
}
