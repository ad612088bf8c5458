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
	fs := flag.NewFlagSet("network-agent cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory of the eBPF router's pins")
	stateFile := fs.String("state-file", lastapplied.DefaultPath, "the agent's last good state")
	frrStateDir := fs.String("frr-state-dir", "/var/lib/network-operator/frr", "where the agent kept the last applied FRR config")
	netnsName := fs.String("netns", "", "network namespace to clean (name under /run/netns or a path); default: our own")
	dryRun := fs.Bool("dry-run", false, "print what would be removed and change nothing")
	wait := fs.Bool("wait", false, "after cleaning, write --done-file and stay until SIGTERM")
	doneFile := fs.String("done-file", "/tmp/cleanup-done", "with --wait: written once the node is clean")
	podNetwork := fs.Bool("pod-network", false, "also remove what pod networking made (pods' interfaces and tuning, host veth ends, records)")
	criSocket := fs.String("cri-socket", cri.DefaultSocket, "--pod-network: the container runtime's CRI socket")
	podNetns := fs.String("pod-netns", string(cri.SourceAuto), "--pod-network: how a pod's network namespace is reached: auto, path or pid")
	podStateDir := fs.String("pod-state-dir", podrecords.DefaultDir, "--pod-network: the per-pod records")
	podSysctlDir := fs.String("pod-sysctl-dir", podnet.DefaultSysctlDir, "--pod-network: the sysctl tree written from inside pods' namespaces")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "network-agent cleanup: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	ns, links, err := openNetns(*netnsName)
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
	o := cleanup.Options{Netlink: nc, Mirror: mirror.New(links, ns), PinDir: *pinDir,
		Files: []string{*stateFile, *frrStateDir, filepath.Join(filepath.Dir(*stateFile), cleanup.FRRDaemonDir)},
		Uninstall: func(ctx context.Context, dir string) error {
			return dpctl.Run(ctx, []string{"uninstall", "--pin-dir", dir}, io.Discard, stderr)
		}}
	if *podNetwork {
		finder, err := cri.New(*criSocket, cri.Options{Source: cri.Source(*podNetns)})
		if err != nil {
			fmt.Fprintln(stderr, "network-agent cleanup:", err)
			return ExitUsage
		}
		defer finder.Close()
		if o.Pods, err = podnet.New(links, podnet.Options{Store: podrecords.New(*podStateDir), HostNS: ns, SysctlDir: *podSysctlDir}); err != nil {
			fmt.Fprintln(stderr, "network-agent cleanup:", err)
			return ExitFailed
		}
		o.PodNetns = func(ctx context.Context, uid string) (netns.NsHandle, error) {
			n, err := finder.PodNetns(ctx, uid)
			if err != nil {
				return 0, err
			}
			return n.Open()
		}
		o.Files = append(o.Files, *podStateDir)
	}
	plan, err := cleanup.PlanCleanup(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	defer plan.Close()
	fmt.Fprint(stdout, plan)
	if *dryRun {
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
	if !*wait {
		return ExitOK
	}
	if err := os.WriteFile(*doneFile, []byte("clean\n"), 0o644); err != nil {
		fmt.Fprintln(stderr, "network-agent cleanup:", err)
		return ExitFailed
	}
	sig, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-sig.Done()
	return ExitOK
}
