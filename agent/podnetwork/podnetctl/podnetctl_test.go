package podnetctl_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/network-operator/network-operator/agent/cri"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnetctl"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/test/harness/lab"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// shared is the package's one control plane, started by the first test that needs it.
var shared testenv.Shared

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// finder stands in for the container runtime: pod UID -> the lab namespace playing the pod's.
type finder struct {
	mu sync.Mutex
	m  map[string]string
}

func (f *finder) PodNetns(_ context.Context, uid string) (cri.Netns, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.m[uid]
	if !ok {
		return cri.Netns{}, fmt.Errorf("pod %s: %w", uid, cri.ErrNoSandbox)
	}
	return cri.Netns{SandboxID: "sandbox-" + uid, Path: p, Source: cri.SourcePath}, nil
}

func (f *finder) set(uid, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if path == "" {
		delete(f.m, uid)
		return
	}
	f.m[uid] = path
}

// records is a slog handler keeping the messages per pod, for the test to see what the agent did.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var pod string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "pod" {
			pod = a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message+" "+pod)
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// env is one node's agent against the test API server: a lab node with net-a's bridge, the pods' namespaces,
// the controller; the network net-a (on the node) and net-z (not on it), both admitting the tenant namespace
// (label tenant=<ns>).
type env struct {
	t      *testing.T
	c      client.Client
	lab    *lab.Lab
	node   *lab.Netns
	name   string // the node's name
	ns     string // the tenant namespace
	netA   string // the Layer2NetworkConfiguration on the node (VLAN 100, bridge l2br.100)
	netZ   string // one that is not on the node
	finder *finder
	store  *podrecords.Store
	logs   *records
	resync time.Duration // the controller's periodic re-apply
	stop   func()
}

// newEnv starts the node's agent with the given periodic re-apply.
func newEnv(t *testing.T, resync time.Duration) *env {
	t.Helper()
	l := lab.New(t) // first: without root the control plane is not started for nothing
	te := shared.Get(t)
	l.MustBuild(context.Background(), lab.Topology{
		Namespaces: []lab.Namespace{{Name: "node"}},
		Devices: []lab.Device{{Kind: lab.KindBridge, Port: lab.Port{NS: "node", Name: "l2br.100", MTU: 1450,
			Addrs: []string{"10.40.0.1/24"}}}},
	})
	e := &env{t: t, c: te.Client, lab: l, node: l.NS("node"), name: "podnet-" + l.ID(), ns: "tenant-" + l.ID(),
		netA: "net-a-" + l.ID(), netZ: "net-z-" + l.ID(),
		finder: &finder{m: map[string]string{}}, store: podrecords.New(filepath.Join(t.TempDir(), "pods")), logs: &records{},
		resync: resync}
	ctx := context.Background()
	must(t, e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns, Labels: map[string]string{"tenant": e.ns}}}))
	t.Cleanup(func() {
		_ = e.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}})
	})
	for i, name := range []string{e.netA, e.netZ} {
		l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.Layer2NetworkConfigurationSpec{
			ID: int32(100 + i), VNI: int32(10100 + i), MTU: 1450, AnycastMac: "02:00:0a:28:00:01",
			AnycastGateways:      []string{fmt.Sprintf("10.%d.0.1/24", 40+i)},
			PodNamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": e.ns}}}}
		must(t, e.c.Create(ctx, l2))
		t.Cleanup(func() { _ = e.c.Delete(context.Background(), l2) })
	}
	nnc := &v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: e.name}, Spec: v1.NodeNetworkConfigSpec{Revision: "r1",
		Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: "10.255.0.1", VTEPAddress: "10.255.0.1"},
		Layer2s:  []v1.NodeLayer2{{Name: e.netA, VLAN: 100, VNI: 10100, MTU: 1450, AnycastGateways: []string{"10.40.0.1/24"}}}}}
	must(t, e.c.Create(ctx, nnc))
	t.Cleanup(func() { _ = e.c.Delete(context.Background(), nnc) })
	e.start()
	return e
}

// start runs a new agent controller (an agent start: new applier, new manager, the same records).
func (e *env) start() {
	t := e.t
	te := shared.Get(t)
	byObject := podnetctl.CacheOptions(e.name)
	byObject[&v1.NodeNetworkConfig{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", e.name)}
	mgr, err := ctrl.NewManager(te.Config, ctrl.Options{Scheme: te.Scheme, Cache: cache.Options{ByObject: byObject},
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	must(t, err)
	a, err := podnet.New(e.node.Handle(), podnet.Options{Store: e.store, HostNS: e.node.NsHandle()})
	must(t, err)
	must(t, podnetctl.Setup(mgr, podnetctl.Options{NodeName: e.name, Applier: a, Store: e.store, Netns: e.finder,
		Resync: e.resync, Logger: slog.New(e.logs)}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(e.stop)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// config is a PodNetworkConfig selecting app=cnf: a veth and a macvlan into netA, a route, MTU tuning.
func (e *env) config(name string) *v1.PodNetworkConfig {
	return &v1.PodNetworkConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: v1.PodNetworkConfigSpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "cnf"}},
			Primary:     &v1.PrimaryInterfaceTuning{Name: "eth0", MTU: ptr.To(int32(1400))},
			Interfaces: []v1.PodInterface{
				{Name: "net1", Type: v1.PodInterfaceVeth, Network: e.netA, Addresses: &v1.PodAddresses{Ranges: []string{"10.40.0.64/27"}}},
				{Name: "mv1", Type: v1.PodInterfaceMACVLAN, Network: e.netA},
			},
			Routes: []v1.PodRoute{{Destination: "10.50.0.0/16", Gateway: "10.40.0.1", Interface: "net1"}},
		},
	}
}

// allocate writes an allocation the way the operator does (its own field manager, only allocations).
func (e *env) allocate(cfg *v1.PodNetworkConfig, allocs ...v1.PodAddressAllocation) {
	e.t.Helper()
	var items []any
	for _, a := range allocs {
		items = append(items, map[string]any{"pod": a.Pod, "podUID": a.PodUID, "interface": a.Interface, "address": a.Address})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "PodNetworkConfig",
		"metadata": map[string]any{"name": cfg.Name, "namespace": cfg.Namespace}, "status": map[string]any{"allocations": items}}}
	must(e.t, e.c.Status().Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("network-operator"),
		client.ForceOwnership))
}

// newPod creates a pod of this node in a lab namespace of its own (with a primary eth0 as the CNI makes it);
// ready: its sandbox is up (the kubelet's status) and the runtime knows its namespace.
func (e *env) newPod(name, nsName string, labels map[string]string) (*corev1.Pod, *lab.Netns) {
	e.t.Helper()
	t := e.t
	pns, err := e.lab.AddNamespace(nsName)
	must(t, err)
	hostName := "c" + nsName
	must(t, e.node.Handle().LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hostName}, PeerName: "eth0",
		PeerNamespace: netlink.NsFd(pns.NsHandle()), PeerMTU: 1500}))
	eth0, err := pns.Link("eth0")
	must(t, err)
	must(t, pns.Handle().LinkSetUp(eth0))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: e.name, Containers: []corev1.Container{{Name: "cnf", Image: "cnf:1"}}}}
	must(t, e.c.Create(context.Background(), pod))
	t.Cleanup(func() {
		_ = e.c.Delete(context.Background(), pod, client.GracePeriodSeconds(0))
	})
	e.finder.set(string(pod.UID), pns.Path)
	return pod, pns
}

// ready reports the pod's sandbox ready, as the kubelet does.
func (e *env) ready(pod *corev1.Pod) {
	e.t.Helper()
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = "10.244.1.5"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	must(e.t, e.c.Status().Update(context.Background(), pod))
}

// entry returns the config's status entry of the pod ("" node: none).
func (e *env) entry(cfg, pod string) (v1.PodNetworkStatus, []v1.PodNetworkStatus, error) {
	var c v1.PodNetworkConfig
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: cfg}, &c); err != nil {
		return v1.PodNetworkStatus{}, nil, err
	}
	for _, p := range c.Status.Pods {
		if p.Name == pod {
			return p, c.Status.Pods, nil
		}
	}
	return v1.PodNetworkStatus{}, c.Status.Pods, nil
}

func (e *env) waitEntry(cfg, pod string, want func(v1.PodNetworkStatus) bool, what string) v1.PodNetworkStatus {
	e.t.Helper()
	var got v1.PodNetworkStatus
	waittest.Must(e.t, 20*time.Millisecond, 20*time.Second, what, waittest.Check(func() (bool, error) {
		var err error
		var all []v1.PodNetworkStatus
		got, all, err = e.entry(cfg, pod)
		if err != nil {
			return false, err
		}
		return want(got), fmt.Errorf("status.pods %+v", all)
	}))
	return got
}

// waitLinks waits until the pod's namespace has exactly these links of the agent's, all up.
func waitLinks(t *testing.T, pns *lab.Netns, want ...string) {
	t.Helper()
	waittest.Must(t, 2*time.Millisecond, 20*time.Second, fmt.Sprintf("links %v in %s", want, pns.Logical), waittest.Check(func() (bool, error) {
		links, err := pns.Handle().LinkList()
		if err != nil {
			return false, waittest.Permanent(err)
		}
		var got []string
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) && l.Attrs().Flags&net.FlagUp != 0 {
				got = append(got, l.Attrs().Name)
			}
		}
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want))
		return slices.Equal(got, w), fmt.Errorf("links up of the agent's: %v", got)
	}))
}

// hostLinks lists the node's links marked as a pod's.
func (e *env) hostLinks() []string {
	e.t.Helper()
	links, err := e.node.Handle().LinkList()
	must(e.t, err)
	var out []string
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) {
			out = append(out, l.Attrs().Name)
		}
	}
	return out
}

// staticFDB reports whether every pod veth's host end in a bridge has the static FDB entry of its pod end's MAC.
func (e *env) staticFDB() (bool, error) {
	links, err := e.node.Handle().LinkList()
	if err != nil {
		return false, err
	}
	for _, l := range links {
		a := l.Attrs()
		uid, ifname, ok := podnet.ParseAlias(a.Alias)
		if !ok || a.MasterIndex == 0 || l.Type() != "veth" {
			continue
		}
		fdb, err := e.node.Handle().NeighList(a.Index, unix.AF_BRIDGE)
		if err != nil {
			return false, err
		}
		mac := podnet.MAC(uid, ifname).String()
		if !slices.ContainsFunc(fdb, func(n netlink.Neigh) bool {
			return n.HardwareAddr.String() == mac && n.State&netlink.NUD_NOARP != 0
		}) {
			return false, fmt.Errorf("no static entry of %s on %s", mac, a.Name)
		}
	}
	return true, nil
}

// TestPodLifecycle drives one node's agent through a pod's life against the API server: pod ready ->
// interfaces up (latency measured over several pods), status written beside another node's entry and the
// operator's allocations, label removed/added, an interface removed, an agent restart (nothing planned), the
// config deleted, the pod deleted.
func TestPodLifecycle(t *testing.T) {
	// No periodic re-apply within the test: every apply below follows a watch event (a pod ready, a label, a
	// config change), none a retry.
	e := newEnv(t, time.Hour)
	ctx := context.Background()
	cfg := e.config("cnf")
	must(t, e.c.Create(ctx, cfg))
	// Another node's agent already reports a pod of its own.
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "PodNetworkConfig",
		"metadata": map[string]any{"name": cfg.Name, "namespace": cfg.Namespace},
		"status":   map[string]any{"pods": []any{map[string]any{"name": "elsewhere-0", "node": "other-node", "applied": true}}}}}
	must(t, e.c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner(podnetctl.FieldManager("other-node"))))

	// Pods become ready one after the other; each one's interfaces come up on that event (the latency is logged;
	// make bench's pod start rows measure it).
	var latencies []time.Duration
	var pods []*corev1.Pod
	var nss []*lab.Netns
	var allocs []v1.PodAddressAllocation
	for i := range 6 {
		pod, pns := e.newPod(fmt.Sprintf("cnf-%d", i), fmt.Sprintf("p%d", i), map[string]string{"app": "cnf"})
		allocs = append(allocs, v1.PodAddressAllocation{Pod: pod.Name, PodUID: string(pod.UID), Interface: "net1",
			Address: fmt.Sprintf("10.40.0.%d/24", 65+i)})
		e.allocate(cfg, allocs...)
		e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Reason == podnet.ReasonPodNotRunning },
			pod.Name+" reported PodNotRunning before its sandbox is ready")
		start := time.Now()
		e.ready(pod)
		waitLinks(t, pns, "net1", "mv1")
		latencies = append(latencies, time.Since(start))
		pods, nss = append(pods, pod), append(nss, pns)
	}
	slices.Sort(latencies)
	t.Logf("pod sandbox ready (status write) -> interfaces up: min %v, median %v, max %v over %d pods",
		latencies[0], latencies[len(latencies)/2], latencies[len(latencies)-1], len(latencies))
	pod, pns := pods[0], nss[0]
	st := e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Applied }, "cnf-0 applied")
	if st.Node != e.name || !slices.Equal(st.Interfaces, []string{"net1", "mv1"}) {
		t.Errorf("entry %+v: want node %s, interfaces net1 mv1", st, e.name)
	}
	checkOthers := func() {
		t.Helper()
		var c v1.PodNetworkConfig
		must(t, e.c.Get(ctx, client.ObjectKeyFromObject(cfg), &c))
		if !slices.ContainsFunc(c.Status.Pods, func(p v1.PodNetworkStatus) bool { return p.Name == "elsewhere-0" && p.Node == "other-node" }) {
			t.Errorf("the other node's entry is gone: %+v", c.Status.Pods)
		}
		if len(c.Status.Allocations) != len(allocs) {
			t.Errorf("the operator's allocations changed: %+v", c.Status.Allocations)
		}
	}
	checkOthers()
	eth0, err := pns.Link("eth0")
	must(t, err)
	if eth0.Attrs().MTU != 1400 {
		t.Errorf("eth0 mtu %d, want 1400", eth0.Attrs().MTU)
	}
	net1, err := pns.Ifindex("net1")
	must(t, err)

	t.Run("restart plans nothing", func(t *testing.T) {
		// Each apply that made a veth is followed by one that makes the bridge's entry of its MAC static
		// (podnet.Plan.Settle, 2 s later): what a restart must find done, on every pod's veth.
		waittest.Must(t, 50*time.Millisecond, 20*time.Second, "static fdb entries of the pods' veths", waittest.Check(e.staticFDB))
		e.stop()
		applied := e.logs.count("pod network applied")
		seen := e.logs.count("pod network unchanged " + podRef(pod))
		e.start()
		// The new agent has looked at cnf-0 (and found it as desired) once it logged so.
		waittest.Must(t, 20*time.Millisecond, 20*time.Second, "the restarted agent reconciled cnf-0", waittest.Check(func() (bool, error) {
			return e.logs.count("pod network unchanged "+podRef(pod)) > seen, errors.New("not yet")
		}))
		if n := e.logs.count("pod network applied"); n != applied {
			t.Errorf("the restarted agent applied something (%d applies, before %d)", n, applied)
		}
		if idx, err := pns.Ifindex("net1"); err != nil || idx != net1 {
			t.Errorf("net1 ifindex %d (%v), want the same %d", idx, err, net1)
		}
	})

	t.Run("label removed: removed, entry gone; label back: applied again", func(t *testing.T) {
		patch := client.MergeFrom(pod.DeepCopy())
		pod.Labels = map[string]string{"app": "other"}
		must(t, e.c.Patch(ctx, pod, patch))
		waitLinks(t, pns)
		e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Name == "" }, "cnf-0's entry removed")
		if eth0, err := pns.Link("eth0"); err != nil || eth0.Attrs().MTU != 1500 {
			t.Errorf("eth0 after the label went: %v %v, want mtu 1500 again", eth0, err)
		}
		checkOthers()
		patch = client.MergeFrom(pod.DeepCopy())
		pod.Labels = map[string]string{"app": "cnf"}
		must(t, e.c.Patch(ctx, pod, patch))
		waitLinks(t, pns, "net1", "mv1")
		e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Applied }, "cnf-0 applied again")
	})

	t.Run("interface removed from the config: only it goes", func(t *testing.T) {
		net1, err := pns.Ifindex("net1")
		must(t, err)
		must(t, e.c.Get(ctx, client.ObjectKeyFromObject(cfg), cfg))
		cfg.Spec.Interfaces = cfg.Spec.Interfaces[:1]
		must(t, e.c.Update(ctx, cfg))
		waitLinks(t, pns, "net1")
		if idx, err := pns.Ifindex("net1"); err != nil || idx != net1 {
			t.Errorf("net1 ifindex %d (%v), want the same %d", idx, err, net1)
		}
		e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool {
			return s.Applied && slices.Equal(s.Interfaces, []string{"net1"}) && s.ObservedGeneration == cfg.Generation
		}, "cnf-0's entry with net1 alone")
	})

	t.Run("pod deleted: removed, entry gone", func(t *testing.T) {
		victim, vns := pods[1], nss[1]
		must(t, e.c.Delete(ctx, victim, client.GracePeriodSeconds(0)))
		waitLinks(t, vns)
		e.waitEntry(cfg.Name, victim.Name, func(s v1.PodNetworkStatus) bool { return s.Name == "" }, victim.Name+"'s entry removed")
		host := podnet.HostVethName(string(victim.UID), "net1")
		if slices.Contains(e.hostLinks(), host) {
			t.Errorf("host end %s of the deleted pod left", host)
		}
		if r, err := e.store.Load(string(victim.UID)); err != nil || r != nil {
			t.Errorf("record of the deleted pod: %+v %v", r, err)
		}
	})

	t.Run("pod terminated: removed, entry gone", func(t *testing.T) {
		done, dns := pods[2], nss[2]
		must(t, e.c.Get(ctx, client.ObjectKeyFromObject(done), done))
		done.Status.Phase = corev1.PodSucceeded
		must(t, e.c.Status().Update(ctx, done))
		waitLinks(t, dns)
		e.waitEntry(cfg.Name, done.Name, func(s v1.PodNetworkStatus) bool { return s.Name == "" }, done.Name+"'s entry removed")
	})

	t.Run("config deleted: everything goes", func(t *testing.T) {
		must(t, e.c.Delete(ctx, cfg))
		for _, pns := range nss {
			waitLinks(t, pns)
		}
		waittest.Must(t, 20*time.Millisecond, 20*time.Second, "host and records clean", waittest.Check(func() (bool, error) {
			uids, err := e.store.UIDs()
			if err != nil {
				return false, err
			}
			return len(e.hostLinks()) == 0 && len(uids) == 0, fmt.Errorf("host links %v, records %v", e.hostLinks(), uids)
		}))
		if eth0, err := pns.Link("eth0"); err != nil || eth0.Attrs().MTU != 1500 {
			t.Errorf("eth0 after the config went: %v %v, want mtu 1500 again", eth0, err)
		}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); !apierrors.IsNotFound(err) {
			t.Errorf("config still there: %v", err)
		}
	})
}

func podRef(p *corev1.Pod) string {
	return podnet.Pod{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}.String()
}

// TestNotApplied: what a config cannot have is reported in its status entry, and the rest applied: an interface
// into a network the node lacks is NetworkNotOnNode; a pod whose sandbox the runtime does not know is
// PodNotRunning until it does.
func TestNotApplied(t *testing.T) {
	e := newEnv(t, 2*time.Second) // the sandbox appears without an event: the re-apply finds it
	ctx := context.Background()
	cfg := e.config("partial")
	cfg.Spec.Interfaces = append(cfg.Spec.Interfaces, v1.PodInterface{Name: "net9", Type: v1.PodInterfaceVeth, Network: e.netZ})
	must(t, e.c.Create(ctx, cfg))
	pod, pns := e.newPod("partial-0", "q0", map[string]string{"app": "cnf"})
	e.allocate(cfg, v1.PodAddressAllocation{Pod: pod.Name, PodUID: string(pod.UID), Interface: "net1", Address: "10.40.0.90/24"})
	e.finder.set(string(pod.UID), "") // the runtime does not list the sandbox yet
	e.ready(pod)
	st := e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Reason == podnet.ReasonPodNotRunning },
		"PodNotRunning while the runtime has no sandbox")
	if !strings.Contains(st.Message, "no ready pod sandbox") {
		t.Errorf("message %q does not say why", st.Message)
	}
	e.finder.set(string(pod.UID), pns.Path) // found at the next try
	waitLinks(t, pns, "net1", "mv1")
	st = e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Reason == podnet.ReasonNetworkNotOnNode },
		"NetworkNotOnNode for net9")
	if st.Applied || !strings.Contains(st.Message, fmt.Sprintf("network %q", e.netZ)) || !slices.Equal(st.Interfaces, []string{"net1", "mv1"}) {
		t.Errorf("entry %+v: want not applied, naming net-z, with net1 and mv1 applied", st)
	}
}

// TestNetworkWithdrawn: when the administrator withdraws a network from the namespace - its podNamespaceSelector
// changes, or the namespace loses the label it selects - the agent takes the pod's interfaces on it away (the
// host end too) and reports NetworkNotAllowed, keeping what needs no network (the primary interface's MTU); given
// back, the interfaces come back.
func TestNetworkWithdrawn(t *testing.T) {
	e := newEnv(t, time.Hour) // every change below is an event
	ctx := context.Background()
	cfg := e.config("withdrawn")
	must(t, e.c.Create(ctx, cfg))
	pod, pns := e.newPod("withdrawn-0", "w0", map[string]string{"app": "cnf"})
	e.allocate(cfg, v1.PodAddressAllocation{Pod: pod.Name, PodUID: string(pod.UID), Interface: "net1", Address: "10.40.0.70/24"})
	e.ready(pod)
	waitLinks(t, pns, "net1", "mv1")
	e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Applied }, "applied while admitted")
	host := podnet.HostVethName(string(pod.UID), "net1")
	if !slices.Contains(e.hostLinks(), host) {
		t.Fatalf("host end %s missing while admitted: %v", host, e.hostLinks())
	}
	withdrawn := func(what string) {
		t.Helper()
		waitLinks(t, pns)
		st := e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Reason == podnet.ReasonNetworkNotAllowed },
			"NetworkNotAllowed after "+what)
		want := fmt.Sprintf("no Layer2NetworkConfiguration %q admits pods of namespace %q", e.netA, e.ns)
		if st.Applied || len(st.Interfaces) != 0 || !strings.Contains(st.Message, "interface net1: "+want) ||
			!strings.Contains(st.Message, "interface mv1: "+want) {
			t.Errorf("entry after %s: %+v: want not applied, no interfaces, net1 and mv1 named with %q", what, st, want)
		}
		if slices.Contains(e.hostLinks(), host) {
			t.Errorf("host end %s left after %s", host, what)
		}
		if eth0, err := pns.Link("eth0"); err != nil || eth0.Attrs().MTU != 1400 {
			t.Errorf("eth0 after %s: %v %v, want its tuned mtu 1400 kept", what, eth0, err)
		}
	}
	admitted := func(what string) {
		t.Helper()
		waitLinks(t, pns, "net1", "mv1")
		e.waitEntry(cfg.Name, pod.Name, func(s v1.PodNetworkStatus) bool { return s.Applied }, "applied again after "+what)
	}
	setSelector := func(sel map[string]string) {
		t.Helper()
		var l2 v1.Layer2NetworkConfiguration
		must(t, e.c.Get(ctx, client.ObjectKey{Name: e.netA}, &l2))
		patch := client.MergeFrom(l2.DeepCopy())
		l2.Spec.PodNamespaceSelector = &metav1.LabelSelector{MatchLabels: sel}
		must(t, e.c.Patch(ctx, &l2, patch))
	}
	setLabel := func(v string) {
		t.Helper()
		var ns corev1.Namespace
		must(t, e.c.Get(ctx, client.ObjectKey{Name: e.ns}, &ns))
		patch := client.MergeFrom(ns.DeepCopy())
		ns.Labels["tenant"] = v
		must(t, e.c.Patch(ctx, &ns, patch))
	}

	setSelector(map[string]string{"tenant": "someone-else"})
	withdrawn("the network's podNamespaceSelector changed")
	setSelector(map[string]string{"tenant": e.ns})
	admitted("the selector was given back")

	setLabel("relabelled")
	withdrawn("the namespace was relabelled")
	setLabel(e.ns)
	admitted("the label was given back")
}
