package cluster

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// podExec runs argv in a container of a pod through the API server and the pod's kubelet (what `kubectl exec`
// does) and returns its standard output; a failure carries standard error.
func podExec(ctx context.Context, cfg *rest.Config, namespace, pod, container string, argv ...string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdout: true, Stderr: true},
			clientgoscheme.ParameterCodec)
	exec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return nil, fmt.Errorf("exec in %s/%s: %w", pod, container, err)
	}
	var stdout, stderr bytes.Buffer
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		return stdout.Bytes(), fmt.Errorf("exec %s in %s/%s: %w: %s", strings.Join(argv, " "), pod, container, err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
