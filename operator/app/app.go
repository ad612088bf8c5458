// Package app is the operator's command line: it parses flags and wires the parts together (controllers,
// webhooks and their certificate, metrics, health endpoints, leader election) for one of two modes:
//
//	network-operator [flags]            the central controllers (and the validating webhooks)
//	network-operator uninstall [flags]  the chart's pre-delete hook: empty every node (see operator/uninstall)
//
// cmd/network-operator only wires signals and the exit status.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/operator/controllers"
	"github.com/network-operator/network-operator/operator/metrics"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/operator/webhook"
	"github.com/network-operator/network-operator/operator/webhookcert"
	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// Exit statuses.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// Webhook certificate modes (--webhook-cert-mode).
const (
	certModeFiles = "files" // already in --webhook-cert-dir (e.g. from cert-manager)
	certModeSelf  = "self"  // made, rotated and published by the operator (package webhookcert)
)

// LeaderElectionID names the leader election Lease (in the operator's namespace).
const LeaderElectionID = "network-operator.network.network-operator.io"

// flags are the command line settings of the controllers.
type flags struct {
	kubeconfig                       string
	metricsAddr, probeAddr, leaderNS string
	leaderElect, webhooks, verbose   bool
	webhookHost, webhookCertDir      string
	webhookPort                      int
	certMode                         string
	cert                             webhookcert.Options
	controllers                      controllers.Options
}

// parseFlags parses and checks the command line; every error is a usage error.
func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	var r rawFlags
	fs := flag.NewFlagSet("network-operator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.registerServer(fs)
	f.registerRollout(fs, &r)
	f.registerNodeConfig(fs, &r)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := f.resolveNodeConfig(&r); err != nil {
		return nil, err
	}
	if err := f.resolveCertMode(); err != nil {
		return nil, err
	}
	return f, nil
}

// rawFlags are flag values parsed into the options after all flags are read.
type rawFlags struct {
	maxUnavailable, underlayIfaces, underlayNeighbors, underlayFamilies, vtepFamily string
	underlayBFD                                                                     underlayBFDFlags
}

// registerServer registers the flags of the API client, the endpoints, leader election and the webhooks.
func (f *flags) registerServer(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster or $KUBECONFIG)")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, so only one replica reconciles")
	fs.StringVar(&f.leaderNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	fs.BoolVar(&f.webhooks, "webhooks", true, "serve the validating admission webhooks")
	fs.StringVar(&f.webhookHost, "webhook-host", "", "address the webhook server listens on (default: all)")
	fs.IntVar(&f.webhookPort, "webhook-port", 9443, "port of the webhook server")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", "", "directory with the webhook serving certificate tls.crt and key tls.key (default: controller-runtime's)")
	fs.StringVar(&f.certMode, "webhook-cert-mode", certModeFiles, "who provides the webhook serving certificate: files (already in --webhook-cert-dir, e.g. from cert-manager) or self (the operator makes, rotates and publishes it)")
	fs.StringVar(&f.cert.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace (webhook Service and certificate Secret; default $POD_NAMESPACE)")
	fs.StringVar(&f.cert.SecretName, "webhook-cert-secret", "network-operator-webhook-cert", "with --webhook-cert-mode=self: the Secret holding the certificate")
	fs.StringVar(&f.cert.ServiceName, "webhook-service", "network-operator-webhook", "with --webhook-cert-mode=self: the webhook Service the certificate is for")
	fs.StringVar(&f.cert.WebhookConfiguration, "webhook-configuration", "network-operator-validating", "with --webhook-cert-mode=self: the ValidatingWebhookConfiguration that gets the caBundle")
	fs.BoolVar(&f.verbose, "v", false, "debug logging")
}

// registerRollout registers the flags of how revisions are made and rolled out.
func (f *flags) registerRollout(fs *flag.FlagSet, r *rawFlags) {
	o := &f.controllers
	fs.DurationVar(&o.Debounce, "debounce", time.Second, "delay between the first change of a burst and the snapshot")
	fs.StringVar(&r.maxUnavailable, "max-unavailable", "1", "nodes updating at once: a number or a percentage (revision annotation "+controllers.AnnotationMaxUnavailable+" overrides)")
	fs.DurationVar(&o.ProgressDeadline, "progress-deadline", 10*time.Minute, "time a node has to confirm its configuration before the revision fails")
	fs.StringVar(&o.TopologyLabel, "rollout-topology-label", "", "roll out group by group of this Node label's value (e.g. topology.kubernetes.io/zone)")
	fs.IntVar(&o.KeepRevisions, "keep-revisions", 10, "newest revisions kept by pruning (besides target, last good and referenced ones)")
}

// registerNodeConfig registers the flags of what every node's config gets: the underlay, health probes, the
// data plane.
func (f *flags) registerNodeConfig(fs *flag.FlagSet, r *rawFlags) {
	o := &f.controllers
	fs.Int64Var(&o.NodeConfig.Underlay.ASN, "underlay-asn", 65000, "AS number of the nodes (Node annotation "+nodespec.AnnotationASN+" overrides)")
	fs.StringVar(&r.underlayIfaces, "underlay-interfaces", "", "comma-separated fabric uplinks (Node annotation "+nodespec.AnnotationUnderlayInterfaces+" overrides)")
	fs.StringVar(&o.NodeConfig.Underlay.RemoteASN, "underlay-remote-asn", "external", "remote AS of the uplink neighbours: a number, internal or external")
	fs.StringVar(&r.underlayNeighbors, "underlay-neighbors", "", "comma-separated numbered underlay neighbours of every node, IPv4 or IPv6 "+
		"(an IPv6 link-local one as ADDRESS%INTERFACE), e.g. route reflectors (Node annotation "+nodespec.AnnotationUnderlayNeighbors+" overrides)")
	fs.StringVar(&r.underlayFamilies, "underlay-address-families", "", "unicast address families the underlay carries: IPv4, IPv6 or "+
		"IPv4,IPv6 (dual-stack) (default: the family of each node's VTEP address)")
	fs.StringVar(&r.vtepFamily, "underlay-vtep-family", "", "address family of every node's VTEP address, IPv4 or IPv6: enforced on the "+
		"Nodes and on static flooding peers at admission; IPv6 takes a Node's IPv6 InternalIP without annotation "+
		nodespec.AnnotationVTEPAddress+" (default: the only --underlay-address-families, else not enforced)")
	fs.BoolVar(&r.underlayBFD.enabled, "underlay-bfd", false, "run BFD on every underlay session (FRR's bfdd runs next to bgpd)")
	fs.DurationVar(&r.underlayBFD.interval, "underlay-bfd-interval", 0, "with --underlay-bfd: BFD receive and transmit interval, whole milliseconds 10ms..60s (0: bfdd's 300ms)")
	fs.IntVar(&r.underlayBFD.multiplier, "underlay-bfd-detect-multiplier", 0, "with --underlay-bfd: packets missed before a peer is down, 2..255 (0: bfdd's 3)")
	fs.DurationVar(&r.underlayBFD.echo, "underlay-bfd-echo-interval", 0, "with --underlay-bfd: echo mode at this interval (0: no echo)")
	fs.Func("health-probe", "NAME=ADDRESS:PORT a TCP endpoint every node must reach after a change, or it fails the revision "+
		"(repeatable; e.g. dns=192.0.2.53:53)", func(s string) error {
		name, addr, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%q: want NAME=ADDRESS:PORT", s)
		}
		o.NodeConfig.HealthProbes = append(o.NodeConfig.HealthProbes, v1.HealthProbe{Name: name, Address: addr})
		return nil
	})
	fs.BoolVar(&o.NodeConfig.Strict, "dataplane-strict", false, "the eBPF router drops what it cannot forward")
	fs.BoolVar(&o.NodeConfig.L2Gateways, "dataplane-l2-gateways", true, "route traffic of layer-2 networks with anycast gateways in a tenant VRF through the eBPF router (their "+v1.L2BridgePrefix+"<vlan> bridges)")
	fs.Func("dataplane-interface", "extra data-plane interface name[@vlan]=vrf[:mode] (repeatable; e.g. eth1@100=blue, l2br.100=blue:pass)", func(s string) error {
		i, err := nodespec.ParseInterface(s)
		o.NodeConfig.Interfaces = append(o.NodeConfig.Interfaces, i)
		return err
	})
}

// resolveNodeConfig parses the raw values into the options and refuses what is invalid, naming the flag.
func (f *flags) resolveNodeConfig(r *rawFlags) error {
	o := &f.controllers
	o.MaxUnavailable = intstr.Parse(r.maxUnavailable)
	for i := range strings.SplitSeq(r.underlayIfaces, ",") {
		if i = strings.TrimSpace(i); i != "" {
			o.NodeConfig.Underlay.Interfaces = append(o.NodeConfig.Underlay.Interfaces, i)
		}
	}
	errs := bgp.ValidateASN(field.NewPath("--underlay-asn"), o.NodeConfig.Underlay.ASN)
	errs = append(errs, bgp.ValidateRemoteAS(field.NewPath("--underlay-remote-asn"), o.NodeConfig.Underlay.RemoteASN)...)
	errs = append(errs, underlayFamilyFlags(&o.NodeConfig.Underlay, r.underlayFamilies, r.vtepFamily, r.underlayNeighbors)...)
	errs = append(errs, validation.ValidateHealthProbes(field.NewPath("--health-probe"), o.NodeConfig.HealthProbes)...)
	var bfdErrs field.ErrorList
	o.NodeConfig.Underlay.BFD, bfdErrs = r.underlayBFD.profile()
	errs = append(errs, bfdErrs...)
	if err := fielderr.Join(errs); err != nil {
		return err
	}
	return nil
}

// resolveCertMode checks --webhook-cert-mode and where the serving certificate is read from.
func (f *flags) resolveCertMode() error {
	switch f.certMode {
	case certModeFiles:
	case certModeSelf:
		if f.webhookCertDir == "" {
			// controller-runtime's default, named so the certificate manager writes where the server reads.
			f.webhookCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
		}
	default:
		return fmt.Errorf("--webhook-cert-mode %q: want %s or %s", f.certMode, certModeFiles, certModeSelf)
	}
	f.cert.CertDir = f.webhookCertDir
	return nil
}

// Run runs the operator; args exclude the program name. It returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "uninstall" {
		return runUninstall(ctx, args[1:], stdout, stderr)
	}
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "network-operator:", err)
		return ExitUsage
	}
	if err := run(ctx, f, stderr); err != nil {
		fmt.Fprintln(stderr, "network-operator:", err)
		return ExitFailed
	}
	return ExitOK
}

// run runs the controllers until ctx ends.
func run(ctx context.Context, f *flags, stderr io.Writer) error {
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := logr.FromSlogHandler(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	ctrl.SetLogger(logger)

	scheme, err := newScheme()
	if err != nil {
		return err
	}
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.CountRequests(cfg) // before any client is made from cfg
	var certs *webhookcert.Manager
	if f.webhooks && f.certMode == certModeSelf {
		if certs, err = ensureCertificate(ctx, cfg, scheme, f.cert); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  logger,
		Cache:                   controllers.ManagerCacheOptions(),
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: f.leaderNS,
		WebhookServer:           ctrlwebhook.NewServer(ctrlwebhook.Options{Host: f.webhookHost, Port: f.webhookPort, CertDir: f.webhookCertDir}),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := setup(mgr, f, certs, m); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	return nil
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1.AddToScheme(scheme)); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return scheme, nil
}

// restConfig is the API server's address and credentials: from the kubeconfig file when one is named, else
// in-cluster or $KUBECONFIG (controller-runtime's rules). Either way without a client-side rate limit unless the
// file sets one, as controller-runtime's GetConfig: the API server's priority and fairness paces the operator.
// (client-go's default of 5 requests per second would pace a rollout instead: one write per node.)
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := config.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1 // what config.GetConfig sets
	}
	return cfg, nil
}

// ensureCertificate makes the self-managed webhook certificate before the webhook server starts (it reads the
// files when it starts), with a direct client: there is no cache yet.
func ensureCertificate(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, o webhookcert.Options) (*webhookcert.Manager, error) {
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	certs, err := webhookcert.New(direct, o)
	if err != nil {
		return nil, fmt.Errorf("webhook certificate options: %w", err)
	}
	if err := certs.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("webhook certificate: %w", err)
	}
	return certs, nil
}

// setup adds the controllers (reporting to m), the webhooks, the certificate manager (nil: none) and the health
// checks.
func setup(mgr manager.Manager, f *flags, certs *webhookcert.Manager, m *metrics.Metrics) error {
	opts := f.controllers
	opts.Metrics = m
	if err := controllers.Setup(mgr, opts); err != nil {
		return fmt.Errorf("set up controllers: %w", err)
	}
	if f.webhooks {
		if err := (webhook.Options{VTEPFamily: opts.NodeConfig.Underlay.VTEPFamily}).Setup(mgr); err != nil {
			return fmt.Errorf("set up webhooks: %w", err)
		}
	}
	if certs != nil {
		if err := mgr.Add(certs); err != nil { // renews before expiry, on every replica
			return fmt.Errorf("add webhook certificate manager: %w", err)
		}
	}
	return addChecks(mgr, f.webhooks)
}

// addChecks adds /healthz and /readyz: ready once the informers are synced (and the webhook server listens,
// when enabled).
func addChecks(mgr manager.Manager, webhooks bool) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches not synced")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	if webhooks {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return fmt.Errorf("add webhook readiness check: %w", err)
		}
	}
	return nil
}

// underlayFamilyFlags reads --underlay-address-families, --underlay-vtep-family and --underlay-neighbors into u:
// known families, each once; the VTEP family among the underlay's (the only one by default); every neighbour an
// address of a family the underlay carries (an IPv6 link-local one with its interface). Errors name the flag.
func underlayFamilyFlags(u *nodespec.Underlay, families, vtep, neighbors string) field.ErrorList {
	var errs field.ErrorList
	famPath, vtepPath := field.NewPath("--underlay-address-families"), field.NewPath("--underlay-vtep-family")
	supported := []v1.IPFamily{v1.IPv4, v1.IPv6}
	for s := range strings.SplitSeq(families, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		f, ok := validation.ParseIPFamily(s)
		switch {
		case !ok:
			errs = append(errs, field.NotSupported(famPath, s, supported))
		case slices.Contains(u.Families, f):
			errs = append(errs, field.Duplicate(famPath, s))
		default:
			u.Families = append(u.Families, f)
		}
	}
	switch f, ok := validation.ParseIPFamily(vtep); {
	case vtep == "" && len(u.Families) == 1:
		u.VTEPFamily = u.Families[0]
	case vtep == "":
	case !ok:
		errs = append(errs, field.NotSupported(vtepPath, vtep, supported))
	case len(u.Families) > 0 && !slices.Contains(u.Families, f):
		errs = append(errs, field.Invalid(vtepPath, vtep, fmt.Sprintf(
			"the underlay does not carry it (--underlay-address-families %s): the nodes would not learn each other's VTEP", families)))
	default:
		u.VTEPFamily = f
	}
	fams := u.Families // the families every node's underlay carries
	switch {
	case len(fams) > 0:
	case u.VTEPFamily != "":
		fams = []v1.IPFamily{u.VTEPFamily}
	default:
		fams = supported // each node's VTEP family: the Node's build checks the neighbours against it
	}
	for s := range strings.SplitSeq(neighbors, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n := nodespec.ParseUnderlayNeighbor(s, u.RemoteASN)
		if _, nerrs := validation.ValidateUnderlayNeighbor(field.NewPath("--underlay-neighbors").Key(s), &n, fams); len(nerrs) > 0 {
			errs = append(errs, nerrs...)
			continue
		}
		u.Neighbors = append(u.Neighbors, s)
	}
	return errs
}

// underlayBFDFlags are the --underlay-bfd* flags.
type underlayBFDFlags struct {
	enabled        bool
	interval, echo time.Duration
	multiplier     int
}

// profile is the underlay's BFD profile (nil without --underlay-bfd); an error names the flag.
func (f underlayBFDFlags) profile() (*v1.BFDProfile, field.ErrorList) {
	if !f.enabled {
		if f.interval != 0 || f.multiplier != 0 || f.echo != 0 {
			return nil, field.ErrorList{field.Required(field.NewPath("--underlay-bfd"), "the --underlay-bfd-* settings need --underlay-bfd")}
		}
		return nil, nil
	}
	dur := func(d time.Duration) *metav1.Duration {
		if d == 0 {
			return nil
		}
		return &metav1.Duration{Duration: d}
	}
	p := &v1.BFDProfile{ReceiveInterval: dur(f.interval), TransmitInterval: dur(f.interval), EchoInterval: dur(f.echo)}
	if f.multiplier != 0 {
		m := int32(min(f.multiplier, math.MaxInt32))
		p.DetectMultiplier = &m
	}
	flagOf := map[string]string{"receiveInterval": "--underlay-bfd-interval", "transmitInterval": "--underlay-bfd-interval",
		"detectMultiplier": "--underlay-bfd-detect-multiplier", "echoInterval": "--underlay-bfd-echo-interval"}
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, e := range p.Profile().Validate(field.NewPath("bfd")) {
		flagName := flagOf[strings.TrimPrefix(e.Field, "bfd.")]
		if !seen[flagName] {
			seen[flagName] = true
			errs = append(errs, field.Invalid(field.NewPath(flagName), e.BadValue, e.Detail))
		}
	}
	return p, errs
}
