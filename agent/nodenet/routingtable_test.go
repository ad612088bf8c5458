package nodenet_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func withRoutingTables(s *v1alpha1.NodeNetworkConfigSpec, ids ...int64) *v1alpha1.NodeNetworkConfigSpec {
	for _, id := range ids {
		s.RoutingTables = append(s.RoutingTables, v1alpha1.NodeRoutingTable{Name: nodenet.RoutingTablePrefix + strconv.FormatInt(id, 10), TableID: id})
	}
	return s
}

func TestRoutingTablePlan(t *testing.T) {
	base := observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), fullKernel))
	d := mustDesired(t, withRoutingTables(twoVRFsOneL2(), 5000, 42), testSettings(), fullKernel)
	diffLines(t, lines(nodenet.ComputePlan(d, base).Actions), []string{
		"vrfs: create vrf taas.42 (table 42)",
		"vrfs: create vrf taas.5000 (table 5000)",
		"vrfs: set taas.42 up",
		"vrfs: set taas.5000 up",
	})
	if got := d.RoutingTables; len(got) != 2 || got[0].Device != "taas.42" || got[0].Table != 42 || got[1].Table != 5000 {
		t.Errorf("routing tables %+v, want taas.42 and taas.5000 (devices, sorted by table)", got)
	}
	if p := nodenet.ComputePlan(d, observedAfter(d)); !p.Empty() {
		t.Errorf("plan after apply not empty:\n%s", p)
	}
	less := mustDesired(t, withRoutingTables(twoVRFsOneL2(), 42), testSettings(), fullKernel)
	diffLines(t, lines(nodenet.ComputePlan(less, observedAfter(d)).Actions), []string{
		"removals: delete vrf taas.5000 (no longer desired)",
	})

	// Without VRF devices there is nothing to create: the table exists as it is; the plan says so.
	p := nodenet.ComputePlan(mustDesired(t, withRoutingTables(twoVRFsOneL2(), 42), testSettings(), noVRFKernel),
		observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), noVRFKernel)))
	if !p.Empty() || !slices.Contains(p.Notes, "routing table taas.42: table-only (test kernel has no VRF devices); table 42 exists without it") {
		t.Errorf("table-only plan:\n%s", p)
	}
}

func TestRoutingTableErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rt      v1alpha1.NodeRoutingTable
		mention string
	}{
		{"wrong name", v1alpha1.NodeRoutingTable{Name: "taas.7", TableID: 8}, `routingTables[8].name: Invalid value: "taas.7": must be taas.8`},
		{"main table", v1alpha1.NodeRoutingTable{Name: "taas.254", TableID: 254}, "routingTables[254].tableID: Invalid value: 254: the kernel's main table"},
		{"zero", v1alpha1.NodeRoutingTable{Name: "taas.0", TableID: 0}, "routingTables[0].tableID: Invalid value: 0: must be within 1..4294967295"},
		{"a vrf's table", v1alpha1.NodeRoutingTable{Name: "taas.100", TableID: 100}, "routingTables[100].tableID: Invalid value: 100: already used by vrfs[blue]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := twoVRFsOneL2()
			s.RoutingTables = []v1alpha1.NodeRoutingTable{tc.rt}
			_, err := nodenet.BuildDesired(s, testSettings(), fullKernel)
			if !errors.Is(err, fielderr.ErrInvalid) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("BuildDesired = %v, want ErrInvalid naming %q", err, tc.mention)
			}
		})
	}
}

// TestRoutingTableInNamespace: the table's own routes stay untouched; with VRF devices the VRF taas.<id> is
// created on the table, adopted after a restart and removed with the RoutingTable.
func TestRoutingTableInNamespace(t *testing.T) {
	ns := nsWith(t, lab.Topology{
		Veths:  []lab.Veth{{A: lab.Port{NS: "nc", Name: "h0"}, B: lab.Port{NS: "nc", Name: "h1"}}},
		Routes: []lab.Route{{NS: "nc", Table: 42, Dst: "10.42.0.0/24", Dev: "h0"}},
	})
	m := newManager(t, ns, nodenet.Settings{})
	f, err := m.Features(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	spec := withRoutingTables(&v1alpha1.NodeNetworkConfigSpec{Revision: "r1"}, 42)
	converge(t, m, spec)
	if got := routesOf(t, ns, 42); !slices.Equal(got, []string{"unicast 10.42.0.0/24 dev h0 proto boot"}) {
		t.Errorf("table 42 = %q, want only the host's route", got)
	}
	if !f.VRF {
		if _, err := ns.Link("taas.42"); err == nil {
			t.Error("taas.42 exists on a kernel without VRF devices")
		}
		testreq.KernelLacks(t, "VRF devices", errors.New(f.VRFReason))
	}
	vrf, ok := link(t, ns, "taas.42").(*netlink.Vrf)
	if !ok || vrf.Table != 42 || !strings.HasPrefix(vrf.Alias, nodenet.AliasPrefix) {
		t.Fatalf("taas.42 = %+v, want an owned vrf on table 42", link(t, ns, "taas.42"))
	}
	if p := mustPlan(t, newManager(t, ns, nodenet.Settings{}), spec); !p.Empty() {
		t.Fatalf("restarted agent plans changes:\n%s", p)
	}
	converge(t, m, &v1alpha1.NodeNetworkConfigSpec{Revision: "r2"})
	if _, err := ns.Link("taas.42"); err == nil {
		t.Error("taas.42 left after its routing table was removed")
	}
}
