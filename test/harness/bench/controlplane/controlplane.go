// Package controlplane measures the operator at scale against a real API server: kube-apiserver + etcd (envtest),
// a thousand Node objects, a simulated agent per node in this process (fleet.go) and the operator binary as a
// process of its own, run as the chart runs it. A change of a VRFRouteConfiguration is timed until its revision
// is Done (every node confirmed it: applied revision, the expected map version and Ready), the operator's peak
// resident memory is read from /proc, and its API requests (counted by the operator itself,
// network_operator_api_requests_total) are reported per node and revision.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/operator/rollout"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// Section is the table's area for these rows.
const Section = "control plane"

// Targets of issue 14 (target 3).
const (
	TargetDoneSeconds = 20
	TargetRSSMiB      = 150
)

// Options size the measurement.
type Options struct {
	// Operator is the network-operator binary.
	Operator string
	// Nodes is the number of Node objects and simulated agents.
	Nodes int
	// Changes is the number of timed changes (after one untimed first rollout).
	Changes int
	// MaxUnavailable is the operator's --max-unavailable.
	MaxUnavailable string
	// Seed makes the agents' apply delays repeatable.
	Seed uint64
	// Timeout bounds each rollout.
	Timeout time.Duration
}

// DefaultOptions: 1000 nodes at 10%, 5 timed changes.
func DefaultOptions() Options {
	return Options{Nodes: 1000, Changes: 5, MaxUnavailable: "10%", Seed: 42, Timeout: 10 * time.Minute}
}

// result is what one run measured.
type result struct {
	first    time.Duration            // the first rollout: every node's configuration created
	done     []time.Duration          // change -> Done, per timed change
	cpu      map[string]time.Duration // CPU time of the timed changes per process (procNames)
	peak     []int                    // most configurations unconfirmed at once, per timed change
	allowed  int                      // what maxUnavailable allows
	requests map[string]float64
	rss      float64 // after the changes
	hwm      float64 // peak
}

// Measure runs the scenario and returns its rows: change -> Done p50, the operator's peak RSS, its API requests per
// node and revision.
func Measure(ctx context.Context, o Options) []report.Row {
	res, err := run(ctx, o)
	return rows(o, res, err)
}

// rows are the figures of a run (err: why there are none).
func rows(o Options, res result, err error) []report.Row {
	name := fmt.Sprintf("%d nodes at %s", o.Nodes, o.MaxUnavailable)
	done := report.Row{Section: Section, Name: name + ": change -> Done, p50", Unit: "s",
		Target: report.Target{Cmp: report.AtMost, Bound: TargetDoneSeconds}}
	rss := report.Row{Section: Section, Name: name + ": operator peak RSS", Unit: "MiB",
		Target: report.Target{Cmp: report.AtMost, Bound: TargetRSSMiB}}
	reqs := report.Row{Section: Section, Name: name + ": operator API requests per node-revision"}
	if err != nil {
		done.Err, rss.Err, reqs.Err = err, err, err
		return []report.Row{done, rss, reqs}
	}
	secs := make([]float64, len(res.done))
	for i, d := range res.done {
		secs[i] = d.Seconds()
	}
	done.Value = stats.Median(secs)
	var shares []string
	for _, name := range procNames() {
		shares = append(shares, fmt.Sprintf("%s %.1f", name, res.cpu[name].Seconds()/float64(len(secs))))
	}
	done.Detail = fmt.Sprintf("%d changes: %s s; first rollout (creates every configuration) %.1f s; "+
		"CPU s per change: %s; most nodes unconfirmed at once %d (maxUnavailable %d)",
		len(secs), joinFloats(secs, "%.1f"), res.first.Seconds(), strings.Join(shares, ", "), slices.Max(res.peak), res.allowed)
	rss.Value = res.hwm / (1 << 20)
	rss.Detail = fmt.Sprintf("VmHWM of the operator process over the whole run; VmRSS after the changes %.0f MiB", res.rss/(1<<20))
	perNodeRev := float64(o.Nodes * o.Changes)
	total := 0.0
	for _, v := range res.requests {
		total += v
	}
	reqs.Value = total / perNodeRev
	reqs.Detail = requestDetail(res.requests, perNodeRev)
	return []report.Row{done, rss, reqs}
}

func joinFloats(v []float64, format string) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = fmt.Sprintf(format, f)
	}
	return strings.Join(s, ", ")
}

// requestDetail lists the requests by verb and resource, most first, per node-revision.
func requestDetail(requests map[string]float64, perNodeRev float64) string {
	keys := slices.Collect(maps.Keys(requests))
	slices.SortFunc(keys, func(a, b string) int {
		if requests[a] != requests[b] {
			if requests[a] > requests[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		if requests[k] == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.3g", k, requests[k]/perNodeRev))
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return "by verb and resource: " + strings.Join(parts, ", ")
}

func run(ctx context.Context, o Options) (res result, err error) {
	if o.Operator == "" || o.Nodes <= 0 || o.Changes <= 0 {
		return res, errors.New("controlplane: Operator, Nodes and Changes are required")
	}
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, env.Stop()) }()
	dir, err := os.MkdirTemp("", "controlplane-bench-")
	if err != nil {
		return res, fmt.Errorf("work directory: %w", err)
	}
	defer os.RemoveAll(dir)

	if err := createNodes(ctx, env.Client, o.Nodes); err != nil {
		return res, err
	}
	actx, stopAgents := context.WithCancel(ctx)
	informers, f, err := startAgents(actx, env.Config, env.Scheme, o.Seed)
	if err != nil {
		stopAgents()
		return res, err
	}
	defer func() {
		stopAgents()
		f.wait()
	}()

	op, err := startOperator(ctx, o.Operator, env.Config, dir, "--max-unavailable", o.MaxUnavailable, "--underlay-interfaces", "eth0")
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	r := &rollouts{c: env.Client, informers: informers, fleet: f, timeout: o.Timeout}

	start := time.Now()
	vrf := &v1.VRFRouteConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}
	vrf.Spec.VRF, vrf.Spec.VNI, vrf.Spec.Seq = "blue", new(int32(100)), 10
	vrf.Spec.Export = []v1.PrefixItem{{CIDR: "10.0.0.0/8", Action: v1.PrefixActionPermit}}
	if err := env.Client.Create(ctx, vrf); err != nil {
		return res, fmt.Errorf("create VRFRouteConfiguration: %w", err)
	}
	seq, err := r.waitDone(ctx, 0, o.Nodes)
	if err != nil {
		return res, fmt.Errorf("first rollout: %w", err)
	}
	res.first = time.Since(start)

	ps, err := findProcs(op.Pid())
	if err != nil {
		return res, err
	}
	res.requests, res.cpu = map[string]float64{}, map[string]time.Duration{}
	for i := range o.Changes {
		before, err := op.requests(ctx)
		if err != nil {
			return res, err
		}
		cpu0, err := ps.cpu()
		if err != nil {
			return res, err
		}
		f.resetPeak()
		start := time.Now()
		if err := setVNI(ctx, env.Client, "blue", int32(1000+i)); err != nil {
			return res, err
		}
		if seq, err = r.waitDone(ctx, seq, o.Nodes); err != nil {
			return res, fmt.Errorf("change %d: %w", i+1, err)
		}
		res.done = append(res.done, time.Since(start))
		res.peak = append(res.peak, f.resetPeak())
		cpu1, err := ps.cpu()
		if err != nil {
			return res, err
		}
		for name, t := range cpu1 {
			res.cpu[name] += t - cpu0[name]
		}
		after, err := op.requests(ctx)
		if err != nil {
			return res, err
		}
		for k, v := range after {
			res.requests[k] += v - before[k]
		}
	}
	if errs := f.errors(); len(errs) > 0 {
		return res, fmt.Errorf("simulated agents: %w", errors.Join(errs...))
	}
	res.allowed = allowed(o.MaxUnavailable, o.Nodes)
	if res.rss, res.hwm, err = op.memory(); err != nil {
		return res, err
	}
	return res, nil
}

// allowed is what maxUnavailable resolves to (by the operator's rule), for the detail.
func allowed(maxUnavailable string, nodes int) int {
	v := intstr.Parse(maxUnavailable)
	n, err := rollout.ResolveMaxUnavailable(&v, nodes)
	if err != nil {
		return 0
	}
	return n
}

// createNodes creates count Ready Nodes, 32 at once, each with the status a kubelet writes (kubeletNode).
func createNodes(ctx context.Context, c client.Client, count int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for i := range count {
		g.Go(func() error {
			n := kubeletNode(i)
			st := n.Status
			if err := c.Create(gctx, n); err != nil {
				return fmt.Errorf("create node %s: %w", n.Name, err)
			}
			n.Status = st
			if err := c.Status().Update(gctx, n); err != nil {
				return fmt.Errorf("node %s ready: %w", n.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// kubeletNode is node i as a kubelet registers it (labels, capacity, conditions, addresses, node info, 20 images),
// about 6 KB of JSON before the API server adds managed fields, like a small real node: the operator caches every
// Node.
func kubeletNode(i int) *corev1.Node {
	name := fmt.Sprintf("node-%04d", i)
	ip := fmt.Sprintf("10.%d.%d.%d", 1+i/62500, i/250%250, i%250+1)
	now := metav1.Now()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("65536Mi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("200Gi")}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)},
			Annotations: map[string]string{nodespec.AnnotationRouterID: ip,
				"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i%256), PodCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", i%256)}},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
				BootID: fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i), KernelVersion: "6.12.0-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)",
				ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: "v1.37.1", KubeProxyVersion: "v1.37.1",
				OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	for j := range 20 {
		img := fmt.Sprintf("registry.example.com/team-%d/service-%d", j%4, j)
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%064x", img, j+1), fmt.Sprintf("%s:v1.%d.0", img, j)},
			SizeBytes: int64(50_000_000 + j*1_000_000)})
	}
	return n
}

// startAgents starts an informer cache (configurations and revisions) and the simulated agents on it.
func startAgents(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, seed uint64) (cache.Cache, *fleet, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("agents' client: %w", err)
	}
	informers, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("agents' cache: %w", err)
	}
	f, err := startFleet(ctx, informers, c, seed)
	if err != nil {
		return nil, nil, err
	}
	if _, err := informers.GetInformer(ctx, &v1.NetworkConfigRevision{}); err != nil {
		return nil, nil, fmt.Errorf("informer of revisions: %w", err)
	}
	go func() { _ = informers.Start(ctx) }() // ends with ctx
	if !informers.WaitForCacheSync(ctx) {
		return nil, nil, errors.New("agents' cache did not sync")
	}
	return informers, f, nil
}

func setVNI(ctx context.Context, c client.Client, name string, vni int32) error {
	var vrf v1.VRFRouteConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &vrf); err != nil {
		return fmt.Errorf("get VRFRouteConfiguration %s: %w", name, err)
	}
	orig := vrf.DeepCopy()
	vrf.Spec.VNI = new(vni)
	if err := c.Patch(ctx, &vrf, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("change VNI of %s: %w", name, err)
	}
	return nil
}

// rollouts waits for revisions, reading the cache the agents run on.
type rollouts struct {
	c         client.Client
	informers cache.Cache
	fleet     *fleet
	timeout   time.Duration
}

// waitDone waits for a revision newer than sequence after to be Done on nodes nodes and returns its sequence.
// A Failed revision ends the wait at once.
func (r *rollouts) waitDone(ctx context.Context, after int64, nodes int) (int64, error) {
	var seq int64
	err := wait.Poll(ctx, 10*time.Millisecond, r.timeout, "revision Done", func(ctx context.Context) (bool, string, error) {
		var l v1.NetworkConfigRevisionList
		if err := r.informers.List(ctx, &l); err != nil {
			return false, "", fmt.Errorf("list revisions: %w", err)
		}
		var newest *v1.NetworkConfigRevision
		for i := range l.Items {
			if rev := &l.Items[i]; rev.Spec.Sequence > after && (newest == nil || rev.Spec.Sequence > newest.Spec.Sequence) {
				newest = rev
			}
		}
		if newest == nil {
			return false, fmt.Sprintf("no revision after sequence %d yet", after), nil
		}
		st := newest.Status
		switch {
		case st.Phase == v1.RevisionFailed:
			return false, "", fmt.Errorf("revision %s failed: %s", newest.Name, st.Message)
		case st.Phase == v1.RevisionDone && int(st.Total) == nodes:
			seq = newest.Spec.Sequence
			return true, "", nil
		}
		if errs := r.fleet.errors(); len(errs) > 0 {
			return false, "", fmt.Errorf("simulated agents: %w", errors.Join(errs...))
		}
		return false, fmt.Sprintf("revision %s %s, %d of %d updated", newest.Name, st.Phase, st.Updated, st.Total), nil
	})
	return seq, err
}

// Method explains the rows below the table.
const Method = "- control plane: kube-apiserver + etcd (envtest, the versions `make envtest` caches), N Ready Nodes, one " +
	"simulated agent per node in the benchmark process (one shared informer; a new spec generation is \"applied\" " +
	"after a seeded 10-80 ms, a ninth of them 300 ms more, then the agent writes what the real agent writes: the " +
	"status built by agent/nodestatus as a merge patch, and the Node's NetworkOperatorReady condition, without the " +
	"real agent's GET of the Node first), and " +
	"the operator binary as its own process, as the chart runs it (leader election, default debounce, " +
	"--max-unavailable) but with a kubeconfig and no webhooks. After an untimed first rollout, each change of a " +
	"VRFRouteConfiguration's VNI is timed from the patch to the new revision's phase Done (every node confirmed the " +
	"revision, the expected map version and Ready). CPU per change is each process's user + system time (/proc) over " +
	"the timed changes: the operator, kube-apiserver, etcd and the agents (the benchmark process); on two cores they " +
	"share the CPUs, so the API server's share bounds the pace. RSS is the operator process's VmHWM (/proc). Requests are the " +
	"operator's own count (network_operator_api_requests_total), scraped before and after each change, divided by " +
	"nodes x changes; long-running watches started earlier are not in the window."
