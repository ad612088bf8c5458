package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/images"
)

// The pod networking stage (issue 13): config/samples/demo/pods. The administrator's file makes the tenant's
// namespace, a layer-2 network in tenant A's VRF admitting it and the tenant's RoleBinding; the tenant (an
// impersonated member of TenantGroup) applies the PodNetworkConfigs.
const (
	PodSamplesDir   = "pods"
	podAdminFile    = "10-network.yaml"
	podTenantFile   = "20-podnetwork.yaml"
	TenantNamespace = "tenant-a-cnf"
	PodNetworkName  = "tenant-a-pods"
	TenantUser      = "cnf-dev"
	TenantGroup     = "cnf-team"
	// The configs of the tenant's file: cnf (MTU 1400, net1 into PodNetworkName), cnf-vlan (a vlan on eth0) for
	// the pods labelled app=cnf; steady (like cnf) for the pod that stays through the upgrade and uninstall.
	configCNF, configVLAN, configSteady = "cnf", "cnf-vlan", "steady"
	podIface                            = "net1"
	podVLAN                             = "vlan7"
	tunedMTU, cniMTU                    = 1400, 1500
	// podServerPort is where the target workloads accept the pods' connections.
	podServerPort = 8080
	// podApplyTimeout bounds the wait for the agents to apply (or remove) a pod's network.
	podApplyTimeout = 90 * time.Second
)

// TenantPod is one pod of the tenant: unprivileged, in TenantNamespace on Node.
type TenantPod struct {
	Name, UID string
	Node      *Node
	Labels    map[string]string
	// Addr is what the operator allocated for net1 (with the subnet's prefix length), MAC and HostVeth what the
	// agent derives from the pod's UID (podnet.MAC, podnet.HostVethName).
	Addr     netip.Prefix
	MAC      net.HardwareAddr
	HostVeth string
	// Target is the workload it connects to: on another node, in another network of the VRF.
	Target *Workload
}

// InPod is what the pod itself shows, run inside it through the API server (kubectl exec): `ip -d link`,
// `ip addr` and its capabilities.
type InPod struct {
	Pod string
	// Links are `ip -o -d link` lines, Addrs `ip -o addr` lines, of net1 and eth0.
	Links, Addrs []string
	// MTU per interface, Addresses of net1, MACOf net1, Up whether net1 is up.
	MTU      map[string]int
	Net1Addr []string
	Net1MAC  string
	Net1Up   bool
	// CapEff is the container's effective capability set (/proc/self/status), hex.
	CapEff string
	// Ifindex per interface (the same after an agent restart: nothing re-made).
	Ifindex map[string]int
}

// Connect is one connection from a pod to its target workload, through the eBPF routers.
type Connect struct {
	From, To string // pod; workload label
	FromNode string
	ToNode   string
	// Reply is what the target answered: the source address it saw (the pod's net1 address: routed, not
	// NATed through the CNI's eth0).
	Reply string
	// Tries and Took: attempts until the first answer (the first ones may wait for ARP and EVPN) and how long.
	Tries int
	Took  time.Duration
	// Forwarded is the growth of the VRF's forwarded-packets counter of each node's eBPF router (agents'
	// /metrics) over the connection.
	Forwarded map[string]float64
}

// Refusal is a PodNetworkConfig the tenant may not create, refused by the webhook.
type Refusal struct {
	What    string
	Field   string // the field the refusal must name
	Message string
	Err     error
}

// VLANOutcome is what the agents report for the vlan interface of cnf-vlan.
type VLANOutcome struct {
	// Kernel is the node kernel's 802.1Q support (nodenet's probe) and why not.
	Kernel       bool
	KernelReason string
	// Entries are cnf-vlan's status.pods entries of the cnf pods.
	Entries []v1.PodNetworkStatus
}

// Removal is one way a pod's network goes, checked object by object on its node (and in the pod while it runs).
type Removal struct {
	What string
	Pod  string
	Node string
	// Before lists the pod's objects on the node before (want each kind: link, fdb, neighbour, record), Left what
	// was still there when the wait ended (want none), InPod what the running pod still had (want none).
	Before, Left, InPod []string
	Took                time.Duration
}

// PodNetworking is the stage's state and results.
type PodNetworking struct {
	c      *Cluster
	image  string
	tenant client.Client
	// Rollout is the revision that brought the pods' network to every node.
	Rollout *Rollout
	Pods    []*TenantPod
	// Applied is how long from the tenant's configs to every pod's entry Applied (pods started meanwhile).
	Applied    time.Duration
	InPod      []InPod
	Connects   []Connect
	Refusals   []Refusal
	VLAN       VLANOutcome
	Removals   []Removal
	Conditions map[string]metav1.Condition // Applied condition per config, once applied
}

// Steady returns the pod that keeps its network through the upgrade (nil before the stage made it).
func (pn *PodNetworking) Steady() *TenantPod {
	for _, p := range pn.Pods {
		if p.Labels["app"] == configSteady {
			return p
		}
	}
	return nil
}

// PodNetworking runs the pod networking stage on a started cluster (helm form, after the scenario) and writes
// what happens to out: the administrator's network, the tenant's configs, unprivileged pods on every node getting
// their interface in the network, MTU tuning inside them, connections to workloads on other nodes through the
// eBPF routers, the webhook refusing the tenant another tenant's network and an address outside its range, then
// the three removals (pod deleted, label removed, configs deleted), each checked object by object. The steady pod
// keeps its network for what follows (SteadyState, AfterUninstall).
func (c *Cluster) PodNetworking(ctx context.Context, out io.Writer) (*PodNetworking, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("pod networking: only in the helm form (real kubelet nodes)")
	}
	p := &printer{w: out}
	pn := &PodNetworking{c: c, Conditions: map[string]metav1.Condition{}}
	var err error
	if pn.image, err = images.ArchiveRef(filepath.Join(c.opts.ImagesDir, "frr.tar")); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(c.restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: TenantUser, Groups: []string{TenantGroup}}
	if pn.tenant, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, fmt.Errorf("tenant client: %w", err)
	}
	// The tenant's pods go before the nodes do (registered after them, so torn down first): the kubelet stops their
	// sandboxes, and the runtime's shims exit cleanly instead of being killed with the node (a killed shim leaves
	// its socket in the host's /run/containerd/s, which kubenodes then has to remove).
	c.onClose("tenant pods", pn.deletePods)
	for _, step := range []func(context.Context, *printer) error{
		pn.showNetwork, pn.showPods, pn.showInPod, pn.showConnect, pn.showRefusals, pn.showRemovals,
	} {
		if err := step(ctx, p); err != nil {
			return pn, err
		}
	}
	return pn, nil
}

func (pn *PodNetworking) dir() string { return filepath.Join(pn.c.samples.Dir, PodSamplesDir) }

// showNetwork applies the administrator's file (namespace, network, RoleBinding) with the demo's samples again (the
// scenario's broken change, still in the API, would fail the revision on the small-MTU node again) and waits for
// the rollout.
func (pn *PodNetworking) showNetwork(ctx context.Context, p *printer) error {
	c := pn.c
	p.heading("Pod networking: the administrator gives namespace %s the network %s", TenantNamespace, PodNetworkName)
	p.line("  (with %s again: the scenario's changes, the broken one too, are reverted)", c.rel(c.samples.Dir))
	var err error
	files := append(slices.Clone(c.samples.Files), filepath.Join(pn.dir(), podAdminFile))
	if pn.Rollout, err = c.applyAndRoll(ctx, p, files...); err != nil {
		return err
	}
	if pn.Rollout.Phase != string(v1.RevisionDone) {
		return fmt.Errorf("revision %s with %s ended %s: %s", pn.Rollout.Revision, PodNetworkName, pn.Rollout.Phase, pn.Rollout.Message)
	}
	// Pods need the namespace's default ServiceAccount, which the controller manager makes.
	return wait.Poll(ctx, 200*time.Millisecond, time.Minute, "service account "+TenantNamespace+"/default", func(ctx context.Context) (bool, string, error) {
		var sa corev1.ServiceAccount
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: "default"}, &sa); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// showPods has the tenant apply its configs, starts one unprivileged cnf pod per node and the steady pod, and
// waits until the agents report every pod's interfaces.
func (pn *PodNetworking) showPods(ctx context.Context, p *printer) error {
	c := pn.c
	p.heading("Pod networking: the tenant (user %s, group %s) applies its PodNetworkConfigs; unprivileged pods", TenantUser, TenantGroup)
	objs, err := decodeFile(filepath.Join(pn.dir(), podTenantFile))
	if err != nil {
		return err
	}
	start := time.Now()
	for _, o := range objs {
		if err := pn.tenant.Create(ctx, o); err != nil {
			return fmt.Errorf("the tenant creates %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		p.line("  as %s: podnetworkconfig/%s created", TenantUser, o.GetName())
	}
	for i, n := range c.nodes {
		target := c.nodes[(i+1)%len(c.nodes)]
		pn.Pods = append(pn.Pods, &TenantPod{Name: fmt.Sprintf("cnf-%d", n.Index), Node: n, Labels: map[string]string{"app": configCNF},
			Target: pn.target(target)})
	}
	pn.Pods = append(pn.Pods, &TenantPod{Name: "steady-1", Node: c.nodes[0], Labels: map[string]string{"app": configSteady},
		Target: pn.target(c.nodes[1])})
	for _, tp := range pn.Pods {
		if tp.Target == nil {
			return fmt.Errorf("no workload of VRF tenant-a on another node than %s for %s", tp.Node.Name, tp.Name)
		}
		pod := pn.podSpec(tp)
		if err := c.client.Create(ctx, pod); err != nil {
			return fmt.Errorf("create pod %s: %w", tp.Name, err)
		}
		tp.UID = string(pod.UID)
		tp.MAC, tp.HostVeth = podnet.MAC(tp.UID, podIface), podnet.HostVethName(tp.UID, podIface)
	}
	p.line("  pods %s: image %s, securityContext runAsNonRoot (65534), capabilities drop [ALL], no privilege escalation",
		strings.Join(pn.podNames(), ", "), pn.image)
	if err := pn.waitApplied(ctx); err != nil {
		return err
	}
	pn.Applied = time.Since(start)
	for _, tp := range pn.Pods {
		p.line("  %-9s on %s: %s %s (mac %s, host end %s on %s's bridge)", tp.Name, tp.Node.Name, podIface, tp.Addr, tp.MAC,
			tp.HostVeth, PodNetworkName)
	}
	p.line("  every pod's %s applied %.1fs after the tenant's configs (the agents' status.pods; condition Applied of cnf and steady True)",
		podIface, pn.Applied.Seconds())
	f, err := nodenet.Probe(ctx, c.nodes[0].NS.Handle())
	if err != nil {
		return fmt.Errorf("probe the kernel: %w", err)
	}
	pn.VLAN.Kernel, pn.VLAN.KernelReason = f.VLAN, f.VLANReason
	if pn.VLAN.Entries, err = pn.waitVLAN(ctx); err != nil {
		return err
	}
	for _, e := range pn.VLAN.Entries {
		p.line("  %s on %s: applied %v %s %s", configVLAN, e.Name, e.Applied, e.Reason, e.Message)
	}
	return nil
}

// target is the first tenant-a workload on node n.
func (pn *PodNetworking) target(n *Node) *Workload {
	for _, w := range pn.c.loads {
		if w.Node == n && w.VRF == "tenant-a" {
			return w
		}
	}
	return nil
}

func (pn *PodNetworking) podNames() []string {
	var out []string
	for _, tp := range pn.Pods {
		out = append(out, tp.Name)
	}
	return out
}

// podScript keeps the pod running until it is told to stop (as pid 1, python3 must handle SIGTERM itself).
const podScript = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\nwhile True:\n    signal.pause()\n"

// podSpec is a tenant pod on its node: the FRR image (python3 and iproute2), no capability, not root.
func (pn *PodNetworking) podSpec(tp *TenantPod) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: tp.Name, Namespace: TenantNamespace, Labels: tp.Labels},
		Spec: corev1.PodSpec{
			NodeName:                     tp.Node.Name,
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(65534)),
				RunAsGroup: ptr.To(int64(65534))},
			Containers: []corev1.Container{{
				Name: "cnf", Image: pn.image, ImagePullPolicy: corev1.PullNever, Command: []string{"python3", "-c", podScript},
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true)},
			}},
		},
	}
}

// configOf is the config that gives tp its net1.
func configOf(tp *TenantPod) string {
	if tp.Labels["app"] == configSteady {
		return configSteady
	}
	return configCNF
}

// waitApplied waits until every pod runs, has its net1 address allocated and its entry Applied with net1, and the
// configs' Applied condition is True.
func (pn *PodNetworking) waitApplied(ctx context.Context) error {
	c := pn.c
	return wait.Poll(ctx, 100*time.Millisecond, podApplyTimeout, "every tenant pod's network applied", func(ctx context.Context) (bool, string, error) {
		for _, tp := range pn.Pods {
			var pod corev1.Pod
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: tp.Name}, &pod); err != nil {
				return false, err.Error(), nil
			}
			if pod.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("pod %s is %s", tp.Name, pod.Status.Phase), nil
			}
			var cfg v1.PodNetworkConfig
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: configOf(tp)}, &cfg); err != nil {
				return false, err.Error(), nil
			}
			for _, a := range cfg.Status.Allocations {
				if a.PodUID == tp.UID && a.Interface == podIface {
					addr, err := netip.ParsePrefix(a.Address)
					if err != nil {
						return false, "", fmt.Errorf("allocation %+v: %w", a, err)
					}
					tp.Addr = addr
				}
			}
			e, ok := entry(&cfg, tp.Name)
			if !tp.Addr.IsValid() || !ok || !e.Applied || !slices.Contains(e.Interfaces, podIface) {
				return false, fmt.Sprintf("%s: allocation %v, entry %+v", tp.Name, tp.Addr, e), nil
			}
		}
		for _, name := range []string{configCNF, configSteady} {
			var cfg v1.PodNetworkConfig
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: name}, &cfg); err != nil {
				return false, err.Error(), nil
			}
			cond := meta.FindStatusCondition(cfg.Status.Conditions, "Applied")
			if cond == nil || cond.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("%s: condition Applied %+v", name, cond), nil
			}
			pn.Conditions[name] = *cond
		}
		return true, "", nil
	})
}

// waitVLAN waits until the agents report cnf-vlan for every cnf pod (NotSupported or applied) and returns the entries.
func (pn *PodNetworking) waitVLAN(ctx context.Context) ([]v1.PodNetworkStatus, error) {
	var out []v1.PodNetworkStatus
	err := wait.Poll(ctx, 100*time.Millisecond, podApplyTimeout, configVLAN+" reported for every cnf pod", func(ctx context.Context) (bool, string, error) {
		var cfg v1.PodNetworkConfig
		if err := pn.c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: configVLAN}, &cfg); err != nil {
			return false, err.Error(), nil
		}
		out = nil
		for _, tp := range pn.Pods {
			if tp.Labels["app"] != configCNF {
				continue
			}
			e, ok := entry(&cfg, tp.Name)
			if !ok || (!e.Applied && e.Reason != podnet.ReasonNotSupported) {
				return false, fmt.Sprintf("%s: %+v", tp.Name, e), nil
			}
			out = append(out, e)
		}
		return true, "", nil
	})
	return out, err
}

func entry(cfg *v1.PodNetworkConfig, pod string) (v1.PodNetworkStatus, bool) {
	for _, e := range cfg.Status.Pods {
		if e.Name == pod {
			return e, true
		}
	}
	return v1.PodNetworkStatus{}, false
}

// deletePods deletes the tenant's pods and waits until they are gone.
func (pn *PodNetworking) deletePods() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pn.c
	if err := c.client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(TenantNamespace)); err != nil {
		return fmt.Errorf("delete the pods of %s: %w", TenantNamespace, err)
	}
	return wait.Poll(ctx, 200*time.Millisecond, 90*time.Second, "the pods of "+TenantNamespace+" gone", func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := c.client.List(ctx, &pods, client.InNamespace(TenantNamespace)); err != nil {
			return false, err.Error(), nil
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d left", len(pods.Items)), nil
	})
}

// exec runs argv in the tenant pod's container (as the pod's own unprivileged user).
func (pn *PodNetworking) exec(ctx context.Context, pod string, argv ...string) (string, error) {
	out, err := podExec(ctx, pn.c.restConfig, TenantNamespace, pod, "cnf", argv...)
	return string(out), err
}

// look reads what the pod shows of its own network: net1 and eth0 (ip -o -d link, ip -o addr), its capabilities.
func (pn *PodNetworking) look(ctx context.Context, pod string) (InPod, error) {
	v := InPod{Pod: pod, MTU: map[string]int{}, Ifindex: map[string]int{}}
	links, err := pn.exec(ctx, pod, "ip", "-o", "-d", "link", "show")
	if err != nil {
		return v, err
	}
	for _, l := range strings.Split(strings.TrimSpace(links), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if name != podIface && name != "eth0" && name != podVLAN {
			continue
		}
		v.Links = append(v.Links, l)
		v.Ifindex[name], _ = strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		for i := 0; i+1 < len(f); i++ {
			switch f[i] {
			case "mtu":
				v.MTU[name], _ = strconv.Atoi(f[i+1])
			case "link/ether":
				if name == podIface {
					v.Net1MAC = f[i+1]
				}
			}
		}
		if name == podIface {
			v.Net1Up = strings.Contains(f[2], ",UP") || strings.Contains(f[2], "<UP")
		}
	}
	addrs, err := pn.exec(ctx, pod, "ip", "-o", "addr", "show")
	if err != nil {
		return v, err
	}
	for _, l := range strings.Split(strings.TrimSpace(addrs), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || (f[1] != podIface && f[1] != "eth0") {
			continue
		}
		v.Addrs = append(v.Addrs, l)
		if f[1] == podIface && f[2] == "inet" {
			v.Net1Addr = append(v.Net1Addr, f[3])
		}
	}
	status, err := pn.exec(ctx, pod, "cat", "/proc/self/status")
	if err != nil {
		return v, err
	}
	for _, l := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(l, "CapEff:"); ok {
			v.CapEff = strings.TrimSpace(rest)
		}
	}
	return v, nil
}

// showInPod shows, from inside every pod, its interface in the network and the tuned MTU.
func (pn *PodNetworking) showInPod(ctx context.Context, p *printer) error {
	p.heading("Pod networking: inside the pods (kubectl exec, as the pods' own unprivileged user)")
	for _, tp := range pn.Pods {
		v, err := pn.look(ctx, tp.Name)
		if err != nil {
			return err
		}
		pn.InPod = append(pn.InPod, v)
		p.line("  %s (CapEff %s):", tp.Name, v.CapEff)
		p.line("    $ ip -d link")
		for _, l := range v.Links {
			p.line("    %s", linkSummary(l))
		}
		p.line("    $ ip addr")
		for _, l := range v.Addrs {
			p.line("    %s", compact(l))
		}
	}
	return nil
}

// linkSummary keeps what matters of an `ip -o -d link` line: index, name, flags, MTU, MAC, kind and alias.
func linkSummary(l string) string {
	f := strings.Fields(strings.ReplaceAll(l, "\\", " "))
	if len(f) < 3 {
		return l
	}
	out := f[:3]
	for i := 3; i+1 < len(f); i++ {
		switch f[i] {
		case "mtu", "link/ether", "alias":
			out = append(out, f[i], f[i+1])
		case "maxmtu": // -d: the kind follows the MTU bounds
			if i+2 < len(f) {
				out = append(out, f[i+2])
			}
		}
	}
	return strings.Join(out, " ")
}

// compact shortens an `ip -o` line for display (the details after the first 160 characters).
func compact(l string) string {
	l = strings.Join(strings.Fields(strings.ReplaceAll(l, "\\", " ")), " ")
	if len(l) > 160 {
		return l[:157] + "..."
	}
	return l
}

// showConnect connects every pod to a workload on another node, in tenant A's other network, through the eBPF
// routers: the request is routed by the pod's node, the reply by the workload's.
func (pn *PodNetworking) showConnect(ctx context.Context, p *printer) error {
	p.heading("Pod networking: TCP from each pod (python3, no capability) to a workload on another node, routed by the eBPF routers")
	for _, tp := range pn.Pods {
		if tp.Labels["app"] == configSteady {
			continue // its turn comes around the upgrade
		}
		cn, err := pn.connect(ctx, tp)
		if err != nil {
			return err
		}
		pn.Connects = append(pn.Connects, cn)
		p.line("  %s", cn)
	}
	return nil
}

func (cn Connect) String() string {
	var fw []string
	for _, n := range slices.Sorted(maps.Keys(cn.Forwarded)) {
		fw = append(fw, fmt.Sprintf("%s +%.0f", n, cn.Forwarded[n]))
	}
	return fmt.Sprintf("%s (%s) -> %s (%s): %q after %d tries, %.1fs; tenant-a forwarded by the routers: %s",
		cn.From, cn.FromNode, cn.To, cn.ToNode, cn.Reply, cn.Tries, cn.Took.Seconds(), strings.Join(fw, ", "))
}

// connectScript connects to argv[1]:argv[2], sends a line and prints the answer.
const connectScript = `import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
s.sendall(b"hello\n")
print(s.makefile().readline().strip())
`

// connect runs one connection from tp to its target and the forwarded counters around it.
func (pn *PodNetworking) connect(ctx context.Context, tp *TenantPod) (Connect, error) {
	cn := Connect{From: tp.Name, To: tp.Target.Label(), FromNode: tp.Node.Name, ToNode: tp.Target.Node.Name}
	srv, err := serveTCP(tp.Target)
	if err != nil {
		return cn, err
	}
	defer srv.close()
	before, err := pn.c.forwardedByNode(ctx)
	if err != nil {
		return cn, err
	}
	start := time.Now()
	err = wait.Poll(ctx, 250*time.Millisecond, 60*time.Second, fmt.Sprintf("%s connects to %s", tp.Name, cn.To), func(ctx context.Context) (bool, string, error) {
		cn.Tries++
		out, err := pn.exec(ctx, tp.Name, "python3", "-c", connectScript, tp.Target.Addr.String(), strconv.Itoa(podServerPort))
		if err != nil {
			return false, err.Error(), nil
		}
		cn.Reply = strings.TrimSpace(out)
		return true, "", nil
	})
	if err != nil {
		// What both nodes knew of the two ends when the connection failed: routes, neighbours and EVPN routes.
		return cn, fmt.Errorf("%w\n%s", err, pn.c.pathDiagnosis(ctx, tp.Addr.Addr(), tp.Node, tp.Target.Addr, tp.Target.Node))
	}
	cn.Took = time.Since(start)
	after, err := pn.c.forwardedByNode(ctx)
	if err != nil {
		return cn, err
	}
	cn.Forwarded = map[string]float64{}
	for node, vrfs := range after {
		cn.Forwarded[node] = vrfs[tp.Target.VRF] - before[node][tp.Target.VRF]
	}
	return cn, nil
}

// tcpServer answers every connection in a workload's namespace with the address it came from.
type tcpServer struct {
	ln net.Listener
	wg sync.WaitGroup
}

func serveTCP(w *Workload) (*tcpServer, error) {
	s := &tcpServer{}
	err := w.NS.Do(func() error {
		var err error
		s.ln, err = net.Listen("tcp", net.JoinHostPort(w.Addr.String(), strconv.Itoa(podServerPort)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen in %s: %w", w.Name, err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
					return
				}
				from, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
				fmt.Fprintf(conn, "%s saw %s\n", w.Name, from)
			}()
		}
	}()
	return s, nil
}

func (s *tcpServer) close() {
	s.ln.Close()
	s.wg.Wait()
}

// showRefusals has the tenant ask for another tenant's network and for an address outside its network's range.
func (pn *PodNetworking) showRefusals(ctx context.Context, p *printer) error {
	p.heading("Pod networking: what the tenant may not do, refused at admission (the operator's webhook)")
	other := ""
	for _, n := range pn.c.samples.Networks {
		if n.VRF != "tenant-a" {
			other = n.Name
			break
		}
	}
	if other == "" {
		return errors.New("the samples have no network of another tenant")
	}
	veth := func(name, network string, addrs *v1.PodAddresses) *v1.PodNetworkConfig {
		return &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: TenantNamespace, Name: name},
			Spec: v1.PodNetworkConfigSpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Interfaces: []v1.PodInterface{{Name: podIface, Type: v1.PodInterfaceVeth, Network: network, Addresses: addrs}}}}
	}
	outside := "10.101.0.50" // in tenant A's db network, not in tenant-a-pods
	for _, r := range []struct {
		what, field string
		obj         *v1.PodNetworkConfig
	}{
		{fmt.Sprintf("another tenant's network %s", other), "spec.interfaces[0].network", veth("steal", other, nil)},
		{fmt.Sprintf("address %s outside %s", outside, PodNetworkName), "spec.interfaces[0].addresses.static[0]",
			veth("outside", PodNetworkName, &v1.PodAddresses{Static: []string{outside}})},
	} {
		err := pn.tenant.Create(ctx, r.obj)
		ref := Refusal{What: r.what, Field: r.field, Err: err}
		if err == nil {
			_ = pn.c.client.Delete(ctx, r.obj)
			ref.Message = "admitted"
		} else {
			ref.Message = err.Error()
		}
		pn.Refusals = append(pn.Refusals, ref)
		p.line("  as %s: podnetworkconfig/%s (%s) -> %s", TenantUser, r.obj.Name, r.what, ref.Message)
	}
	return nil
}

// showRemovals: cnf-1 deleted, cnf-2's label removed, the cnf configs deleted (cnf-3); each pod's objects on its
// node are listed before and waited for to go.
func (pn *PodNetworking) showRemovals(ctx context.Context, p *printer) error {
	p.heading("Pod networking: removals leave the host clean (object by object on the pod's node)")
	c := pn.c
	byName := map[string]*TenantPod{}
	for _, tp := range pn.Pods {
		byName[tp.Name] = tp
	}
	steps := []struct {
		what string
		pod  *TenantPod
		do   func(context.Context) error
	}{
		{"pod deleted", byName["cnf-1"], func(ctx context.Context) error {
			tp := byName["cnf-1"]
			if err := c.client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: TenantNamespace, Name: tp.Name}}); err != nil {
				return err
			}
			return wait.Poll(ctx, 100*time.Millisecond, podApplyTimeout, "pod "+tp.Name+" gone", func(ctx context.Context) (bool, string, error) {
				err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: tp.Name}, &corev1.Pod{})
				return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
			})
		}},
		{"label removed", byName["cnf-2"], func(ctx context.Context) error {
			var pod corev1.Pod
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: "cnf-2"}, &pod); err != nil {
				return err
			}
			patch := client.MergeFrom(pod.DeepCopy())
			delete(pod.Labels, "app")
			return c.client.Patch(ctx, &pod, patch)
		}},
		{"configs deleted", byName["cnf-3"], func(ctx context.Context) error {
			for _, name := range []string{configCNF, configVLAN} {
				cfg := &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: TenantNamespace, Name: name}}
				if err := pn.tenant.Delete(ctx, cfg); err != nil {
					return fmt.Errorf("the tenant deletes %s: %w", name, err)
				}
			}
			return nil
		}},
	}
	for _, st := range steps {
		if st.pod == nil {
			return fmt.Errorf("no pod for %q", st.what)
		}
		rm, err := pn.remove(ctx, st.what, st.pod, st.do)
		if err != nil {
			return err
		}
		pn.Removals = append(pn.Removals, rm)
		p.line("  %s (%s on %s): before %s", rm.What, rm.Pod, rm.Node, strings.Join(rm.Before, "; "))
		left := "nothing left"
		if len(rm.Left)+len(rm.InPod) > 0 {
			left = "LEFT: " + strings.Join(append(slices.Clone(rm.Left), rm.InPod...), "; ")
		}
		p.line("    after %.1fs: %s", rm.Took.Seconds(), left)
	}
	return nil
}

// remove does one removal and checks the pod's node (and the pod, while it runs) until nothing of it is left.
func (pn *PodNetworking) remove(ctx context.Context, what string, tp *TenantPod, do func(context.Context) error) (Removal, error) {
	rm := Removal{What: what, Pod: tp.Name, Node: tp.Node.Name}
	var err error
	if rm.Before, err = pn.hostObjects(ctx, tp); err != nil {
		return rm, err
	}
	start := time.Now()
	if err := do(ctx); err != nil {
		return rm, fmt.Errorf("%s: %w", what, err)
	}
	running := what != "pod deleted"
	err = wait.Poll(ctx, 100*time.Millisecond, podApplyTimeout, fmt.Sprintf("%s: %s's network gone", what, tp.Name), func(ctx context.Context) (bool, string, error) {
		left, err := pn.hostObjects(ctx, tp)
		if err != nil {
			return false, err.Error(), nil
		}
		rm.Left = left
		rm.InPod = nil
		if running {
			v, err := pn.look(ctx, tp.Name)
			if err != nil {
				return false, err.Error(), nil
			}
			rm.InPod = podLeftovers(v)
		}
		return len(rm.Left)+len(rm.InPod) == 0, strings.Join(append(slices.Clone(rm.Left), rm.InPod...), "; "), nil
	})
	rm.Took = time.Since(start)
	if err != nil && !errors.Is(err, wait.ErrTimeout) {
		return rm, err
	}
	return rm, nil // what is left is the result
}

// podLeftovers is what a pod without its network config still has: net1, vlan7, a tuned eth0.
func podLeftovers(v InPod) []string {
	var out []string
	for _, name := range []string{podIface, podVLAN} {
		if _, ok := v.Ifindex[name]; ok {
			out = append(out, "in the pod: "+name)
		}
	}
	if mtu := v.MTU["eth0"]; mtu != cniMTU {
		out = append(out, fmt.Sprintf("in the pod: eth0 mtu %d (the CNI's %d not restored)", mtu, cniMTU))
	}
	return out
}

// hostObjects lists what the pod has on its node: links marked as its or named like its veth's host end, bridge
// FDB entries of its MAC, neighbour entries of its address or MAC, its record.
func (pn *PodNetworking) hostObjects(ctx context.Context, tp *TenantPod) ([]string, error) {
	h := tp.Node.NS.Handle()
	links, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("links of %s: %w", tp.Node.Name, err)
	}
	names := map[int]string{}
	var out []string
	for _, l := range links {
		a := l.Attrs()
		names[a.Index] = a.Name
		if uid, _, ok := podnet.ParseAlias(a.Alias); (ok && uid == tp.UID) || a.Name == tp.HostVeth {
			out = append(out, fmt.Sprintf("link %s (alias %q)", a.Name, a.Alias))
		}
	}
	fdb, err := h.NeighList(0, unix.AF_BRIDGE)
	if err != nil {
		return nil, fmt.Errorf("fdb of %s: %w", tp.Node.Name, err)
	}
	for _, f := range fdb {
		if f.HardwareAddr.String() == tp.MAC.String() {
			out = append(out, fmt.Sprintf("fdb %s dev %s", f.HardwareAddr, names[f.LinkIndex]))
		}
	}
	neighs, err := h.NeighList(0, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("neighbours of %s: %w", tp.Node.Name, err)
	}
	for _, n := range neighs {
		ip, _ := netip.AddrFromSlice(n.IP)
		if (tp.Addr.IsValid() && ip.Unmap() == tp.Addr.Addr()) || n.HardwareAddr.String() == tp.MAC.String() {
			out = append(out, fmt.Sprintf("neighbour %s lladdr %s dev %s", n.IP, n.HardwareAddr, names[n.LinkIndex]))
		}
	}
	rec := filepath.Join(podRecordDir, tp.UID+".json")
	if found, err := tp.Node.kube.Exec(ctx, "find", podRecordDir, "-name", tp.UID+".json"); err == nil && strings.TrimSpace(string(found)) != "" {
		out = append(out, "record "+rec)
	}
	return out, nil
}

// podRecordDir is the agent's --pod-state-dir in the chart (on each node's own /var/lib/network-operator).
const podRecordDir = "/var/lib/network-operator/pods"

// forwardedByNode scrapes every agent's /metrics: forwarded packets per node and VRF.
func (c *Cluster) forwardedByNode(ctx context.Context) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, n := range c.nodes {
		m, err := c.scrapeForwardedOf(ctx, n)
		if err != nil {
			return nil, err
		}
		out[n.Name] = m
	}
	return out, nil
}

// SteadyState is what the steady pod has, inside and on its node: the same after an agent restart.
type SteadyState struct {
	InPod InPod
	// HostVethIndex is the ifindex of its veth's host end; HostLinks its marked links on the node; Addrs the
	// addresses on net1 in the pod.
	HostVethIndex int
	HostLinks     []string
	Entry         v1.PodNetworkStatus
	Connect       Connect
}

// SteadyState reads the steady pod's network and connects it to its target.
func (pn *PodNetworking) SteadyState(ctx context.Context) (*SteadyState, error) {
	tp := pn.Steady()
	if tp == nil {
		return nil, errors.New("no steady pod")
	}
	s := &SteadyState{}
	var err error
	if s.InPod, err = pn.look(ctx, tp.Name); err != nil {
		return nil, err
	}
	links, err := tp.Node.NS.Handle().LinkList()
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		if uid, _, ok := podnet.ParseAlias(l.Attrs().Alias); ok && uid == tp.UID {
			s.HostLinks = append(s.HostLinks, l.Attrs().Name)
			if l.Attrs().Name == tp.HostVeth {
				s.HostVethIndex = l.Attrs().Index
			}
		}
	}
	var cfg v1.PodNetworkConfig
	if err := pn.c.client.Get(ctx, client.ObjectKey{Namespace: TenantNamespace, Name: configSteady}, &cfg); err != nil {
		return nil, err
	}
	s.Entry, _ = entry(&cfg, tp.Name)
	if s.Connect, err = pn.connect(ctx, tp); err != nil {
		return nil, err
	}
	return s, nil
}

// AgentApplies returns the lines of the agents' logs on the steady pod's node that say they applied something
// to the steady pod (want none after a restart: it observes what exists and plans nothing).
func (pn *PodNetworking) AgentApplies(ctx context.Context) ([]string, error) {
	tp := pn.Steady()
	if tp == nil {
		return nil, errors.New("no steady pod")
	}
	p, err := pn.c.agentPod(ctx, tp.Node)
	if err != nil {
		return nil, err
	}
	logs, err := pn.c.containerLogs(ctx, Namespace, p.Name, agentContainer)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, tp.UID) && strings.Contains(l, "pod network applied") {
			out = append(out, l)
		}
	}
	return out, nil
}

// AfterUninstall checks the steady pod once the release is gone: nothing of the agents' in it (net1, the tuned
// MTU), and nothing of it on its node.
func (pn *PodNetworking) AfterUninstall(ctx context.Context) (left []string, err error) {
	tp := pn.Steady()
	if tp == nil {
		return nil, errors.New("no steady pod")
	}
	v, err := pn.look(ctx, tp.Name)
	if err != nil {
		return nil, err
	}
	left = podLeftovers(v)
	host, err := pn.hostObjects(ctx, tp)
	if err != nil {
		return nil, err
	}
	return append(left, host...), nil
}

// pathDiagnosis reads, on both nodes, what routes a packet between the addresses a (on node an) and b (on node bn):
// the kernel's route to the other end in every table, its neighbour entries, and FRR's EVPN routes and MACs. Each
// output is cut to diagMaxLines; a read that fails says why.
func (c *Cluster) pathDiagnosis(ctx context.Context, a netip.Addr, an *Node, b netip.Addr, bn *Node) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var out strings.Builder
	add := func(what string, data []byte, err error) {
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > diagMaxLines {
			lines = append(lines[:diagMaxLines], fmt.Sprintf("(%d lines more)", len(lines)-diagMaxLines))
		}
		fmt.Fprintf(&out, "--- %s", what)
		if err != nil {
			fmt.Fprintf(&out, " (%v)", err)
		}
		fmt.Fprintf(&out, "\n%s\n", strings.Join(lines, "\n"))
	}
	for _, n := range []*Node{an, bn} {
		for _, args := range [][]string{
			{"route", "show", "table", "all", "match", a.String()},
			{"route", "show", "table", "all", "match", b.String()},
			{"neigh", "show", "to", a.String()},
			{"neigh", "show", "to", b.String()},
		} {
			o, err := n.NS.Output(ctx, "ip", args...)
			add(n.Name+": ip "+strings.Join(args, " "), []byte(o), err)
		}
		for _, cmd := range []string{"show bgp l2vpn evpn route type macip", "show bgp l2vpn evpn route type prefix",
			"show evpn mac vni all", "show evpn arp-cache vni all"} {
			o, err := c.vtysh(ctx, n, cmd)
			add(n.Name+": vtysh "+cmd, o, err)
		}
	}
	return out.String()
}

// diagMaxLines bounds each output of pathDiagnosis.
const diagMaxLines = 60
