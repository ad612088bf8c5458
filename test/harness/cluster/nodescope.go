package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// serviceAccountToken is where the kubelet mounts a pod's projected service account token.
const serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// ScopeCheck is one write the agent of From tried with its own token, as a server-side dry run (admission and
// authorisation run in full, nothing is stored).
type ScopeCheck struct {
	From, Target string
	// What is the write, e.g. "patch NodeNetworkConfig node-2 status".
	What string
	// Code is the HTTP status (200 when allowed); Message the API server's refusal.
	Code    int
	Message string
}

// Allowed reports whether the API server accepted the write.
func (s ScopeCheck) Allowed() bool { return s.Code == 200 }

// NodeScope takes the service account token mounted into the agent pod of the first node and, with it, writes
// the status of that node's NodeNetworkConfig and its Node (condition, taint), then the same objects of the
// second node: the node-scope policy must allow the first three and refuse the others with 403.
func (c *Cluster) NodeScope(ctx context.Context) ([]ScopeCheck, error) {
	if c.opts.Install != InstallHelm || len(c.nodes) < 2 {
		return nil, errors.New("node scope: needs the helm form and two nodes")
	}
	self, other := c.nodes[0], c.nodes[1]
	pod, err := c.agentPod(ctx, self)
	if err != nil {
		return nil, err
	}
	token, err := podExec(ctx, c.restConfig, Namespace, pod.Name, agentContainer, "cat", serviceAccountToken)
	if err != nil {
		return nil, fmt.Errorf("token of %s: %w", pod.Name, err)
	}
	cfg := &rest.Config{Host: c.restConfig.Host, BearerToken: strings.TrimSpace(string(token)),
		TLSClientConfig: rest.TLSClientConfig{CAData: c.restConfig.CAData, CAFile: c.restConfig.CAFile, ServerName: c.restConfig.ServerName}}
	agent, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client with the agent's token: %w", err)
	}
	var out []ScopeCheck
	for _, target := range []*Node{self, other} {
		for _, w := range []struct {
			what string
			fn   func(context.Context, client.Client, string) error
		}{
			{"patch NodeNetworkConfig %s status", patchNNCStatus},
			{"patch Node %s status (condition)", patchNodeCondition},
			{"patch Node %s (remove a taint)", patchNodeTaints},
		} {
			err := w.fn(ctx, agent, target.Name)
			chk := ScopeCheck{From: self.Name, Target: target.Name, What: fmt.Sprintf(w.what, target.Name), Code: 200}
			var status apierrors.APIStatus
			switch {
			case err == nil:
			case errors.As(err, &status):
				chk.Code, chk.Message = int(status.Status().Code), status.Status().Message
			default:
				return nil, fmt.Errorf("%s with the token of %s: %w", chk.What, self.Name, err)
			}
			out = append(out, chk)
		}
	}
	return out, nil
}

// patchNNCStatus sets the status's lastError (dry run).
func patchNNCStatus(ctx context.Context, cl client.Client, node string) error {
	var nnc v1.NodeNetworkConfig
	if err := cl.Get(ctx, client.ObjectKey{Name: node}, &nnc); err != nil {
		return err
	}
	patch := client.MergeFrom(nnc.DeepCopy())
	nnc.Status.LastError = "node-scope check (dry run)"
	return cl.Status().Patch(ctx, &nnc, patch, client.DryRunAll)
}

// patchNodeCondition sets a condition of the agent's own type (dry run).
func patchNodeCondition(ctx context.Context, cl client.Client, node string) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	data := []byte(`{"status":{"conditions":[{"type":"NetworkOperatorScopeCheck","status":"True","reason":"DryRun"}]}}`)
	return cl.Status().Patch(ctx, n, client.RawPatch("application/strategic-merge-patch+json", data), client.DryRunAll)
}

// patchNodeTaints replaces the Node's taints with none (dry run).
func patchNodeTaints(ctx context.Context, cl client.Client, node string) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	data := []byte(`{"spec":{"taints":null}}`)
	return cl.Patch(ctx, n, client.RawPatch("application/merge-patch+json", data), client.DryRunAll)
}
