package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// An apply that fails part way - a VXLAN the kernel refuses because a foreign device holds its VNI, after the
// new VRF's rules and bridges were created - returns the node to the last good state (links, routes, maps),
// traffic never stops, and the status says why.
func TestFailedApplyRestoresLastGood(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), n.agentArgs()...)
	good := n.appliedRev(t, a, "rev-1")
	gen := liveGeneration(t, a)

	// A foreign VXLAN device on VNI 3999 (same UDP port): the kernel rejects a second device with that VNI.
	h := n.ns.Handle()
	fvx := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "fvx0"}, VxlanId: 3999, Port: 4789}
	mustf(t, h.LinkAdd(fvx), "add foreign vxlan")

	ctx := context.Background()
	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: n.host("ha"), To: n.host("hb"), Dst: addrB, Rate: 1000})
	mustf(t, err, "start flow")
	defer flow.Stop(ctx)

	bad := baseSpec("rev-bad")
	bad.VRFs = append(bad.VRFs, v1.NodeVRF{Name: "green", ID: 3, TableID: tableGreen, VNI: 500})
	bad.Layer2s = append(bad.Layer2s, v1.NodeLayer2{Name: "l2b", VLAN: 301, VNI: 3999, MTU: 1500, VRF: "green"})
	bad.DataPlane.Interfaces = append(bad.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "br.green", VRF: "green"})
	n.writeSpec(t, bad)

	st := waitStatus(t, a, n.statusFile(), 30*time.Second, "rev-bad reported failed", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.FailedRevision == "rev-bad"
	})
	if st.Status.AppliedRevision != "rev-1" {
		t.Errorf("appliedRevision %q, want the last good rev-1", st.Status.AppliedRevision)
	}
	if st.Status.MapVersion != good.Status.MapVersion {
		t.Errorf("mapVersion %q, want rev-1's %q", st.Status.MapVersion, good.Status.MapVersion)
	}
	ready := condition(st, v1.ConditionReady)
	if ready == nil || ready.Status != "False" || ready.Reason != "ApplyFailed" || !strings.Contains(ready.Message, "l2vx.301") {
		t.Errorf("Ready condition %+v, want False/ApplyFailed naming l2vx.301", ready)
	}
	if !strings.Contains(st.Status.LastError, "step interfaces") {
		t.Errorf("lastError %q does not name the failed step", st.Status.LastError)
	}
	if deg := condition(st, v1.ConditionDegraded); deg == nil || deg.Status != "True" {
		t.Errorf("Degraded condition %+v, want True", deg)
	}
	// Everything the failed apply created is gone again; the foreign device stays.
	for _, name := range []string{"br.green", "vx.green", "l2br.301"} {
		if n.linkExists(name) {
			t.Errorf("%s still exists after the rollback", name)
		}
	}
	if !n.linkExists("fvx0") {
		t.Error("the foreign VXLAN was deleted")
	}
	rules, err := h.RuleList(netlink.FAMILY_V4)
	mustf(t, err, "list rules")
	for _, r := range rules {
		if r.Table == tableGreen {
			t.Errorf("rule of green's table left behind: %s", r)
		}
	}
	if g := liveGeneration(t, a); g != gen {
		t.Errorf("generation %v, want %v: the failed apply never reached the maps", g, gen)
	}
	pingOK(t, n.host("hc"), addrD, 5)
	res, err := flow.Stop(ctx)
	mustf(t, err, "stop flow")
	if !res.Clean() {
		t.Errorf("flow disturbed by the failed apply: %s", res)
	}

	// The known-bad spec is not applied again on resync (no second failure), and the node stays ready for rev-1
	// traffic; a fixed spec applies.
	mustf(t, lab.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() (bool, error) {
		return strings.Contains(a.out.String(), "failed before"), a.running()
	}), "a resync keeps the known-bad spec away")
	out := a.out.String()
	if c := strings.Count(out, "reconcile rolled_back"); c != 1 {
		t.Errorf("%d rollbacks logged, want 1:\n%s", c, out)
	}
	fixed := bad
	fixed.Revision = "rev-fixed"
	fixed.Layer2s[len(fixed.Layer2s)-1].VNI = 3998
	n.writeSpec(t, fixed)
	n.appliedRev(t, a, "rev-fixed")
	if !n.linkExists("l2vx.301") || !n.linkExists("br.green") {
		t.Error("the fixed spec's links were not created")
	}
}

func condition(s *v1.NodeNetworkConfig, typ string) *struct{ Status, Reason, Message string } {
	for _, c := range s.Status.Conditions {
		if c.Type == typ {
			return &struct{ Status, Reason, Message string }{string(c.Status), c.Reason, c.Message}
		}
	}
	return nil
}

// A corrupt state file does not wedge the node: the restarted agent starts, traffic keeps flowing, a failing
// revision leaves the node's objects in place (nothing to restore to, never "nothing"), the status says why,
// and the next good revision applies and writes a new file.
func TestCorruptStateFile(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), n.agentArgs()...)
	n.appliedRev(t, a, "rev-1")
	a.kill(syscall.SIGKILL)
	writeFileAtomic(t, n.stateFile(), []byte("# Written by network-agent\n{\"good\": {\"revision\": \"rev-1\", "))

	ctx := context.Background()
	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: n.host("ha"), To: n.host("hb"), Dst: addrB, Rate: 1000})
	mustf(t, err, "start flow")
	defer flow.Stop(ctx)
	mustf(t, n.ns.Handle().LinkAdd(&netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "fvx0"}, VxlanId: 3999, Port: 4789}),
		"add foreign vxlan")
	bad := baseSpec("rev-bad")
	bad.VRFs = append(bad.VRFs, v1.NodeVRF{Name: "green", ID: 3, TableID: tableGreen, VNI: 500})
	bad.Layer2s = append(bad.Layer2s, v1.NodeLayer2{Name: "l2b", VLAN: 301, VNI: 3999, MTU: 1500, VRF: "green"})
	n.writeSpec(t, bad)
	a = startAgent(t, freePort(t), n.agentArgs()...)
	st := waitStatus(t, a, n.statusFile(), 30*time.Second, "rev-bad reported failed", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.FailedRevision == "rev-bad"
	})
	if ready := condition(st, v1.ConditionReady); ready == nil || ready.Reason != "RestoreFailed" ||
		!strings.Contains(ready.Message, "no record of a good state") {
		t.Errorf("Ready %+v, want RestoreFailed: nothing to restore", ready)
	}
	if deg := condition(st, v1.ConditionDegraded); deg == nil || deg.Reason != "StateUnreadable" {
		t.Errorf("Degraded %+v, want StateUnreadable", deg)
	}
	for _, name := range []string{"br.red", "br.blue"} {
		if !n.linkExists(name) {
			t.Errorf("%s of the running configuration was removed", name)
		}
	}
	if aside, _ := filepath.Glob(n.stateFile() + ".unreadable-*"); len(aside) != 1 {
		t.Errorf("the unreadable file was not kept aside: %v", aside)
	}
	res, err := flow.Stop(ctx)
	mustf(t, err, "stop flow")
	if !res.Clean() {
		t.Errorf("flow disturbed: %s", res)
	}
	fixed := bad
	fixed.Revision = "rev-fixed"
	fixed.Layer2s[len(fixed.Layer2s)-1].VNI = 3998
	n.writeSpec(t, fixed)
	st = n.appliedRev(t, a, "rev-fixed")
	if deg := condition(st, v1.ConditionDegraded); deg == nil || deg.Status != "False" {
		t.Errorf("Degraded %+v after a good revision, want False", deg)
	}
}
