package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/cluster"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// installTimeout bounds the helm form: images, nodes, install, scenario, node scope, upgrade, uninstall.
const installTimeout = 20 * time.Minute

// TestHelmInstall is the demo's scenario as a user runs it - real kubelet nodes, the images imported, the chart
// installed with helm - followed by what only that form can show: the node-scope policy refusing the agent's
// token on another node, `helm upgrade` to a new agent image under traffic, and `helm uninstall`.
func TestHelmInstall(t *testing.T) {
	testreq.Root(t)
	_, err := os.Stat("/usr/bin/prometheus")
	testreq.Need(t, "/usr/bin/prometheus (make deps installs the Debian package prometheus)", err)
	_, err = testenv.AssetsDir()
	testreq.Need(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	testreq.Commands(t, "containerd", "runc", "ctr", "mmdebstrap") // make deps installs them
	nodeBins, chartTools := os.Getenv("NETOP_K8S_BINARIES"), os.Getenv("NETOP_CHART_TOOLS")
	for _, f := range []struct{ path, what string }{
		{filepath.Join(nodeBins, "kubelet"), "node binaries (make k8s-binaries; NETOP_K8S_BINARIES names their directory)"},
		{filepath.Join(chartTools, "helm"), "helm (make chart-tools; NETOP_CHART_TOOLS names its directory)"},
	} {
		_, err := os.Stat(f.path)
		testreq.Need(t, f.what, err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	const tag, upgradeTag = "e2e-1", "e2e-2"
	images := buildImages(t, root, tag, "")
	// The upgrade is other code: the agent's eBPF router compiled differently (routerVariant).
	upgrade := buildImages(t, root, upgradeTag, routerVariant(t, root), "network-agent", "network-operator")

	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	out := &lineLogger{t: t}
	c, err := cluster.New(cluster.Options{Nodes: 3, RepoRoot: root, Install: cluster.InstallHelm, ImagesDir: images,
		ImageTag: tag, ChartTools: chartTools, NodeBinDir: nodeBins, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if t.Failed() && !closed {
			t.Logf("logs of the cluster (work directory %s):\n%s", c.WorkDir(), c.LogTails(40))
		}
		if !closed {
			if err := c.Close(); err != nil {
				t.Errorf("teardown: %v", err)
			}
		}
	})
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	res, err := c.RunScenario(ctx, out)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	scenario := time.Since(start)
	checkScenario(t, c, res)
	logTimes(t, res, scenario)
	t.Logf("helm install -> every node's agent ready and the first revision Done: %.1fs", res.Underlay.Duration().Seconds())
	for _, n := range c.Nodes() {
		agent, err1 := cluster.RSS(n, "network-agent")
		frr, err2 := cluster.RSS(n, "zebra", "bgpd", "staticd", "watchfrr")
		if err1 != nil || err2 != nil || agent == 0 || frr == 0 {
			t.Errorf("RSS on %s: agent %d (%v), FRR %d (%v): want both running", n.Name, agent, err1, frr, err2)
			continue
		}
		t.Logf("RSS on %s: agent container %.1f MiB, FRR container %.1f MiB", n.Name, float64(agent)/(1<<20), float64(frr)/(1<<20))
	}

	t.Run("node scope", func(t *testing.T) {
		checks, err := c.NodeScope(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, chk := range checks {
			own := chk.Target == chk.From
			switch {
			case own && !chk.Allowed():
				t.Errorf("%s with the token of %s: refused (%d %s), want allowed", chk.What, chk.From, chk.Code, chk.Message)
			case !own && chk.Code != 403:
				t.Errorf("%s with the token of %s: %d %s, want 403", chk.What, chk.From, chk.Code, chk.Message)
			case !own && !(strings.Contains(chk.Message, chk.From) && strings.Contains(chk.Message, chk.Target)):
				t.Errorf("%s: message %q names not both nodes", chk.What, chk.Message)
			}
			t.Logf("%s with the token of %s: %d %s", chk.What, chk.From, chk.Code, chk.Message)
		}
	})

	// Pod networking on the real pods; its steady pod keeps its network through the upgrade and the uninstall.
	var pn *cluster.PodNetworking
	t.Run("pod network", func(t *testing.T) {
		var err error
		pn, err = c.PodNetworking(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		checkPodNetwork(t, pn)
	})

	// The program tags of the first build, by node and attachment: what the downgrade must bring back.
	firstBuild := map[string]map[string]string{}
	t.Run("upgrade under traffic", func(t *testing.T) {
		var steady *cluster.SteadyState
		if pn != nil && pn.Steady() != nil {
			var err error
			if steady, err = pn.SteadyState(ctx); err != nil {
				t.Fatalf("the steady pod before the upgrade: %v", err)
			}
			checkSteady(t, pn, steady, "before the upgrade")
			// The first agent's log says when it applied the steady pod: what the new agent's must not say.
			applies, err := pn.AgentApplies(ctx)
			if err != nil || len(applies) == 0 {
				t.Fatalf("the agent's log before the upgrade: %d lines applying the steady pod (%v), want its first apply", len(applies), err)
			}
			t.Logf("the agent's first apply of the steady pod: %s", applies[0])
		}
		u, err := c.UpgradeAgents(ctx, filepath.Join(upgrade, "network-agent.tar"), upgradeTag)
		if err != nil {
			t.Fatal(err)
		}
		if steady != nil {
			after, err := pn.SteadyState(ctx)
			if err != nil {
				t.Fatalf("the steady pod after the upgrade: %v", err)
			}
			checkSteady(t, pn, after, "after the upgrade")
			if !maps.Equal(after.InPod.Ifindex, steady.InPod.Ifindex) || after.HostVethIndex != steady.HostVethIndex {
				t.Errorf("the steady pod's interfaces were re-made by the new agent: ifindex in the pod %v -> %v, host end %d -> %d",
					steady.InPod.Ifindex, after.InPod.Ifindex, steady.HostVethIndex, after.HostVethIndex)
			}
			applies, err := pn.AgentApplies(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range applies {
				t.Errorf("the new agent applied something to the steady pod (want nothing planned): %s", l)
			}
			t.Logf("steady pod through the upgrade: ifindex %v, host end %d, %s %v kept; %s", after.InPod.Ifindex,
				after.HostVethIndex, pn.Steady().HostVeth, after.HostLinks, after.Connect)
		}
		checkAgentRollout(t, u, "upgrade", nil)
		for _, n := range u.Nodes {
			firstBuild[n.Node] = hookTags(n.Before)
		}
	})

	// And back to the first build: a downgrade is a rollout like any other.
	t.Run("downgrade under traffic", func(t *testing.T) {
		u, err := c.UpgradeAgents(ctx, filepath.Join(images, "network-agent.tar"), tag)
		if err != nil {
			t.Fatal(err)
		}
		checkAgentRollout(t, u, "downgrade", firstBuild)
	})

	// FRR's own restart (its pod replaced, as an FRR upgrade does): the flows through each node's eBPF router need
	// no FRR and lose nothing; traffic between nodes is measured (lost packets, longest gap) and must come back.
	t.Run("FRR restart under traffic", func(t *testing.T) {
		node := c.Nodes()[0]
		r, err := c.RestartFRR(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: FRR pod %s -> %s, sessions back after %.1fs; reset at the route reflector: %v", r.Node, r.OldPod, r.NewPod,
			r.Back.Seconds(), r.SessionResets)
		for i, f := range r.Nodes {
			t.Logf("through node-%d's router: %s", i+1, f)
			if !f.Clean() {
				t.Errorf("node-%d: the flow through its eBPF router lost packets while FRR restarted: %s", i+1, f)
			}
		}
		for _, cf := range r.Cross {
			t.Logf("between nodes %s -> %s: lost %d, longest gap %v; %s", cf.From, cf.To, cf.Flow.Lost,
				time.Duration(cf.Flow.LongestGap)*cf.Flow.Interval, cf.Flow)
		}
		if len(r.SessionResets) == 0 {
			t.Errorf("the route reflector's session counters did not move: FRR on %s was not restarted", r.Node)
		}
		if err := c.CrossNodeReachable(ctx); err != nil {
			t.Errorf("traffic between nodes after the FRR restart: %v", err)
		}
	})

	// The operator's own upgrade: a new leader finds its revisions in place and changes nothing on the nodes.
	t.Run("operator upgrade under traffic", func(t *testing.T) {
		u, err := c.UpgradeOperator(ctx, filepath.Join(upgrade, "network-operator.tar"), upgradeTag)
		if err != nil {
			t.Fatal(err)
		}
		checkTraffic(t, "operator upgrade", u.EventTraffic)
		if u.NewLeader == u.OldLeader {
			t.Errorf("the operator's lease is still held by %s after the upgrade", u.OldLeader)
		}
		if u.SeqAfter != u.SeqBefore {
			t.Errorf("the new operator made revisions of its own: newest sequence %d -> %d", u.SeqBefore, u.SeqAfter)
		}
		if !maps.Equal(u.Before, u.After) {
			t.Errorf("the node configurations changed over the operator upgrade:\nbefore %v\nafter  %v", u.Before, u.After)
		}
		t.Logf("operator upgrade to %s: %.1fs, leader %s -> %s, no revision made, node configurations unchanged", u.Image,
			u.Duration.Seconds(), u.OldLeader, u.NewLeader)
	})

	// An agent killed in the middle of an apply (the export change toggled; the first node's agent pod deleted
	// the moment it is assigned the revision): its successor finishes the apply, nothing is rolled back.
	t.Run("agent killed mid-apply under traffic", func(t *testing.T) {
		e, err := c.KillAgentMidApply(ctx, c.ToggleChange)
		if err != nil {
			t.Fatal(err)
		}
		checkChangeEvent(t, "agent killed mid-apply", e)
	})

	// The API server gone for a minute in the middle of a rollout (the export change toggled back): agents keep
	// forwarding, and once it is back the rollout completes; no revision is failed or rolled back.
	t.Run("API server down a minute under traffic", func(t *testing.T) {
		e, err := c.APIServerOutage(ctx, time.Minute, c.ToggleChange)
		if err != nil {
			t.Fatal(err)
		}
		checkChangeEvent(t, "API server outage", e)
	})

	t.Run("uninstall", func(t *testing.T) {
		foreign, err := c.PlantForeign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u, err := c.HelmUninstall(ctx, foreign)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range u.Left {
			t.Errorf("left after helm uninstall: %s", l)
		}
		for _, m := range u.ForeignMissing {
			t.Errorf("removed by helm uninstall although not ours: %s", m)
		}
		t.Logf("helm uninstall: %.1fs; nothing of ours left on %d nodes; foreign tc filter and XDP program kept; %d user resources kept with the CRDs",
			u.Duration.Seconds(), len(c.Nodes()), u.UserResources)
		if pn != nil && pn.Steady() != nil {
			left, err := pn.AfterUninstall(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range left {
				t.Errorf("the steady pod's network after helm uninstall: %s left", l)
			}
			t.Logf("helm uninstall removed the steady pod's network: no %s in it, eth0 back at the CNI's MTU, nothing of it on %s",
				"net1", pn.Steady().Node.Name)
		}
	})

	closed = true
	if err := c.Close(); err != nil {
		t.Errorf("teardown: %v", err)
	}
}

// checkTraffic: no flow through a node's eBPF router and no flow between nodes lost a packet during what, and no
// session of the route reflector went down.
func checkTraffic(t *testing.T, what string, tr cluster.EventTraffic) {
	t.Helper()
	for i, f := range tr.Nodes {
		t.Logf("%s, through node-%d's router: %s", what, i+1, f)
		if !f.Clean() || f.Lost != 0 {
			t.Errorf("%s: the flow through node-%d's eBPF router lost packets: %s", what, i+1, f)
		}
	}
	for _, cf := range tr.Cross {
		t.Logf("%s, between nodes %s -> %s: %s", what, cf.From, cf.To, cf.Flow)
		if !cf.Flow.Clean() || cf.Flow.Lost != 0 {
			t.Errorf("%s: the flow %s -> %s between nodes lost packets: %s", what, cf.From, cf.To, cf.Flow)
		}
	}
	if len(tr.Nodes) == 0 || len(tr.Cross) == 0 {
		t.Errorf("%s: %d flows through routers and %d between nodes ran, want both", what, len(tr.Nodes), len(tr.Cross))
	}
	if len(tr.SessionResets) > 0 {
		t.Errorf("%s: BGP sessions of the route reflector went down: %v", what, tr.SessionResets)
	}
}

// checkChangeEvent: the change rolled out to every node (Done, nothing failed or rolled back) and the traffic
// lost nothing while the event happened.
func checkChangeEvent(t *testing.T, what string, e *cluster.ChangeEvent) {
	t.Helper()
	t.Logf("%s: %s", what, e.Detail)
	checkTraffic(t, what, e.EventTraffic)
	r := e.Rollout
	if r.Phase != string(v1.RevisionDone) || r.FailedNode != "" || r.RolledBackTo != "" {
		t.Errorf("%s: revision %s ended %s (failed node %q, rolled back to %q): %s", what, r.Revision, r.Phase, r.FailedNode,
			r.RolledBackTo, r.Message)
	}
	for _, f := range cluster.NewFailures(e.Before, e.After) {
		t.Errorf("%s: a node recorded a failed revision: %s", what, f)
	}
	for name, n := range e.After {
		if n.Applied != r.Hash || n.Spec != r.Hash {
			t.Errorf("%s: %s runs %+v after the rollout, want %s assigned and applied", what, name, n, r.Hash)
		}
	}
	t.Logf("%s: %s Done on every node %.1fs after the change, order %v", what, cluster.ShortName(r.Revision),
		r.Duration().Seconds(), r.Order)
}

// hookSites are the attachments without their programs: interface, hook and link.
func hookSites(hooks []cluster.Hook) string {
	var s []string
	for _, h := range hooks {
		s = append(s, fmt.Sprintf("%s %s link %d", h.Interface, h.Kind, h.LinkID))
	}
	return strings.Join(s, "; ")
}

// hookTags are the program tags by attachment (interface and hook).
func hookTags(hooks []cluster.Hook) map[string]string {
	out := map[string]string{}
	for _, h := range hooks {
		out[h.Interface+" "+h.Kind] = h.Tag
	}
	return out
}

// tagChange summarises the tags before -> after, each distinct pair once.
func tagChange(before, after map[string]string) string {
	seen := map[string]bool{}
	var s []string
	for site, tag := range after {
		c := before[site] + " -> " + tag
		if !seen[c] {
			seen[c] = true
			s = append(s, c)
		}
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// buildImages writes image archives tagged tag (all of them, or names) as `make images` does; overlay is go
// build's -overlay file for the Go images ("": none).
func buildImages(t *testing.T, root, tag, overlay string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"run", "./hack/tools/imagebuild", "-out", dir, "-tag", tag, "-overlay", overlay}, names...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir
}

// checkPodNetwork: every tenant pod, unprivileged, has its interface in the network with its address and the tuned
// MTU (seen from inside), reaches a workload on another node through both nodes' eBPF routers, the webhook refuses
// the tenant's two overreaches naming the field, and each removal leaves the pod's node clean, object by object.
func checkPodNetwork(t *testing.T, pn *cluster.PodNetworking) {
	t.Helper()
	pods := map[string]*cluster.TenantPod{}
	for _, p := range pn.Pods {
		pods[p.Name] = p
	}
	for _, v := range pn.InPod {
		p := pods[v.Pod]
		switch {
		case v.CapEff != "0000000000000000":
			t.Errorf("%s: effective capabilities %s, want none", v.Pod, v.CapEff)
		case v.MTU["eth0"] != 1400:
			t.Errorf("%s: eth0 mtu %d inside the pod, want the tuned 1400", v.Pod, v.MTU["eth0"])
		case !v.Net1Up || v.MTU["net1"] != 1500 || v.Net1MAC != p.MAC.String():
			t.Errorf("%s: net1 up %v, mtu %d, mac %s: want up, the network's 1500, the agent's %s", v.Pod, v.Net1Up, v.MTU["net1"], v.Net1MAC, p.MAC)
		case len(v.Net1Addr) != 1 || v.Net1Addr[0] != p.Addr.String():
			t.Errorf("%s: net1 addresses %v, want the allocated %s alone", v.Pod, v.Net1Addr, p.Addr)
		}
		t.Logf("inside %s (CapEff %s): %s", v.Pod, v.CapEff, strings.Join(append(slices.Clone(v.Links), v.Addrs...), " | "))
	}
	if len(pn.InPod) != len(pn.Pods) {
		t.Errorf("looked into %d pods, want %d", len(pn.InPod), len(pn.Pods))
	}
	if len(pn.Connects) == 0 {
		t.Error("no connection made")
	}
	for _, cn := range pn.Connects {
		p := pods[cn.From]
		if !strings.HasSuffix(cn.Reply, " saw "+p.Addr.Addr().String()) {
			t.Errorf("%s -> %s: reply %q, want the pod's net1 address %s seen (routed, not NATed)", cn.From, cn.To, cn.Reply, p.Addr.Addr())
		}
		if cn.FromNode == cn.ToNode || cn.Forwarded[cn.FromNode] <= 0 || cn.Forwarded[cn.ToNode] <= 0 {
			t.Errorf("%s: want two nodes' eBPF routers forwarding (the request on %s, the reply on %s)", cn, cn.FromNode, cn.ToNode)
		}
		t.Logf("connect %s", cn)
	}
	for _, r := range pn.Refusals {
		if r.Err == nil || !(apierrors.IsForbidden(r.Err) || apierrors.IsInvalid(r.Err) || strings.Contains(r.Message, "denied the request")) ||
			!strings.Contains(r.Message, r.Field) {
			t.Errorf("%s: %s, want refused at admission naming %s", r.What, r.Message, r.Field)
		}
		t.Logf("refused: %s: %s", r.What, r.Message)
	}
	if len(pn.Refusals) != 2 {
		t.Errorf("%d refusals, want 2", len(pn.Refusals))
	}
	if len(pn.Removals) != 3 {
		t.Errorf("%d removals, want 3 (pod deleted, label removed, configs deleted)", len(pn.Removals))
	}
	for _, rm := range pn.Removals {
		for _, kind := range []string{"link ", "fdb ", "neighbour ", "record "} {
			if !slices.ContainsFunc(rm.Before, func(o string) bool { return strings.HasPrefix(o, kind) }) {
				t.Errorf("%s: before the removal %s had no %sobject on %s (%v): the check would prove nothing", rm.What, rm.Pod, kind, rm.Node, rm.Before)
			}
		}
		for _, l := range append(slices.Clone(rm.Left), rm.InPod...) {
			t.Errorf("%s (%s on %s): left %s", rm.What, rm.Pod, rm.Node, l)
		}
		t.Logf("%s (%s on %s): %d objects before (%s), none left %.1fs later", rm.What, rm.Pod, rm.Node, len(rm.Before),
			strings.Join(rm.Before, "; "), rm.Took.Seconds())
	}
	t.Logf("pod networking: every pod's net1 applied %.1fs after the tenant's configs; rollout of %s %.1fs", pn.Applied.Seconds(),
		cluster.PodNetworkName, pn.Rollout.Duration().Seconds())
	t.Run("vlan", func(t *testing.T) {
		if len(pn.VLAN.Entries) == 0 {
			t.Fatal("no status entry of the vlan config")
		}
		for _, e := range pn.VLAN.Entries {
			if pn.VLAN.Kernel {
				if !e.Applied || !slices.Contains(e.Interfaces, "vlan7") {
					t.Errorf("%s: %+v, want vlan7 applied (the kernel has 802.1Q)", e.Name, e)
				}
				continue
			}
			if e.Applied || e.Reason != podnet.ReasonNotSupported || !strings.Contains(e.Message, pn.VLAN.KernelReason) {
				t.Errorf("%s: %+v, want NotSupported with the kernel's reason %q", e.Name, e, pn.VLAN.KernelReason)
			}
			t.Logf("%s: vlan7 %s: %s", e.Name, e.Reason, e.Message)
		}
		if !pn.VLAN.Kernel {
			testreq.KernelLacks(t, "802.1Q VLAN devices (the pods' vlan interface is reported NotSupported, the rest applied)",
				errors.New(pn.VLAN.KernelReason))
		}
	})
}

// checkSteady: the steady pod has its interface (once: one host end, one address), the tuned MTU, its status
// entry applied, and reaches its target.
func checkSteady(t *testing.T, pn *cluster.PodNetworking, s *cluster.SteadyState, when string) {
	t.Helper()
	p := pn.Steady()
	if len(s.HostLinks) != 1 || s.HostLinks[0] != p.HostVeth || s.HostVethIndex == 0 {
		t.Errorf("%s: host links of the steady pod %v, want its host end %s alone", when, s.HostLinks, p.HostVeth)
	}
	if len(s.InPod.Net1Addr) != 1 || s.InPod.Net1Addr[0] != p.Addr.String() || s.InPod.MTU["eth0"] != 1400 || s.InPod.Ifindex["net1"] == 0 {
		t.Errorf("%s: inside the steady pod net1 %v (ifindex %d), eth0 mtu %d: want %s once and 1400", when, s.InPod.Net1Addr,
			s.InPod.Ifindex["net1"], s.InPod.MTU["eth0"], p.Addr)
	}
	if !s.Entry.Applied {
		t.Errorf("%s: the steady pod's status entry %+v, want applied", when, s.Entry)
	}
	if !strings.HasSuffix(s.Connect.Reply, " saw "+p.Addr.Addr().String()) || s.Connect.Forwarded[s.Connect.FromNode] <= 0 {
		t.Errorf("%s: %s: want an answer to the pod's address, forwarded by %s's router", when, s.Connect, s.Connect.FromNode)
	}
}

// checkAgentRollout checks an agent rollout (what) to other code under traffic: every node's flow through its eBPF
// router and every flow between nodes lost nothing, one node at a time, and - FRR running in its own DaemonSet - no
// BGP session of the route reflector went down. Every BPF attachment keeps its interface, hook and link, and its
// program was swapped for the new build's (another tag); wantTags (by node, then attachment) are the tags the new
// build runs when known (a downgrade's: those before the upgrade).
func checkAgentRollout(t *testing.T, u *cluster.Upgrade, what string, wantTags map[string]map[string]string) {
	t.Helper()
	for _, n := range u.Nodes {
		t.Logf("%s: %s -> %s, down %.1fs; flow %s", n.Node, n.OldPod, n.NewPod, n.Ready.Sub(n.Down).Seconds(), n.Flow)
		if !n.Flow.Clean() || n.Flow.Lost != 0 {
			t.Errorf("%s: the flow through its eBPF router lost packets during the %s: %s", n.Node, what, n.Flow)
		}
		if n.Flow.Sent < uint64(u.Duration.Seconds()*500) {
			t.Errorf("%s: only %d packets sent in %v", n.Node, n.Flow.Sent, u.Duration)
		}
		if len(n.Before) == 0 {
			t.Errorf("%s: no BPF program attached before the %s", n.Node, what)
		}
		if got, want := hookSites(n.After), hookSites(n.Before); got != want {
			t.Errorf("%s: BPF attachments moved over the %s (want the same interfaces, hooks and links):\nbefore %s\nafter  %s", n.Node, what, want, got)
		}
		before, after := hookTags(n.Before), hookTags(n.After)
		for site, tag := range after {
			switch want, known := wantTags[n.Node][site]; {
			case tag == before[site]:
				t.Errorf("%s: %s runs the program of before the %s (tag %s): the new build's router was not swapped in", n.Node, site, what, tag)
			case known && tag != want:
				t.Errorf("%s: %s runs tag %s after the %s, want %s", n.Node, site, tag, what, want)
			}
		}
		t.Logf("%s: %d attachments, same links, programs swapped: %s", n.Node, len(after), tagChange(before, after))
	}
	if o := u.Overlapping(); len(o) > 0 {
		t.Errorf("agents of several nodes were down at once: %v (want one node at a time)", o)
	}
	for _, cf := range u.Cross {
		t.Logf("between nodes %s -> %s: %s", cf.From, cf.To, cf.Flow)
		if !cf.Flow.Clean() || cf.Flow.Lost != 0 {
			t.Errorf("the flow %s -> %s between nodes lost packets during the %s: %s", cf.From, cf.To, what, cf.Flow)
		}
	}
	if len(u.Cross) == 0 {
		t.Errorf("no flow between nodes ran through the %s", what)
	}
	// FRR runs in its own DaemonSet (the chart's default): a new agent leaves it and its sessions alone.
	if len(u.SessionResets) > 0 {
		t.Errorf("BGP sessions of the route reflector toward the nodes went down during the %s: %v", what, u.SessionResets)
	}
	t.Logf("%s: helm upgrade to %s: %.1fs for %d nodes; BGP sessions reset at the route reflector: %d; every BGP session Established %.1fs after the last new pod was ready",
		what, u.Image, u.Duration.Seconds(), len(u.Nodes), len(u.SessionResets), u.BGPBack.Seconds())
}
