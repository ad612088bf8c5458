// Package app is the node agent's command line: it parses flags and wires the parts together (data plane,
// nodenet, FRR, reconcile engine, metrics and health endpoints) for one of three modes:
//
//	network-agent [flags]                          Kubernetes: this node's NodeNetworkConfig (--node-name)
//	network-agent --config-file node.yaml [flags]  standalone: apply the file and keep it applied
//	network-agent dataplane <command> ...          the data-plane CLI (agent/dpctl)
//
// --once applies the file and exits (status 0: applied and healthy, 1: not applied, 2: usage); --dry-run
// prints the plan and changes nothing.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/network-operator/network-operator/agent/cri"
	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/dpctl"
	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/kube"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/metrics"
	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnetctl"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	"github.com/network-operator/network-operator/agent/reconcile"
	"github.com/network-operator/network-operator/agent/specfile"
	"github.com/network-operator/network-operator/agent/standalone"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Exit statuses.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitUsage    = 2
	exitUsageMsg = "Usage: network-agent [--config-file FILE [--once|--dry-run]] [flags]   |   network-agent dataplane <command>"
)

// flags are the command line settings.
type flags struct {
	configFile, statusFile, nodeName, kubeconfig string
	once, dryRun                                 bool
	netnsName, pinDir, stateFile                 string
	listen                                       string
	resync                                       time.Duration
	startupTaint                                 string
	frrMode, frrVtySocket, frrConfDir            string
	frrStateDir, frrSystemdUnit, frrBaseConfig   string
	frrRoot, frrVersion                          string
	frrScratch                                   bool
	healthGateTimeout                            time.Duration
	frrScratchIdle                               time.Duration
	frrManagementVRFs                            string
	frrWait                                      time.Duration
	bgpGracefulRestart                           bool
	bgpRestartTime                               time.Duration
	passwordDir                                  string
	vtepInterface, vrfMode, vethVRFs             string
	tcHook                                       string
	vtepAddress                                  netip.Addr
	defaultMTU                                   int
	logLevel                                     string
	podNetwork                                   bool
	criSocket, podNetns, podStateDir             string
	podSysctlDir                                 string
	memoryLimit                                  int64 // bytes; 0: $GOMEMLIMIT or none
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("network-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, exitUsageMsg)
		fs.PrintDefaults()
	}
	f.registerModes(fs)
	f.registerFRR(fs)
	f.registerNode(fs)
	f.registerPodNetwork(fs)
	memoryLimit := f.registerRuntime(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := f.check(fs); err != nil {
		return nil, err
	}
	if *memoryLimit != "" {
		q, err := resource.ParseQuantity(*memoryLimit)
		if err != nil || q.Value() <= 0 {
			return nil, fmt.Errorf("--memory-limit %q: want a positive quantity such as 64Mi", *memoryLimit)
		}
		f.memoryLimit = q.Value()
	}
	if err := cri.Source(f.podNetns).Check(); err != nil {
		return nil, fmt.Errorf("--pod-netns: %w", err)
	}
	return f, nil
}

// registerModes registers the flags of the mode (standalone or Kubernetes) and what the agent keeps and serves.
func (f *flags) registerModes(fs *flag.FlagSet) {
	fs.StringVar(&f.configFile, "config-file", "", "standalone mode: a NodeNetworkConfig (or das-schiff node config) file to apply without Kubernetes")
	fs.BoolVar(&f.once, "once", false, "standalone: apply the file once and exit (0 applied and healthy, 1 not)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan for the file (or this node's NodeNetworkConfig) and change nothing")
	fs.StringVar(&f.statusFile, "status-file", "", "standalone: write the node's status to this file after every reconcile")
	fs.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "Kubernetes mode: this node's name (default $NODE_NAME)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Kubernetes mode: kubeconfig file (default: in-cluster or $KUBECONFIG)")
	fs.StringVar(&f.stateFile, "state-file", lastapplied.DefaultPath, "where the last good configuration is kept")
	fs.StringVar(&f.listen, "listen", ":9750", "address of /metrics, /healthz and /readyz (empty: off)")
	fs.DurationVar(&f.resync, "resync", 30*time.Second, "reconcile this often even without changes (drift repair, health)")
	fs.StringVar(&f.startupTaint, "startup-taint", kube.DefaultStartupTaint, "Kubernetes mode: taint removed from the Node once healthy (\"-\": none)")
	fs.StringVar(&f.passwordDir, "password-dir", "", "standalone: BGP passwords as files <dir>/<namespace>/<name>/<key> (passwordSecretRef)")
}

// registerFRR registers the flags of how FRR is rendered, validated and reloaded, and the BGP speaker's graceful restart.
func (f *flags) registerFRR(fs *flag.FlagSet) {
	fs.StringVar(&f.frrMode, "frr", frrReload, "FRR handling: reload (render, validate, reload via frr-reload.py), systemd (render, validate, "+
		"then systemctl reload of --frr-systemd-unit over D-Bus: for hosts whose own FRR runs as a systemd unit) or none")
	fs.StringVar(&f.frrSystemdUnit, "frr-systemd-unit", "frr.service", "--frr systemd: the unit to reload")
	fs.StringVar(&f.frrBaseConfig, "frr-base-config", "", "render FRR's config into this base config at its hint comments "+
		"(#++{{.VRFs}}, #++{{.BGP}}, ...) instead of a whole frr.conf; the base owns the underlay")
	fs.StringVar(&f.frrManagementVRFs, "frr-management-vrfs", "", "--frr-base-config: comma-separated VRFs the base provisions "+
		"(das-schiff's skipVRFConfig); their route configs fill the base's rm_<vrf>_export / rm_<vrf>_import route-maps")
	fs.StringVar(&f.frrVtySocket, "frr-vty-socket", "", "directory of FRR's vty sockets (default: FRR's)")
	fs.StringVar(&f.frrConfDir, "frr-conf-dir", "", "directory of frr.conf (default /etc/frr)")
	fs.StringVar(&f.frrVersion, "frr-version", "", "the FRR release to render and diff for (8.x or 10.x); default: asked "+
		"from FRR at start (show version), 10.3 with --dry-run")
	fs.StringVar(&f.frrRoot, "frr-root", "", "run FRR's programs (vtysh, frr-reload.py, the scratch daemons) chrooted from this unpacked "+
		"root file system of the FRR image, for a node whose FRR is not in the agent's own file system (namespace nodes); "+
		"default: this file system's")
	fs.StringVar(&f.frrStateDir, "frr-state-dir", "/var/lib/network-operator/frr", "where the last applied FRR config is kept")
	fs.BoolVar(&f.frrScratch, "frr-scratch", true, "validate every new FRR config in scratch daemons (kept running) before applying it")
	fs.DurationVar(&f.frrScratchIdle, "frr-scratch-idle", 10*time.Minute, "stop the scratch FRR daemons after this long without a "+
		"validation (they hold about as much memory as the node's FRR; the next validation starts them again); 0: keep them")
	fs.BoolVar(&f.bgpGracefulRestart, "bgp-graceful-restart", true, "the node is a BGP graceful-restart speaker in every "+
		"instance it renders (not into --frr-base-config's base): its peers keep the routes learnt from it while its bgpd "+
		"restarts (an upgrade, a crash)")
	fs.DurationVar(&f.healthGateTimeout, "health-gate-timeout", reconcile.DefaultGateTimeout, "after applying a changed "+
		"configuration: how long the fabric sessions that were up, the API server and the spec's health probes have to "+
		"answer before the node fails the revision and restores the last good state (0: no gate)")
	fs.DurationVar(&f.bgpRestartTime, "bgp-restart-time", 0, "--bgp-graceful-restart: how long peers keep the node's "+
		"routes for it to come back, whole seconds up to 4095s (0: FRR's 120s; zebra's -K in the chart should match)")
	fs.DurationVar(&f.frrWait, "frr-wait", 2*time.Minute, "at start, wait this long for FRR to answer (it may start next to the agent, e.g. in its pod)")
}

// registerNode registers the flags of the node's namespace, VXLAN, VRFs and the router's attachment.
func (f *flags) registerNode(fs *flag.FlagSet) {
	fs.StringVar(&f.netnsName, "netns", "", "network namespace to configure (name under /run/netns or a path); default: the agent's own")
	fs.StringVar(&f.pinDir, "pin-dir", loader.DefaultPinDir, "bpffs directory of the eBPF router's pins")
	fs.StringVar(&f.vtepInterface, "vtep-interface", "", "underlay device every VXLAN is bound to (optional)")
	fs.Func("vtep-address", "local VXLAN tunnel endpoint address (default: the spec's underlay.vtepAddress; a standalone file "+
		"without one: the address of --vtep-interface or dum.underlay, else the router id)", func(s string) error {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("not an IP address: %w", err)
		}
		f.vtepAddress = a.Unmap()
		return nil
	})
	fs.StringVar(&f.vrfMode, "vrf-mode", "auto", "VRFs: auto (VRF devices when the kernel has them), device or table-only")
	fs.StringVar(&f.tcHook, "tc-hook", tcHookTCX, "how the router attaches at the tc hook: tcx (links, where the kernel has "+
		"them) or legacy (clsact + cls_bpf filters: ~0.5 ms a device instead of a tcx attach's RCU grace period, "+
		"~12 ms; for nodes that attach to thousands of devices at once)")
	fs.StringVar(&f.vethVRFs, "veth-vrfs", "", "comma-separated VRFs that get a veth pair to the default VRF")
	fs.IntVar(&f.defaultMTU, "default-mtu", 0, "MTU of a VRF's links when the spec sets none (0: 1500)")
}

// registerPodNetwork registers --pod-network and how pods are reached.
func (f *flags) registerPodNetwork(fs *flag.FlagSet) {
	fs.BoolVar(&f.podNetwork, "pod-network", false, "Kubernetes mode: apply PodNetworkConfigs to this node's pods (their network namespaces, found through --cri-socket)")
	fs.StringVar(&f.criSocket, "cri-socket", cri.DefaultSocket, "--pod-network: the container runtime's CRI socket")
	fs.StringVar(&f.podNetns, "pod-netns", string(cri.SourceAuto), "--pod-network: how a pod's network namespace is reached: path (the runtime's "+
		"netns path; its directory must be mounted), pid (/proc/<sandbox pid>/ns/net; needs hostPID) or auto (path when visible, else pid)")
	fs.StringVar(&f.podStateDir, "pod-state-dir", podrecords.DefaultDir, "--pod-network: where the per-pod records are kept (original tuning, interfaces made)")
	fs.StringVar(&f.podSysctlDir, "pod-sysctl-dir", podnet.DefaultSysctlDir, "--pod-network: the sysctl tree written from inside pods' namespaces "+
		"(a container's own /proc/sys is read-only: mount the host's elsewhere)")
}

// registerRuntime registers the flags of logging and the Go runtime; it returns --memory-limit, parsed after the flags.
func (f *flags) registerRuntime(fs *flag.FlagSet) *string {
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	return fs.String("memory-limit", "", "soft limit of the Go runtime's memory, e.g. 64Mi (debug.SetMemoryLimit: near it the garbage "+
		"collector runs more often instead of letting the heap grow to twice what is live; below the container's limit). Empty: $GOMEMLIMIT or none")
}

// check refuses flag combinations that cannot work, naming the flags.
func (f *flags) check(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case f.once && f.configFile == "":
		return errors.New("--once needs --config-file")
	case f.configFile == "" && f.nodeName == "":
		return errors.New("either --config-file (standalone) or --node-name / $NODE_NAME (Kubernetes) is required")
	case f.frrMode != frrReload && f.frrMode != frrSystemd && f.frrMode != frrNone:
		return fmt.Errorf("--frr %q: want %s, %s or %s", f.frrMode, frrReload, frrSystemd, frrNone)
	case f.tcHook != tcHookTCX && f.tcHook != tcHookLegacy:
		return fmt.Errorf("--tc-hook %q: want %s or %s", f.tcHook, tcHookTCX, tcHookLegacy)
	case f.frrManagementVRFs != "" && f.frrBaseConfig == "":
		return errors.New("--frr-management-vrfs needs --frr-base-config")
	case f.frrBaseConfig != "" && f.frrMode == frrNone:
		return errors.New("--frr-base-config needs --frr reload or systemd")
	case f.podNetwork && f.configFile != "":
		return errors.New("--pod-network needs Kubernetes mode (no --config-file)")
	case f.bgpRestartTime != 0 && (f.bgpRestartTime%time.Second != 0 || f.bgpRestartTime < time.Second ||
		f.bgpRestartTime > frr.MaxGracefulRestartTime):
		return fmt.Errorf("--bgp-restart-time %s: want whole seconds, 1s..%s (0: FRR's default)", f.bgpRestartTime,
			frr.MaxGracefulRestartTime)
	}
	return nil
}

// gate sets the engine's health gate from --health-gate-timeout: probes of the spec are dialled in the node's
// namespace ns. Both the agent and its --dry-run use it, so the printed plan has the gate that runs.
func (f *flags) gate(eo *reconcile.Options, ns netns.NsHandle) {
	eo.GateTimeout = f.healthGateTimeout
	if f.healthGateTimeout == 0 {
		eo.GateTimeout = -1
	}
	eo.Dial = func(ctx context.Context, network, addr string) (conn net.Conn, err error) {
		err = netnsrun.Run(ns, func() error {
			var d net.Dialer
			conn, err = d.DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
}

// apiServerProbe is the health gate's check that the node still reaches the API server after a change.
func apiServerProbe(cfg *rest.Config) (reconcile.Probe, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return reconcile.Probe{}, fmt.Errorf("API server probe: %w", err)
	}
	return reconcile.Probe{Name: "api-server", Check: func(ctx context.Context) error {
		return dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}}, nil
}

// gracefulRestart is what --bgp-graceful-restart renders into FRR's config: nil when off, and for a host's own
// base config (--frr-base-config), whose BGP instance is the host's.
func (f *flags) gracefulRestart() *frr.GracefulRestart {
	if !f.bgpGracefulRestart || f.frrBaseConfig != "" {
		return nil
	}
	return &frr.GracefulRestart{RestartTime: f.bgpRestartTime}
}

// --frr values.
const (
	frrReload  = "reload"
	frrSystemd = "systemd"
	frrNone    = "none"
)

// --tc-hook values.
const (
	tcHookTCX    = "tcx"
	tcHookLegacy = "legacy"
)

// Run runs the agent; args exclude the program name. It returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cleanup" {
		return runCleanup(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "dataplane" {
		err := dpctl.Run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return ExitOK
		case errors.Is(err, dpctl.ErrUsage):
			fmt.Fprintln(stderr, "network-agent:", err)
			return ExitUsage
		default:
			fmt.Fprintln(stderr, "network-agent:", err)
			return ExitFailed
		}
	}
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "network-agent:", err)
		fmt.Fprintln(stderr, exitUsageMsg)
		return ExitUsage
	}
	logger := newLogger(stderr, f.logLevel)
	if f.memoryLimit > 0 {
		debug.SetMemoryLimit(f.memoryLimit)
		logger.Info("Go memory limit set", "bytes", f.memoryLimit)
	}
	if err := run(ctx, f, stdout, logger); err != nil {
		fmt.Fprintln(stderr, "network-agent:", err)
		return ExitFailed
	}
	return ExitOK
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// openNetns returns the handle of the namespace to configure (0: the agent's own) and a netlink handle in it.
func openNetns(name string) (netns.NsHandle, *netlink.Handle, error) {
	if name == "" {
		h, err := netlink.NewHandle()
		if err != nil {
			return 0, nil, fmt.Errorf("netlink handle: %w", err)
		}
		return 0, h, nil
	}
	path := name
	if !strings.Contains(name, "/") {
		path = filepath.Join("/run/netns", name)
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return 0, nil, fmt.Errorf("--netns %s: %w", name, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		ns.Close()
		return 0, nil, fmt.Errorf("netlink handle in %s: %w", name, err)
	}
	return ns, h, nil
}

func run(ctx context.Context, f *flags, stdout io.Writer, logger *slog.Logger) error {
	reloader, render, err := newFRR(ctx, f, logger)
	if err != nil {
		return err
	}
	if reloader != nil {
		defer func() { // its scratch FRR instance goes with the agent
			if err := reloader.Close(); err != nil {
				logger.Warn("stopping the scratch FRR instance", "err", err)
			}
		}()
	}
	ns, links, err := openNetns(f.netnsName)
	if err != nil {
		return err
	}
	defer links.Close()
	if ns > 0 {
		defer ns.Close()
	}
	nc, err := openNodenet(ctx, f, links, ns, logger)
	if err != nil {
		return err
	}
	store := lastapplied.New(f.stateFile)
	passwords := f.passwords()

	if f.dryRun {
		return dryRun(ctx, f, stdout, nc, reloader, render, ns, links, store, passwords)
	}
	// Resyncs of a quiet node plan from the last read instead of reading every link, route and rule again.
	if stopWatch, err := nc.WatchChanges(); err != nil {
		logger.Warn("no netlink change notifications: every resync reads the node", "err", err)
	} else {
		defer stopWatch()
	}

	if reloader != nil {
		if err := startFRR(ctx, reloader, f.frrWait, logger); err != nil {
			return err
		}
		if f.frrScratchIdle > 0 {
			defer releaseIdleScratch(ctx, reloader, f.frrScratchIdle, logger)()
		}
	}
	m := metrics.New()
	dp, err := openDataplane(ctx, f, ns, links, rebuildFrom(store, nc, links, logger), logger)
	if err != nil {
		return err
	}
	defer dp.Close()
	mirrors, stopMirrorWatch := watchedMirrors(links, ns, logger)
	defer stopMirrorWatch()
	eo := reconcile.Options{Netlink: nc, Dataplane: dp, Links: links, Store: store, Metrics: m, Logger: logger, RenderFRR: render,
		Mirror: mirrors, GracefulRestart: f.gracefulRestart()}
	kubeCfg, rewrite, err := f.completeEngineOptions(&eo, ns, render, reloader)
	if err != nil {
		return err
	}
	engine, err := reconcile.New(eo)
	if err != nil {
		return err
	}

	if f.listen != "" {
		stop, err := serve(f.listen, m, engine, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	if f.configFile != "" {
		return standalone.Run(ctx, standalone.Options{File: f.configFile, Engine: engine, Resync: f.resync,
			Once: f.once, StatusFile: f.statusFile, Passwords: passwords, Out: stdout, Logger: logger,
			Env: fileEnv(f, links), Rewrite: rewrite})
	}
	return runKube(ctx, f, kubeCfg, engine, links, ns, logger)
}

// passwords reads BGP passwords from --password-dir (standalone); nil without it.
func (f *flags) passwords() frrmodel.PasswordFunc {
	if f.passwordDir == "" {
		return nil
	}
	return filePasswords(f.passwordDir)
}

// openDataplane loads (or adopts) the eBPF router and logs how.
func openDataplane(ctx context.Context, f *flags, ns netns.NsHandle, links *netlink.Handle, rebuild func(context.Context) (maps.Tables, string, error),
	logger *slog.Logger) (*dataplane.Dataplane, error) {
	dp, err := dataplane.Open(ctx, dataplane.Options{PinDir: f.pinDir, NetNS: ns, Links: links, Logger: logger,
		Rebuild: rebuild, LegacyTC: f.tcHook == tcHookLegacy})
	if err != nil {
		return nil, err
	}
	rep := dp.LoadReport()
	logger.Info("eBPF router loaded", "pinDir", f.pinDir, "created", rep.Created, "reused", rep.Reused,
		"adopted", rep.Adopted, "migrated", rep.Migrated)
	return dp, nil
}

// watchedMirrors makes the mirror manager, subscribed to the node's tc changes where the kernel notifies them;
// stop ends the subscription.
func watchedMirrors(links *netlink.Handle, ns netns.NsHandle, logger *slog.Logger) (*mirror.Manager, func()) {
	mirrors := mirror.New(links, ns)
	stopWatch, err := mirrors.WatchChanges()
	if err != nil {
		logger.Warn("no tc change notifications: every resync reads the node's qdiscs and filters", "err", err)
		return mirrors, func() {}
	}
	return mirrors, stopWatch
}

// completeEngineOptions adds what the mode decides to the engine's options: the health gate and the API server's
// probe (Kubernetes mode, with its client config), the file's FRR replacements (standalone) and the FRR parts.
func (f *flags) completeEngineOptions(eo *reconcile.Options, ns netns.NsHandle, render func(*frr.NodeConfig) ([]byte, error),
	reloader *frrreload.Reloader) (*rest.Config, *standalone.Rewrite, error) {
	f.gate(eo, ns)
	var kubeCfg *rest.Config
	if f.configFile == "" {
		var err error
		if kubeCfg, err = kubeConfig(f.kubeconfig); err != nil {
			return nil, nil, fmt.Errorf("kubernetes client config: %w", err)
		}
		probe, err := apiServerProbe(kubeCfg)
		if err != nil {
			return nil, nil, err
		}
		eo.Probes = append(eo.Probes, probe)
	}
	var rewrite *standalone.Rewrite
	if f.configFile != "" {
		rewrite = &standalone.Rewrite{} // the file's FRR replacements (das-schiff)
		eo.RenderFRR = rewrite.Render(render)
	}
	if reloader != nil {
		eo.FRR, eo.FRRStatus, eo.FRRVersion = reloader, reloader.Target(), reloader.Target().Version
	}
	return kubeCfg, rewrite, nil
}

// openNodenet makes the netlink planner for this node: its settings from the flags, checked against what the
// kernel can do (the router's variant, bpf.RouterSpec probes the same; the link kinds). A kernel that cannot serve
// the VRF mode stops the agent here, naming the feature, rather than failing every revision on the node.
func openNodenet(ctx context.Context, f *flags, links *netlink.Handle, ns netns.NsHandle, logger *slog.Logger) (*nodenet.Manager, error) {
	settings := nodenet.Settings{VTEPAddress: f.vtepAddress, VTEPInterface: f.vtepInterface, VRFMode: nodenet.VRFMode(f.vrfMode), DefaultMTU: f.defaultMTU, NetNS: ns}
	if f.vethVRFs != "" {
		settings.VethVRFs = strings.Split(f.vethVRFs, ",")
	}
	router, err := bpf.ProbeFeatures()
	if err != nil {
		return nil, fmt.Errorf("probe the kernel's BPF features: %w", err)
	}
	if !router.FIBTableID {
		settings.NoTableLookup = "this kernel's bpf_fib_lookup takes no table id: " + bpf.FeatureFIBTableID + " missing"
	}
	nc, err := nodenet.New(links, settings)
	if err != nil {
		return nil, err
	}
	kernel, err := nc.Features(ctx)
	if err != nil {
		return nil, fmt.Errorf("probe the kernel's link kinds: %w", err)
	}
	if err := nodenet.CheckKernel(settings, kernel); err != nil {
		return nil, fmt.Errorf("this kernel cannot serve the agent's settings: %w", err)
	}
	logger.Info("kernel features", "router", router.String(), "vrfDevices", kernel.VRF, "vlanDevices", kernel.VLAN)
	return nc, nil
}

func runKube(ctx context.Context, f *flags, cfg *rest.Config, engine *reconcile.Engine, links *netlink.Handle, ns netns.NsHandle, logger *slog.Logger) error {
	log.SetLogger(logr.FromSlogHandler(logger.Handler()))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1.AddToScheme(scheme); err != nil {
		return err
	}
	ko := kube.Options{NodeName: f.nodeName, Engine: engine, Resync: f.resync, StartupTaint: f.startupTaint, Logger: logger}
	if f.podNetwork {
		setup, closeCRI, err := podNetworking(f, links, ns, logger)
		if err != nil {
			return err
		}
		defer closeCRI()
		ko.Cache, ko.Setup = podnetctl.CacheOptions(f.nodeName), []func(ctrl.Manager) error{setup}
	}
	mgr, err := kube.NewManager(cfg, scheme, ko)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// podNetworking wires the pod networking controller: the CRI client that finds pods' namespaces, the applier
// working from the node's namespace, the per-pod records.
func podNetworking(f *flags, links *netlink.Handle, ns netns.NsHandle, logger *slog.Logger) (func(ctrl.Manager) error, func(), error) {
	finder, err := cri.New(f.criSocket, cri.Options{Source: cri.Source(f.podNetns)})
	if err != nil {
		return nil, nil, fmt.Errorf("--cri-socket / --pod-netns: %w", err)
	}
	store := podrecords.New(f.podStateDir)
	applier, err := podnet.New(links, podnet.Options{Store: store, HostNS: ns, SysctlDir: f.podSysctlDir})
	if err != nil {
		finder.Close()
		return nil, nil, err
	}
	logger.Info("pod networking on", "criSocket", f.criSocket, "netns", f.podNetns, "stateDir", f.podStateDir)
	setup := func(mgr ctrl.Manager) error {
		return podnetctl.Setup(mgr, podnetctl.Options{NodeName: f.nodeName, Applier: applier, Store: store, Netns: finder,
			Resync: f.resync, Logger: logger.With("controller", "podnetwork")})
	}
	return setup, func() { finder.Close() }, nil
}

// kubeConfig loads the --kubeconfig file when given, else what controller-runtime finds (KUBECONFIG, in-cluster,
// ~/.kube/config): no environment is changed to pass the flag on.
func kubeConfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return config.GetConfig()
}

// dryRun prints the plan for the file (or the node's object) without loading anything into the kernel.
func dryRun(ctx context.Context, f *flags, stdout io.Writer, nc *nodenet.Manager, reloader *frrreload.Reloader,
	render func(*frr.NodeConfig) ([]byte, error), ns netns.NsHandle, links *netlink.Handle, store *lastapplied.Store,
	passwords frrmodel.PasswordFunc) error {
	if f.configFile == "" {
		return errors.New("--dry-run needs --config-file")
	}
	doc, err := specfile.ReadFile(f.configFile, fileEnv(f, links))
	if err != nil {
		return err
	}
	rewrite := &standalone.Rewrite{}
	rewrite.Set(doc.Replacements)
	for _, n := range doc.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	view, err := dataplane.OpenView(ctx, f.pinDir, ns)
	if err != nil {
		return err
	}
	defer view.Close()
	eo := reconcile.Options{Netlink: nc, Dataplane: view, Links: links, Store: store, RenderFRR: rewrite.Render(render),
		Mirror: mirror.New(links, ns), GracefulRestart: f.gracefulRestart()}
	f.gate(&eo, ns)
	if reloader != nil {
		eo.FRR, eo.FRRStatus, eo.FRRVersion = reloader, reloader.Target(), reloader.Target().Version
	}
	engine, err := reconcile.New(eo)
	if err != nil {
		return err
	}
	plan, err := engine.Plan(ctx, &doc.Spec, passwords)
	if err != nil {
		return err // refused: nothing would be applied
	}
	fmt.Fprint(stdout, plan)
	return nil
}

// fileEnv is what the node says that a standalone file cannot: the VTEP address or where to find it.
func fileEnv(f *flags, links *netlink.Handle) specfile.Env {
	return specfile.Env{VTEPAddress: f.vtepAddress, VTEPInterface: f.vtepInterface, Addrs: standalone.LinkAddrs(links)}
}

// releaseIdleScratch stops the reloader's scratch FRR instance once it has been idle for idle, checking every
// quarter of it, until the returned stop is called.
func releaseIdleScratch(ctx context.Context, r *frrreload.Reloader, idle time.Duration, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(idle/4, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				released, err := r.ReleaseIdleScratch(ctx, idle, now)
				switch {
				case err != nil:
					logger.Warn("stopping the idle scratch FRR instance", "err", err)
				case released:
					logger.Info("stopped the scratch FRR instance, idle", "idle", idle)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// newFRR returns the reloader (nil with --frr none) and the renderer (nil: a whole frr.conf) the flags ask for.
// --frr systemd connects to the system bus, except for a dry run, which never reloads.
// frrTarget is the FRR the flags name.
func (f *flags) frrTarget() frrvty.Target {
	return frrvty.Target{VtySocket: f.frrVtySocket, ConfDir: f.frrConfDir,
		Tools: frrproc.Tools{Root: f.frrRoot, Binds: []string{f.frrStateDir}}}
}

// frrVersion is the FRR release the agent renders and diffs for: --frr-version, else the running FRR's, asked
// once it answers (it may start next to the agent, e.g. in its pod; a failed first health check would
// otherwise count against the spec). A release the agent does not support refuses the start.
func frrVersion(ctx context.Context, f *flags, logger *slog.Logger) (frr.Version, error) {
	if f.frrMode == frrNone {
		return frr.Version{}, nil
	}
	var v frr.Version
	switch {
	case f.frrVersion != "":
		var err error
		if v, err = frr.ParseVersion(f.frrVersion); err != nil {
			return v, fmt.Errorf("--frr-version: %w", err)
		}
	case f.dryRun:
		v = frr.Shipped()
	default:
		wctx, cancel := context.WithTimeout(ctx, f.frrWait)
		defer cancel()
		err := wait.PollUntilContextCancel(wctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var err error
			v, err = f.frrTarget().RunningVersion(ctx)
			return err == nil, nil
		})
		if err != nil {
			return v, fmt.Errorf("FRR did not answer within %v (--frr-wait): %w", f.frrWait, err)
		}
	}
	if err := v.Check(); err != nil {
		return v, fmt.Errorf("FRR %s: %w", v, err)
	}
	logger.Info("FRR", "release", v.String(), "fromFlag", f.frrVersion != "")
	return v, nil
}

func newFRR(ctx context.Context, f *flags, logger *slog.Logger) (*frrreload.Reloader, func(*frr.NodeConfig) ([]byte, error), error) {
	if f.frrMode == frrNone {
		return nil, nil, nil
	}
	var render func(*frr.NodeConfig) ([]byte, error)
	if f.frrBaseConfig != "" {
		if _, err := os.ReadFile(f.frrBaseConfig); err != nil {
			return nil, nil, fmt.Errorf("--frr-base-config: %w", err)
		}
		var mgmt []string
		if f.frrManagementVRFs != "" {
			mgmt = strings.Split(f.frrManagementVRFs, ",")
		}
		render = brownfield(f.frrBaseConfig, mgmt)
	}
	opts := frrreload.Options{Target: f.frrTarget(), StateDir: f.frrStateDir}
	if !f.frrScratch {
		opts.ScratchDaemons = []string{}
	}
	if f.frrMode == frrSystemd && !f.dryRun {
		sd, err := frrreload.NewSystemdDBus(ctx) // closed when ctx ends, with the agent
		if err != nil {
			return nil, nil, fmt.Errorf("--frr systemd: %w", err)
		}
		opts.Method, opts.Systemd, opts.SystemdUnit = frrreload.ReloadSystemd, sd, f.frrSystemdUnit
	}
	// Asked last: the flags' mistakes above are reported at once, not after waiting for FRR.
	version, err := frrVersion(ctx, f, logger)
	if err != nil {
		return nil, nil, err
	}
	opts.Version = version
	reloader, err := frrreload.NewReloader(opts)
	if err != nil {
		return nil, nil, err
	}
	return reloader, render, nil
}

// brownfield renders into the base config at path, read at every render so an edited base is applied at the
// next reconcile. The base owns the underlay (BGP instance, fabric neighbours, VTEP announcement): of the spec's
// underlay only ASN and router id are used, for the VRF instances and the route targets.
func brownfield(path string, managementVRFs []string) func(*frr.NodeConfig) ([]byte, error) {
	return func(cfg *frr.NodeConfig) ([]byte, error) {
		base, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--frr-base-config: %w", err)
		}
		c := *cfg
		c.Underlay = frr.Underlay{ASN: cfg.Underlay.ASN, RouterID: cfg.Underlay.RouterID}
		out, err := frr.RenderBrownfield(frr.Brownfield{Base: base, ManagementVRFs: managementVRFs}, &c)
		if err != nil {
			return nil, fmt.Errorf("--frr-base-config %s: %w", path, err)
		}
		return out, nil
	}
}

// startFRR waits until FRR answers - a failed first health check would otherwise count against the spec - and
// makes the reloader forget the last applied config when FRR was restarted without it (a new pod's FRR starts
// empty), so the first reconcile reloads.
func startFRR(ctx context.Context, r *frrreload.Reloader, wait time.Duration, logger *slog.Logger) error {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		_, err := r.Target().Summary(wctx)
		if err == nil {
			break
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("FRR did not answer within %v (--frr-wait): %w", wait, err)
		case <-t.C:
		}
	}
	forgot, err := r.Resync(ctx)
	if err != nil {
		return err
	}
	if forgot {
		logger.Info("FRR runs without the last applied config (restarted): the next reconcile reloads it")
	}
	return nil
}

// rebuildFrom gives the loader the last good tables when an upgrade forces new maps. An unreadable state file
// gives none (as a missing one does): the engine reports it and the next reconcile fills the tables, where an
// error would stop the agent from starting at all.
func rebuildFrom(store *lastapplied.Store, nc *nodenet.Manager, links *netlink.Handle, logger *slog.Logger) func(ctx context.Context) (maps.Tables, string, error) {
	return func(ctx context.Context) (maps.Tables, string, error) {
		st, err := store.Load()
		if err != nil {
			logger.Error("state file unreadable: the new maps start empty until the next reconcile", "err", err)
			return maps.Tables{}, "", nil
		}
		if st.Good == nil {
			return maps.Tables{}, "", nil
		}
		return reconcile.TablesFor(ctx, &st.Good.Spec, nc, links)
	}
}

// filePasswords reads passwordSecretRef values from <dir>/<namespace>/<name>/<key> (standalone mode).
func filePasswords(dir string) frrmodel.PasswordFunc {
	return func(_ context.Context, ref v1.SecretKeyReference) (string, error) {
		for _, p := range []string{ref.Namespace, ref.Name, ref.Key} {
			if p == "" || p == "." || p == ".." || strings.ContainsRune(p, '/') {
				return "", fmt.Errorf("secret reference %s/%s key %s: not a valid path element", ref.Namespace, ref.Name, ref.Key)
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, ref.Namespace, ref.Name, ref.Key))
		if err != nil {
			return "", fmt.Errorf("password of %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		return strings.TrimRight(string(data), "\r\n"), nil
	}
}

// serve starts the HTTP endpoints and returns a function that stops them.
func serve(addr string, m *metrics.Metrics, engine *reconcile.Engine, logger *slog.Logger) (func(), error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, msg := engine.Ready()
		if !ok {
			http.Error(w, "not ready: "+msg, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready:", msg)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
		logger.Info("serving /metrics, /healthz, /readyz", "address", ap.String())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http server", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
