package nodenet_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// nsWith makes a fresh namespace "nc" (plus the given foreign objects), removed at cleanup. Needs root (lab.New).
func nsWith(t *testing.T, topo lab.Topology) *lab.Netns {
	t.Helper()
	l := lab.New(t)
	topo.Namespaces = append([]lab.Namespace{{Name: "nc"}}, topo.Namespaces...)
	l.MustBuild(testCtx(t), topo)
	ns := l.NS("nc")
	t.Cleanup(func() { deleteVRFDevices(t, ns) }) // runs before the lab deletes the namespace
	return ns
}

// deleteVRFDevices deletes the VRF devices while their ports are intact. Deleting the namespace instead unlinks
// both ends of each veth pair before it deletes the VRF device, whose release of a running veth port then cannot
// bring it up again: the kernel logs "vf.blue: Failed to cycle device vf.blue; route tables might be wrong!"
// (harmless: everything is going away; but a real cycling failure would look the same in the lane's console).
func deleteVRFDevices(t *testing.T, ns *lab.Netns) {
	links, err := ns.Handle().LinkList()
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	for _, l := range links {
		if l.Type() == "vrf" {
			if err := ns.Handle().LinkDel(l); err != nil {
				t.Logf("cleanup: delete %s: %v", l.Attrs().Name, err)
			}
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newManager(t *testing.T, ns *lab.Netns, s nodenet.Settings) *nodenet.Manager {
	t.Helper()
	m, err := nodenet.New(ns.Handle(), s)
	if err != nil {
		t.Fatalf("nodenet.New: %v", err)
	}
	return m
}

func mustPlan(t *testing.T, m *nodenet.Manager, spec *v1alpha1.NodeNetworkConfigSpec) *nodenet.Plan {
	t.Helper()
	p, err := m.Plan(testCtx(t), spec)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

// applyAll applies every phase in order, as the runtime does (without FRR and BPF in between).
func applyAll(ctx context.Context, m *nodenet.Manager, p *nodenet.Plan) error {
	for _, ph := range nodenet.Phases() {
		if _, err := m.Apply(ctx, p, ph); err != nil {
			return err
		}
	}
	return nil
}

// converge plans and applies spec, then checks a second plan is empty.
func converge(t *testing.T, m *nodenet.Manager, spec *v1alpha1.NodeNetworkConfigSpec) *nodenet.Plan {
	t.Helper()
	p := mustPlan(t, m, spec)
	if err := applyAll(testCtx(t), m, p); err != nil {
		t.Fatalf("apply:\n%s\nerror: %v", p, err)
	}
	if again := mustPlan(t, m, spec); !again.Empty() {
		t.Fatalf("plan after apply is not empty:\n%s", again)
	}
	return p
}

// linkIndexes maps every link name of the namespace to its ifindex.
func linkIndexes(t *testing.T, ns *lab.Netns) map[string]int {
	t.Helper()
	links, err := ns.Handle().LinkList()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range links {
		out[l.Attrs().Name] = l.Attrs().Index
	}
	return out
}

func link(t *testing.T, ns *lab.Netns, name string) netlink.Link {
	t.Helper()
	l, err := ns.Link(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func masterName(t *testing.T, ns *lab.Netns, l netlink.Link) string {
	t.Helper()
	if l.Attrs().MasterIndex == 0 {
		return ""
	}
	m, err := ns.Handle().LinkByIndex(l.Attrs().MasterIndex)
	if err != nil {
		t.Fatal(err)
	}
	return m.Attrs().Name
}

// checkVXLAN asserts the attributes EVPN needs on a VXLAN device and its bridge port.
func checkVXLAN(t *testing.T, ns *lab.Netns, name string, vni, mtu int, master string, neighSuppress bool) {
	t.Helper()
	l := link(t, ns, name)
	vx, ok := l.(*netlink.Vxlan)
	if !ok {
		t.Fatalf("%s is a %s, want vxlan", name, l.Type())
	}
	if vx.VxlanId != vni || vx.Port != nodenet.VXLANPort || !vx.SrcAddr.Equal(net.ParseIP("192.0.2.1")) || vx.Learning {
		t.Errorf("%s: vni %d dstport %d local %s learning %v; want vni %d dstport 4789 local 192.0.2.1 nolearning",
			name, vx.VxlanId, vx.Port, vx.SrcAddr, vx.Learning, vni)
	}
	if vx.MTU != mtu || masterName(t, ns, l) != master || vx.Flags&net.FlagUp == 0 {
		t.Errorf("%s: mtu %d master %q up %v; want mtu %d master %s up", name, vx.MTU, masterName(t, ns, l), vx.Flags&net.FlagUp != 0, mtu, master)
	}
	if !strings.HasPrefix(vx.Alias, nodenet.AliasPrefix) {
		t.Errorf("%s: alias %q, want %s...", name, vx.Alias, nodenet.AliasPrefix)
	}
	pi, err := ns.Handle().LinkGetProtinfo(l)
	if err != nil {
		t.Fatalf("port flags of %s: %v", name, err)
	}
	if pi.Learning || pi.NeighSuppress != neighSuppress {
		t.Errorf("%s port: learning %v neigh_suppress %v; want learning off, neigh_suppress %v", name, pi.Learning, pi.NeighSuppress, neighSuppress)
	}
}

// routesOf lists the routes of a table as "type dst dev src" lines (both families).
func routesOf(t *testing.T, ns *lab.Netns, table int) []string {
	t.Helper()
	rs, err := ns.Handle().RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	if err != nil {
		t.Fatal(err)
	}
	names := linkIndexes(t, ns)
	byIndex := map[int]string{}
	for n, i := range names {
		byIndex[i] = n
	}
	var out []string
	for _, r := range rs {
		dst := "default"
		if r.Dst != nil {
			dst = r.Dst.String()
		}
		s := map[int]string{unix.RTN_UNICAST: "unicast", unix.RTN_LOCAL: "local", unix.RTN_UNREACHABLE: "unreachable"}[r.Type] + " " + dst
		if r.Type != unix.RTN_UNREACHABLE {
			s += " dev " + byIndex[r.LinkIndex]
		}
		if r.Src != nil {
			s += " src " + r.Src.String()
		}
		if int(r.Protocol) != int(nodenet.DefaultRouteProtocol) {
			s += " proto " + r.Protocol.String()
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestApplyCreatesOwnedObjectsAndIsIdempotent(t *testing.T) {
	ns := nsWith(t, lab.Topology{
		Veths:  []lab.Veth{{A: lab.Port{NS: "nc", Name: "up0", Addrs: []string{"198.51.100.1/24"}}, B: lab.Port{NS: "nc", Name: "up1"}}},
		Routes: []lab.Route{{NS: "nc", Dst: "default", Via: "198.51.100.254", Dev: "up0"}},
	})
	if err := ns.Sysctl("net.ipv4.ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, ns, tableOnly(testSettings()))
	ctx := testCtx(t)
	spec := twoVRFsOneL2()
	first := converge(t, m, spec)
	t.Logf("applied:\n%s", first)

	checkVXLAN(t, ns, "vx.blue", 1100, 9000, "br.blue", true)
	checkVXLAN(t, ns, "vx.red", 1200, 1500, "br.red", true)
	checkVXLAN(t, ns, "l2vx.100", 2100, 1500, "l2br.100", true)

	br := link(t, ns, "l2br.100")
	if br.Type() != "bridge" || br.Attrs().MTU != 1500 || br.Attrs().HardwareAddr.String() != "02:00:00:00:01:00" {
		t.Errorf("l2br.100: %s mtu %d mac %s; want bridge mtu 1500 with the anycast mac 02:00:00:00:01:00", br.Type(), br.Attrs().MTU, br.Attrs().HardwareAddr)
	}
	if got := link(t, ns, "br.blue").Attrs().MTU; got != 9000 {
		t.Errorf("br.blue mtu %d, want 9000", got)
	}
	addrs, err := ns.Handle().AddrList(br, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range addrs {
		if a.Scope == unix.RT_SCOPE_UNIVERSE {
			got = append(got, a.IPNet.String()+map[bool]string{true: " noprefixroute", false: ""}[a.Flags&unix.IFA_F_NOPREFIXROUTE != 0])
		}
	}
	slices.Sort(got)
	if want := []string{"10.100.0.1/24 noprefixroute", "fd00:100::1/64 noprefixroute"}; !slices.Equal(got, want) {
		t.Errorf("l2br.100 addresses %q, want %q", got, want)
	}
	vf := link(t, ns, "vf.blue")
	df := link(t, ns, "df.blue")
	if vf.Type() != "veth" || vf.Attrs().ParentIndex != df.Attrs().Index || vf.Attrs().MTU != 9000 || df.Attrs().MTU != 9000 ||
		!strings.HasPrefix(vf.Attrs().Alias, nodenet.AliasPrefix) || !strings.HasPrefix(df.Attrs().Alias, nodenet.AliasPrefix) {
		t.Errorf("veth pair vf.blue/df.blue: %s peer %d (df.blue is %d) mtu %d/%d aliases %q/%q", vf.Type(), vf.Attrs().ParentIndex,
			df.Attrs().Index, vf.Attrs().MTU, df.Attrs().MTU, vf.Attrs().Alias, df.Attrs().Alias)
	}

	// What a VRF device would have put into the VRF table, plus the unreachable defaults, all tagged as ours.
	wantBlue := []string{
		"local 10.100.0.1/32 dev l2br.100 src 10.100.0.1",
		"local fd00:100::1/128 dev l2br.100",
		"unicast 10.100.0.0/24 dev l2br.100 src 10.100.0.1",
		"unicast fd00:100::/64 dev l2br.100",
		"unreachable 0.0.0.0/0",
		"unreachable ::/0",
	}
	if got := routesOf(t, ns, 100); !slices.Equal(got, wantBlue) {
		t.Errorf("table 100:\n got %q\nwant %q", got, wantBlue)
	}
	if got, want := routesOf(t, ns, 200), []string{"unreachable 0.0.0.0/0", "unreachable ::/0"}; !slices.Equal(got, want) {
		t.Errorf("table 200: got %q, want %q", got, want)
	}
	for _, r := range routesOf(t, ns, unix.RT_TABLE_MAIN) {
		if strings.Contains(r, "10.100.0.0") || strings.Contains(r, "fd00:100::") {
			t.Errorf("tenant subnet leaked into the main table: %s", r)
		}
	}
	// The rules steer the L2 network's traffic into the VRF table, and the unreachable default stops it from
	// falling through to main, which has a default route here.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"10.9.9.9"}, "via 198.51.100.254 dev up0"},
		{[]string{"10.100.0.7", "oif", "l2br.100"}, "10.100.0.7 dev l2br.100 table 100 src 10.100.0.1"},
		{[]string{"10.100.0.7", "from", "10.100.0.50", "iif", "l2br.100"}, "10.100.0.7 from 10.100.0.50 dev l2br.100 table 100"},
		{[]string{"10.9.9.9", "from", "10.100.0.50", "iif", "l2br.100"}, "No route to host"}, // the unreachable default (EHOSTUNREACH), not main
		// Replies the node sends from its gateway address (no oif yet) are routed in the VRF table too.
		{[]string{"10.100.0.7", "from", "10.100.0.1"}, "10.100.0.7 from 10.100.0.1 dev l2br.100 table 100"},
	} {
		out, err := ns.Output(ctx, "ip", append([]string{"route", "get"}, tc.args...)...)
		if !strings.Contains(out+errString(err), tc.want) {
			t.Errorf("ip route get %s = %q (%v), want %q", strings.Join(tc.args, " "), out, err, tc.want)
		}
	}

	before := linkIndexes(t, ns)
	second := mustPlan(t, m, spec)
	if !second.Empty() {
		t.Fatalf("second plan not empty:\n%s", second)
	}
	if err := applyAll(ctx, m, second); err != nil {
		t.Fatal(err)
	}
	// A restarted agent (new Manager, nothing cached) adopts what exists.
	restarted := newManager(t, ns, tableOnly(testSettings()))
	if p := mustPlan(t, restarted, spec); !p.Empty() {
		t.Fatalf("restarted agent plans changes:\n%s", p)
	}
	if after := linkIndexes(t, ns); !mapsEqual(before, after) {
		t.Errorf("ifindexes changed by an empty apply: %v -> %v", before, after)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// foreignTopology has links that are not nodenet's, two of them with nodenet's name prefixes.
var foreignTopology = lab.Topology{
	Veths:   []lab.Veth{{A: lab.Port{NS: "nc", Name: "vf.other", MTU: 1400}, B: lab.Port{NS: "nc", Name: "df.other"}}},
	Devices: []lab.Device{{Port: lab.Port{NS: "nc", Name: "l2br.999", MTU: 1300}, Kind: lab.KindBridge}},
}

type linkFingerprint struct {
	index, mtu int
	alias      string
	mac        string
	up         bool
}

func fingerprints(t *testing.T, ns *lab.Netns, names ...string) map[string]linkFingerprint {
	t.Helper()
	out := map[string]linkFingerprint{}
	for _, n := range names {
		l, err := ns.Link(n)
		if err != nil {
			t.Fatalf("foreign link: %v", err)
		}
		a := l.Attrs()
		out[n] = linkFingerprint{a.Index, a.MTU, a.Alias, a.HardwareAddr.String(), a.Flags&net.FlagUp != 0}
	}
	return out
}

func TestChangeTouchesOnlyOwnedObjects(t *testing.T) {
	ns := nsWith(t, foreignTopology)
	m := newManager(t, ns, tableOnly(testSettings()))
	foreign := []string{"vf.other", "df.other", "l2br.999"}
	foreignBefore := fingerprints(t, ns, foreign...)
	converge(t, m, twoVRFsOneL2())
	before := linkIndexes(t, ns)

	changed := withGreen(withoutL2(twoVRFsOneL2()))
	p := converge(t, m, changed)
	t.Logf("change:\n%s", p)

	after := linkIndexes(t, ns)
	for _, gone := range []string{"l2br.100", "l2vx.100"} {
		if _, ok := after[gone]; ok {
			t.Errorf("%s still exists after its layer-2 network was removed", gone)
		}
	}
	for _, kept := range []string{"br.blue", "vx.blue", "br.red", "vx.red", "df.blue", "vf.blue"} {
		if before[kept] == 0 || after[kept] != before[kept] {
			t.Errorf("%s: ifindex %d -> %d, want unchanged", kept, before[kept], after[kept])
		}
	}
	checkVXLAN(t, ns, "vx.green", 1300, 1500, "br.green", true)
	if got := fingerprints(t, ns, foreign...); !fingerprintsEqual(got, foreignBefore) {
		t.Errorf("foreign links changed:\n before %+v\n after  %+v", foreignBefore, got)
	}
	if got, want := routesOf(t, ns, 100), []string{"unreachable 0.0.0.0/0", "unreachable ::/0"}; !slices.Equal(got, want) {
		t.Errorf("table 100 after the L2 removal: %q, want %q", got, want)
	}
	rules, err := ns.Handle().RuleList(netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	var green int
	for _, r := range rules {
		if r.IifName == "l2br.100" || r.OifName == "l2br.100" {
			t.Errorf("rule for the removed l2br.100 left: %v", r)
		}
		if r.Table == 300 && r.Protocol == nodenet.DefaultRouteProtocol {
			green++
		}
	}
	if green != 4 {
		t.Errorf("%d rules for table 300, want 4 (iif/oif br.green, v4/v6)", green)
	}
}

func fingerprintsEqual(a, b map[string]linkFingerprint) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestFailedApplyThenLastGoodRestores covers the runtime's recovery: an apply fails part way, the error names
// the object, and planning + applying the last good spec converges back to it.
func TestFailedApplyThenLastGoodRestores(t *testing.T) {
	t.Run("name taken between plan and apply", func(t *testing.T) {
		ns := nsWith(t, lab.Topology{})
		m := newManager(t, ns, testSettings())
		ctx := testCtx(t)
		good := twoVRFsOneL2()
		converge(t, m, good)
		before := linkIndexes(t, ns)

		p := mustPlan(t, m, withGreen(twoVRFsOneL2()))
		// Someone else creates a link with the name of the VXLAN the plan is about to create.
		if err := ns.Handle().LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "vx.green"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Apply(ctx, p, nodenet.PhaseVRFs); err != nil {
			t.Fatalf("phase vrfs: %v", err)
		}
		res, err := m.Apply(ctx, p, nodenet.PhaseInterfaces)
		var ae *nodenet.ActionError
		if !errors.As(err, &ae) || !errors.Is(err, unix.EEXIST) || !strings.Contains(err.Error(), "vx.green") {
			t.Fatalf("apply = %v, want an ActionError naming vx.green wrapping EEXIST", err)
		}
		if len(res.Done) == 0 || res.Failed == nil || !strings.Contains(res.Failed.String(), "create vxlan vx.green") {
			t.Fatalf("result: done %d, failed %v; want br.green created before vx.green failed", len(res.Done), res.Failed)
		}
		if _, err := ns.Link("br.green"); err != nil {
			t.Fatalf("the part before the failure was not applied: %v", err)
		}

		restore := mustPlan(t, m, good)
		if err := applyAll(ctx, m, restore); err != nil {
			t.Fatalf("restore:\n%s\n%v", restore, err)
		}
		t.Logf("restore:\n%s", restore)
		if p := mustPlan(t, m, good); !p.Empty() {
			t.Fatalf("not converged to the last good state:\n%s", p)
		}
		after := linkIndexes(t, ns)
		if _, ok := after["br.green"]; ok {
			t.Error("br.green of the failed revision was not removed")
		}
		if _, ok := after["vx.green"]; !ok {
			t.Error("the foreign vx.green was deleted")
		}
		delete(after, "vx.green")
		if !mapsEqual(before, after) {
			t.Errorf("links differ from the last good state: %v -> %v", before, after)
		}

		// Planned again, the foreign link is a conflict and apply refuses before changing anything.
		p = mustPlan(t, m, withGreen(twoVRFsOneL2()))
		if !errors.Is(p.Err(), nodenet.ErrConflict) || !strings.Contains(p.Err().Error(), "vx.green") {
			t.Fatalf("plan.Err() = %v, want ErrConflict naming vx.green", p.Err())
		}
		if _, err := m.Apply(ctx, p, nodenet.PhaseVRFs); !errors.Is(err, nodenet.ErrConflict) {
			t.Fatalf("apply of a conflicting plan = %v, want ErrConflict", err)
		}
		if _, err := ns.Link("br.green"); err == nil {
			t.Error("a conflicting plan was applied in part")
		}
	})

	t.Run("mtu rejected by the kernel", func(t *testing.T) {
		// VXLANs bound to an uplink may not exceed its MTU minus the VXLAN overhead (50 bytes).
		ns := nsWith(t, lab.Topology{Veths: []lab.Veth{{A: lab.Port{NS: "nc", Name: "uplink", MTU: 9000}, B: lab.Port{NS: "nc", Name: "peer", MTU: 9000}}}})
		s := testSettings()
		s.VTEPInterface = "uplink"
		m := newManager(t, ns, s)
		ctx := testCtx(t)
		good := twoVRFsOneL2()
		good.VRFs[0].MTU = 8000
		converge(t, m, good)
		before := linkIndexes(t, ns)

		bad := twoVRFsOneL2()
		bad.VRFs[0].MTU = 8000
		bad.Layer2s[0].MTU = 9000
		p := mustPlan(t, m, bad)
		_, err := m.Apply(ctx, p, nodenet.PhaseVRFs)
		if err == nil {
			_, err = m.Apply(ctx, p, nodenet.PhaseInterfaces)
		}
		if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "l2vx.100") || !strings.Contains(err.Error(), "9000") {
			t.Fatalf("apply = %v, want EINVAL naming l2vx.100 and 9000", err)
		}
		if got := link(t, ns, "l2br.100").Attrs().MTU; got != 9000 {
			t.Fatalf("l2br.100 mtu %d: the failure was not part way (bridge first)", got)
		}
		if err := applyAll(ctx, m, mustPlan(t, m, good)); err != nil {
			t.Fatalf("restore: %v", err)
		}
		if p := mustPlan(t, m, good); !p.Empty() {
			t.Fatalf("not converged:\n%s", p)
		}
		if got := link(t, ns, "l2br.100").Attrs().MTU; got != 1500 {
			t.Errorf("l2br.100 mtu %d after restore, want 1500", got)
		}
		if after := linkIndexes(t, ns); !mapsEqual(before, after) {
			t.Errorf("restore recreated links: %v -> %v", before, after)
		}
	})
}

// TestProbeCreatesNothing checks feature detection leaves no probe link behind, explains missing features, and
// agrees with a real attempt to create each kind.
func TestProbeCreatesNothing(t *testing.T) {
	ns := nsWith(t, lab.Topology{Veths: []lab.Veth{{A: lab.Port{NS: "nc", Name: "p0"}, B: lab.Port{NS: "nc", Name: "p1"}}}})
	before := linkIndexes(t, ns)
	f, err := nodenet.Probe(testCtx(t), ns.Handle())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("features: %+v", f)
	if after := linkIndexes(t, ns); !mapsEqual(before, after) {
		t.Errorf("probe left links behind: %v -> %v", before, after)
	}
	if f.VRF == (f.VRFReason != "") || f.VLAN == (f.VLANReason != "") {
		t.Errorf("features %+v: a missing feature needs a reason, a present one none", f)
	}
	for _, tc := range []struct {
		have bool
		link netlink.Link
	}{
		{f.VRF, &netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: "xvrf"}, Table: 4242}},
		{f.VLAN, &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: "xvlan", ParentIndex: before["p0"]}, VlanId: 7}},
	} {
		err := ns.Handle().LinkAdd(tc.link)
		switch {
		case tc.have && err != nil:
			t.Errorf("probe says %s links work, creating one fails: %v", tc.link.Type(), err)
		case !tc.have && !errors.Is(err, unix.EOPNOTSUPP):
			t.Errorf("probe says %s links are missing, creating one gives %v, want EOPNOTSUPP", tc.link.Type(), err)
		}
	}
}

// TestVRFDevices runs the device-mode path where the kernel has VRFs.
func TestVRFDevices(t *testing.T) {
	ns := nsWith(t, lab.Topology{})
	s := testSettings()
	s.VRFMode = nodenet.VRFModeDevice
	m := newManager(t, ns, s)
	f, err := m.Features(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !f.VRF {
		testreq.KernelLacks(t, "VRF devices", errors.New(f.VRFReason))
	}
	converge(t, m, twoVRFsOneL2())
	vrf, ok := link(t, ns, "vr.blue").(*netlink.Vrf)
	if !ok || vrf.Table != 100 {
		t.Fatalf("vr.blue = %+v, want a vrf with table 100", link(t, ns, "vr.blue"))
	}
	for name, master := range map[string]string{"br.blue": "vr.blue", "l2br.100": "vr.blue", "vf.blue": "vr.blue", "vx.blue": "br.blue"} {
		if got := masterName(t, ns, link(t, ns, name)); got != master {
			t.Errorf("%s master %q, want %s", name, got, master)
		}
	}
	// The kernel fills the VRF table from the addresses; vf.blue's own (link-local) routes are there too, none in main.
	checkVRFTable(t, ns, 100)

	// A new table recreates vr.blue. Its running ports are released and enslaved again, and the kernel cycles them
	// down and up each time (dropping their IPv6 addresses): one plan restores everything, in the new table.
	spec := twoVRFsOneL2()
	spec.VRFs[0].TableID = 101
	converge(t, m, spec)
	checkVRFTable(t, ns, 101)
}

func checkVRFTable(t *testing.T, ns *lab.Netns, table int) {
	t.Helper()
	got := routesOf(t, ns, table)
	for _, want := range []string{
		"unicast 10.100.0.0/24 dev l2br.100 src 10.100.0.1 proto kernel",
		"unicast fd00:100::/64 dev l2br.100 proto kernel",
		"unicast fe80::/64 dev vf.blue proto kernel",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("table %d = %q, want %q", table, got, want)
		}
	}
	for _, r := range routesOf(t, ns, unix.RT_TABLE_MAIN) {
		if strings.Contains(r, "dev vf.blue") || strings.Contains(r, "dev l2br.100") {
			t.Errorf("route of a VRF port in the main table: %s", r)
		}
	}
}

// TestVLANSubinterfaces covers the L2 trunk: created where 802.1Q exists, reported unsupported elsewhere.
func TestVLANSubinterfaces(t *testing.T) {
	ns := nsWith(t, lab.Topology{Veths: []lab.Veth{{A: lab.Port{NS: "nc", Name: "trunk"}, B: lab.Port{NS: "nc", Name: "trunkpeer"}}}})
	s := testSettings()
	s.L2Trunk = "trunk"
	m := newManager(t, ns, s)
	f, err := m.Features(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	p := converge(t, m, twoVRFsOneL2())
	if !f.VLAN {
		if len(p.Unsupported) != 1 || !errors.Is(p.Unsupported[0].Err, nodenet.ErrVLANNotSupported) ||
			!strings.Contains(p.Unsupported[0].Object, "vl.100") {
			t.Fatalf("unsupported = %v, want vl.100 with ErrVLANNotSupported", p.Unsupported)
		}
		if _, err := ns.Link("vl.100"); err == nil {
			t.Fatal("vl.100 exists on a kernel without 802.1Q")
		}
		// The rest converged and vl.100 is reported unsupported: only the 802.1Q device checks cannot run.
		testreq.KernelLacks(t, "802.1Q VLAN devices", errors.New(f.VLANReason))
	}
	v, ok := link(t, ns, "vl.100").(*netlink.Vlan)
	if !ok || v.VlanId != 100 || masterName(t, ns, v) != "l2br.100" {
		t.Fatalf("vl.100 = %+v, want vlan 100 on trunk in l2br.100", link(t, ns, "vl.100"))
	}
}
