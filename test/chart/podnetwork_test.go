package chart_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// shared is the control plane of the tests that need an API server (the pod status policy).
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// TestPodNetworkDefaults: pod networking is on by default, reaching pods' namespaces through their pids (hostPID,
// SYS_PTRACE) with the CRI socket's directory and the host's /proc/sys mounted; "path" needs neither hostPID nor
// SYS_PTRACE; disabled, none of it is there.
func TestPodNetworkDefaults(t *testing.T) {
	agentPod := func(objs map[string]runtime.Object) (corev1.PodSpec, corev1.Container) {
		t.Helper()
		ds := objs["DaemonSet/network-agent"].(*appsv1.DaemonSet)
		return ds.Spec.Template.Spec, ds.Spec.Template.Spec.Containers[0]
	}
	mounts := func(c corev1.Container) map[string]corev1.VolumeMount {
		out := map[string]corev1.VolumeMount{}
		for _, m := range c.VolumeMounts {
			out[m.MountPath] = m
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		set     []string
		args    []string // present
		noArgs  []string // absent
		hostPID bool
		ptrace  bool
		mounted []string
	}{
		{name: "defaults", args: []string{"--pod-network=true", "--cri-socket=/run/containerd/containerd.sock", "--pod-netns=auto",
			"--pod-sysctl-dir=/host/proc/sys"}, hostPID: true, ptrace: true, mounted: []string{"/run/containerd", "/host/proc/sys"}},
		{name: "path", set: []string{"agent.podNetwork.netns=path", "agent.podNetwork.hostPaths={/run/containerd,/run/netns}"},
			args: []string{"--pod-netns=path"}, mounted: []string{"/run/containerd", "/run/netns", "/host/proc/sys"}},
		{name: "test nodes", set: []string{"agent.podNetwork.criSocket=/w/nodes/$(NODE_NAME)/containerd/containerd.sock",
			"agent.podNetwork.hostPaths={/w/nodes}"}, args: []string{"--cri-socket=/w/nodes/$(NODE_NAME)/containerd/containerd.sock"},
			hostPID: true, ptrace: true, mounted: []string{"/w/nodes"}},
		{name: "disabled", set: []string{"agent.podNetwork.enabled=false"}, noArgs: []string{"--pod-network=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, tc.set...)
			spec, agent := agentPod(objs)
			for _, a := range tc.args {
				if !slices.Contains(agent.Args, a) {
					t.Errorf("agent args %v lack %s", agent.Args, a)
				}
			}
			for _, a := range tc.noArgs {
				if slices.Contains(agent.Args, a) {
					t.Errorf("agent args %v have %s", agent.Args, a)
				}
			}
			if spec.HostPID != tc.hostPID {
				t.Errorf("hostPID %v, want %v", spec.HostPID, tc.hostPID)
			}
			if got := slices.Contains(agent.SecurityContext.Capabilities.Add, "SYS_PTRACE"); got != tc.ptrace {
				t.Errorf("capabilities %v: SYS_PTRACE %v, want %v", agent.SecurityContext.Capabilities.Add, got, tc.ptrace)
			}
			m := mounts(agent)
			for _, p := range tc.mounted {
				mnt, ok := m[p]
				if !ok {
					t.Errorf("%s not mounted (mounts %v)", p, agent.VolumeMounts)
					continue
				}
				if p != "/host/proc/sys" && (mnt.MountPropagation == nil || *mnt.MountPropagation != corev1.MountPropagationHostToContainer) {
					t.Errorf("%s: propagation %v, want HostToContainer (the runtime's sockets and namespaces come and go)", p, mnt.MountPropagation)
				}
			}
			if tc.name == "disabled" {
				if _, ok := m["/host/proc/sys"]; ok {
					t.Error("the host's /proc/sys is mounted without pod networking")
				}
				if objs["ValidatingAdmissionPolicy/network-operator-agent-pod-status-scope"] != nil {
					t.Error("the pod status policy is rendered without pod networking")
				}
			}
		})
	}
	bin, chart := helm(t)
	for _, bad := range []struct{ set, want string }{
		{"agent.podNetwork.netns=proc", "podNetwork"},
		{"agent.podNetwork.criSocket=relative.sock", "podNetwork"},
	} {
		if out, err := run(t, bin, "template", "x", chart, "--set", bad.set); err == nil || !strings.Contains(out, bad.want) {
			t.Errorf("--set %s: rendered, or the message does not name %s: %v\n%s", bad.set, bad.want, err, out)
		}
	}
}

// TestPodStatusPolicy applies the chart's RBAC and pod status policy to an API server and writes a
// PodNetworkConfig's status as the agent of node-a (impersonated with its token's node-name claim): its own
// entries pass; another node's entry, the operator's allocations, or a token without the claim are refused.
func TestPodStatusPolicy(t *testing.T) {
	objs := render(t)
	env := shared.Get(t)
	ctx := context.Background()
	for _, key := range []string{"ClusterRole/network-operator-agent", "ClusterRoleBinding/network-operator-agent",
		"ValidatingAdmissionPolicy/network-operator-agent-pod-status-scope", "ValidatingAdmissionPolicyBinding/network-operator-agent-pod-status-scope"} {
		obj, ok := objs[key].(client.Object)
		if !ok {
			t.Fatalf("%s not rendered", key)
		}
		if err := env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s: %v", key, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pod-status-policy-"}}
	must(t, env.Client.Create(ctx, ns))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	cfg := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cnf"},
		Spec: v1.PodNetworkConfigSpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "cnf"}}}}
	must(t, env.Client.Create(ctx, cfg))
	statusApply := func(c client.Client, owner string, status map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "PodNetworkConfig",
			"metadata": map[string]any{"name": cfg.Name, "namespace": cfg.Namespace}, "status": status}}
		return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership)
	}
	entry := func(pod, node string) map[string]any {
		return map[string]any{"name": pod, "node": node, "applied": true}
	}
	// The operator's allocations and node-b's agent's entry, written with admin rights.
	must(t, statusApply(env.Client, "network-operator", map[string]any{"allocations": []any{
		map[string]any{"pod": "b-0", "podUID": "u-b0", "interface": "net1", "address": "10.40.0.65/24"}}}))
	must(t, statusApply(env.Client, "network-agent/node-b", map[string]any{"pods": []any{entry("b-0", "node-b")}}))

	agent := func(claim ...string) client.Client {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:network-operator:network-agent"}
		if len(claim) > 0 {
			cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": claim}
		}
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		must(t, err)
		return c
	}
	nodeA := agent("node-a")
	// The policy is in force once the API server has compiled it: wait until node-a's agent is refused
	// node-b's entry.
	waittest.Must(t, 100*time.Millisecond, 30*time.Second, "the pod status policy in force", waittest.Check(func() (bool, error) {
		err := statusApply(nodeA, "network-agent/node-a", map[string]any{"pods": []any{entry("b-0", "node-a")}})
		switch {
		case err == nil:
			// Allowed: the policy was not compiled yet; give node-b its entry back and try again.
			if err := statusApply(env.Client, "network-agent/node-b", map[string]any{"pods": []any{entry("b-0", "node-b")}}); err != nil {
				return false, waittest.Permanent(err)
			}
			return false, errors.New("node-a's agent could still overwrite node-b's entry")
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			if !strings.Contains(err.Error(), "may change only its own node's status.pods entries") {
				return false, waittest.Permanent(fmt.Errorf("refused for another reason: %w", err))
			}
			return true, nil
		default:
			return false, waittest.Permanent(err)
		}
	}))
	for _, tc := range []struct {
		name   string
		c      client.Client
		status map[string]any
		want   string // "" allowed, else part of the refusal
	}{
		{"node-a writes its own entries", nodeA, map[string]any{"pods": []any{entry("a-0", "node-a"), entry("a-1", "node-a")}}, ""},
		{"node-a removes one of its entries", nodeA, map[string]any{"pods": []any{entry("a-0", "node-a")}}, ""},
		{"node-a writes an entry for node-b", nodeA, map[string]any{"pods": []any{entry("a-0", "node-a"), entry("x-0", "node-b")}},
			"may change only its own node's status.pods entries"},
		{"node-a changes the allocations", nodeA, map[string]any{"pods": []any{entry("a-0", "node-a")}, "allocations": []any{
			map[string]any{"pod": "a-0", "podUID": "u-a0", "interface": "net1", "address": "10.40.0.66/24"}}},
			"may not change status.allocations or status.conditions"},
		{"a token without the node-name claim", agent(), map[string]any{"pods": []any{entry("a-0", "node-a")}}, "no node-name claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := statusApply(tc.c, "network-agent/node-a", tc.status)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
	var got v1.PodNetworkConfig
	must(t, env.Client.Get(ctx, types.NamespacedName{Namespace: cfg.Namespace, Name: cfg.Name}, &got))
	var pods []string
	for _, p := range got.Status.Pods {
		pods = append(pods, p.Name+"@"+p.Node)
	}
	slices.Sort(pods)
	if !slices.Equal(pods, []string{"a-0@node-a", "b-0@node-b"}) || len(got.Status.Allocations) != 1 ||
		got.Status.Allocations[0].Address != "10.40.0.65/24" {
		t.Errorf("status pods %v allocations %+v: want a-0@node-a, b-0@node-b and the operator's allocation", pods, got.Status.Allocations)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
