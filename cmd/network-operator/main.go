// Command network-operator runs the central controllers: revisions from the user resources, per-node
// configurations and their paced rollout, and (optionally) the validating webhooks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/operator/controllers"
	"github.com/network-operator/network-operator/internal/operator/metrics"
	"github.com/network-operator/network-operator/internal/operator/nodeconfig"
	"github.com/network-operator/network-operator/internal/operator/webhook"
	"github.com/network-operator/network-operator/internal/operator/webhookcert"
	"github.com/network-operator/network-operator/internal/validation"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "uninstall" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runUninstall(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "network-operator:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		metricsAddr, probeAddr, leaderNS string
		leaderElect, webhooks, verbose   bool
		maxUnavailable                   string
		opts                             controllers.Options
		underlayIfaces                   string
		webhookHost, webhookCertDir      string
		webhookPort                      int
		certMode                         string
		certOpts                         webhookcert.Options
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, so only one replica reconciles")
	flag.StringVar(&leaderNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	flag.BoolVar(&webhooks, "webhooks", true, "serve the validating admission webhooks")
	flag.StringVar(&webhookHost, "webhook-host", "", "address the webhook server listens on (default: all)")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "port of the webhook server")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "", "directory with the webhook serving certificate tls.crt and key tls.key (default: controller-runtime's)")
	flag.StringVar(&certMode, "webhook-cert-mode", "files", "who provides the webhook serving certificate: files (already in --webhook-cert-dir, e.g. from cert-manager) or self (the operator makes, rotates and publishes it)")
	flag.StringVar(&certOpts.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace (webhook Service and certificate Secret; default $POD_NAMESPACE)")
	flag.StringVar(&certOpts.SecretName, "webhook-cert-secret", "network-operator-webhook-cert", "with --webhook-cert-mode=self: the Secret holding the certificate")
	flag.StringVar(&certOpts.ServiceName, "webhook-service", "network-operator-webhook", "with --webhook-cert-mode=self: the webhook Service the certificate is for")
	flag.StringVar(&certOpts.WebhookConfiguration, "webhook-configuration", "network-operator-validating", "with --webhook-cert-mode=self: the ValidatingWebhookConfiguration that gets the caBundle")
	flag.BoolVar(&verbose, "v", false, "debug logging")
	flag.DurationVar(&opts.Debounce, "debounce", time.Second, "delay between the first change of a burst and the snapshot")
	flag.StringVar(&maxUnavailable, "max-unavailable", "1", "nodes updating at once: a number or a percentage (revision annotation "+controllers.AnnotationMaxUnavailable+" overrides)")
	flag.DurationVar(&opts.ProgressDeadline, "progress-deadline", 10*time.Minute, "time a node has to confirm its configuration before the revision fails")
	flag.StringVar(&opts.TopologyLabel, "rollout-topology-label", "", "roll out group by group of this Node label's value (e.g. topology.kubernetes.io/zone)")
	flag.IntVar(&opts.KeepRevisions, "keep-revisions", 10, "newest revisions kept by pruning (besides target, last good and referenced ones)")
	flag.Int64Var(&opts.NodeConfig.Underlay.ASN, "underlay-asn", 65000, "AS number of the nodes (Node annotation "+nodeconfig.AnnotationASN+" overrides)")
	flag.StringVar(&underlayIfaces, "underlay-interfaces", "", "comma-separated fabric uplinks (Node annotation "+nodeconfig.AnnotationUnderlayInterfaces+" overrides)")
	flag.StringVar(&opts.NodeConfig.Underlay.RemoteASN, "underlay-remote-asn", "external", "remote AS of the uplink neighbours: a number, internal or external")
	flag.BoolVar(&opts.NodeConfig.Strict, "dataplane-strict", false, "the eBPF router drops what it cannot forward")
	flag.BoolVar(&opts.NodeConfig.L2Gateways, "dataplane-l2-gateways", true, "route traffic of layer-2 networks with anycast gateways in a tenant VRF through the eBPF router (their "+v1.L2BridgePrefix+"<vlan> bridges)")
	flag.Func("dataplane-interface", "extra data-plane interface name[@vlan]=vrf[:mode] (repeatable; e.g. eth1@100=blue, l2br.100=blue:pass)", func(s string) error {
		i, err := nodeconfig.ParseInterface(s)
		opts.NodeConfig.Interfaces = append(opts.NodeConfig.Interfaces, i)
		return err
	})
	flag.Parse()

	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})))

	opts.MaxUnavailable = intstr.Parse(maxUnavailable)
	for f := range strings.SplitSeq(underlayIfaces, ",") {
		if f = strings.TrimSpace(f); f != "" {
			opts.NodeConfig.Underlay.Interfaces = append(opts.NodeConfig.Underlay.Interfaces, f)
		}
	}
	flagErrs := validation.ValidateASN(field.NewPath("--underlay-asn"), opts.NodeConfig.Underlay.ASN)
	flagErrs = append(flagErrs, validation.ValidateRemoteAS(field.NewPath("--underlay-remote-asn"), opts.NodeConfig.Underlay.RemoteASN)...)
	if err := validation.Join(flagErrs); err != nil {
		return fmt.Errorf("flags: %w", err)
	}

	if certMode != "files" && certMode != "self" {
		return fmt.Errorf("--webhook-cert-mode %q: want files or self", certMode)
	}
	if certMode == "self" && webhookCertDir == "" {
		// controller-runtime's default, named so the certificate manager writes where the server reads.
		webhookCertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	certOpts.CertDir = webhookCertDir

	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1.AddToScheme(scheme)); err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	var certs *webhookcert.Manager
	if webhooks && certMode == "self" {
		// The server reads the files when it starts: make them first, with a direct client (no cache yet).
		direct, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		if certs, err = webhookcert.New(direct, certOpts); err != nil {
			return err
		}
		if err := certs.Ensure(ctx); err != nil {
			return fmt.Errorf("webhook certificate: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "network-operator.network.network-operator.io",
		LeaderElectionNamespace: leaderNS,
		WebhookServer:           ctrlwebhook.NewServer(ctrlwebhook.Options{Host: webhookHost, Port: webhookPort, CertDir: webhookCertDir}),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if opts.Metrics, err = metrics.New(ctrlmetrics.Registry); err != nil {
		return err
	}
	if err := controllers.Setup(mgr, opts); err != nil {
		return err
	}
	if webhooks {
		if err := webhook.SetupWebhooks(mgr); err != nil {
			return fmt.Errorf("set up webhooks: %w", err)
		}
	}
	if certs != nil {
		if err := mgr.Add(certs); err != nil { // renews before expiry, on every replica
			return fmt.Errorf("add webhook certificate manager: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	// Ready once the informers are synced (and the webhook server listens, when enabled).
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
	return mgr.Start(ctx)
}
