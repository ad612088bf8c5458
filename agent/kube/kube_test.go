package kube_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/network-operator/network-operator/agent/dataplane"
	"github.com/network-operator/network-operator/agent/kube"
	"github.com/network-operator/network-operator/agent/lastapplied"
	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/reconcile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/operator/controllers"
	opmetrics "github.com/network-operator/network-operator/operator/metrics"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/test/harness/lab"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// shared is the package's one control plane, started by the first test that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

const tableRed = nodespec.TableIDBase + 100

// startOperator runs the operator's controllers until the test ends; the agent's data-plane interfaces nA and
// nB (in VRF red) come from the operator's options, the bridge and VXLAN of red from the VRF itself.
func startOperator(t *testing.T) {
	t.Helper()
	env := shared.Get(t)
	m, err := opmetrics.New(prometheus.NewRegistry())
	mustf(t, err, "operator metrics")
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: &skip}})
	mustf(t, err, "operator manager")
	err = controllers.Setup(mgr, controllers.Options{Debounce: 100 * time.Millisecond, Metrics: m,
		ProgressDeadline: 2 * time.Minute,
		NodeConfig: nodespec.Options{Underlay: nodespec.Underlay{ASN: 65000}, Interfaces: []v1.DataPlaneInterface{
			{Name: "nA", VRF: "red"}, {Name: "nB", VRF: "red"}}}})
	mustf(t, err, "operator controllers")
	run(t, mgr)
}

func run(t *testing.T, mgr ctrl.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// agentNode is one lab namespace "node" with two tenant hosts in VRF red, and the agent's parts for it.
type agentNode struct {
	lab    *lab.Lab
	ns     *lab.Netns
	name   string
	mgr    ctrl.Manager
	engine *reconcile.Engine
}

func newAgentNode(t *testing.T) *agentNode {
	t.Helper()
	l := lab.New(t) // first: without root the control plane is not started for nothing
	env := shared.Get(t)
	err := l.Build(context.Background(), lab.Topology{
		Namespaces: []lab.Namespace{{Name: "node", Loopback: []string{"10.255.0.1/32"}, Sysctls: []lab.Sysctl{
			{Key: "net.ipv4.conf.all.forwarding", Value: "1"}, {Key: "net.ipv4.conf.default.forwarding", Value: "1"}}},
			{Name: "ha"}, {Name: "hb"}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "ha", Name: "eth0", Addrs: []string{"10.1.1.2/24"}}, B: lab.Port{NS: "node", Name: "nA"}},
			{A: lab.Port{NS: "hb", Name: "eth0", Addrs: []string{"10.1.2.2/24"}}, B: lab.Port{NS: "node", Name: "nB"}},
		},
		Routes: []lab.Route{
			{NS: "ha", Dst: "default", Via: "10.1.1.1", Dev: "eth0"},
			{NS: "hb", Dst: "default", Via: "10.1.2.1", Dev: "eth0"},
			{NS: "node", Table: tableRed, Dst: "10.1.1.0/24", Dev: "nA"},
			{NS: "node", Table: tableRed, Dst: "10.1.2.0/24", Dev: "nB"},
		},
		Neighbours: []lab.Neighbour{
			{NS: "ha", Dev: "eth0", IP: "10.1.1.1", MACOf: "node/nA"},
			{NS: "hb", Dev: "eth0", IP: "10.1.2.1", MACOf: "node/nB"},
			{NS: "node", Dev: "nA", IP: "10.1.1.2", MACOf: "ha/eth0"},
			{NS: "node", Dev: "nB", IP: "10.1.2.2", MACOf: "hb/eth0"},
		},
	})
	mustf(t, err, "build topology")
	n := &agentNode{lab: l, ns: l.NS("node"), name: "agent-node-" + l.ID()}

	ctx := context.Background()
	nc, err := nodenet.New(n.ns.Handle(), nodenet.Settings{})
	mustf(t, err, "nodenet")
	dp, err := dataplane.Open(ctx, dataplane.Options{PinDir: l.MustPinDir(), NetNS: n.ns.NsHandle(), Links: n.ns.Handle()})
	mustf(t, err, "dataplane")
	t.Cleanup(func() { dp.Close() })
	dir := t.TempDir()
	n.engine, err = reconcile.New(reconcile.Options{Netlink: nc, Dataplane: dp, Links: n.ns.Handle(),
		Store: lastapplied.New(filepath.Join(dir, "last-good.yaml")), Logger: slog.New(slog.DiscardHandler)})
	mustf(t, err, "engine")
	n.mgr, err = kube.NewManager(env.Config, env.Scheme, kube.SeveralManagers(kube.Options{NodeName: n.name, Engine: n.engine,
		Resync: 2 * time.Second}))
	mustf(t, err, "agent manager")
	return n
}

// createNode creates the Node object of the agent's node: Ready, with the start-up taint and the underlay
// annotations the operator needs.
func createNode(t *testing.T, name string) {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		nodespec.AnnotationRouterID: "10.255.0.1"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: kube.DefaultStartupTaint, Effect: corev1.TaintEffectNoSchedule},
			{Key: "example.com/other", Effect: corev1.TaintEffectNoSchedule}}}}
	mustf(t, env.Client.Create(ctx, node), "create node %s", name)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Test",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	mustf(t, env.Client.Status().Update(ctx, node), "node %s ready", name)
}

func createVRF(t *testing.T, name, vrf string, vni, seq int32) {
	t.Helper()
	env := shared.Get(t)
	c := &v1.VRFRouteConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.VRF, c.Spec.VNI, c.Spec.Seq = vrf, &vni, seq
	c.Spec.Export = []v1.PrefixItem{{CIDR: "10.0.0.0/8", Action: v1.PrefixActionPermit}}
	mustf(t, env.Client.Create(context.Background(), c), "create VRFRouteConfiguration %s", name)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), c) })
}

// The agent's status is what the operator's rollout accepts: with the operator's controllers and the agent
// reconciler running against one namespace node, revision A rolls out (appliedRevision + mapVersion read back
// from the BPF map), the node becomes ready (condition, taint gone) and forwards; revision B fails on the node
// (the kernel refuses its VXLAN) and the operator rolls the node back to A.
func TestOperatorAcceptsAgentStatus(t *testing.T) {
	n := newAgentNode(t)
	env := shared.Get(t)
	createNode(t, n.name)
	startOperator(t)
	run(t, n.mgr)
	ctx := context.Background()

	createVRF(t, "red", "red", 100, 10)
	revA := waitRevisionPhase(t, 60*time.Second, v1.RevisionDone, func(r *v1.NetworkConfigRevision) bool { return len(r.Spec.VRF) == 1 })
	nnc := getNNC(t, n.name)
	if nnc.Status.AppliedRevision != revA.Spec.Revision || nnc.Status.MapVersion != nnc.Spec.ExpectedMapVersion {
		t.Fatalf("status applied %q mapVersion %q, want %q and %q", nnc.Status.AppliedRevision, nnc.Status.MapVersion,
			revA.Spec.Revision, nnc.Spec.ExpectedMapVersion)
	}
	if nnc.Status.MapVersion != nnc.Spec.MapVersion() {
		t.Fatalf("mapVersion %q is not the spec's MapVersion()", nnc.Status.MapVersion)
	}
	waitFor(t, 30*time.Second, "node condition and taint", func() (bool, error) {
		var node corev1.Node
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, &node); err != nil {
			return false, err
		}
		ready := slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == kube.ConditionNodeReady && c.Status == corev1.ConditionTrue
		})
		tainted := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == kube.DefaultStartupTaint })
		other := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "example.com/other" })
		kubeletReady := slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
		if !other || !kubeletReady {
			return false, fmt.Errorf("%w: the agent removed someone else's taint or condition", errStop)
		}
		return ready && !tainted, fmt.Errorf("condition ready %t, start-up taint %t", ready, tainted)
	})
	res, err := n.lab.NS("ha").Ping(ctx, netip.MustParseAddr("10.1.2.2"), lab.PingOptions{Count: 5, Interval: 5 * time.Millisecond})
	if err != nil || res.Received != 5 {
		t.Fatalf("ping through the node: %v %+v", err, res)
	}

	// The agent's cache holds its own NodeNetworkConfig and nothing else, although another node has one.
	createNode(t, "other-"+n.name)
	waitFor(t, 30*time.Second, "the other node's NodeNetworkConfig", func() (bool, error) {
		var other v1.NodeNetworkConfig
		return env.Client.Get(ctx, client.ObjectKey{Name: "other-" + n.name}, &other) == nil, nil
	})
	var cached v1.NodeNetworkConfigList
	mustf(t, n.mgr.GetCache().List(ctx, &cached), "list the agent's cache")
	if len(cached.Items) != 1 || cached.Items[0].Name != n.name {
		t.Fatalf("agent cache holds %d NodeNetworkConfigs, want only %s", len(cached.Items), n.name)
	}
	// without managedFields, which the API server's object has (the agent's status writes are among them)
	if kept, server := len(cached.Items[0].ManagedFields), len(getNNC(t, n.name).ManagedFields); kept != 0 || server < 2 {
		t.Fatalf("%d managedFields entries in the agent's cache, %d in the API server's object: want 0 and at least 2", kept, server)
	}
	// The other node (which has no agent) goes away again, so it does not hold up the next rollout.
	mustf(t, env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-" + n.name}}), "delete other node")
	waitFor(t, 30*time.Second, "the other node's NodeNetworkConfig removed", func() (bool, error) {
		var other v1.NodeNetworkConfig
		err := env.Client.Get(ctx, client.ObjectKey{Name: "other-" + n.name}, &other)
		return err != nil, nil
	})

	// Revision B adds VRF blue on VNI 3999, which a foreign VXLAN holds: the agent fails B, the operator marks it
	// failed and puts the node back on A, which the agent confirms again.
	fvx := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "fvx0"}, VxlanId: 3999, Port: 4789}
	mustf(t, n.ns.Handle().LinkAdd(fvx), "foreign vxlan")
	createVRF(t, "blue", "blue", 3999, 20)
	revB := waitRevisionPhase(t, 60*time.Second, v1.RevisionFailed, func(r *v1.NetworkConfigRevision) bool { return len(r.Spec.VRF) == 2 })
	if revB.Status.FailedNode != n.name || !strings.Contains(revB.Status.Message, "ApplyFailed") {
		t.Errorf("revision B: failed node %q message %q, want %s and ApplyFailed", revB.Status.FailedNode, revB.Status.Message, n.name)
	}
	waitFor(t, 60*time.Second, "node back on A and confirmed", func() (bool, error) {
		nnc := getNNC(t, n.name)
		ok := nnc.Spec.Revision == revA.Spec.Revision && nnc.Status.AppliedRevision == revA.Spec.Revision &&
			nnc.Status.MapVersion == nnc.Spec.ExpectedMapVersion && nnc.Status.FailedRevision == revB.Spec.Revision
		return ok, fmt.Errorf("spec %.12s applied %.12s failed %.12s", nnc.Spec.Revision, nnc.Status.AppliedRevision, nnc.Status.FailedRevision)
	})
	if _, err := n.ns.Handle().LinkByName("br.blue"); err == nil {
		t.Error("br.blue of the failed revision still exists")
	}
}

// The reconciler reads BGP passwords with a namespaced Get, uncached.
func TestPasswordFromSecret(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bgp-pw"}, Data: map[string][]byte{"pw": []byte("hunter2")}}
	mustf(t, env.Client.Create(ctx, s), "create secret")
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
	r := &kube.Reconciler{APIReader: env.Client}
	got, err := r.Password(ctx, v1.SecretKeyReference{Namespace: "default", Name: "bgp-pw", Key: "pw"})
	if err != nil || got != "hunter2" {
		t.Fatalf("password %q, %v", got, err)
	}
	if _, err := r.Password(ctx, v1.SecretKeyReference{Namespace: "default", Name: "bgp-pw", Key: "nope"}); err == nil ||
		!strings.Contains(err.Error(), `no key "nope"`) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := r.Password(ctx, v1.SecretKeyReference{Namespace: "default", Name: "nosuch", Key: "pw"}); err == nil {
		t.Fatal("missing secret: no error")
	}
}

var errStop = waittest.Permanent(errors.New("condition cannot become true"))

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	waittest.Must(t, 50*time.Millisecond, timeout, what, waittest.Check(cond))
}

func waitRevisionPhase(t *testing.T, timeout time.Duration, phase v1.RevisionPhase, match func(*v1.NetworkConfigRevision) bool) *v1.NetworkConfigRevision {
	t.Helper()
	env := shared.Get(t)
	var found *v1.NetworkConfigRevision
	waitFor(t, timeout, fmt.Sprintf("a matching revision in phase %s", phase), func() (bool, error) {
		var l v1.NetworkConfigRevisionList
		if err := env.Client.List(context.Background(), &l); err != nil {
			return false, err
		}
		for i := range l.Items {
			r := &l.Items[i]
			if match(r) {
				found = r
				return r.Status.Phase == phase, fmt.Errorf("phase %q message %q", r.Status.Phase, r.Status.Message)
			}
		}
		return false, errors.New("no matching revision yet")
	})
	return found
}

func getNNC(t *testing.T, name string) *v1.NodeNetworkConfig {
	t.Helper()
	env := shared.Get(t)
	var nnc v1.NodeNetworkConfig
	mustf(t, env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &nnc), "get NodeNetworkConfig %s", name)
	return &nnc
}

func mustf(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}
