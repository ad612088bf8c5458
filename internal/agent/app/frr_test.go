package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/lab"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// The agent with real FRR (zebra + bgpd in the node namespace): the rendered config is validated and reloaded,
// FRR knows the VRFs' VNIs and the peerings, the BGP password reaches FRR and nothing else (not the logs, not
// the state file), BGP session states and reload results show in /metrics, and an unchanged config is not
// reloaded again.
func TestStandaloneWithRealFRR(t *testing.T) {
	frrtest.Require(t)
	n := newNode(t)
	fr := frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})

	const password = "s3cret-Pa55"
	pwDir := tempDir(t)
	mustf(t, os.MkdirAll(filepath.Join(pwDir, "default", "bgp-auth"), 0o700), "password dir")
	mustf(t, os.WriteFile(filepath.Join(pwDir, "default", "bgp-auth", "password"), []byte(password+"\n"), 0o600), "password file")

	spec := baseSpec("rev-1")
	spec.Underlay.Neighbors = []v1.UnderlayNeighbor{{Address: "192.0.2.254", RemoteASN: "65099"}}
	spec.VRFs[1].Leaks = []v1.VRFLeak{{Source: "red-leak", Seq: 10,
		Import: []v1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, Action: v1.PrefixActionPermit}}}}
	spec.BGPPeers = []v1.NodeBGPPeer{{Name: "tenant.peer", VRF: "red", RemoteASN: 65100, Addresses: []string{"10.1.1.2"},
		PasswordSecretRef: &v1.SecretKeyReference{Namespace: "default", Name: "bgp-auth", Key: "password"},
		Export:            []v1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, Action: v1.PrefixActionPermit}}}}
	n.writeSpec(t, spec)

	args := n.agentArgs()
	for i := range args {
		if args[i] == "none" && args[i-1] == "--frr" {
			args[i] = "reload"
		}
	}
	args = append(args, "--frr-vty-socket", fr.Dir, "--frr-conf-dir", fr.Dir,
		"--frr-state-dir", filepath.Join(n.dir, "frr-state"), "--password-dir", pwDir)
	a := startAgent(t, freePort(t), args...)
	st := waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-1 applied with FRR", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-1" && isReady(s)
	})
	if st.Status.MapVersion != st.Spec.ExpectedMapVersion {
		t.Errorf("mapVersion %q, want %q", st.Status.MapVersion, st.Spec.ExpectedMapVersion)
	}

	ctx := context.Background()
	running, err := fr.Vtysh(ctx, "show running-config")
	mustf(t, err, "running config")
	for _, want := range []string{"vrf vr.red", " vni 100", "vrf vr.blue", " vni 200", "router bgp 65000",
		"neighbor 192.0.2.254 remote-as 65099", "router bgp 65000 vrf vr.red", "neighbor tenant_peer password " + password,
		"neighbor 10.1.1.2 peer-group tenant_peer", "advertise-all-vni"} {
		if !strings.Contains(string(running), want) {
			t.Errorf("FRR running config lacks %q:\n%s", want, running)
		}
	}
	if strings.Contains(a.out.String(), password) {
		t.Error("the BGP password shows in the agent's output")
	}
	state, err := os.ReadFile(n.stateFile())
	mustf(t, err, "state file")
	if strings.Contains(string(state), password) {
		t.Error("the BGP password is in the state file")
	}

	// BGP state per peer: the underlay neighbour never answers, but it is reported with exactly one state.
	mustf(t, lab.WaitFor(ctx, 20*time.Second, 200*time.Millisecond, func() (bool, error) {
		fams, err := a.scrape()
		if err != nil {
			return false, err
		}
		states := counter(fams, "network_operator_bgp_session_state", map[string]string{"vrf": "default", "peer": "192.0.2.254"})
		applied := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"})
		return states >= 1 && applied >= 1, nil
	}), "BGP session state and FRR reload in /metrics")

	// rev-2 drops VRF blue: FRR is reloaded without it.
	rev2 := spec
	rev2.Revision = "rev-2"
	rev2.VRFs = rev2.VRFs[1:]
	spliceInterfaces(&rev2, func(i *v1.DataPlaneInterface) bool { return i.VRF != "blue" })
	n.writeSpec(t, rev2)
	waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-2 applied with FRR", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-2" && isReady(s)
	})
	running, err = fr.Vtysh(ctx, "show running-config")
	mustf(t, err, "running config")
	if strings.Contains(string(running), "vrf vr.blue") || !strings.Contains(string(running), "vrf vr.red") {
		t.Errorf("after rev-2 FRR should have vr.red and not vr.blue:\n%s", running)
	}
	// A resync with nothing new does not reload FRR.
	fams, err := a.scrape()
	mustf(t, err, "scrape")
	applied := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"})
	mustf(t, lab.WaitFor(ctx, 10*time.Second, 200*time.Millisecond, func() (bool, error) {
		fams, err := a.scrape()
		if err != nil {
			return false, err
		}
		return counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "skipped"}) >= 1, nil
	}), "a resync skips the identical FRR config")
	fams, err = a.scrape()
	mustf(t, err, "scrape")
	if got := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"}); got != applied {
		t.Errorf("FRR reloaded %v times on resync with an unchanged config", got-applied)
	}
}
