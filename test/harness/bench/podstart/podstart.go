// Package podstart measures how soon a pod has its network after it starts (issue 13: within a second of the pod
// starting): on a real Kubernetes node (test/harness/kubenodes: kubelet, containerd and the bridge CNI in a network
// namespace of its own) with the real network-agent binary doing pod networking against the node's API server,
// pods are created one after another, and for each the time from its Running - as the kubelet reports it - to its
// interface being up - as the agent reports it (its status.pods entry Applied) - is taken by one watcher of both.
package podstart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/bench/benchproc"
	"github.com/network-operator/network-operator/test/harness/bench/report"
	"github.com/network-operator/network-operator/test/harness/bench/stats"
	"github.com/network-operator/network-operator/test/harness/images"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	"github.com/network-operator/network-operator/test/harness/lab"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// Section is the table's area for these rows.
const Section = "pod network"

// TargetMs is issue 13's bound: the pod's network within a second of the pod starting.
const TargetMs = 1000

// Options size the measurement.
type Options struct {
	// Pods are created one after another (each once the previous one has its network).
	Pods int
	// Agent is the network-agent binary (empty: built from this module with go build).
	Agent string
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// DefaultOptions: 20 pods.
func DefaultOptions() Options { return Options{Pods: 20} }

// Result holds one sample per pod.
type Result struct {
	// RunningToUp is from the pod's Running (the kubelet's status update, seen by the watcher) to its interface
	// up (the agent's Applied entry, seen by the same watcher); negative when the agent was first: it starts on
	// the sandbox being ready, which the kubelet reports before it has started the containers.
	RunningToUp []time.Duration
	// SandboxToUp is from the kubelet's first report of the sandbox ready (PodReadyToStartContainers or a pod IP)
	// to the interface up: the agent's own reaction (event, runtime, netlink, status write).
	SandboxToUp []time.Duration
	// CreatedToRunning and CreatedToUp are from the pod's creation.
	CreatedToRunning, CreatedToUp []time.Duration
}

// Measure runs the measurement and returns the table's rows.
func Measure(ctx context.Context, o Options) []report.Row {
	res, err := Run(ctx, o)
	return rows(res, err)
}

// rows are the table's rows of a run.
func rows(res *Result, err error) []report.Row {
	target := report.Target{Cmp: report.AtMost, Bound: TargetMs}
	rows := []report.Row{
		{Section: Section, Name: "pod Running -> interface up, p50", Unit: "ms", Target: target},
		{Section: Section, Name: "pod Running -> interface up, p99", Unit: "ms", Target: target},
		{Section: Section, Name: "pod sandbox ready -> interface up, p50", Unit: "ms"},
		{Section: Section, Name: "pod sandbox ready -> interface up, p99", Unit: "ms"},
	}
	if err != nil {
		for i := range rows {
			rows[i].Err = err
		}
		return rows
	}
	ms := func(ds []time.Duration, p float64) float64 { return stats.Percentile(stats.Durations(ds), p) }
	first := 0
	for _, d := range res.RunningToUp {
		if d < 0 {
			first++
		}
	}
	rows[0].Value, rows[1].Value = ms(res.RunningToUp, 50), ms(res.RunningToUp, 99)
	rows[2].Value, rows[3].Value = ms(res.SandboxToUp, 50), ms(res.SandboxToUp, 99)
	rows[0].Detail = fmt.Sprintf("%d pods one after another, real kubelet node, the agent binary (veth, address, eth0 MTU 1400); "+
		"negative: up before the kubelet reported Running (%d of %d)", len(res.RunningToUp), first, len(res.RunningToUp))
	rows[1].Detail = fmt.Sprintf("max %.0f ms; pod created -> interface up p50 %.0f ms (created -> Running p50 %.0f ms: sandbox, CNI, container)",
		ms(res.RunningToUp, 100), ms(res.CreatedToUp, 50), ms(res.CreatedToRunning, 50))
	rows[2].Detail = "the agent's reaction: kubelet's status update (sandbox ready) -> CRI -> netlink in the pod -> status.pods Applied"
	rows[3].Detail = fmt.Sprintf("max %.0f ms", ms(res.SandboxToUp, 100))
	return rows
}

// Method describes the rows under the table.
const Method = "- pod network: one Kubernetes node of test/harness/kubenodes (kubelet, containerd 1.6 and the bridge CNI in a network and " +
	"mount namespace of its own, the control plane built from source) and the network-agent binary of this commit running as a process " +
	"(`--pod-network --frr none --netns <node>`, pod namespaces found through the node's CRI socket) with a NodeNetworkConfig of one " +
	"layer-2 network; no operator: the benchmark writes the NodeNetworkConfig and each pod's address allocation (as the operator does when " +
	"the pod is scheduled, before it runs). One PodNetworkConfig gives every pod (pause image) a veth into the network with an address and " +
	"its eth0 MTU 1400. Pods are created one at a time (each deleted before the next: the node's pod subnet is a /28); one watcher sees each pod's status report the sandbox ready (PodReadyToStartContainers, " +
	"the agent's trigger), then Running (both the kubelet's updates), and the agent's status.pods entry turn Applied (written after the " +
	"interfaces are up), so all times come from one clock, each a few ms after the fact. The kubelet reports the sandbox ready before it " +
	"starts the containers, so a pod's interface is usually up before its Running is reported (a negative Running -> up). Everything " +
	"(node, agent, pins, work directory) is removed at the end."

// namespace, network and config of the measurement.
const (
	benchNS      = "podstart"
	benchNetwork = "bench-net"
	benchConfig  = "bench"
	nodeName     = "bench-node"
	revision     = "podstart-1"
	podTimeout   = time.Minute
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// Run brings up the node and the agent, measures o.Pods pods and tears everything down.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Pods < 2 {
		return nil, errors.New("podstart: Pods must be at least 2")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "podstart: "+format+"\n", args...)
		}
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := testenv.AssetsDir()
	if err != nil {
		return nil, fmt.Errorf("%w (make envtest)", err)
	}
	nodeBins := os.Getenv("NETOP_K8S_BINARIES")
	if nodeBins == "" {
		home, err := os.UserCacheDir()
		if err != nil {
			return nil, err
		}
		nodeBins = filepath.Join(home, "network-operator", "k8s", testenv.DefaultK8sVersion)
	}
	l, err := lab.Open()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, e := range l.Close() {
			err = errors.Join(err, e)
		}
	}()
	pins, err := l.PinDir()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "netop-podstart-"+l.ID()+"-")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(work)) }()

	start := time.Now()
	agentBin := o.Agent
	if agentBin == "" {
		agentBin = filepath.Join(work, "network-agent")
		build := exec.CommandContext(ctx, "go", "build", "-o", agentBin, "./cmd/network-agent")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/network-agent: %w\n%s", err, out)
		}
	}
	built, err := images.Build(ctx, images.Options{ModuleDir: root, OutDir: filepath.Join(work, "images"), Repo: "localhost/podstart",
		Tag: "b", Meta: images.Meta{Version: "b", Created: time.Unix(0, 0)}}, "pause")
	if err != nil {
		return nil, fmt.Errorf("pause image: %w", err)
	}
	pause := kubenodes.ImageRef{Archive: built[0].Path, Name: "localhost/podstart/pause:b"}
	logf("agent and pause image built in %v", time.Since(start).Round(time.Millisecond))

	kn, err := kubenodes.Start(ctx, kubenodes.Options{Prefix: lab.NamePrefix + l.ID() + "-", WorkDir: filepath.Join(work, "kube"),
		APIServerBinDir: assets, NodeBinDir: nodeBins, PauseImage: pause, Nodes: []kubenodes.NodeSpec{{Name: nodeName}}})
	if err != nil {
		return nil, fmt.Errorf("kubernetes node: %w", err)
	}
	defer func() { err = errors.Join(err, kn.Close()) }()
	node := kn.Nodes()[0]
	cfg := kn.RESTConfig()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("CRDs: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	logf("node %s Ready, CRDs installed, %v after the start", nodeName, time.Since(start).Round(time.Millisecond))

	// What the operator would have made: the node's configuration with one layer-2 network admitting every
	// namespace.
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}},
		&v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: benchNetwork},
			Spec: v1.Layer2NetworkConfigurationSpec{ID: 100, VNI: 10100, MTU: 1500, PodNamespaceSelector: &metav1.LabelSelector{}}},
		&v1.NodeNetworkConfig{ObjectMeta: metav1.ObjectMeta{Name: nodeName}, Spec: v1.NodeNetworkConfigSpec{Revision: revision,
			Underlay: v1.UnderlaySpec{ASN: 65000, RouterID: "10.255.0.1", VTEPAddress: "10.255.0.1"},
			Layer2s:  []v1.NodeLayer2{{Name: benchNetwork, VLAN: 100, VNI: 10100, MTU: 1500}}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	agent, err := startAgent(ctx, agentBin, work, pins, kn, node)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, agent.Stop(15*time.Second)) }()
	err = wait.Poll(ctx, 100*time.Millisecond, 2*time.Minute, "the agent applies "+revision, func(ctx context.Context) (bool, string, error) {
		if err := agent.Running(); err != nil {
			return false, "", err
		}
		var nnc v1.NodeNetworkConfig
		if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, &nnc); err != nil {
			return false, err.Error(), nil
		}
		return nnc.Status.AppliedRevision == revision, fmt.Sprintf("applied %q", nnc.Status.AppliedRevision), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w\nagent log:\n%s", err, agent.Tail())
	}
	logf("agent applied the node's configuration %v after the start", time.Since(start).Round(time.Millisecond))
	if err := waitServiceAccount(ctx, c); err != nil {
		return nil, err
	}
	pnc := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: benchConfig},
		Spec: v1.PodNetworkConfigSpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench"}},
			Primary:     &v1.PrimaryInterfaceTuning{MTU: ptr.To(int32(1400))},
			Interfaces: []v1.PodInterface{{Name: "net1", Type: v1.PodInterfaceVeth, Network: benchNetwork,
				Addresses: &v1.PodAddresses{Ranges: []string{"10.40.0.0/24"}}}},
		}}
	if err := c.Create(ctx, pnc); err != nil {
		return nil, fmt.Errorf("create the PodNetworkConfig: %w", err)
	}
	w, err := watchTimes(ctx, c)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	res = &Result{}
	var allocs []any
	for i := range o.Pods {
		name := fmt.Sprintf("pod-%02d", i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: name, Labels: map[string]string{"app": "bench"}},
			Spec: corev1.PodSpec{NodeName: nodeName, TerminationGracePeriodSeconds: ptr.To(int64(0)),
				Containers: []corev1.Container{{Name: "pause", Image: pause.Name, ImagePullPolicy: corev1.PullNever}}}}
		created := time.Now()
		if err := c.Create(ctx, pod); err != nil {
			return nil, fmt.Errorf("create pod %s: %w", name, err)
		}
		// The operator's allocation, made when the pod is scheduled.
		allocs = append(allocs, map[string]any{"pod": name, "podUID": string(pod.UID), "interface": "net1",
			"address": fmt.Sprintf("10.40.0.%d/24", 10+i)})
		if err := allocate(ctx, c, allocs); err != nil {
			return nil, err
		}
		running, up, err := w.wait(ctx, name, podTimeout, agent)
		if err != nil {
			return nil, fmt.Errorf("%w\nagent log:\n%s", err, agent.Tail())
		}
		res.RunningToUp = append(res.RunningToUp, up.Sub(running))
		res.SandboxToUp = append(res.SandboxToUp, up.Sub(w.sandboxAt(name)))
		res.CreatedToRunning = append(res.CreatedToRunning, running.Sub(created))
		res.CreatedToUp = append(res.CreatedToUp, up.Sub(created))
		logf("%s: created -> Running %v, Running -> interface up %v, sandbox ready -> interface up %v", name,
			running.Sub(created).Round(time.Millisecond), up.Sub(running).Round(time.Millisecond), up.Sub(w.sandboxAt(name)).Round(time.Millisecond))

		// The node's pod subnet is small (a /28): each pod goes before the next comes.
		if err := c.Delete(ctx, pod); err != nil {
			return nil, fmt.Errorf("delete pod %s: %w", name, err)
		}
		err = wait.Poll(ctx, 100*time.Millisecond, podTimeout, "pod "+name+" gone", func(ctx context.Context) (bool, string, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
		})
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// waitServiceAccount waits for the namespace's default ServiceAccount (the controller manager makes it; pods
// need it).
func waitServiceAccount(ctx context.Context, c client.Client) error {
	return wait.Poll(ctx, 100*time.Millisecond, time.Minute, "service account "+benchNS+"/default", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: benchNS, Name: "default"}, &corev1.ServiceAccount{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// allocate writes the allocations as the operator does: server-side apply of status.allocations alone, field
// manager network-operator.
func allocate(ctx context.Context, c client.Client, allocs []any) error {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "PodNetworkConfig",
		"metadata": map[string]any{"name": benchConfig, "namespace": benchNS}, "status": map[string]any{"allocations": allocs}}}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("network-operator"),
		client.ForceOwnership); err != nil {
		return fmt.Errorf("allocate: %w", err)
	}
	return nil
}

// startAgent runs the agent binary as the chart does, minus FRR: in the host's namespaces, configuring the node's
// network namespace, pod networking through the node's containerd. Its log goes to a file in work.
func startAgent(ctx context.Context, bin, work, pins string, kn *kubenodes.Cluster, n *kubenodes.Node) (*benchproc.Proc, error) {
	dir := filepath.Join(work, "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "agent.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, "--node-name", n.Name, "--kubeconfig", kn.AdminKubeconfig(), "--netns", n.Netns,
		"--pin-dir", pins, "--state-file", filepath.Join(dir, "last-good.yaml"), "--listen", "", "--startup-taint", "-",
		"--frr", "none", "--frr-state-dir", filepath.Join(dir, "frr"),
		"--pod-network", "--cri-socket", n.CRISocket(), "--pod-netns", "auto", "--pod-state-dir", filepath.Join(dir, "pods"))
	cmd.Stdout, cmd.Stderr = f, f
	a, err := benchproc.Start("the agent", cmd, func() ([]byte, error) { return os.ReadFile(logPath) })
	if err != nil {
		return nil, err
	}
	return a, ctx.Err()
}

// watcher records when it first saw each pod's sandbox ready, each pod Running and each pod's entry Applied.
type watcher struct {
	mu      sync.Mutex
	sandbox map[string]time.Time
	running map[string]time.Time
	applied map[string]time.Time
	changed chan struct{}
	errs    []error
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func watchTimes(ctx context.Context, c client.WithWatch) (*watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{sandbox: map[string]time.Time{}, running: map[string]time.Time{}, applied: map[string]time.Time{}, changed: make(chan struct{}, 1), cancel: cancel}
	pods, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace(benchNS))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	configs, err := c.Watch(ctx, &v1.PodNetworkConfigList{}, client.InNamespace(benchNS))
	if err != nil {
		pods.Stop()
		cancel()
		return nil, fmt.Errorf("watch PodNetworkConfigs: %w", err)
	}
	for _, wi := range []watch.Interface{pods, configs} {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer wi.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-wi.ResultChan():
					if !ok {
						w.fail(errors.New("a watch ended"))
						return
					}
					w.see(ev, time.Now())
				}
			}
		}()
	}
	return w, nil
}

func (w *watcher) see(ev watch.Event, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		if _, seen := w.running[o.Name]; !seen && o.Status.Phase == corev1.PodRunning {
			w.running[o.Name] = at
		}
		if _, seen := w.sandbox[o.Name]; !seen && sandboxReady(o) {
			w.sandbox[o.Name] = at
		}
	case *v1.PodNetworkConfig:
		for _, e := range o.Status.Pods {
			if _, seen := w.applied[e.Name]; !seen && e.Applied {
				w.applied[e.Name] = at
			}
		}
	}
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// sandboxReady is the agent's trigger (agent/podnetwork/podnetctl): the kubelet made the pod's sandbox and network.
func sandboxReady(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodRunning || p.Status.PodIP != "" {
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (w *watcher) sandboxAt(pod string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sandbox[pod]
}

func (w *watcher) fail(err error) {
	w.mu.Lock()
	w.errs = append(w.errs, err)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// wait returns when the watcher has seen pod Running and Applied.
func (w *watcher) wait(ctx context.Context, pod string, timeout time.Duration, agent *benchproc.Proc) (running, applied time.Time, err error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	alive := time.NewTicker(time.Second) // the agent may die without any event
	defer alive.Stop()
	for {
		w.mu.Lock()
		r, rok := w.running[pod]
		a, aok := w.applied[pod]
		werr := errors.Join(w.errs...)
		w.mu.Unlock()
		switch {
		case werr != nil:
			return r, a, werr
		case rok && aok:
			return r, a, nil
		}
		if err := agent.Running(); err != nil {
			return r, a, err
		}
		select {
		case <-ctx.Done():
			return r, a, ctx.Err()
		case <-deadline.C:
			return r, a, fmt.Errorf("pod %s: %w within %v (Running seen %v, Applied seen %v)", pod, wait.ErrTimeout, timeout, rok, aok)
		case <-w.changed:
		case <-alive.C:
		}
	}
}

func (w *watcher) stop() {
	w.cancel()
	w.wg.Wait()
}
