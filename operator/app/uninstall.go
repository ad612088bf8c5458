package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/operator/uninstall"
)

// runUninstall is `network-operator uninstall`, the chart's pre-delete hook (see operator/uninstall).
func runUninstall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("network-operator uninstall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o uninstall.Options
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the release's namespace (default $POD_NAMESPACE)")
	fs.StringVar(&o.AgentDaemonSet, "agent-daemonset", "network-agent", "the agent DaemonSet")
	fs.StringVar(&o.OperatorDeployment, "operator-deployment", "network-operator", "the operator Deployment")
	fs.StringVar(&o.CleanupImage, "cleanup-image", "", "the agent image, which runs `network-agent cleanup` on every node")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "bound of each wait")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster or $KUBECONFIG)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return ExitOK
	} else if err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "network-operator uninstall: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	o.Out = stdout
	if err := uninstallWith(ctx, *kubeconfig, o); err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		if errors.Is(err, uninstall.ErrOptions) {
			return ExitUsage
		}
		return ExitFailed
	}
	fmt.Fprintln(stdout, "every node is clean; the release's objects can go")
	return ExitOK
}

func uninstallWith(ctx context.Context, kubeconfig string, o uninstall.Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return uninstall.Run(ctx, c, o)
}
