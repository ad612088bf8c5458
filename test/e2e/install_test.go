package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/cluster"
	testenv "github.com/network-operator/network-operator/internal/testenv"
	"github.com/network-operator/network-operator/internal/testreq"
)

// installTimeout bounds the helm form: images, nodes, install, scenario, node scope, upgrade, uninstall.
const installTimeout = 15 * time.Minute

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
	images := buildImages(t, root, tag)
	upgrade := buildImages(t, root, upgradeTag, "network-agent")

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

	t.Run("upgrade under traffic", func(t *testing.T) {
		u, err := c.UpgradeAgents(ctx, filepath.Join(upgrade, "network-agent.tar"), upgradeTag)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range u.Nodes {
			t.Logf("%s: %s -> %s, down %.1fs; flow %s", n.Node, n.OldPod, n.NewPod, n.Ready.Sub(n.Down).Seconds(), n.Flow)
			if !n.Flow.Clean() || n.Flow.Lost != 0 {
				t.Errorf("%s: the flow through its eBPF router lost packets during the upgrade: %s", n.Node, n.Flow)
			}
			if n.Flow.Sent < uint64(u.Duration.Seconds()*500) {
				t.Errorf("%s: only %d packets sent in %v", n.Node, n.Flow.Sent, u.Duration)
			}
			if len(n.Before) == 0 {
				t.Errorf("%s: no BPF program attached before the upgrade", n.Node)
			}
			if got, want := hookList(n.After), hookList(n.Before); got != want {
				t.Errorf("%s: BPF attachments changed over the upgrade (want the same link and program IDs):\nbefore %s\nafter  %s", n.Node, want, got)
			}
		}
		if o := u.Overlapping(); len(o) > 0 {
			t.Errorf("agents of several nodes were down at once: %v (want one node at a time)", o)
		}
		t.Logf("helm upgrade to %s: %.1fs for %d nodes; every BGP session Established again %.1fs after the last new pod was ready",
			upgradeTag, u.Duration.Seconds(), len(u.Nodes), u.BGPBack.Seconds())
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
	})

	closed = true
	if err := c.Close(); err != nil {
		t.Errorf("teardown: %v", err)
	}
}

func hookList(hooks []cluster.Hook) string {
	var s []string
	for _, h := range hooks {
		s = append(s, h.String())
	}
	return strings.Join(s, "; ")
}

// buildImages writes image archives tagged tag (all of them, or names) as `make images` does.
func buildImages(t *testing.T, root, tag string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"run", "./hack/tools/imagebuild", "-out", dir, "-tag", tag}, names...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir
}
