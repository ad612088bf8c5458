package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
)

// seededAgents gives node i the i-th seeded delay.
func seededAgents(seed uint64) func(string) *behaviour {
	delay := delays(seed)
	return func(node string) *behaviour {
		var i int
		fmt.Sscanf(node, "node-%d", &i)
		return &behaviour{delay: delay(i)}
	}
}

func names(count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = nodeName(i)
	}
	return out
}

// checkAllConfirmed asserts every node's configuration carries hash and is confirmed.
func checkAllConfirmed(t *testing.T, nodes int, hash string) map[string]v1.NodeNetworkConfig {
	t.Helper()
	nncs := listNNCs(t)
	if len(nncs) != nodes {
		t.Fatalf("%d NodeNetworkConfigs, want %d", len(nncs), nodes)
	}
	for name, n := range nncs {
		if n.Spec.Revision != hash || !confirmed(&n) {
			t.Fatalf("node %s: spec %.12s applied %.12s (want %.12s), confirmed %t", name, n.Spec.Revision, n.Status.AppliedRevision, hash, confirmed(&n))
		}
		if n.Spec.ExpectedMapVersion != n.Spec.MapVersion() {
			t.Fatalf("node %s: expectedMapVersion %s is not MapVersion() %s", name, n.Spec.ExpectedMapVersion, n.Spec.MapVersion())
		}
	}
	return nncs
}

// rollout100 runs one content change through 100 nodes and returns how long it took from the change
// until the revision was Done.
func rollout100(t *testing.T, ag *agents, seq int64, vni int32) (*v1.NetworkConfigRevision, time.Duration) {
	t.Helper()
	env := shared.Get(t)
	start := time.Now()
	if vni == 0 {
		if err := env.Client.Create(context.Background(), vrfConfig("blue", "blue", 100, 10)); err != nil {
			t.Fatal(err)
		}
	} else {
		setVNI(t, "blue", vni)
	}
	rev := waitRevision(t, seq)
	rev = waitPhase(t, 2*time.Minute, rev.Name, v1.RevisionDone)
	took := time.Since(start)
	if rev.Status.Total != 100 || rev.Status.Updated != 100 || rev.Status.Pending != 0 || rev.Status.Failed != 0 {
		t.Fatalf("revision %s status %+v", rev.Name, rev.Status)
	}
	checkAllConfirmed(t, 100, rev.Spec.Revision)
	if got := ag.assignmentOrder(rev.Spec.Revision); !slices.Equal(got, names(100)) {
		t.Fatalf("assignment order of %s:\n%v\nwant by name", rev.Name, got)
	}
	return rev, took
}

// TestRollout100Nodes rolls two revisions over 100 simulated nodes with maxUnavailable 10%.
func TestRollout100Nodes(t *testing.T) {
	resetCluster(t)
	createNodes(t, 100)
	ag := startAgents(t, seededAgents(42))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromString("10%")
	op := startOperator(t, opts, runBoth)

	empty := waitRevision(t, 1)
	waitPhase(t, 2*time.Minute, empty.Name, v1.RevisionDone)
	ag.peakUnconfirmed()

	for i, vni := range []int32{0, 2000} {
		rev, took := rollout100(t, ag, int64(i+2), vni)
		peak := ag.peakUnconfirmed()
		t.Logf("revision %s: 100 nodes in %s (change to Done), peak %d nodes in flight", rev.Name, took.Round(time.Millisecond), peak)
		if p := ag.peakFor(rev.Spec.Revision); p > peak {
			t.Fatalf("per-revision peak %d above the overall peak %d", p, peak)
		}
		if peak > 10 {
			t.Fatalf("%d nodes in flight at once, maxUnavailable is 10", peak)
		}
		// Nodes can confirm before the tenth of a wave is written, so the peak seen in the API may stay
		// under 10; a serial rollout would show 1.
		if peak < 5 {
			t.Errorf("at most %d nodes in flight: the rollout did not run nodes in parallel", peak)
		}
	}
	// Every node was written exactly once per revision: no churn.
	for name, n := range listNNCs(t) {
		if n.Generation != 3 {
			t.Errorf("node %s: generation %d, want 3 (one write per revision)", name, n.Generation)
		}
	}
	if got := counterValue(t, op.metrics.NodesUpdated.WithLabelValues("rollout")); got != 300 {
		t.Errorf("node updates metric %v, want 300", got)
	}
	if got := counterValue(t, op.metrics.RolloutNodes.WithLabelValues("updated")); got != 100 {
		t.Errorf("updated nodes gauge %v, want 100", got)
	}
}

// setAnnotation sets (or with value "" removes) an annotation on a revision.
func setRevisionAnnotation(t *testing.T, name, key, value string) {
	t.Helper()
	env := shared.Get(t)
	rev := getRevision(t, name)
	orig := rev.DeepCopy()
	if value == "" {
		delete(rev.Annotations, key)
	} else {
		metav1.SetMetaDataAnnotation(&rev.ObjectMeta, key, value)
	}
	if err := env.Client.Patch(context.Background(), rev, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// startRollout creates count nodes, agents and the operator, and rolls out content A (VRF blue, VNI
// 100); it returns A's revision once Done.
func startRollout(t *testing.T, count int, opts Options, behaviourOf func(string) *behaviour) (*operator, *agents, *v1.NetworkConfigRevision) {
	t.Helper()
	env := shared.Get(t)
	resetCluster(t)
	createNodes(t, count)
	if err := env.Client.Create(context.Background(), vrfConfig("blue", "blue", 100, 10)); err != nil {
		t.Fatal(err)
	}
	ag := startAgents(t, behaviourOf)
	op := startOperator(t, opts, runBoth)
	var a *v1.NetworkConfigRevision
	waitFor(t, 30*time.Second, "revision A", func() (bool, error) {
		a = newestRevision(listRevisions(t))
		return a != nil && len(a.Spec.VRF) == 1, nil
	})
	a = waitPhase(t, time.Minute, a.Name, v1.RevisionDone)
	ag.peakUnconfirmed()
	return op, ag, a
}

// TestFailingNodeRollsBack: a node fails revision B; the rollout stops within maxUnavailable, B is
// Failed, and every node that got B is rolled back to A.
func TestFailingNodeRollsBack(t *testing.T) {
	const nodes, maxUnavailable, failing = 20, 3, 7
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(maxUnavailable)
	delay := delays(7)
	var aHash string
	op, ag, a := startRollout(t, nodes, opts, func(node string) *behaviour {
		var i int
		fmt.Sscanf(node, "node-%d", &i)
		b := &behaviour{delay: delay(i)}
		if i == failing {
			b.fail = func(rev string) bool { return aHash != "" && rev != aHash }
		}
		return b
	})
	aHash = a.Spec.Revision // read by the failing agent only after A is done

	setVNI(t, "blue", 200)
	b := waitRevision(t, a.Spec.Sequence+1)
	b = waitPhase(t, time.Minute, b.Name, v1.RevisionFailed)
	if b.Status.FailedNode != nodeName(failing) || !strings.Contains(b.Status.Message, "ApplyFailed") ||
		!strings.Contains(b.Status.Message, "simulated apply failure") || b.Status.Time == nil {
		t.Fatalf("failed revision status: node %q message %q time %v", b.Status.FailedNode, b.Status.Message, b.Status.Time)
	}

	// The previous revision is the target again and every node runs it.
	waitFor(t, time.Minute, "every node back on A", func() (bool, error) {
		nncs := listNNCs(t)
		for _, n := range nncs {
			if n.Spec.Revision != aHash || !confirmed(&n) {
				return false, fmt.Errorf("node %s on %.12s, confirmed %t", n.Name, n.Spec.Revision, confirmed(&n))
			}
		}
		return len(nncs) == nodes, nil
	})
	waitPhase(t, time.Minute, a.Name, v1.RevisionDone)

	got := ag.assignmentOrder(b.Spec.Revision)
	if !slices.Contains(got, nodeName(failing)) {
		t.Fatalf("failing node never received B: %v", got)
	}
	// Nodes go in name order and at most maxUnavailable are unconfirmed, the failed one included: no node
	// after failing+maxUnavailable-1 can have received B.
	if want := names(failing + maxUnavailable); len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
		t.Fatalf("nodes that received B: %v, want a prefix of %v", got, want)
	}
	// (The rollback itself is not paced: every node carrying B is reverted at once.)
	if peak := ag.peakFor(b.Spec.Revision); peak > maxUnavailable {
		t.Fatalf("%d nodes on B unconfirmed at once, maxUnavailable %d", peak, maxUnavailable)
	}
	t.Logf("B reached %d nodes before it failed on %s; all rolled back", len(got), nodeName(failing))

	if v := counterValue(t, op.metrics.RolloutFailures.WithLabelValues("ApplyFailed")); v != 1 {
		t.Errorf("rollout failures metric %v, want 1", v)
	}
	if v := counterValue(t, op.metrics.Rollbacks); v != 1 {
		t.Errorf("rollbacks metric %v, want 1", v)
	}
	if v := counterValue(t, op.metrics.NodesUpdated.WithLabelValues("rollback")); int(v) != len(got) {
		t.Errorf("rollback node updates %v, want %d", v, len(got))
	}
	waitFor(t, 30*time.Second, "RolloutFailed and RollingBack events", func() (bool, error) {
		return slices.Contains(eventReasons(t, b.Name), "RolloutFailed") && slices.Contains(eventReasons(t, a.Name), "RollingBack"), nil
	})
	// The failed content is not retried: the newest revision stays B.
	if newest := newestRevision(listRevisions(t)); newest.Name != b.Name {
		t.Fatalf("newest revision %s, want the failed %s", newest.Name, b.Name)
	}
}

// TestWrongMapVersionIsNotDone: a node reporting the right revision with a wrong map version is not done.
func TestWrongMapVersionIsNotDone(t *testing.T) {
	const nodes, wrong = 5, 2
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(nodes)
	_, ag, a := startRollout(t, nodes, opts, seededAgents(3))
	ag.setBehaviour(nodeName(wrong), func(b *behaviour) { b.wrongMapVersion = true })

	setVNI(t, "blue", 300)
	b := waitRevision(t, a.Spec.Sequence+1)
	waitFor(t, time.Minute, "the other nodes confirmed and counted", func() (bool, error) {
		rev := getRevision(t, b.Name)
		return rev.Status.Updated == nodes-1, fmt.Errorf("status %+v", rev.Status)
	})
	rev := getRevision(t, b.Name)
	n := listNNCs(t)[nodeName(wrong)]
	if rev.Status.Phase != v1.RevisionRolling || rev.Status.Pending != 1 || n.Status.AppliedRevision != b.Spec.Revision {
		t.Fatalf("revision phase %s pending %d; node applied %.12s (want %.12s) with map version %.12s",
			rev.Status.Phase, rev.Status.Pending, n.Status.AppliedRevision, b.Spec.Revision, n.Status.MapVersion)
	}

	ag.setBehaviour(nodeName(wrong), func(b *behaviour) { b.wrongMapVersion = false })
	waitPhase(t, time.Minute, b.Name, v1.RevisionDone)
}

// TestPauseAndResume: a paused rollout assigns no node, and finishes once resumed.
func TestPauseAndResume(t *testing.T) {
	const nodes = 12
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(2)
	slow := func(string) *behaviour { return &behaviour{delay: 150 * time.Millisecond} }
	_, ag, a := startRollout(t, nodes, opts, slow)

	setVNI(t, "blue", 400)
	b := waitRevision(t, a.Spec.Sequence+1)
	waitFor(t, time.Minute, "the rollout under way", func() (bool, error) {
		return getRevision(t, b.Name).Status.Updated >= 2, nil
	})
	setRevisionAnnotation(t, b.Name, AnnotationPaused, "true")
	waitFor(t, 30*time.Second, "Paused condition", func() (bool, error) {
		return meta.IsStatusConditionTrue(getRevision(t, b.Name).Status.Conditions, ConditionPaused), nil
	})
	// Every assignment made before the pause was observed is visible now. Wait until those nodes
	// confirmed and the controller counted them (it has reconciled since, still paused).
	assigned := ag.assignmentOrder(b.Spec.Revision)
	waitFor(t, time.Minute, "the assigned nodes confirmed and counted", func() (bool, error) {
		return int(getRevision(t, b.Name).Status.Updated) == len(assigned), nil
	})
	if now := ag.assignmentOrder(b.Spec.Revision); !slices.Equal(now, assigned) || len(assigned) >= nodes {
		t.Fatalf("while paused: assigned %v, before %v (of %d nodes)", now, assigned, nodes)
	}
	if rev := getRevision(t, b.Name); rev.Status.Phase != v1.RevisionRolling {
		t.Fatalf("paused revision phase %s", rev.Status.Phase)
	}
	t.Logf("paused with %d of %d nodes updated", len(assigned), nodes)

	setRevisionAnnotation(t, b.Name, AnnotationPaused, "")
	rev := waitPhase(t, time.Minute, b.Name, v1.RevisionDone)
	if meta.IsStatusConditionTrue(rev.Status.Conditions, ConditionPaused) {
		t.Fatal("Paused condition still True after resuming")
	}
	if got := ag.assignmentOrder(b.Spec.Revision); !slices.Equal(got, names(nodes)) {
		t.Fatalf("assignment order %v", got)
	}
}

// TestNodeJoinsAndLeaves: a node added mid-rollout receives the target; a deleted node's config is
// collected.
func TestNodeJoinsAndLeaves(t *testing.T) {
	env := shared.Get(t)
	const nodes = 10
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(2)
	slow := func(string) *behaviour { return &behaviour{delay: 150 * time.Millisecond} }
	op, _, a := startRollout(t, nodes, opts, slow)

	setVNI(t, "blue", 500)
	b := waitRevision(t, a.Spec.Sequence+1)
	waitFor(t, time.Minute, "the rollout under way", func() (bool, error) {
		return getRevision(t, b.Name).Status.Updated >= 1, nil
	})
	createNode(t, "node-new", nil, true)
	rev := waitPhase(t, time.Minute, b.Name, v1.RevisionDone)
	if rev.Status.Total != nodes+1 || rev.Status.Updated != nodes+1 {
		t.Fatalf("status %+v, want %d nodes updated", rev.Status, nodes+1)
	}
	if n := listNNCs(t)["node-new"]; n.Spec.Revision != b.Spec.Revision || !confirmed(&n) {
		t.Fatalf("new node on %.12s, confirmed %t", n.Spec.Revision, confirmed(&n))
	}

	gone := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName(3)}}
	if err := env.Client.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the deleted node's config collected", func() (bool, error) {
		_, ok := listNNCs(t)[nodeName(3)]
		return !ok && getRevision(t, b.Name).Status.Total == nodes, nil
	})
	if v := counterValue(t, op.metrics.NodeConfigsCollected); v != 1 {
		t.Errorf("collected metric %v, want 1", v)
	}
}

// TestNotReadyNodeIsReportedNotCounted: a NotReady node is held back and named, never counted as done.
func TestNotReadyNodeIsReportedNotCounted(t *testing.T) {
	env := shared.Get(t)
	const nodes, down = 4, 1
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(nodes)
	_, _, a := startRollout(t, nodes, opts, seededAgents(5))
	var n corev1.Node
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: nodeName(down)}, &n); err != nil {
		t.Fatal(err)
	}
	setNodeReady(t, &n, false)

	setVNI(t, "blue", 600)
	b := waitRevision(t, a.Spec.Sequence+1)
	waitFor(t, time.Minute, "the Ready nodes updated", func() (bool, error) {
		rev := getRevision(t, b.Name)
		return rev.Status.Updated == nodes-1, fmt.Errorf("status %+v", rev.Status)
	})
	rev := getRevision(t, b.Name)
	if rev.Status.Phase != v1.RevisionRolling || !strings.Contains(rev.Status.Message, "NotReady") ||
		!strings.Contains(rev.Status.Message, nodeName(down)) {
		t.Fatalf("status %+v, want Rolling with the NotReady node named", rev.Status)
	}
	if nnc := listNNCs(t)[nodeName(down)]; nnc.Spec.Revision != a.Spec.Revision {
		t.Fatalf("NotReady node got %.12s, want it held on A", nnc.Spec.Revision)
	}

	setNodeReady(t, &n, true)
	waitPhase(t, time.Minute, b.Name, v1.RevisionDone)
	checkAllConfirmed(t, nodes, b.Spec.Revision)
}

// TestProgressDeadline: a node that never confirms fails the revision after the deadline, and the
// rollback brings it back.
func TestProgressDeadline(t *testing.T) {
	const nodes, silent = 3, 1
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(nodes)
	opts.ProgressDeadline = 2 * time.Second
	var aHash string
	op, _, a := startRollout(t, nodes, opts, func(node string) *behaviour {
		b := &behaviour{delay: 20 * time.Millisecond}
		if node == nodeName(silent) {
			b.silent = func(rev string) bool { return aHash != "" && rev != aHash }
		}
		return b
	})
	aHash = a.Spec.Revision

	setVNI(t, "blue", 700)
	b := waitRevision(t, a.Spec.Sequence+1)
	b = waitPhase(t, time.Minute, b.Name, v1.RevisionFailed)
	if b.Status.FailedNode != nodeName(silent) || !strings.Contains(b.Status.Message, "ProgressDeadlineExceeded") {
		t.Fatalf("status %+v", b.Status)
	}
	waitPhase(t, time.Minute, a.Name, v1.RevisionDone)
	checkAllConfirmed(t, nodes, aHash)
	if v := counterValue(t, op.metrics.RolloutFailures.WithLabelValues("ProgressDeadlineExceeded")); v != 1 {
		t.Errorf("deadline failures metric %v, want 1", v)
	}
}

// TestTopologyGroups: with a topology label, zones roll one after another, in zone then name order.
func TestTopologyGroups(t *testing.T) {
	env := shared.Get(t)
	resetCluster(t)
	zones := map[string]string{"node-000": "c", "node-001": "b", "node-002": "a", "node-003": "c", "node-004": "a", "node-005": "b"}
	for name, zone := range zones {
		createNode(t, name, map[string]string{"topology.kubernetes.io/zone": zone}, true)
	}
	if err := env.Client.Create(context.Background(), vrfConfig("blue", "blue", 100, 10)); err != nil {
		t.Fatal(err)
	}
	ag := startAgents(t, seededAgents(11))
	opts := testOptions()
	opts.TopologyLabel = "topology.kubernetes.io/zone"
	opts.MaxUnavailable = intstr.FromInt32(3) // more than a zone: the zone boundary is what limits
	startOperator(t, opts, runBoth)
	var rev *v1.NetworkConfigRevision
	waitFor(t, 30*time.Second, "revision A", func() (bool, error) {
		rev = newestRevision(listRevisions(t))
		return rev != nil && len(rev.Spec.VRF) == 1, nil
	})
	waitPhase(t, time.Minute, rev.Name, v1.RevisionDone)
	want := []string{"node-002", "node-004", "node-001", "node-005", "node-000", "node-003"}
	if got := ag.assignmentOrder(rev.Spec.Revision); !slices.Equal(got, want) {
		t.Fatalf("order %v, want zone by zone %v", got, want)
	}
	if peak := ag.peakUnconfirmed(); peak > 2 {
		t.Fatalf("%d nodes unconfirmed at once: zones overlapped", peak)
	}
}

// TestPruneRevisions keeps the target, the last good revision and the newest few.
func TestPruneRevisions(t *testing.T) {
	opts := testOptions()
	opts.KeepRevisions = 2
	opts.MaxUnavailable = intstr.FromInt32(3)
	op, _, a := startRollout(t, 3, opts, func(string) *behaviour { return &behaviour{delay: 5 * time.Millisecond} })
	last := a
	for i := range 4 {
		setVNI(t, "blue", int32(800+i))
		last = waitRevision(t, last.Spec.Sequence+1)
		waitPhase(t, time.Minute, last.Name, v1.RevisionDone)
	}
	waitFor(t, 30*time.Second, "old revisions pruned", func() (bool, error) {
		revs := listRevisions(t)
		return len(revs) == 2, fmt.Errorf("%d revisions", len(revs))
	})
	revs := listRevisions(t)
	slices.SortFunc(revs, func(x, y v1.NetworkConfigRevision) int { return int(y.Spec.Sequence - x.Spec.Sequence) })
	if revs[0].Name != last.Name || revs[1].Spec.Sequence != last.Spec.Sequence-1 {
		t.Fatalf("kept %s and %s, want the newest two ending in %s", revs[0].Name, revs[1].Name, last.Name)
	}
	if v := counterValue(t, op.metrics.RevisionsPruned); v < 3 {
		t.Errorf("pruned metric %v, want >= 3", v)
	}
	// Superseded revisions are marked so.
	if revs[1].Status.Phase != v1.RevisionSuperseded || !meta.IsStatusConditionTrue(revs[1].Status.Conditions, ConditionRolledOut) {
		t.Errorf("previous revision phase %s conditions %v", revs[1].Status.Phase, revs[1].Status.Conditions)
	}
}

// TestInvalidContentFailsBeforeAnyNode: content that cannot be built for a node fails the revision
// before any node receives it; the previous revision stays.
func TestInvalidContentFailsBeforeAnyNode(t *testing.T) {
	env := shared.Get(t)
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(2)
	op, ag, a := startRollout(t, 4, opts, seededAgents(9))

	// VRF green exists but is selected on no node (a Layer2 with a VRF no VRFRouteConfiguration defines is held
	// back instead, see TestApplyOrder), so a network routed in it cannot be built for any node.
	green := vrfConfig("green", "green", 3010, 10)
	green.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"no-such-label": "x"}}
	if err := env.Client.Create(context.Background(), green); err != nil {
		t.Fatal(err)
	}
	a = waitPhase(t, 30*time.Second, waitRevision(t, a.Spec.Sequence+1).Name, v1.RevisionDone)
	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	l2.Spec.ID, l2.Spec.VNI, l2.Spec.VRF = 10, 5010, "green"
	if err := env.Client.Create(context.Background(), l2); err != nil {
		t.Fatal(err)
	}
	b := waitRevision(t, a.Spec.Sequence+1)
	b = waitPhase(t, 30*time.Second, b.Name, v1.RevisionFailed)
	if b.Status.FailedNode != nodeName(0) || !strings.Contains(b.Status.Message, ReasonInvalidForNode) ||
		!strings.Contains(b.Status.Message, `layer2[web].vrf: Invalid value: "green"`) {
		t.Fatalf("status %+v", b.Status)
	}
	if got := ag.assignmentOrder(b.Spec.Revision); len(got) != 0 {
		t.Fatalf("nodes received the invalid revision: %v", got)
	}
	if rev := getRevision(t, a.Name); rev.Status.Phase != v1.RevisionDone {
		t.Fatalf("previous revision phase %s, want it to stay Done", rev.Status.Phase)
	}
	checkAllConfirmed(t, 4, a.Spec.Revision)
	if v := counterValue(t, op.metrics.RolloutFailures.WithLabelValues(ReasonInvalidForNode)); v != 1 {
		t.Errorf("failures metric %v, want 1", v)
	}
}

// TestHeldNode: a Node without router id is held back and named; the others proceed; fixing the Node
// lets it finish.
func TestHeldNode(t *testing.T) {
	env := shared.Get(t)
	resetCluster(t)
	createNodes(t, 3)
	bare := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-bare"}}
	if err := env.Client.Create(context.Background(), bare); err != nil {
		t.Fatal(err)
	}
	setNodeReady(t, bare, true)
	startAgents(t, seededAgents(13))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(1)
	startOperator(t, opts, runBoth)

	rev := waitRevision(t, 1)
	waitFor(t, time.Minute, "the other nodes updated", func() (bool, error) {
		r := getRevision(t, rev.Name)
		return r.Status.Updated == 3, fmt.Errorf("status %+v", r.Status)
	})
	r := getRevision(t, rev.Name)
	if r.Status.Phase != v1.RevisionRolling || !strings.Contains(r.Status.Message, "node node-bare held") ||
		!strings.Contains(r.Status.Message, nodespec.AnnotationRouterID) {
		t.Fatalf("status %+v", r.Status)
	}
	if _, ok := listNNCs(t)["node-bare"]; ok {
		t.Fatal("held node got a configuration")
	}
	waitFor(t, 30*time.Second, "NodeConfigHeld event", func() (bool, error) {
		return slices.Contains(eventReasons(t, "node-bare"), "NodeConfigHeld"), nil
	})

	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "node-bare"}, bare); err != nil {
		t.Fatal(err)
	}
	orig := bare.DeepCopy()
	metav1.SetMetaDataAnnotation(&bare.ObjectMeta, nodespec.AnnotationRouterID, "192.0.2.99")
	if err := env.Client.Patch(context.Background(), bare, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, time.Minute, rev.Name, v1.RevisionDone)
	if n := listNNCs(t)["node-bare"]; n.Spec.Underlay.RouterID != "192.0.2.99" || !confirmed(&n) {
		t.Fatalf("fixed node: router id %q confirmed %t", n.Spec.Underlay.RouterID, confirmed(&n))
	}
}

// TestNodeLabelChangeReconfigures: a node whose labels change gets the same revision rebuilt for it.
func TestNodeLabelChangeReconfigures(t *testing.T) {
	env := shared.Get(t)
	resetCluster(t)
	createNodes(t, 3)
	red := vrfConfig("red", "red", 300, 10)
	red.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "a"}}
	if err := env.Client.Create(context.Background(), red); err != nil {
		t.Fatal(err)
	}
	startAgents(t, seededAgents(17))
	opts := testOptions()
	opts.MaxUnavailable = intstr.FromInt32(3)
	startOperator(t, opts, runBoth)
	var rev *v1.NetworkConfigRevision
	waitFor(t, 30*time.Second, "revision with VRF red", func() (bool, error) {
		rev = newestRevision(listRevisions(t))
		return rev != nil && len(rev.Spec.VRF) == 1, nil
	})
	waitPhase(t, time.Minute, rev.Name, v1.RevisionDone)
	if n := listNNCs(t)[nodeName(1)]; len(n.Spec.VRFs) != 0 {
		t.Fatalf("unlabelled node has VRFs %v", n.Spec.VRFs)
	}

	var node corev1.Node
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: nodeName(1)}, &node); err != nil {
		t.Fatal(err)
	}
	orig := node.DeepCopy()
	metav1.SetMetaDataLabel(&node.ObjectMeta, "zone", "a")
	if err := env.Client.Patch(context.Background(), &node, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "node-001 reconfigured with VRF red", func() (bool, error) {
		n := listNNCs(t)[nodeName(1)]
		return len(n.Spec.VRFs) == 1 && n.Spec.VRFs[0].TableID == nodespec.TableIDBase+300 && confirmed(&n) &&
			n.Spec.Revision == rev.Spec.Revision, nil
	})
	for _, name := range []string{nodeName(0), nodeName(2)} {
		if g := listNNCs(t)[name].Generation; g != 1 {
			t.Errorf("node %s rewritten (generation %d) although its labels did not change", name, g)
		}
	}
}
