package rollout

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// node builders keep the table readable.
func pending(name string) NodeState { return NodeState{Name: name, Ready: true} }

func onRev(name, rev string) NodeState {
	return NodeState{Name: name, Ready: true, Config: &ConfigState{
		Revision: rev, ExpectedMapVersion: "mv-" + rev, AssignedAt: t0,
		AppliedRevision: rev, MapVersion: "mv-" + rev, ConfigReady: ConditionTrue,
	}}
}

func inFlight(name, rev string) NodeState {
	n := onRev(name, rev)
	n.Config.AppliedRevision, n.Config.MapVersion, n.Config.ConfigReady = "old", "mv-old", ConditionTrue
	return n
}

func with(n NodeState, f func(*NodeState)) NodeState { f(&n); return n }

func grouped(n NodeState, g string) NodeState { n.Group = g; return n }

func TestCompute(t *testing.T) {
	tests := []struct {
		name         string
		in           Input
		wantAssign   []string
		wantRollback []string
		wantFailures []string // "node/reason"
		wantCounts   Counts
		wantBuckets  map[string]Bucket
	}{
		{
			name: "fresh rollout starts with the first nodes by name",
			in: Input{Target: "r2", MaxUnavailable: 2, Nodes: []NodeState{
				onRev("n3", "r1"), onRev("n1", "r1"), pending("n4"), onRev("n2", "r1"),
			}},
			wantAssign: []string{"n1", "n2"},
			wantCounts: Counts{Total: 4, Pending: 4},
		},
		{
			name: "budget full: nothing new while two are in flight",
			in: Input{Target: "r2", MaxUnavailable: 2, Nodes: []NodeState{
				inFlight("n1", "r2"), inFlight("n2", "r2"), onRev("n3", "r1"),
			}},
			wantCounts: Counts{Total: 3, InFlight: 2, Pending: 1},
		},
		{
			name: "a confirmed node frees its slot",
			in: Input{Target: "r2", MaxUnavailable: 2, Nodes: []NodeState{
				onRev("n1", "r2"), inFlight("n2", "r2"), onRev("n3", "r1"), onRev("n4", "r1"),
			}},
			wantAssign: []string{"n3"},
			wantCounts: Counts{Total: 4, Updated: 1, InFlight: 1, Pending: 2},
		},
		{
			name: "right revision but wrong map version is not done",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r2"), func(n *NodeState) { n.Config.MapVersion = "stale" }),
				onRev("n2", "r1"),
			}},
			wantCounts:  Counts{Total: 2, InFlight: 1, Pending: 1},
			wantBuckets: map[string]Bucket{"n1": BucketInFlight, "n2": BucketPending},
		},
		{
			name: "right revision and map version but Ready not True is not done",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r2"), func(n *NodeState) { n.Config.ConfigReady = ConditionUnknown }),
			}},
			wantCounts: Counts{Total: 1, InFlight: 1},
		},
		{
			name: "apply failure fails the revision and stops assignments",
			in: Input{Target: "r2", MaxUnavailable: 3, Nodes: []NodeState{
				with(inFlight("n1", "r2"), func(n *NodeState) {
					n.Config.ConfigReady, n.Config.FailedRevision, n.Config.Message = ConditionFalse, "r2", "boom"
				}),
				onRev("n2", "r1"), onRev("n3", "r1"),
			}},
			wantFailures: []string{"n1/" + ReasonApplyFailed},
			wantCounts:   Counts{Total: 3, Failed: 1, Pending: 2},
		},
		{
			name: "Ready=False for an older revision is only in flight",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(inFlight("n1", "r2"), func(n *NodeState) {
					n.Config.ConfigReady, n.Config.FailedRevision = ConditionFalse, "r1"
				}),
			}},
			wantCounts: Counts{Total: 1, InFlight: 1},
		},
		{
			name: "degraded node fails the revision",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r2"), func(n *NodeState) { n.Config.Degraded = true }),
				onRev("n2", "r1"),
			}},
			wantFailures: []string{"n1/" + ReasonDegraded},
			wantCounts:   Counts{Total: 2, Failed: 1, Pending: 1},
		},
		{
			name: "progress deadline exceeded fails the revision",
			in: Input{Target: "r2", MaxUnavailable: 1, ProgressDeadline: time.Minute, Now: t0.Add(2 * time.Minute),
				Nodes: []NodeState{inFlight("n1", "r2")}},
			wantFailures: []string{"n1/" + ReasonDeadlineExceeded},
			wantCounts:   Counts{Total: 1, Failed: 1},
		},
		{
			name: "progress deadline restarts when the Node becomes Ready again",
			in: Input{Target: "r2", MaxUnavailable: 1, ProgressDeadline: time.Minute, Now: t0.Add(2 * time.Minute),
				Nodes: []NodeState{with(inFlight("n1", "r2"), func(n *NodeState) { n.ReadySince = t0.Add(90 * time.Second) })}},
			wantCounts: Counts{Total: 1, InFlight: 1},
		},
		{
			name: "paused: no assignments, rollback still happens",
			in: Input{Target: "r1", MaxUnavailable: 2, Paused: true, Failed: map[string]bool{"r2": true}, Nodes: []NodeState{
				onRev("n1", "r2"), onRev("n2", "r0"), onRev("n3", "r1"),
			}},
			wantRollback: []string{"n1"},
			wantCounts:   Counts{Total: 3, Updated: 1, Pending: 2},
		},
		{
			name: "rollback reverts every node on the failed revision at once and uses up slots",
			in: Input{Target: "r1", MaxUnavailable: 2, Failed: map[string]bool{"r2": true}, Nodes: []NodeState{
				onRev("a", "r2"), inFlight("b", "r2"), onRev("c", "r2"), onRev("d", "r1"), pending("e"),
			}},
			wantRollback: []string{"a", "b", "c"},
			wantCounts:   Counts{Total: 5, Updated: 1, Pending: 4},
		},
		{
			name: "rollback leaves room for pending nodes when slots remain",
			in: Input{Target: "r1", MaxUnavailable: 3, Failed: map[string]bool{"r2": true}, Nodes: []NodeState{
				onRev("a", "r2"), onRev("b", "r1"), pending("c"), pending("d"),
			}},
			wantRollback: []string{"a"},
			wantAssign:   []string{"c", "d"},
			wantCounts:   Counts{Total: 4, Updated: 1, Pending: 3},
		},
		{
			name: "NotReady pending node is held back and reported; the next one goes",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r1"), func(n *NodeState) { n.Ready = false }), onRev("n2", "r1"),
			}},
			wantAssign:  []string{"n2"},
			wantCounts:  Counts{Total: 2, Pending: 1, NotReady: 1},
			wantBuckets: map[string]Bucket{"n1": BucketNotReady, "n2": BucketPending},
		},
		{
			name: "NotReady node with a confirmed status is not counted as done",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r2"), func(n *NodeState) { n.Ready = false }), onRev("n2", "r2"),
			}},
			wantCounts: Counts{Total: 2, Updated: 1, NotReady: 1},
		},
		{
			name: "NotReady node holding the target occupies a slot",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(inFlight("n1", "r2"), func(n *NodeState) { n.Ready = false }), onRev("n2", "r1"),
			}},
			wantCounts: Counts{Total: 2, Pending: 1, NotReady: 1},
		},
		{
			name: "groups: the next zone waits for the current one",
			in: Input{Target: "r2", MaxUnavailable: 3, Nodes: []NodeState{
				grouped(onRev("a1", "r2"), "zone-a"), grouped(inFlight("a2", "r2"), "zone-a"),
				grouped(onRev("b1", "r1"), "zone-b"), grouped(onRev("b2", "r1"), "zone-b"),
			}},
			wantCounts: Counts{Total: 4, Updated: 1, InFlight: 1, Pending: 2},
		},
		{
			name: "groups: order is group then name, not name",
			in: Input{Target: "r2", MaxUnavailable: 2, Nodes: []NodeState{
				grouped(onRev("a1", "r1"), "zone-b"), grouped(onRev("z1", "r1"), "zone-a"),
				grouped(onRev("z2", "r1"), "zone-a"),
			}},
			wantAssign: []string{"z1", "z2"},
			wantCounts: Counts{Total: 3, Pending: 3},
		},
		{
			name: "groups: a finished zone lets the next one start, a held NotReady node does not block",
			in: Input{Target: "r2", MaxUnavailable: 2, Nodes: []NodeState{
				grouped(onRev("a1", "r2"), "zone-a"), grouped(with(onRev("a2", "r1"), func(n *NodeState) { n.Ready = false }), "zone-a"),
				grouped(onRev("b1", "r1"), "zone-b"), grouped(onRev("b2", "r1"), "zone-b"), grouped(onRev("b3", "r1"), "zone-b"),
			}},
			wantAssign: []string{"b1", "b2"},
			wantCounts: Counts{Total: 5, Updated: 1, Pending: 3, NotReady: 1},
		},
		{
			name: "settled revision: a failing newcomer is counted, not a rollout failure",
			in: Input{Target: "r2", MaxUnavailable: 2, Settled: true, Nodes: []NodeState{
				onRev("n1", "r2"),
				with(inFlight("n2", "r2"), func(n *NodeState) { n.Config.ConfigReady, n.Config.FailedRevision = ConditionFalse, "r2" }),
				pending("n3"),
			}},
			wantAssign: []string{"n3"},
			wantCounts: Counts{Total: 3, Updated: 1, Failed: 1, Pending: 1},
		},
		{
			name: "superseded mid-rollout: nodes still applying the old target fill the budget and move on for free",
			in: Input{Target: "r3", MaxUnavailable: 2, Nodes: []NodeState{
				inFlight("n1", "r2"), inFlight("n2", "r2"), onRev("n3", "r1"), onRev("n4", "r1"),
			}},
			wantAssign: []string{"n1", "n2"},
			wantCounts: Counts{Total: 4, Pending: 4},
		},
		{
			name: "superseded mid-rollout: a free slot goes to the next node in order",
			in: Input{Target: "r3", MaxUnavailable: 2, Nodes: []NodeState{
				onRev("n1", "r2"), inFlight("n2", "r2"), onRev("n3", "r1"),
			}},
			wantAssign: []string{"n1", "n2"},
			wantCounts: Counts{Total: 3, Pending: 3},
		},
		{
			name: "rollback beyond the budget still reverts every node, assigns nothing else",
			in: Input{Target: "r1", MaxUnavailable: 1, Failed: map[string]bool{"r2": true}, Nodes: []NodeState{
				onRev("a", "r2"), onRev("b", "r2"), pending("c"),
			}},
			wantRollback: []string{"a", "b"},
			wantCounts:   Counts{Total: 3, Pending: 3},
		},
		{
			name: "held node is skipped and reported, the next one goes",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r1"), func(n *NodeState) { n.Held = true }), onRev("n2", "r1"),
			}},
			wantAssign:  []string{"n2"},
			wantCounts:  Counts{Total: 2, Pending: 1, Held: 1},
			wantBuckets: map[string]Bucket{"n1": BucketHeld},
		},
		{
			name: "stale specs are re-assigned within the budget, in order",
			in: Input{Target: "r2", MaxUnavailable: 1, Nodes: []NodeState{
				with(onRev("n1", "r2"), func(n *NodeState) { n.Config.Stale = true }),
				with(onRev("n2", "r2"), func(n *NodeState) { n.Config.Stale = true }),
				onRev("n3", "r2"),
			}},
			wantAssign: []string{"n1"},
			wantCounts: Counts{Total: 3, Updated: 1, Pending: 2},
		},
		{
			name:       "no target: nothing to do",
			in:         Input{MaxUnavailable: 5, Nodes: []NodeState{pending("n1")}},
			wantCounts: Counts{Total: 1, Pending: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.in)
			if !slices.Equal(p.Assign, tc.wantAssign) {
				t.Errorf("Assign = %v, want %v", p.Assign, tc.wantAssign)
			}
			if !slices.Equal(p.Rollback, tc.wantRollback) {
				t.Errorf("Rollback = %v, want %v", p.Rollback, tc.wantRollback)
			}
			var fails []string
			for _, f := range p.Failures {
				fails = append(fails, f.Node+"/"+f.Reason)
				if f.Message == "" && f.Reason == ReasonDeadlineExceeded {
					t.Errorf("deadline failure without message")
				}
			}
			if !slices.Equal(fails, tc.wantFailures) {
				t.Errorf("Failures = %v, want %v", fails, tc.wantFailures)
			}
			if p.Counts != tc.wantCounts {
				t.Errorf("Counts = %+v, want %+v", p.Counts, tc.wantCounts)
			}
			for n, b := range tc.wantBuckets {
				if p.Buckets[n] != b {
					t.Errorf("bucket of %s = %s, want %s", n, p.Buckets[n], b)
				}
			}
		})
	}
}

// TestComputeDrivesRolloutToCompletion replays a whole rollout through the planner with agents
// that confirm instantly, checking pacing and order at every step.
func TestComputeDrivesRolloutToCompletion(t *testing.T) {
	const total, maxUnavailable = 25, 4
	nodes := make([]NodeState, total)
	for i := range nodes {
		nodes[i] = onRev(nodeName(total-1-i), "r1") // reversed: the planner must sort
	}
	var order []string
	for round := 0; ; round++ {
		if round > total {
			t.Fatalf("rollout did not finish in %d rounds", round)
		}
		p := Compute(Input{Target: "r2", MaxUnavailable: maxUnavailable, Nodes: nodes})
		if p.Complete() {
			break
		}
		if len(p.Assign) > maxUnavailable {
			t.Fatalf("round %d assigned %d nodes, max %d", round, len(p.Assign), maxUnavailable)
		}
		order = append(order, p.Assign...)
		for i := range nodes {
			if slices.Contains(p.Assign, nodes[i].Name) {
				nodes[i] = onRev(nodes[i].Name, "r2") // the agent confirms before the next round
			}
		}
	}
	want := make([]string, total)
	for i := range want {
		want[i] = nodeName(i)
	}
	if !slices.Equal(order, want) {
		t.Fatalf("rollout order = %v, want %v", order, want)
	}
}

func nodeName(i int) string { return "node-" + string(rune('a'+i/10)) + string(rune('0'+i%10)) }

func TestResolveMaxUnavailable(t *testing.T) {
	tests := []struct {
		v       *intstr.IntOrString
		total   int
		want    int
		wantErr bool
	}{
		{v: nil, total: 100, want: 1},
		{v: new(intstr.FromString("10%")), total: 100, want: 10},
		{v: new(intstr.FromString("10%")), total: 105, want: 10},
		{v: new(intstr.FromString("10%")), total: 5, want: 1},
		{v: new(intstr.FromString("100%")), total: 7, want: 7},
		{v: new(intstr.FromInt32(3)), total: 100, want: 3},
		{v: new(intstr.FromInt32(0)), total: 100, want: 1},
		{v: new(intstr.FromInt32(-2)), total: 100, wantErr: true},
		{v: new(intstr.FromString("ten")), total: 100, wantErr: true},
	}
	for _, tc := range tests {
		name := "nil"
		if tc.v != nil {
			name = tc.v.String()
		}
		got, err := ResolveMaxUnavailable(tc.v, tc.total)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s of %d: err = %v, wantErr %v", name, tc.total, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && got != tc.want {
			t.Errorf("%s of %d = %d, want %d", name, tc.total, got, tc.want)
		}
	}
}
