// Package kubenodes runs a real multi-node Kubernetes cluster on one machine, for tests and the demo: a control
// plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) in the host's network namespace, and per
// node a kubelet, containerd and kube-proxy in the node's network namespace and a mount namespace of its own
// (the kubelet's fixed paths, a private bpffs). A bridge of ours in the host namespace is the management network:
// the API server listens on it, every node has a veth into it and its kubelet's node IP on it, and the host
// routes each node's pod subnet (a bridge CNI) through it, so the API server reaches webhooks in pods.
//
// Everything started is torn down by Close, also after a failed Start: processes (kubelets first, then the
// containers and their shims, containerd, the control plane), mount namespaces, cgroups, devices, files. What
// every cluster on the host shares - the sysctls kubelets set, containerd's fixed shim socket directory - is
// held by lease (hostshare.go): the last cluster out, in whichever process, restores the host as the first one
// in found it. Nodes may live in network namespaces the caller made (a node with other interfaces, e.g. a fabric
// uplink): those stay, with the management veth removed.
package kubenodes

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/network-operator/network-operator/internal/wait"
)

// ImageRef is an image archive to import into every node (its name comes from the archive's index).
type ImageRef struct {
	Archive string
	// Name is the image's full name, e.g. localhost/network-operator/pause:v1 (the pause image must have it:
	// containerd's sandbox_image names it).
	Name string
}

// NodeSpec describes one node.
type NodeSpec struct {
	// Name is the Node's name.
	Name string
	// Netns is the path of an existing network namespace to run the node in; empty: the cluster makes one.
	Netns string
	// Labels and Taints are registered with the Node by its kubelet.
	Labels map[string]string
	Taints []corev1.Taint
}

// Options configure a cluster.
type Options struct {
	// Prefix starts the name of everything made on the host (devices, namespaces, cgroups); unique per run and
	// at most 11 characters.
	Prefix string
	// WorkDir holds certificates, configurations, logs, etcd's data and each node's directories.
	WorkDir string
	// APIServerBinDir holds kube-apiserver and etcd; NodeBinDir kubelet, kube-controller-manager,
	// kube-scheduler and kube-proxy.
	APIServerBinDir, NodeBinDir string
	// PauseImage is the sandbox image of every pod (no registry to pull it from).
	PauseImage ImageRef
	// PrivateDirs are host paths every node gets a directory of its own on (e.g. the state hostPaths of a
	// DaemonSet), as separate machines would have; nothing is written to the host's.
	PrivateDirs []string
	Nodes       []NodeSpec
	// Out receives progress lines (nil: discarded).
	Out io.Writer
	// Slowness multiplies the deadlines of the start's waits (0: 1), for a machine far slower than a usual host:
	// in a guest under QEMU's emulation (TCG) a process starts 25-50 times slower.
	Slowness int
}

// Node is a running node.
type Node struct {
	Name string
	// Netns is the node's network namespace (a path).
	Netns string
	// MgmtAddr is the node's address on the management network, its kubelet's node IP.
	MgmtAddr netip.Addr
	// PodCIDR is the subnet of its pods.
	PodCIDR netip.Prefix
	// Dir holds the node's files; LogDir its daemons' logs.
	Dir, LogDir string

	index    int
	ownNetns bool
	hostVeth string
	holder   *proc
	cgroup   string
	// cgroupDirs are the node's cgroup in each hierarchy (one on cgroup v2).
	cgroupDirs []string
	sock       string
	daemons    []*proc
}

// CRISocket is the node's containerd socket (the kubelet's container runtime endpoint), a path on the host.
func (n *Node) CRISocket() string { return n.sock }

// Cluster is a running cluster; Close it.
type Cluster struct {
	opts   Options
	pki    *pki
	subnet netip.Prefix
	host   netip.Addr
	bridge string
	port   int
	url    string
	admin  string
	cfg    *rest.Config
	cp     []*proc
	nodes  []*Node

	mu       sync.Mutex
	teardown []func() error
	// lease is the cluster's hold on what the host's clusters share.
	lease *hostLease
	// shimSockets are the sockets of the shims killed at teardown, removed after the last of them.
	shimSockets []string
	closed      bool
}

// Start brings the cluster up and waits until every node is Ready; on failure everything started is removed.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (o *Options) validate() error {
	var errs []error
	if o.Prefix == "" || len(o.Prefix) > 11 {
		errs = append(errs, fmt.Errorf("prefix %q: want 1..11 characters (device names have 15)", o.Prefix))
	}
	if len(o.Nodes) == 0 || len(o.Nodes) > 14 {
		errs = append(errs, fmt.Errorf("nodes: %d, want 1..14", len(o.Nodes)))
	}
	if o.Slowness < 0 {
		errs = append(errs, fmt.Errorf("slowness %d: want 0 or more", o.Slowness))
	}
	if o.WorkDir == "" {
		errs = append(errs, errors.New("work directory: empty"))
	}
	if o.PauseImage.Archive == "" || o.PauseImage.Name == "" {
		errs = append(errs, errors.New("pause image: archive and name are required"))
	}
	for _, b := range []struct{ dir, name, hint string }{
		{o.APIServerBinDir, "kube-apiserver", "hack/envtest-assets.sh builds it"},
		{o.APIServerBinDir, "etcd", "hack/envtest-assets.sh builds it"},
		{o.NodeBinDir, "kubelet", "hack/k8s-binaries.sh builds it"},
		{o.NodeBinDir, "kube-controller-manager", "hack/k8s-binaries.sh builds it"},
		{o.NodeBinDir, "kube-scheduler", "hack/k8s-binaries.sh builds it"},
		{o.NodeBinDir, "kube-proxy", "hack/k8s-binaries.sh builds it"},
	} {
		if _, err := os.Stat(filepath.Join(b.dir, b.name)); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s in %q (%s)", ErrMissing, b.name, b.dir, b.hint))
		}
	}
	for _, f := range []string{o.PauseImage.Archive, "/usr/bin/containerd", "/usr/sbin/runc", "/usr/bin/ctr", "/usr/lib/cni/bridge",
		"/usr/lib/cni/host-local", "/usr/lib/cni/loopback", "/usr/bin/unshare", "/usr/bin/nsenter"} {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s (make deps installs containerd, runc, containernetworking-plugins)", ErrMissing, f))
		}
	}
	return errors.Join(errs...)
}

// ErrMissing is returned when a binary or package the cluster needs is not there.
var ErrMissing = errors.New("prerequisite missing")

// deadline is a wait's deadline on this machine (Options.Slowness).
func (c *Cluster) deadline(d time.Duration) time.Duration {
	return d * time.Duration(max(1, c.opts.Slowness))
}

func (c *Cluster) logf(format string, args ...any) { fmt.Fprintf(c.opts.Out, format+"\n", args...) }

// onClose registers a teardown step; Close runs them in reverse order.
func (c *Cluster) onClose(fn func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.teardown = append(c.teardown, fn)
}

// Close tears everything down and restores the host's sysctls; it reports every failure and is idempotent.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	steps := c.teardown
	c.teardown = nil
	c.mu.Unlock()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		errs = append(errs, steps[i]())
	}
	return errors.Join(errs...)
}

func (c *Cluster) start(ctx context.Context) error {
	begin := time.Now()
	if err := os.MkdirAll(c.opts.WorkDir, 0o755); err != nil {
		return err
	}
	c.onClose(func() error { return os.RemoveAll(c.opts.WorkDir) })
	if err := c.leaseHost(); err != nil {
		return err
	}
	if err := c.startNetwork(ctx); err != nil {
		return err
	}
	if err := c.startControlPlane(ctx); err != nil {
		return err
	}
	c.logf("control plane on %s up in %.1fs", c.url, time.Since(begin).Seconds())
	for i, spec := range c.opts.Nodes {
		if err := c.startNode(ctx, i, spec); err != nil {
			return fmt.Errorf("node %s: %w", spec.Name, err)
		}
	}
	// kube-proxy reads its node's addresses once and exits when they change, so it starts only after the
	// kubelet has registered them (started earlier, a kube-proxy saw none and exited a few seconds later).
	if err := c.waitNodeAddresses(ctx); err != nil {
		return err
	}
	for _, n := range c.nodes {
		if err := c.startKubeProxy(n); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	if err := c.WaitNodesReady(ctx); err != nil {
		return err
	}
	for _, n := range c.nodes {
		if err := n.bridgeNetfilterOff(); err != nil {
			return err
		}
	}
	c.logf("%d nodes Ready %.1fs after the start", len(c.nodes), time.Since(begin).Seconds())
	return nil
}

// leaseHost takes the cluster's lease on what the host's clusters share (hostShared: the sysctls kubelets set,
// the shims' socket directory). It is released after the last teardown step (every containerd and shim stopped),
// with the sockets of the shims this cluster killed.
func (c *Cluster) leaseHost() error {
	l, err := hostShared.acquire()
	if err != nil {
		return err
	}
	c.lease = l
	c.onClose(func() error {
		c.mu.Lock()
		own := c.shimSockets
		c.mu.Unlock()
		return l.release(own)
	})
	return nil
}

// AdminKubeconfig is a kubeconfig of a cluster administrator (system:masters).
func (c *Cluster) AdminKubeconfig() string { return c.admin }

// RESTConfig is an administrator's client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.cfg) }

// APIServerURL is the API server's address on the management network.
func (c *Cluster) APIServerURL() string { return c.url }

// NodesDir holds every node's directory (Node.Dir): its containerd's socket and state, its logs. In every node's
// mount namespace it is a shared mount, so a pod's hostPath below it may have mount propagation.
func (c *Cluster) NodesDir() string { return filepath.Join(c.opts.WorkDir, "nodes") }

// Nodes are the nodes in the order of Options.Nodes.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// WaitNodesReady waits until every node reports Ready.
func (c *Cluster) WaitNodesReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	return wait.Poll(ctx, pollInterval, c.deadline(3*time.Minute), "nodes Ready", func(ctx context.Context) (bool, string, error) {
		for _, n := range c.nodes {
			if err := n.running(); err != nil {
				return false, "", err
			}
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			ready := false
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					ready = cond.Status == corev1.ConditionTrue
					if !ready {
						return false, fmt.Sprintf("%s: %s", n.Name, cond.Message), nil
					}
				}
			}
			if !ready {
				return false, n.Name + " has no Ready condition", nil
			}
		}
		return true, "", nil
	})
}

// waitNodeAddresses waits until every node's kubelet has registered its Node with its management address.
func (c *Cluster) waitNodeAddresses(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	return wait.Poll(ctx, pollInterval, c.deadline(2*time.Minute), "nodes registered with their addresses", func(ctx context.Context) (bool, string, error) {
		for _, n := range c.nodes {
			if err := n.running(); err != nil {
				return false, "", err
			}
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Sprintf("%s: %v", n.Name, err), nil
			}
			if !slices.ContainsFunc(node.Status.Addresses, func(a corev1.NodeAddress) bool {
				return a.Type == corev1.NodeInternalIP && a.Address == n.MgmtAddr.String()
			}) {
				return false, fmt.Sprintf("%s: no InternalIP %s yet (%v)", n.Name, n.MgmtAddr, node.Status.Addresses), nil
			}
		}
		return true, "", nil
	})
}

// ImportImages imports image archives into every node's containerd.
func (c *Cluster) ImportImages(ctx context.Context, archives ...string) error {
	for _, n := range c.nodes {
		for _, a := range archives {
			if _, err := run(ctx, "ctr", "--address", n.sock, "-n", "k8s.io", "images", "import", "--no-unpack=false", a); err != nil {
				return fmt.Errorf("import %s into %s: %w", filepath.Base(a), n.Name, err)
			}
		}
	}
	return nil
}

// startControlPlane issues the certificates and starts etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, and grants the API server access to the kubelets.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	var err error
	dir := filepath.Join(c.opts.WorkDir, "pki")
	if c.pki, err = newPKI(dir); err != nil {
		return err
	}
	if c.port, err = freePort(c.host); err != nil {
		return err
	}
	c.url = "https://" + net.JoinHostPort(c.host.String(), strconv.Itoa(c.port))
	serviceIP := "10.96.0.1"
	sans := []string{c.host.String(), "127.0.0.1", serviceIP, "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local"}
	server, client := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	if err := c.pki.issue("apiserver", "kube-apiserver", nil, sans, server); err != nil {
		return err
	}
	if err := c.pki.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", nil, nil, client); err != nil {
		return err
	}
	if c.admin, err = c.pki.client("admin", "kubenodes-admin", []string{"system:masters"}, c.url); err != nil {
		return err
	}
	kcm, err := c.pki.client("controller-manager", "system:kube-controller-manager", nil, c.url)
	if err != nil {
		return err
	}
	sched, err := c.pki.client("scheduler", "system:kube-scheduler", nil, c.url)
	if err != nil {
		return err
	}
	logs := filepath.Join(c.opts.WorkDir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	etcdPort, err := freePort(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		return err
	}
	peerPort, err := freePort(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	p := c.pki.path
	daemons := []struct {
		name string
		argv []string
	}{
		{"etcd", []string{filepath.Join(c.opts.APIServerBinDir, "etcd"), "--data-dir", filepath.Join(c.opts.WorkDir, "etcd"),
			"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
			"--listen-peer-urls", "http://127.0.0.1:" + strconv.Itoa(peerPort), "--initial-advertise-peer-urls", "http://127.0.0.1:" + strconv.Itoa(peerPort),
			"--initial-cluster", "default=http://127.0.0.1:" + strconv.Itoa(peerPort), "--name", "default",
			"--unsafe-no-fsync", "--quota-backend-bytes", strconv.Itoa(2 << 30)}},
		{"kube-apiserver", []string{filepath.Join(c.opts.APIServerBinDir, "kube-apiserver"),
			"--etcd-servers", etcdURL, "--bind-address", c.host.String(), "--advertise-address", c.host.String(),
			"--secure-port", strconv.Itoa(c.port), "--tls-cert-file", p("apiserver.crt"), "--tls-private-key-file", p("apiserver.key"),
			"--client-ca-file", p("ca.crt"), "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file", p("sa.pub"), "--service-account-signing-key-file", p("sa.key"),
			"--service-cluster-ip-range", serviceCIDR.String(), "--authorization-mode", "Node,RBAC",
			"--enable-admission-plugins", "NodeRestriction", "--allow-privileged=true",
			"--kubelet-client-certificate", p("apiserver-kubelet-client.crt"), "--kubelet-client-key", p("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority", p("ca.crt"), "--kubelet-preferred-address-types", "InternalIP,Hostname",
			"--enable-aggregator-routing=true", "--profiling=false", "--cert-dir", filepath.Join(c.opts.WorkDir, "apiserver-certs")}},
		{"kube-controller-manager", []string{filepath.Join(c.opts.NodeBinDir, "kube-controller-manager"),
			"--kubeconfig", kcm, "--authentication-kubeconfig", kcm, "--authorization-kubeconfig", kcm,
			"--root-ca-file", p("ca.crt"), "--service-account-private-key-file", p("sa.key"),
			"--use-service-account-credentials", "--cluster-signing-cert-file", p("ca.crt"), "--cluster-signing-key-file", p("ca.key"),
			"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0", "--controllers", "*"}},
		{"kube-scheduler", []string{filepath.Join(c.opts.NodeBinDir, "kube-scheduler"),
			"--kubeconfig", sched, "--authentication-kubeconfig", sched, "--authorization-kubeconfig", sched,
			"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0"}},
	}
	for i, d := range daemons {
		pr, err := startProc(d.name, filepath.Join(logs, d.name+".log"), d.argv...)
		if err != nil {
			return err
		}
		c.cp = append(c.cp, pr)
		// c.cp[i], not pr: APIServerOutage replaces the API server's process.
		c.onClose(func() error { return c.cp[i].stop(10 * time.Second) })
		if i == apiServerProc {
			if err := c.waitAPIServer(ctx, pr); err != nil {
				return err
			}
		}
	}
	return nil
}

// apiServerProc is kube-apiserver's index in Cluster.cp (etcd comes first).
const apiServerProc = 1

// APIServerOutage stops kube-apiserver, keeps it down for down, and starts it again with the same flags (same
// address, certificates and etcd); it returns once the API server is ready again.
func (c *Cluster) APIServerOutage(ctx context.Context, down time.Duration) error {
	old := c.cp[apiServerProc]
	if err := old.stop(10 * time.Second); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	t := time.NewTimer(down) // the outage itself, not a wait for a condition
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	pr, err := startProc(old.name, old.log, old.cmd.Args...)
	if err != nil {
		return err
	}
	c.cp[apiServerProc] = pr
	return c.apiServerReady(ctx, pr)
}

// apiServerReady waits until the API server process answers /readyz with ok.
func (c *Cluster) apiServerReady(ctx context.Context, apiserver *proc) error {
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	return wait.Poll(ctx, pollInterval, c.deadline(90*time.Second), "kube-apiserver ready", func(ctx context.Context) (bool, string, error) {
		if err := apiserver.running(); err != nil {
			return false, "", err
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		return strings.TrimSpace(string(body)) == "ok", string(body), nil
	})
}

// waitAPIServer waits for /readyz and then grants the API server's kubelet client the kubelet API and
// kube-proxy its role.
func (c *Cluster) waitAPIServer(ctx context.Context, apiserver *proc) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.admin)
	if err != nil {
		return err
	}
	c.cfg = cfg
	if err := c.apiServerReady(ctx, apiserver); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kubenodes:apiserver-kubelet-client"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "kube-apiserver-kubelet-client"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("grant the kubelet API: %w", err)
	}
	proxy := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kubenodes:kube-proxy"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-proxier"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:kube-proxy"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, proxy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("grant kube-proxy: %w", err)
	}
	return nil
}

// freePort returns a TCP port nobody listens on at addr.
func freePort(addr netip.Addr) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		return 0, fmt.Errorf("free port on %s: %w", addr, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
