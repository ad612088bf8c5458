// Package e2e_test runs the demo's scenario (test/harness/cluster) headless, with assertions: the whole system on
// this machine - control plane, operator, namespace nodes with agents and FRR, EVPN fabric, workloads,
// Prometheus - through rollouts, connectivity, per-VRF counters, a change and a rolled-back failure.
package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/test/harness/cluster"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// scenarioTimeout bounds the whole scenario; it normally takes about a minute.
const scenarioTimeout = 8 * time.Minute

func TestDemoScenario(t *testing.T) {
	testreq.Root(t)    // network namespaces, BPF, FRR
	frrtest.Require(t) // the cluster runs it from $NETOP_FRR_ROOT
	_, err := os.Stat("/usr/bin/prometheus")
	testreq.Need(t, "/usr/bin/prometheus (make deps installs the Debian package prometheus)", err)
	_, err = testenv.AssetsDir()
	testreq.Available(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinaries(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	out := &lineLogger{t: t}
	c, err := cluster.New(cluster.Options{Nodes: 3, RepoRoot: root, Operator: filepath.Join(bin, "network-operator"),
		Agent: filepath.Join(bin, "network-agent"), Out: out})
	if err != nil {
		t.Fatal(err) // a missing binary or package is named, with how to get it
	}
	prefix, pins, work := c.NetnsPrefix(), c.PinRoot(), c.WorkDir()
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

	closed = true
	if err := c.Close(); err != nil {
		t.Errorf("teardown: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join("/run/netns", prefix+"*"))
	if len(left) > 0 {
		t.Errorf("namespaces left behind: %v", left)
	}
	for _, p := range []string{pins, work} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
}

// checkScenario asserts what the demo's scenario must show, whichever way the system was installed.
func checkScenario(t *testing.T, c *cluster.Cluster, res *cluster.Results) {
	t.Helper()
	nodes := []string{"node-1", "node-2", "node-3"}
	small := c.SmallMTUNode().Name

	t.Run("webhook", func(t *testing.T) {
		if !strings.Contains(res.WebhookDenial, "denied the request") || !strings.Contains(res.WebhookDenial, cluster.DemoInvalidGateway) ||
			!strings.Contains(res.WebhookDenial, "10.40.0.1/24") {
			t.Errorf("webhook denial %q: want the webhook refusing gateway %s, suggesting 10.40.0.1/24", res.WebhookDenial, cluster.DemoInvalidGateway)
		}
	})
	t.Run("kernel", func(t *testing.T) {
		if !res.VRFDevices && res.VRFReason == "" {
			t.Error("no VRF devices, but no reason given")
		}
	})
	t.Run("rollouts", func(t *testing.T) {
		for _, r := range []struct {
			name string
			got  *cluster.Rollout
		}{{"underlay", res.Underlay}, {"samples", res.Initial}, {"change", res.Change}} {
			if r.got.Phase != string(v1.RevisionDone) {
				t.Errorf("%s: %s ended %s (%s)", r.name, r.got.Revision, r.got.Phase, r.got.Message)
			}
			checkOrder(t, r.name, r.got, nodes)
			for _, n := range nodes {
				if _, ok := r.got.Applied[n]; !ok {
					t.Errorf("%s: %s never applied %s", r.name, n, r.got.Revision)
				}
			}
		}
		seqs := []int64{res.Underlay.Sequence, res.Initial.Sequence, res.Change.Sequence, res.Broken.Sequence}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Errorf("revision sequences %v: want strictly increasing", seqs)
			}
		}
	})
	t.Run("connectivity", func(t *testing.T) {
		checkMatrix(t, "after the samples", res.Matrix)
		checkMatrix(t, "after the rollback", res.AfterRollback)
	})
	t.Run("counters", func(t *testing.T) {
		// Every routed echo request is forwarded by the sender's node, every reply by the receiver's: the
		// measurement alone (3 requests per pair) gives 6 forwarded packets per routed pair.
		routed := map[string]int{}
		for i, row := range res.Matrix.Cells {
			for j, cell := range row {
				if i != j && cell.Path == cluster.PathRouted {
					routed[cell.From.VRF]++
				}
			}
		}
		if len(routed) < 2 {
			t.Fatalf("routed pairs per VRF %v: want routed pairs in every tenant", routed)
		}
		for vrf, pairs := range routed {
			if got, min := res.Counters.Forwarded(vrf), float64(6*pairs); got < min {
				t.Errorf("prometheus: %v packets forwarded in %s, want >= %v (%d routed pairs)", got, vrf, min, pairs)
			}
			if res.Counters.Direct[vrf] != res.Counters.Forwarded(vrf) {
				t.Errorf("%s: prometheus %v, agents' /metrics %v", vrf, res.Counters.Forwarded(vrf), res.Counters.Direct[vrf])
			}
		}
		for _, s := range res.Counters.ByVRFAction {
			if s.Labels["action"] == "dropped" {
				t.Errorf("dropped packets in %v: %v (the routers are not strict)", s.Labels, s.Value)
			}
		}
	})
	t.Run("change", func(t *testing.T) {
		for _, n := range nodes {
			lines := res.ChangeFRR[n]
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "permit 10.250.0.0/16") }) {
				t.Errorf("FRR of %s lacks the exported prefix: %q", n, lines)
			}
		}
	})
	t.Run("rollback", func(t *testing.T) {
		b := res.Broken
		if b.Phase != string(v1.RevisionFailed) || b.FailedNode != small {
			t.Fatalf("broken change: %s ended %s on %q, want Failed on %s", b.Revision, b.Phase, b.FailedNode, small)
		}
		if b.RolledBackTo != res.Change.Revision {
			t.Errorf("rolled back to %s, want the last good revision %s", b.RolledBackTo, res.Change.Revision)
		}
		if !strings.Contains(b.FailReason, "mtu") || !strings.Contains(b.FailReason, res.BrokenVXLAN) {
			t.Errorf("failure reason %q: want the MTU refusal of %s", b.FailReason, res.BrokenVXLAN)
		}
		// The nodes before the failing one took the revision first (the rollout went on until the failure).
		for _, n := range nodes {
			if n == small {
				break
			}
			if _, ok := b.Applied[n]; !ok {
				t.Errorf("%s never applied %s before %s failed it", n, b.Revision, small)
			}
		}
		checkOrder(t, "broken change", b, nodes)
		for _, n := range nodes {
			if got := res.MTUAfter[n]; got != 1500 {
				t.Errorf("%s on %s has MTU %d after the rollback, want 1500", res.BrokenVXLAN, n, got)
			}
		}
	})

}

func logTimes(t *testing.T, res *cluster.Results, scenario time.Duration) {
	t.Logf("time to converge: underlay %.1fs after the operator started; samples on all nodes %.1fs after apply, "+
		"every path %.1fs after the workloads were plugged in; change %.1fs; broken change rolled back %.1fs; "+
		"start-up %.1fs, scenario %.1fs", res.UnderlayUp.Seconds(), res.Initial.Duration().Seconds(), res.Matrix.Converged.Seconds(),
		res.Change.Duration().Seconds(), res.Broken.Duration().Seconds(), res.Startup.Seconds(), scenario.Seconds())
}

// checkOrder asserts the rollout went node by node in name order: each node got the revision only after the
// node before it had applied it (max-unavailable 1).
func checkOrder(t *testing.T, what string, r *cluster.Rollout, nodes []string) {
	t.Helper()
	want := nodes
	if r.Phase == string(v1.RevisionFailed) {
		want = nodes[:slices.Index(nodes, r.FailedNode)+1]
	}
	if !slices.Equal(r.Order, want) {
		t.Errorf("%s: nodes got %s in the order %v, want %v", what, r.Revision, r.Order, want)
	}
	assigned := map[string]time.Time{}
	for _, ev := range r.Events {
		if ev.Hash == r.Hash && ev.State == cluster.StateApplying {
			if _, ok := assigned[ev.Node]; !ok {
				assigned[ev.Node] = ev.At
			}
		}
	}
	for i := 1; i < len(r.Order); i++ {
		prev, cur := r.Order[i-1], r.Order[i]
		applied, ok := r.Applied[prev]
		if !ok || assigned[cur].Before(applied) {
			t.Errorf("%s: %s was assigned %s before %s had applied it", what, cur, r.Revision, prev)
		}
	}
}

func checkMatrix(t *testing.T, when string, m *cluster.Matrix) {
	t.Helper()
	for _, c := range m.Unexpected() {
		t.Errorf("%s: %s -> %s (%s): %d of %d replies", when, c.From.Label(), c.To.Label(), c.Path, c.Received, c.Sent)
	}
	// With 3 nodes and 2 networks per tenant: per tenant 2 workloads share a network (2 bridged pairs), the third
	// is on the other network (4 routed pairs); every pair across tenants is blocked.
	for path, want := range map[string]int{cluster.PathBridged: 4, cluster.PathRouted: 8, cluster.PathBlocked: 18} {
		if got, _ := m.Count(path); got != want {
			t.Errorf("%s: %d %s pairs, want %d", when, got, path, want)
		}
	}
}

// buildBinaries builds the operator and the agent as `make demo` does.
func buildBinaries(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	for _, pkg := range []string{"network-operator", "network-agent"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", pkg, err, out)
		}
	}
	return dir
}

// lineLogger sends the scenario's output to the test log, line by line.
type lineLogger struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.t.Log(strings.TrimRight(line, "\n"))
	}
}
