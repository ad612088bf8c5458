package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/operator/metrics"
	"github.com/network-operator/network-operator/operator/nodespec"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// shared is the package's one control plane (kube-apiserver + etcd), shared by every test in turn.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// testOptions are fast settings: short debounce, generous deadline.
func testOptions() Options {
	return Options{
		Debounce:         100 * time.Millisecond,
		MaxUnavailable:   intstr.FromInt32(1),
		ProgressDeadline: 2 * time.Minute,
		NodeConfig:       nodespec.Options{Underlay: nodespec.Underlay{ASN: 65000, Interfaces: []string{"eth0"}}},
	}
}

// operator is one running manager with the controllers under test.
type operator struct {
	metrics *metrics.Metrics
}

// which controllers startOperator runs.
const (
	runConfig = 1 << iota
	runRollout
	runMirrorStatus
	runLinkStatus
	runBoth = runConfig | runRollout
)

// startOperator starts a manager running the selected controllers until the test ends.
func startOperator(t testing.TB, opts Options, which int) *operator {
	t.Helper()
	env := shared.Get(t)
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	opts.Metrics = m
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Cache:                  ManagerCacheOptions(), // the operator's: trimmed Nodes, no managed fields
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: &skip}, // one manager per test, same controller names
	})
	if err != nil {
		t.Fatal(err)
	}
	opts = opts.withDefaults()
	if which&runConfig != 0 {
		if err := (&ConfigReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Opts: opts}).SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	if which&runRollout != 0 {
		if err := (&RolloutReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	if which&runMirrorStatus != 0 {
		if err := (&MirrorStatusReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	if which&runLinkStatus != 0 {
		if err := (&LinkStatusReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &operator{metrics: m}
}

// resetCluster deletes everything a previous test left, and waits until it is gone.
func resetCluster(t testing.TB) {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	kinds := []struct {
		obj  client.Object
		list client.ObjectList
	}{
		{&v1.VRFRouteConfiguration{}, &v1.VRFRouteConfigurationList{}},
		{&v1.Layer2NetworkConfiguration{}, &v1.Layer2NetworkConfigurationList{}},
		{&v1.BGPPeering{}, &v1.BGPPeeringList{}},
		{&v1.RoutingTable{}, &v1.RoutingTableList{}},
		{&v1.MirrorTarget{}, &v1.MirrorTargetList{}},
		{&v1.MirrorSelector{}, &v1.MirrorSelectorList{}},
		{&v1.Link{}, &v1.LinkList{}},
		{&v1.NodeNetworkConfig{}, &v1.NodeNetworkConfigList{}},
		{&v1.NetworkConfigRevision{}, &v1.NetworkConfigRevisionList{}},
		{&corev1.Node{}, &corev1.NodeList{}},
	}
	for _, k := range kinds {
		if err := env.Client.DeleteAllOf(ctx, k.obj); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete all %T: %v", k.obj, err)
		}
	}
	if err := env.Client.DeleteAllOf(ctx, &eventsv1.Event{}, client.InNamespace("default")); err != nil {
		t.Fatalf("delete events: %v", err)
	}
	for _, k := range kinds {
		waitFor(t, 30*time.Second, fmt.Sprintf("no %T left", k.obj), func() (bool, error) {
			if err := env.Client.List(ctx, k.list); err != nil {
				return false, err
			}
			return len(mustItems(k.list)) == 0, nil
		})
	}
}

func mustItems(l client.ObjectList) []any {
	switch l := l.(type) {
	case *v1.VRFRouteConfigurationList:
		return anySlice(l.Items)
	case *v1.Layer2NetworkConfigurationList:
		return anySlice(l.Items)
	case *v1.BGPPeeringList:
		return anySlice(l.Items)
	case *v1.RoutingTableList:
		return anySlice(l.Items)
	case *v1.MirrorTargetList:
		return anySlice(l.Items)
	case *v1.MirrorSelectorList:
		return anySlice(l.Items)
	case *v1.LinkList:
		return anySlice(l.Items)
	case *v1.NodeNetworkConfigList:
		return anySlice(l.Items)
	case *v1.NetworkConfigRevisionList:
		return anySlice(l.Items)
	case *corev1.NodeList:
		return anySlice(l.Items)
	}
	panic(fmt.Sprintf("unknown list %T", l))
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

// errPoll marks a condition that failed for good: waitFor stops at once.
var errPoll = waittest.Permanent(errors.New("condition cannot become true"))

// waitFor polls cond until it holds, failing the test at the deadline; cond's error says what is missing
// (no sleeps as synchronisation: the short pause between polls only limits load on the API server).
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	waittest.Must(t, 20*time.Millisecond, timeout, what, waittest.Check(cond))
}

// nodeName gives names whose lexical order is their numeric order.
func nodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// createNode creates a Node with a router-id annotation and the given Ready state.
func createNode(t testing.TB, name string, labels map[string]string, ready bool) *corev1.Node {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	var idx int
	fmt.Sscanf(name, "node-%d", &idx)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
		Annotations: map[string]string{nodespec.AnnotationRouterID: fmt.Sprintf("10.0.%d.%d", idx/250, idx%250+1)}}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	setNodeReady(t, n, ready)
	return n
}

func setNodeReady(t testing.TB, n *corev1.Node, ready bool) {
	t.Helper()
	env := shared.Get(t)
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "Test",
		LastHeartbeatTime: now, LastTransitionTime: now}}
	if err := env.Client.Status().Update(context.Background(), n); err != nil {
		t.Fatalf("set node %s ready=%t: %v", n.Name, ready, err)
	}
}

func createNodes(t testing.TB, count int) []*corev1.Node {
	t.Helper()
	nodes := make([]*corev1.Node, count)
	for i := range nodes {
		nodes[i] = createNode(t, nodeName(i), map[string]string{"kubernetes.io/hostname": nodeName(i)}, true)
	}
	return nodes
}

// vrfConfig is a small valid VRFRouteConfiguration.
func vrfConfig(name, vrf string, vni int32, seq int32) *v1.VRFRouteConfiguration {
	c := &v1.VRFRouteConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.VRF, c.Spec.VNI, c.Spec.Seq = vrf, new(vni), seq
	c.Spec.Export = []v1.PrefixItem{{CIDR: "10.0.0.0/8", Action: v1.PrefixActionPermit}}
	return c
}

// setVNI changes a VRFRouteConfiguration's content (and so the snapshot hash).
func setVNI(t testing.TB, name string, vni int32) {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	var c v1.VRFRouteConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatal(err)
	}
	orig := c.DeepCopy()
	c.Spec.VNI = new(vni)
	if err := env.Client.Patch(ctx, &c, client.MergeFrom(orig)); err != nil {
		t.Fatalf("set vni of %s to %d: %v", name, vni, err)
	}
}

func listRevisions(t testing.TB) []v1.NetworkConfigRevision {
	t.Helper()
	env := shared.Get(t)
	var l v1.NetworkConfigRevisionList
	if err := env.Client.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitRevision waits for a revision with the given sequence and returns it.
func waitRevision(t testing.TB, seq int64) *v1.NetworkConfigRevision {
	t.Helper()
	var found *v1.NetworkConfigRevision
	waitFor(t, 30*time.Second, fmt.Sprintf("revision with sequence %d", seq), func() (bool, error) {
		for _, r := range listRevisions(t) {
			if r.Spec.Sequence == seq {
				found = &r
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

func getRevision(t testing.TB, name string) *v1.NetworkConfigRevision {
	t.Helper()
	env := shared.Get(t)
	var r v1.NetworkConfigRevision
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &r); err != nil {
		t.Fatalf("get revision %s: %v", name, err)
	}
	return &r
}

// waitPhase waits until the revision reaches phase (failing early on an unexpected Failed).
func waitPhase(t testing.TB, timeout time.Duration, name string, phase v1.RevisionPhase) *v1.NetworkConfigRevision {
	t.Helper()
	var rev *v1.NetworkConfigRevision
	waitFor(t, timeout, fmt.Sprintf("revision %s %s", name, phase), func() (bool, error) {
		rev = getRevision(t, name)
		if rev.Status.Phase == v1.RevisionFailed && phase != v1.RevisionFailed {
			return false, fmt.Errorf("%w: revision failed: %s", errPoll, rev.Status.Message)
		}
		return rev.Status.Phase == phase, fmt.Errorf("phase %q, %d/%d updated, message %q", rev.Status.Phase, rev.Status.Updated, rev.Status.Total, rev.Status.Message)
	})
	return rev
}

func listNNCs(t testing.TB) map[string]v1.NodeNetworkConfig {
	t.Helper()
	env := shared.Get(t)
	var l v1.NodeNetworkConfigList
	if err := env.Client.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]v1.NodeNetworkConfig, len(l.Items))
	for _, n := range l.Items {
		out[n.Name] = n
	}
	return out
}

// events returns the reasons of the Events about the named object.
func eventReasons(t testing.TB, regarding string) []string {
	t.Helper()
	env := shared.Get(t)
	var l eventsv1.EventList
	if err := env.Client.List(context.Background(), &l, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e.Reason)
		}
	}
	return out
}

func counterValue(t testing.TB, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	var sum float64
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		sum += d.GetCounter().GetValue() + d.GetGauge().GetValue()
	}
	return sum
}
