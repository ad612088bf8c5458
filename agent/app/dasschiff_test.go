package app_test

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// dasSchiffFile is a das-schiff node config file (its lookup tables: more VRFs than the node gets) with the
// NodeNetworkConfig that names the node's VRF; the VTEP address is not in it.
const dasSchiffFile = `vnimap: {red: 100, blue: 200}
vrfConfig:
  green: {vni: 500, rt: "65000:500"}
skipVRFConfig: [mgmt_vrf]
bpfInterfaces: [br.red, vx.red, br.mgmt_vrf]
---
apiVersion: network.network-operator.io/v1alpha1
kind: NodeNetworkConfig
metadata: {name: node}
spec:
  revision: ds-1
  vrfs:
  - name: red
  - name: mgmt_vrf
  dataplane:
    interfaces:
    - {name: nA, vrf: red}
    - {name: nB, vrf: red}
`

// The agent applies a das-schiff file with das-schiff's semantics: only the VRF the NodeNetworkConfig names
// exists (its VNI and table from vnimap), the VTEP address is das-schiff's underlay loopback's, the
// bpfInterfaces of red are routed in red and the one of the provisioned VRF by its VRF device's table (mode
// fib); traffic in red crosses the router.
func TestStandaloneDasSchiffFile(t *testing.T) {
	n := newNode(t)
	h := n.ns.Handle()
	// das-schiff's underlay loopback is a dummy; an empty bridge carries its address as well (this kernel may
	// lack the dummy driver).
	dum := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "dum.underlay"}}
	mustf(t, h.LinkAdd(dum), "add dum.underlay")
	addr, err := netlink.ParseAddr("10.255.9.1/32")
	mustf(t, err, "address")
	mustf(t, h.AddrAdd(dum, addr), "address of dum.underlay")
	mustf(t, h.LinkSetUp(dum), "dum.underlay up")
	// br.mgmt_vrf stands for the provisioning's bridge of the management VRF.
	mgmt := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br.mgmt_vrf"}}
	mustf(t, h.LinkAdd(mgmt), "add br.mgmt_vrf")
	mustf(t, h.LinkSetUp(mgmt), "br.mgmt_vrf up")
	writeFileAtomic(t, n.configFile(), []byte(dasSchiffFile))

	code, out := runAgent(t, time.Minute, n.agentArgs("--once")...)
	if code != 0 {
		t.Fatalf("--once exited %d:\n%s", code, out)
	}
	for _, w := range []string{"note: vrf red: VNI 100 from vnimap.red, table 1000000100",
		"note: vrf mgmt_vrf: in skipVRFConfig", "note: underlay.vtepAddress 10.255.9.1: the address of das-schiff's underlay loopback dum.underlay"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}

	st := waitStatus(t, nil, n.statusFile(), 10*time.Second, "status of ds-1", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "ds-1"
	})
	if len(st.Spec.VRFs) != 1 || st.Spec.VRFs[0].Name != "red" || st.Spec.VRFs[0].VNI != 100 || st.Spec.VRFs[0].TableID != tableRed {
		t.Errorf("VRFs %+v, want red only (VNI 100, table %d)", st.Spec.VRFs, tableRed)
	}
	modes := map[string]string{}
	for _, i := range st.Spec.DataPlane.Interfaces {
		modes[i.Name] = string(i.Mode) + "/" + i.VRF
	}
	for name, want := range map[string]string{"br.red": "route/red", "vx.red": "route/red", "br.mgmt_vrf": "fib/"} {
		if modes[name] != want {
			t.Errorf("interface %s: %q, want %q (all: %v)", name, modes[name], want, modes)
		}
	}
	for _, i := range st.Status.Interfaces {
		if i.Mode == v1.AttachNone || i.Error != "" {
			t.Errorf("interface %s not attached: %s", i.Name, i.Error)
		}
	}

	// The node: red's bridge and VXLAN (local address from dum.underlay), nothing of the lookup tables' other VRFs.
	vx, err := h.LinkByName("vx.red")
	mustf(t, err, "VXLAN of red")
	if v, ok := vx.(*netlink.Vxlan); !ok || v.VxlanId != 100 || !v.SrcAddr.Equal(net.ParseIP("10.255.9.1")) {
		t.Errorf("vx.red: %+v, want VNI 100 from 10.255.9.1", vx)
	}
	links, err := h.LinkList()
	mustf(t, err, "links")
	for _, l := range links {
		name := l.Attrs().Name
		if slices.ContainsFunc([]string{"blue", "green", "mgmt_vrf"}, func(v string) bool {
			return strings.HasSuffix(name, "."+v) && name != "br.mgmt_vrf"
		}) {
			t.Errorf("link %s exists: only VRFs a resource names are created", name)
		}
	}
	pingOK(t, n.host("ha"), addrB, 5) // red, through the router on nA and nB
}
