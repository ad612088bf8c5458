package cluster

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/test/harness/golden"
)

func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), []byte(got))
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at0(d float64) time.Time { return t0.Add(time.Duration(d * float64(time.Second))) }

func failedRollout() *Rollout {
	return &Rollout{Revision: "rev-4-0123456789", Sequence: 4, Hash: "h4", Phase: "Failed", FailedNode: "node-3",
		RolledBackTo: "rev-3-abcdefabcd", RolledBackHash: "h3", Since: t0, Settled: at0(1.1),
		Order: []string{"node-1", "node-2", "node-3"},
		Events: []RolloutEvent{
			{At: at0(0.5), Revision: "rev-4-0123456789", Hash: "h4", State: "created"},
			{At: at0(0.5), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-1", State: StateApplying},
			{At: at0(0.6), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-1", State: StateApplied},
			{At: at0(0.6), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-2", State: StateApplying},
			{At: at0(0.7), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-2", State: StateApplied},
			{At: at0(0.7), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-3", State: StateApplying},
			{At: at0(0.8), Revision: "rev-4-0123456789", Hash: "h4", Node: "node-3", State: StateFailed,
				Detail: "step interfaces: set mtu of l2vx.100 1500 -> 9000:\ninvalid argument"},
			{At: at0(0.8), Revision: "rev-4-0123456789", Hash: "h4", State: "Failed", Detail: "ApplyFailed on node node-3"},
			{At: at0(0.9), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-1", State: StateApplying},
			{At: at0(0.9), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-3", State: StateApplying},
			{At: at0(1.0), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-3", State: StateApplied},
			{At: at0(1.0), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-1", State: StateApplied},
			{At: at0(1.0), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-2", State: StateApplying},
			{At: at0(1.1), Revision: "rev-3-abcdefabcd", Hash: "h3", Node: "node-2", State: StateApplied},
		}}
}

func TestRenderRollout(t *testing.T) {
	nodes := []string{"node-1", "node-2", "node-3"}
	done := &Rollout{Revision: "rev-2-5555555555", Sequence: 2, Hash: "h2", Phase: "Done", Since: t0, Settled: at0(5.9),
		Order: nodes, Events: []RolloutEvent{
			{At: at0(0.5), Hash: "h2", Node: "node-1", State: StateApplying},
			{At: at0(2.5), Hash: "h2", Node: "node-1", State: StateApplied},
			{At: at0(2.5), Hash: "h2", Node: "node-2", State: StateApplying},
			{At: at0(4.1), Hash: "h2", Node: "node-2", State: StateApplied},
			{At: at0(4.1), Hash: "h2", Node: "node-3", State: StateApplying},
			{At: at0(5.9), Hash: "h2", Node: "node-3", State: StateApplied},
		}}
	var events strings.Builder
	for _, ev := range failedRollout().Events {
		events.WriteString(RenderEvent(ev, t0) + "\n")
	}
	assertGolden(t, "rollout-done.txt", RenderRollout(done, nodes))
	assertGolden(t, "rollout-failed.txt", RenderRollout(failedRollout(), nodes))
	assertGolden(t, "rollout-events.txt", events.String())
}

func testMatrix() *Matrix {
	nodes := []*Node{{Name: "node-1", Index: 1}, {Name: "node-2", Index: 2}, {Name: "node-3", Index: 3}}
	web := Network{Name: "tenant-a-web", VRF: "tenant-a", VLAN: 100, Gateway: netip.MustParsePrefix("10.100.0.1/24")}
	db := Network{Name: "tenant-a-db", VRF: "tenant-a", VLAN: 101, Gateway: netip.MustParsePrefix("10.101.0.1/24")}
	bweb := Network{Name: "tenant-b-web", VRF: "tenant-b", VLAN: 200, Gateway: netip.MustParsePrefix("10.200.0.1/24")}
	loads := []*Workload{
		{Name: "a1", VRF: "tenant-a", Network: db, Node: nodes[0], Addr: workloadAddr(db, 1)},
		{Name: "b1", VRF: "tenant-b", Network: bweb, Node: nodes[0], Addr: workloadAddr(bweb, 1)},
		{Name: "a2", VRF: "tenant-a", Network: web, Node: nodes[1], Addr: workloadAddr(web, 2)},
		{Name: "a3", VRF: "tenant-a", Network: db, Node: nodes[2], Addr: workloadAddr(db, 3)},
	}
	m := &Matrix{Workloads: loads, Cells: make([][]Cell, len(loads)), Converged: 1300 * time.Millisecond, Measured: 5900 * time.Millisecond}
	for i, from := range loads {
		m.Cells[i] = make([]Cell, len(loads))
		for j, to := range loads {
			if i == j {
				continue
			}
			c := Cell{From: from, To: to, Path: pathOf(from, to), Sent: 3}
			if c.Path != PathBlocked {
				c.Received = 3
			}
			m.Cells[i][j] = c
		}
	}
	return m
}

func TestRenderMatrix(t *testing.T) {
	m := testMatrix()
	assertGolden(t, "matrix.txt", RenderMatrix(m))
	// A lost reply and a leak show as such, and count as unexpected.
	m.Cells[0][2].Received = 2 // a1 -> a2 routed
	m.Cells[1][0].Received = 1 // b1 -> a1 across tenants
	assertGolden(t, "matrix-unexpected.txt", RenderMatrix(m))
	if got := len(m.Unexpected()); got != 2 {
		t.Errorf("%d unexpected cells, want 2", got)
	}
}

func TestRenderCounters(t *testing.T) {
	c := &Counters{
		ByVRFAction: []Sample{
			{Labels: map[string]string{"vrf": "tenant-a", "action": "forwarded"}, Value: 32},
			{Labels: map[string]string{"vrf": "tenant-a", "action": "passed"}, Value: 41},
			{Labels: map[string]string{"vrf": "tenant-b", "action": "forwarded"}, Value: 30},
		},
		ForwardedByNode: []Sample{
			{Labels: map[string]string{"node": "node-2", "vrf": "tenant-a"}, Value: 16},
			{Labels: map[string]string{"node": "node-1", "vrf": "tenant-a"}, Value: 8},
			{Labels: map[string]string{"node": "node-1", "vrf": "tenant-b"}, Value: 30},
		},
	}
	assertGolden(t, "counters.txt", RenderCounters(c)+RenderForwarded(c))
	if got := c.Forwarded("tenant-a"); got != 24 {
		t.Errorf("Forwarded(tenant-a) = %v, want 24 (summed over nodes)", got)
	}
	if got := c.VRFs(); strings.Join(got, ",") != "tenant-a,tenant-b" {
		t.Errorf("VRFs() = %v", got)
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"rev-12-0123456789": "rev-12",
		"rev-1":             "rev-1",
		"0123abcd":          "0123abcd",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}
