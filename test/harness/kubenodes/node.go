package kubenodes

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// mountPoints are the host paths each node gets its own directory on (kubelet's fixed paths, CNI's).
var mountPoints = []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/etc/cni/net.d", "/var/lib/cni"}

// startNode brings up node i (0-based): namespace, management veth, mount namespace, containerd, kubelet,
// kube-proxy.
func (c *Cluster) startNode(ctx context.Context, i int, spec NodeSpec) error {
	idx := i + 1
	n := &Node{Name: spec.Name, index: idx, MgmtAddr: c.nodeMgmtAddr(idx), PodCIDR: c.nodePodCIDR(idx),
		Dir: filepath.Join(c.NodesDir(), spec.Name)}
	n.LogDir = filepath.Join(n.Dir, "logs")
	for _, d := range []string{n.LogDir, filepath.Join(n.Dir, "containerd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	c.nodes = append(c.nodes, n)
	if err := c.nodeNetwork(n, spec); err != nil {
		return err
	}
	if err := c.nodeMounts(ctx, n); err != nil {
		return err
	}
	if err := c.nodeCgroup(ctx, n); err != nil {
		return err
	}
	if err := c.startContainerd(ctx, n); err != nil {
		return err
	}
	return c.startKubelet(ctx, n, spec)
}

// running returns an error when a daemon of the node has exited.
func (n *Node) running() error {
	for _, d := range n.daemons {
		if err := d.running(); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}

// Exec runs a command in the node's mount and network namespaces (its bpffs, its kubelet directories) and
// returns its combined output.
func (n *Node) Exec(ctx context.Context, args ...string) ([]byte, error) {
	return run(ctx, append(n.nsenter(), args...)...)
}

// nsenter is the command prefix that enters the node's namespaces.
func (n *Node) nsenter() []string {
	return []string{"nsenter", "-t", strconv.Itoa(n.holder.pid()), "--mount", "--net=" + n.Netns, "--"}
}

// nodeNetwork makes (or takes) the node's network namespace and gives it the management veth and routes.
func (c *Cluster) nodeNetwork(n *Node, spec NodeSpec) error {
	n.Netns = spec.Netns
	if n.Netns == "" {
		name := fmt.Sprintf("%sk%d", c.opts.Prefix, n.index)
		h, err := namedns.Create(name)
		if err != nil {
			return err
		}
		h.Close()
		n.Netns, n.ownNetns = namedns.Path(name), true
		c.onClose(func() error { return namedns.Delete(name) })
	}
	ns, err := netns.GetFromPath(n.Netns)
	if err != nil {
		return fmt.Errorf("netns %s: %w", n.Netns, err)
	}
	defer ns.Close()
	n.hostVeth = fmt.Sprintf("%sm%d", c.opts.Prefix, n.index)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: n.hostVeth}, PeerName: "mgmt0", PeerNamespace: netlink.NsFd(ns)}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("management veth: %w", err)
	}
	c.onClose(func() error {
		if l, err := netlink.LinkByName(n.hostVeth); err == nil {
			return netlink.LinkDel(l)
		}
		return nil
	})
	br, err := netlink.LinkByName(c.bridge)
	if err != nil {
		return err
	}
	host, err := netlink.LinkByName(n.hostVeth)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetMaster(host, br); err != nil {
		return err
	}
	if err := netlink.LinkSetUp(host); err != nil {
		return err
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	m, err := h.LinkByName("mgmt0")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(m, &netlink.Addr{IPNet: prefixNet(netip24(n.MgmtAddr))}); err != nil {
		return fmt.Errorf("mgmt0 address: %w", err)
	}
	if err := h.LinkSetUp(m); err != nil {
		return err
	}
	// containerd's streaming server listens on loopback.
	if lo, err := h.LinkByName("lo"); err == nil {
		if err := h.LinkSetUp(lo); err != nil {
			return fmt.Errorf("loopback up: %w", err)
		}
	}
	if n.ownNetns {
		if err := netnsrun.Run(ns, func() error {
			return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644)
		}); err != nil {
			return fmt.Errorf("forwarding in %s: %w", n.Netns, err)
		}
	}
	// The host reaches the node's pods (webhooks) through the node.
	if err := errIgnoreExists(netlink.RouteReplace(&netlink.Route{Dst: prefixNet(n.PodCIDR), Gw: n.MgmtAddr.AsSlice(), LinkIndex: br.Attrs().Index})); err != nil {
		return fmt.Errorf("host route to %s: %w", n.PodCIDR, err)
	}
	// Services: kube-proxy translates their addresses, after the routing decision, which needs a route (a node
	// in a caller's namespace may have no default route).
	svc := &netlink.Route{Dst: prefixNet(serviceCIDR), Gw: c.host.AsSlice(), LinkIndex: m.Attrs().Index}
	if err := h.RouteReplace(svc); err != nil {
		return fmt.Errorf("route to the services: %w", err)
	}
	for j := range c.opts.Nodes {
		if j+1 == n.index {
			continue
		}
		r := &netlink.Route{Dst: prefixNet(c.nodePodCIDR(j + 1)), Gw: c.nodeMgmtAddr(j + 1).AsSlice(), LinkIndex: m.Attrs().Index}
		if err := h.RouteReplace(r); err != nil {
			return fmt.Errorf("route to the pods of node %d: %w", j+1, err)
		}
	}
	return nil
}

// nodeMounts starts the process holding the node's mount namespace and mounts the node's directories over the
// kubelet's and CNI's fixed paths, and a bpffs of its own.
func (c *Cluster) nodeMounts(ctx context.Context, n *Node) error {
	// Directories made on the host go again with the last cluster out (another's nodes may mount on them).
	if err := c.lease.makeDirs(append(slices.Clone(mountPoints), c.opts.PrivateDirs...)...); err != nil {
		return fmt.Errorf("mount points: %w", err)
	}
	holder, err := startProc("mount namespace of "+n.Name, filepath.Join(n.LogDir, "holder.log"),
		"unshare", "--mount", "--propagation", "slave", "--", "sleep", "infinity")
	if err != nil {
		return err
	}
	n.holder = holder
	c.onClose(func() error { return holder.stop(5 * time.Second) })
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, mp := range append(slices.Clone(mountPoints), c.opts.PrivateDirs...) {
		dir := filepath.Join(n.Dir, "fs", strings.ReplaceAll(strings.TrimPrefix(mp, "/"), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(&script, "mount --bind %s %s\n", dir, mp)
	}
	script.WriteString("mount --make-rshared /var/lib/kubelet\n")
	// The nodes' directories (each node's containerd socket and state) are a shared mount of the node's own, as "/"
	// is on a systemd host (here the host's mounts may all be private): a pod's hostPath below it may ask for mount
	// propagation - e.g. an agent mounting the node's CRI socket directory with HostToContainer - and then sees the
	// mounts the node's containerd makes there later (its netns bind mounts).
	fmt.Fprintf(&script, "mount --bind %[1]s %[1]s\nmount --make-rshared %[1]s\n", c.NodesDir())
	// The node's own bpffs, a shared mount (Bidirectional mounts need one): the host's copy is unmounted first,
	// as a bpffs stacked on it is not seen as shared.
	script.WriteString("while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf; done\n")
	script.WriteString("mount -t bpf bpf /sys/fs/bpf\nmount --make-shared /sys/fs/bpf\n")
	err = wait.Poll(ctx, pollInterval, c.deadline(10*time.Second), "mount namespace of "+n.Name, func(context.Context) (bool, string, error) {
		if err := holder.running(); err != nil {
			return false, "", err
		}
		self, _ := os.Readlink("/proc/self/ns/mnt")
		its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", holder.pid()))
		return err == nil && its != self, "unshare not done yet", nil
	})
	if err != nil {
		return err
	}
	if _, err := run(ctx, "nsenter", "-t", strconv.Itoa(holder.pid()), "--mount", "--", "sh", "-c", script.String()); err != nil {
		return fmt.Errorf("mounts of %s: %w", n.Name, err)
	}
	return nil
}

// startContainerd writes the node's containerd configuration, starts it and imports the pause image.
func (c *Cluster) startContainerd(ctx context.Context, n *Node) error {
	dir := filepath.Join(n.Dir, "containerd")
	n.sock = filepath.Join(dir, "containerd.sock")
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
  disable_hugetlb_controller = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # runc's state in the node's directory (its default is the host's shared /run/containerd/runc).
        Root = %q
        # cgroupfs, as kubelet's cgroupDriver: runc places containers below the cgroupRoot it is given.
        SystemdCgroup = false
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), n.sock, n.sock+".ttrpc", c.opts.PauseImage.Name, filepath.Join(dir, "runc"))
	confPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	cni := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "kubenodes", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
`, n.PodCIDR.String())
	if err := os.WriteFile(filepath.Join(n.Dir, "fs", "etc_cni_net.d", "10-kubenodes.conflist"), []byte(cni), 0o644); err != nil {
		return err
	}
	p, err := startProc("containerd of "+n.Name, filepath.Join(n.LogDir, "containerd.log"),
		append(n.nsenter(), "containerd", "--config", confPath)...)
	if err != nil {
		return err
	}
	n.daemons = append(n.daemons, p)
	c.onClose(func() error { return p.stop(10 * time.Second) })
	// Before containerd stops: the pods' processes (kubelet is stopped by then) and the shims, which outlive it.
	c.onClose(func() error { return c.killContainers(n) })
	err = wait.Poll(ctx, pollInterval, c.deadline(30*time.Second), "containerd of "+n.Name, func(ctx context.Context) (bool, string, error) {
		if err := p.running(); err != nil {
			return false, "", err
		}
		_, err := run(ctx, "ctr", "--address", n.sock, "version")
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	if _, err := run(ctx, "ctr", "--address", n.sock, "-n", "k8s.io", "images", "import", c.opts.PauseImage.Archive); err != nil {
		return fmt.Errorf("pause image into %s: %w", n.Name, err)
	}
	return nil
}

// killContainers stops every pod process of the node (they live below its cgroup root) and the containerd
// shims serving it.
func (c *Cluster) killContainers(n *Node) error {
	var errs []error
	for _, root := range n.cgroupDirs {
		// Teardown runs also after the caller's context ended: its own deadlines bound it.
		errs = append(errs, killTree(context.Background(), root))
	}
	// A killed shim leaves its socket in the host's runtime directory: noted before the kill, removed at the end.
	sockets := hostShared.shimSockets(n.sock)
	c.mu.Lock()
	c.shimSockets = append(c.shimSockets, sockets...)
	c.mu.Unlock()
	for _, pid := range processesMatching("-address " + n.sock) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	errs = append(errs, wait.Poll(context.Background(), pollInterval, 10*time.Second, "containerd shims of "+n.Name+" gone",
		func(context.Context) (bool, string, error) {
			left := processesMatching("-address " + n.sock)
			return len(left) == 0, fmt.Sprintf("pids %v", left), nil
		}))
	return errors.Join(errs...)
}

// startKubelet issues the kubelet's certificates and configuration and starts it.
func (c *Cluster) startKubelet(ctx context.Context, n *Node, spec NodeSpec) error {
	name := "kubelet-" + n.Name
	kubeconfig, err := c.pki.client(name+"-client", "system:node:"+n.Name, []string{"system:nodes"}, c.url)
	if err != nil {
		return err
	}
	if err := c.pki.issue(name+"-serving", "system:node:"+n.Name, []string{"system:nodes"},
		[]string{n.MgmtAddr.String(), n.Name}, x509.ExtKeyUsageServerAuth); err != nil {
		return err
	}
	conf := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /%s
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
protectKernelDefaults: false
address: %s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://%s
podCIDR: %s
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "0%%", nodefs.available: "0%%", imagefs.available: "0%%", nodefs.inodesFree: "0%%"}
enforceNodeAllocatable: []
localStorageCapacityIsolation: false
nodeStatusReportFrequency: 10s
syncFrequency: 10s
`, n.cgroup, n.MgmtAddr, c.pki.path(name+"-serving.crt"), c.pki.path(name+"-serving.key"), c.pki.path("ca.crt"), n.sock, n.PodCIDR)
	confPath := filepath.Join(n.Dir, "kubelet.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	args := append(n.nsenter(), filepath.Join(c.opts.NodeBinDir, "kubelet"), "--config", confPath, "--kubeconfig", kubeconfig,
		"--hostname-override", n.Name, "--node-ip", n.MgmtAddr.String(), "--v", "1")
	if len(spec.Labels) > 0 {
		var l []string
		for k, v := range spec.Labels {
			l = append(l, k+"="+v)
		}
		slices.Sort(l)
		args = append(args, "--node-labels", strings.Join(l, ","))
	}
	if len(spec.Taints) > 0 {
		var t []string
		for _, taint := range spec.Taints {
			t = append(t, fmt.Sprintf("%s=%s:%s", taint.Key, taint.Value, taint.Effect))
		}
		args = append(args, "--register-with-taints", strings.Join(t, ","))
	}
	p, err := startProc("kubelet of "+n.Name, filepath.Join(n.LogDir, "kubelet.log"), args...)
	if err != nil {
		return err
	}
	n.daemons = append(n.daemons, p)
	c.onClose(func() error { return p.stop(10 * time.Second) })
	return ctx.Err()
}

// startKubeProxy starts kube-proxy (iptables, in the node's namespace only; host-wide conntrack settings left
// alone) so pods reach Services, among them the API server's.
func (c *Cluster) startKubeProxy(n *Node) error {
	kubeconfig, err := c.pki.client("kube-proxy-"+n.Name, "system:kube-proxy", nil, c.url)
	if err != nil {
		return err
	}
	conf := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %s}
hostnameOverride: %s
clusterCIDR: %s
bindAddress: %s
healthzBindAddress: ""
metricsBindAddress: ""
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
`, kubeconfig, n.Name, c.clusterPodCIDR(), n.MgmtAddr)
	confPath := filepath.Join(n.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	p, err := startProc("kube-proxy of "+n.Name, filepath.Join(n.LogDir, "kube-proxy.log"),
		append(n.nsenter(), filepath.Join(c.opts.NodeBinDir, "kube-proxy"), "--config", confPath)...)
	if err != nil {
		return err
	}
	n.daemons = append(n.daemons, p)
	c.onClose(func() error { return p.stop(10 * time.Second) })
	return nil
}

func netip24(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, 24) }

// bridgeNetfilterOff keeps bridged traffic out of iptables in the node's namespace. kube-proxy loads br_netfilter,
// whose per-namespace default sends bridged frames through FORWARD, where kube-proxy drops conntrack-INVALID
// packets: the replies of asymmetric EVPN routing (the request was routed on another node, or by the eBPF
// router, which bypasses netfilter) are such packets. EVPN hosts run with these off.
func (n *Node) bridgeNetfilterOff() error {
	ns, err := netns.GetFromPath(n.Netns)
	if err != nil {
		return err
	}
	defer ns.Close()
	return netnsrun.Run(ns, func() error {
		for _, k := range []string{"bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"} {
			p := filepath.Join("/proc/sys/net/bridge", k)
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				continue // br_netfilter not loaded: bridged frames never reach iptables
			}
			if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
				return fmt.Errorf("%s in %s: %w", k, n.Netns, err)
			}
		}
		return nil
	})
}
