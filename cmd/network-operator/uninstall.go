package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/operator/uninstall"
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.GetConfig()
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	}
	if err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		return 1
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		return 1
	}
	if err := v1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		return 1
	}
	o.Out = stdout
	if err := uninstall.Run(ctx, c, o); err != nil {
		fmt.Fprintln(stderr, "network-operator uninstall:", err)
		return 1
	}
	fmt.Fprintln(stdout, "every node is clean; the release's objects can go")
	return 0
}
