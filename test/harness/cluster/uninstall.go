package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
)

// foreignLink is the interface PlantForeign gives every node, with a tc filter and an XDP program that are
// not ours.
const foreignLink = "foreign0"

// Foreign is what PlantForeign left on a node: the kernel's ids of its programs.
type Foreign struct {
	Node       string
	TC, XDP    ebpf.ProgramID
	Interface  string
	IfaceIndex int
}

// PlantForeign gives every node a veth interface with a clsact tc filter and an XDP program of somebody else
// (both pass everything), which an uninstall must leave alone.
func (c *Cluster) PlantForeign(ctx context.Context) ([]Foreign, error) {
	var out []Foreign
	for _, n := range c.nodes {
		f := Foreign{Node: n.Name, Interface: foreignLink}
		err := n.NS.Do(func() error {
			h := n.NS.Handle()
			// A veth pair (this kernel has no dummy devices); its peer stays down.
			if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: foreignLink}, PeerName: foreignLink + "p"}); err != nil {
				return fmt.Errorf("add %s: %w", foreignLink, err)
			}
			l, err := h.LinkByName(foreignLink)
			if err != nil {
				return err
			}
			f.IfaceIndex = l.Attrs().Index
			if err := h.LinkSetUp(l); err != nil {
				return err
			}
			tc, err := passProgram(ebpf.SchedCLS, "foreign_tc")
			if err != nil {
				return err
			}
			defer tc.Close()
			xdp, err := passProgram(ebpf.XDP, "foreign_xdp")
			if err != nil {
				return err
			}
			defer xdp.Close()
			qdisc := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: f.IfaceIndex,
				Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
			if err := h.QdiscAdd(qdisc); err != nil {
				return fmt.Errorf("clsact on %s: %w", foreignLink, err)
			}
			filter := &netlink.BpfFilter{FilterAttrs: netlink.FilterAttrs{LinkIndex: f.IfaceIndex,
				Parent: netlink.HANDLE_MIN_INGRESS, Handle: 1, Protocol: unix.ETH_P_ALL, Priority: 1},
				Fd: tc.FD(), Name: "foreign_tc", DirectAction: true}
			if err := h.FilterAdd(filter); err != nil {
				return fmt.Errorf("tc filter on %s: %w", foreignLink, err)
			}
			if err := netlink.LinkSetXdpFdWithFlags(l, xdp.FD(), 2 /* XDP_FLAGS_SKB_MODE; the thread is in the node namespace */); err != nil {
				return fmt.Errorf("XDP on %s: %w", foreignLink, err)
			}
			for _, p := range []struct {
				prog *ebpf.Program
				id   *ebpf.ProgramID
			}{{tc, &f.TC}, {xdp, &f.XDP}} {
				info, err := p.prog.Info()
				if err != nil {
					return err
				}
				id, _ := info.ID()
				*p.id = id
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("foreign programs on %s: %w", n.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// passProgram is a program that lets every packet pass (TC_ACT_OK is 0, XDP_PASS is 2).
func passProgram(typ ebpf.ProgramType, name string) (*ebpf.Program, error) {
	ret := int32(0)
	if typ == ebpf.XDP {
		ret = 2
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: typ, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, ret), asm.Return()}})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	return p, nil
}

// Uninstall is what HelmUninstall found.
type Uninstall struct {
	Duration time.Duration
	// Left names everything of ours still there afterwards (want none), one line each.
	Left []string
	// ForeignMissing names foreign objects that went missing (want none).
	ForeignMissing []string
	// UserResources counts the users' own resources that stay with the kept CRDs.
	UserResources int
}

// HelmUninstall runs `helm uninstall` (its pre-delete hook cleans every node) and then looks at every node and
// the API for anything of ours, and for the foreign programs PlantForeign made.
func (c *Cluster) HelmUninstall(ctx context.Context, foreign []Foreign) (*Uninstall, error) {
	if c.opts.Install != InstallHelm {
		return nil, errors.New("uninstall: only in the helm form")
	}
	u := &Uninstall{}
	start := time.Now()
	if _, err := c.helm(ctx, "uninstall", Release, "--namespace", Namespace, "--wait", "--timeout", "5m"); err != nil {
		return nil, err
	}
	// helm returns once the release's objects are deleted; their pods may still be terminating.
	err := wait.Poll(ctx, 250*time.Millisecond, 2*time.Minute, "pods of the release gone", func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := c.client.List(ctx, &pods, client.InNamespace(Namespace)); err != nil {
			return false, err.Error(), nil
		}
		if len(pods.Items) > 0 {
			return false, fmt.Sprintf("%d pods left, e.g. %s", len(pods.Items), pods.Items[0].Name), nil
		}
		return true, "", nil
	})
	if err != nil {
		return nil, err
	}
	u.Duration = time.Since(start)
	for _, n := range c.nodes {
		left, missing, err := c.nodeLeftovers(ctx, n, foreign)
		if err != nil {
			return nil, err
		}
		u.Left = append(u.Left, left...)
		u.ForeignMissing = append(u.ForeignMissing, missing...)
	}
	var nncs v1.NodeNetworkConfigList
	if err := c.client.List(ctx, &nncs); err != nil {
		return nil, fmt.Errorf("list NodeNetworkConfigs: %w", err)
	}
	for _, o := range nncs.Items {
		u.Left = append(u.Left, "NodeNetworkConfig "+o.Name)
	}
	var revs v1.NetworkConfigRevisionList
	if err := c.client.List(ctx, &revs); err != nil {
		return nil, fmt.Errorf("list NetworkConfigRevisions: %w", err)
	}
	for _, o := range revs.Items {
		u.Left = append(u.Left, "NetworkConfigRevision "+o.Name)
	}
	var vrfs v1.VRFRouteConfigurationList
	var l2s v1.Layer2NetworkConfigurationList
	if err := c.client.List(ctx, &vrfs); err == nil {
		u.UserResources += len(vrfs.Items)
	}
	if err := c.client.List(ctx, &l2s); err == nil {
		u.UserResources += len(l2s.Items)
	}
	return u, nil
}

// nodeLeftovers looks at one node after the uninstall: BPF programs on its interfaces (kernel view), pins and
// state on its file system, netlink objects with our alias or route protocol, FRR daemons in its namespace.
func (c *Cluster) nodeLeftovers(ctx context.Context, n *Node, foreign []Foreign) (left, missing []string, err error) {
	hooks, err := Hooks(n.NS)
	if err != nil {
		return nil, nil, fmt.Errorf("BPF programs on %s: %w", n.Name, err)
	}
	var mine *Foreign
	for i := range foreign {
		if foreign[i].Node == n.Name {
			mine = &foreign[i]
		}
	}
	seen := map[ebpf.ProgramID]bool{}
	for _, h := range hooks {
		if mine != nil && (h.ProgramID == mine.TC || h.ProgramID == mine.XDP) {
			seen[h.ProgramID] = true
			continue
		}
		left = append(left, fmt.Sprintf("%s: BPF program %s", n.Name, h))
	}
	if mine != nil {
		for kind, id := range map[string]ebpf.ProgramID{"tc filter": mine.TC, "XDP program": mine.XDP} {
			if !seen[id] {
				missing = append(missing, fmt.Sprintf("%s: foreign %s %d on %s", n.Name, kind, id, mine.Interface))
			}
		}
	}
	for _, dir := range []string{podPinDir, "/var/lib/network-operator"} {
		out, err := n.kube.Exec(ctx, "find", dir, "-mindepth", "1")
		if err == nil && strings.TrimSpace(string(out)) != "" {
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				left = append(left, fmt.Sprintf("%s: file %s", n.Name, l))
			}
		}
	}
	obs, err := nodenet.ObserveIn(ctx, n.NS.Handle(), n.NS.NsHandle(), 0)
	if err != nil {
		return nil, nil, fmt.Errorf("netlink objects on %s: %w", n.Name, err)
	}
	for _, l := range obs.Links {
		if nodenet.OwnedAlias(l.Alias) {
			left = append(left, fmt.Sprintf("%s: link %s (alias %q)", n.Name, l.Name, l.Alias))
		}
	}
	// Pod networking's host ends (alias netop-pod:<uid>/<interface>): nodenet does not own them.
	links, err := n.NS.Handle().LinkList()
	if err != nil {
		return nil, nil, fmt.Errorf("links on %s: %w", n.Name, err)
	}
	for _, l := range links {
		if _, _, ok := podnet.ParseAlias(l.Attrs().Alias); ok {
			left = append(left, fmt.Sprintf("%s: pod link %s (alias %q)", n.Name, l.Attrs().Name, l.Attrs().Alias))
		}
	}
	for _, r := range obs.Routes {
		left = append(left, fmt.Sprintf("%s: route %v", n.Name, r))
	}
	for _, r := range obs.Rules {
		left = append(left, fmt.Sprintf("%s: rule %v", n.Name, r))
	}
	daemons, err := frrDaemonsIn(n.NS.Path)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range daemons {
		left = append(left, fmt.Sprintf("%s: FRR daemon %s", n.Name, d))
	}
	return left, missing, nil
}

// frrDaemonsIn lists FRR daemons (name and pid) running in the network namespace at nsPath.
func frrDaemonsIn(nsPath string) ([]string, error) {
	var want unix.Stat_t
	if err := unix.Stat(nsPath, &want); err != nil {
		return nil, fmt.Errorf("stat %s: %w", nsPath, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		switch name {
		case "zebra", "bgpd", "staticd", "bfdd", "watchfrr", "mgmtd":
		default:
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st); err != nil {
			continue
		}
		if st.Ino == want.Ino && st.Dev == want.Dev {
			out = append(out, fmt.Sprintf("%s (pid %d)", name, pid))
		}
	}
	return out, nil
}

// RSS sums the resident memory of the processes named names (their comm) in n's network namespace: the
// agent's or FRR's containers, as the kernel counts them.
func RSS(n *Node, names ...string) (uint64, error) {
	var want unix.Stat_t
	if err := unix.Stat(n.NS.Path, &want); err != nil {
		return 0, fmt.Errorf("stat %s: %w", n.NS.Path, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !slices.Contains(names, strings.TrimSpace(string(comm))) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st); err != nil || st.Ino != want.Ino || st.Dev != want.Dev {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				total += kb * 1024
			}
		}
	}
	return total, nil
}
