package nodenet_test

import (
	"strings"
	"testing"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// withoutSegmentation is twoVRFsOneL2 with disableSegmentation on its layer-2 network.
func withoutSegmentation() *v1alpha1.NodeNetworkConfigSpec {
	s := twoVRFsOneL2()
	s.Layer2s[0].DisableSegmentation = true
	return s
}

const (
	bridgeAlias = "network-operator:l2bridge:net1"
	markedAlias = bridgeAlias + " segmentation-off=tso,gso,gro"
)

// withBridge changes the observed l2br.100: its alias and segmentation offload state.
func withBridge(o *nodenet.Observed, alias string, seg []nodenet.OffloadFeature, segErr string) *nodenet.Observed {
	for i := range o.Links {
		if o.Links[i].Name == "l2br.100" {
			o.Links[i].Alias, o.Links[i].Segmentation, o.Links[i].SegmentationErr = alias, seg, segErr
		}
	}
	return o
}

func offload(tso, gso, gro bool, changeable bool) []nodenet.OffloadFeature {
	return []nodenet.OffloadFeature{{Name: "tso", On: tso, Changeable: changeable}, {Name: "gso", On: gso, Changeable: changeable},
		{Name: "gro", On: gro, Changeable: changeable}}
}

func TestPlanSegmentation(t *testing.T) {
	base := func() *nodenet.Observed {
		return observedAfter(mustDesired(t, twoVRFsOneL2(), testSettings(), fullKernel))
	}
	for _, tc := range []struct {
		name     string
		spec     *v1alpha1.NodeNetworkConfigSpec
		observed *nodenet.Observed
		want     []string
		note     string // a note the plan must have
	}{
		{
			name: "flag set: the features that are on are turned off", spec: withoutSegmentation(),
			observed: withBridge(base(), bridgeAlias, offload(true, true, false, true), ""),
			want:     []string{"interfaces: set segmentation off on l2br.100 (tso, gso)"},
		},
		{
			name: "flag set, all off: nothing", spec: withoutSegmentation(),
			observed: withBridge(base(), markedAlias, offload(false, false, false, true), ""),
		},
		{
			name: "flag set, fixed features: noted, not changed", spec: withoutSegmentation(),
			observed: withBridge(base(), bridgeAlias, []nodenet.OffloadFeature{{Name: "tso", On: true, Changeable: true},
				{Name: "gso", On: true}, {Name: "gro"}}, ""),
			want: []string{"interfaces: set segmentation off on l2br.100 (tso)"},
			note: "l2br.100: segmentation offload cannot be turned off, the driver keeps it fixed: gso on",
		},
		{
			name: "flag removed: what nodenet turned off is turned on again", spec: twoVRFsOneL2(),
			observed: withBridge(base(), bridgeAlias+" segmentation-off=tso,gso", offload(false, false, false, true), ""),
			want:     []string{"interfaces: set segmentation on again on l2br.100 (tso, gso, turned off by the agent)"},
		},
		{
			name: "flag removed, features already on: only the mark goes", spec: twoVRFsOneL2(),
			observed: withBridge(base(), markedAlias, offload(true, true, true, true), ""),
			want:     []string{"interfaces: forget segmentation off on l2br.100 (nothing to turn on again)"},
		},
		{
			name: "never set: features off by someone else stay off", spec: twoVRFsOneL2(),
			observed: withBridge(base(), bridgeAlias, offload(false, false, false, true), ""),
		},
		{
			name: "alias role corrected, the mark kept", spec: withoutSegmentation(),
			observed: withBridge(base(), "network-operator:l2bridge:old segmentation-off=tso,gso,gro", offload(false, false, false, true), ""),
			want: []string{`interfaces: set alias of l2br.100 "network-operator:l2bridge:old segmentation-off=tso,gso,gro" -> "` +
				markedAlias + `"`},
		},
		{
			name: "state not readable: noted, left alone", spec: withoutSegmentation(),
			observed: withBridge(base(), bridgeAlias, nil, "wrong namespace"),
			note:     "l2br.100: segmentation offload not read, left as it is: wrong namespace",
		},
		{
			name: "new network with the flag", spec: withoutSegmentation(),
			observed: observedAfter(mustDesired(t, withoutL2(twoVRFsOneL2()), testSettings(), fullKernel)),
			want: []string{
				"interfaces: create bridge l2br.100 (layer2 net1, vrf blue, mtu 1500, mac 02:00:00:00:01:00, master vr.blue)",
				"interfaces: create vxlan l2vx.100 (layer2 net1, vrf blue, vni 2100, local 192.0.2.1, dstport 4789, nolearning, mtu 1500, master l2br.100)",
				"interfaces: set bridge port flags of l2vx.100: learning off, neigh_suppress on",
				"interfaces: set segmentation off on l2br.100 (tso, gso, gro)",
				"interfaces: add address 10.100.0.1/24 to l2br.100",
				"interfaces: add address fd00:100::1/64 to l2br.100",
				"interfaces: set l2br.100 up",
				"interfaces: set l2vx.100 up",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nodenet.ComputePlan(mustDesired(t, tc.spec, testSettings(), fullKernel), tc.observed)
			diffLines(t, lines(p.Actions), tc.want)
			if tc.note != "" && !strings.Contains(strings.Join(p.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", p.Notes, tc.note)
			}
		})
	}
}

// ethtoolK returns "ethtool -k dev" of the namespace as feature -> state ("on", "off [fixed]", ...).
func ethtoolK(t *testing.T, ns *lab.Netns, dev string) map[string]string {
	t.Helper()
	out, err := ns.Output(testCtx(t), "ethtool", "-k", dev)
	if err != nil {
		t.Fatalf("ethtool -k %s: %v\n%s", dev, err, out)
	}
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ": "); ok {
			m[k] = v
		}
	}
	return m
}

func checkOffload(t *testing.T, ns *lab.Netns, want map[string]string) {
	t.Helper()
	got := ethtoolK(t, ns, "l2br.100")
	for k, v := range want {
		if got[k] != v {
			t.Errorf("l2br.100 %s: %q, want %q", k, got[k], v)
		}
	}
}

func planHas(t *testing.T, p *nodenet.Plan, line string) {
	t.Helper()
	for _, a := range p.Actions {
		if a.String() == line {
			return
		}
	}
	t.Errorf("plan lacks %q:\n%s", line, p)
}

// TestSegmentationOffload applies disableSegmentation to a layer-2 bridge in a namespace: the features go off,
// a restart plans nothing, and removing the flag turns on again only what nodenet turned off.
func TestSegmentationOffload(t *testing.T) {
	ns := nsWith(t, lab.Topology{})
	s := testSettings()
	s.NetNS = ns.NsHandle()
	m := newManager(t, ns, s)
	converge(t, m, twoVRFsOneL2())
	checkOffload(t, ns, map[string]string{"tcp-segmentation-offload": "on", "generic-segmentation-offload": "on",
		"generic-receive-offload": "on"})

	// Someone turns gro off: nodenet leaves it to them.
	if out, err := ns.Output(testCtx(t), "ethtool", "-K", "l2br.100", "gro", "off"); err != nil {
		t.Fatalf("ethtool -K: %v\n%s", err, out)
	}
	if p := mustPlan(t, m, twoVRFsOneL2()); !p.Empty() {
		t.Fatalf("plan without the flag after gro went off:\n%s", p)
	}

	p := converge(t, m, withoutSegmentation())
	planHas(t, p, "set segmentation off on l2br.100 (tso, gso)")
	off := map[string]string{"tcp-segmentation-offload": "off", "tx-tcp-segmentation": "off", "tx-tcp6-segmentation": "off",
		"generic-segmentation-offload": "off", "generic-receive-offload": "off"}
	checkOffload(t, ns, off)
	if alias := link(t, ns, "l2br.100").Attrs().Alias; alias != bridgeAlias+" segmentation-off=tso,gso" {
		t.Errorf("alias %q, want the ownership mark with tso,gso", alias)
	}
	// A restarted agent (a new manager) finds nothing to do.
	if p := mustPlan(t, newManager(t, ns, s), withoutSegmentation()); !p.Empty() {
		t.Fatalf("plan after restart:\n%s", p)
	}

	p = converge(t, m, twoVRFsOneL2())
	planHas(t, p, "set segmentation on again on l2br.100 (tso, gso, turned off by the agent)")
	checkOffload(t, ns, map[string]string{"tcp-segmentation-offload": "on", "generic-segmentation-offload": "on",
		"generic-receive-offload": "off"})
	if alias := link(t, ns, "l2br.100").Attrs().Alias; alias != bridgeAlias {
		t.Errorf("alias %q, want %q", alias, bridgeAlias)
	}

	// A network created with the flag: the new bridge's features go off right away.
	converge(t, m, withoutL2(twoVRFsOneL2()))
	p = converge(t, m, withoutSegmentation())
	planHas(t, p, "set segmentation off on l2br.100 (tso, gso, gro)")
	checkOffload(t, ns, off)
	if alias := link(t, ns, "l2br.100").Attrs().Alias; alias != markedAlias {
		t.Errorf("alias %q, want %q", alias, markedAlias)
	}
}

// TestSegmentationWrongNamespace: a manager whose Settings.NetNS is not its handle's namespace does not touch
// links of the same name elsewhere: it notes that it cannot read them.
func TestSegmentationWrongNamespace(t *testing.T) {
	ns := nsWith(t, lab.Topology{})
	m := newManager(t, ns, testSettings()) // NetNS 0: the test's namespace, not ns
	converge(t, m, twoVRFsOneL2())
	p := mustPlan(t, m, withoutSegmentation())
	if !p.Empty() || !strings.Contains(strings.Join(p.Notes, "\n"), "l2br.100: segmentation offload not read") {
		t.Fatalf("plan in the wrong namespace:\n%s", p)
	}
	checkOffload(t, ns, map[string]string{"tcp-segmentation-offload": "on", "generic-segmentation-offload": "on",
		"generic-receive-offload": "on"})
}
