package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// gateFabricConfig is the node's fabric peer (a route reflector in AS 65000).
const gateFabricConfig = `frr defaults datacenter
!
router bgp 65000
 bgp router-id 192.168.77.254
 no bgp default ipv4-unicast
 neighbor 192.168.77.1 remote-as internal
 !
 address-family ipv4 unicast
  neighbor 192.168.77.1 activate
  neighbor 192.168.77.1 route-reflector-client
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor 192.168.77.1 activate
  neighbor 192.168.77.1 route-reflector-client
 exit-address-family
exit
`

// The health gate with real FRR: a revision with a wrong underlay AS number is taken by FRR (the config is
// valid) but the fabric refuses the session. The agent sees its fabric session not come back within
// --health-gate-timeout, reports the revision failed (which makes the operator roll back the rollout) and restores
// the last good config, with which the session is Established again.
func TestHealthGateRollsBackWrongUnderlayASN(t *testing.T) {
	frrtest.Require(t)
	n := newNode(t)
	peer := frrtest.Netns(t, "gatefab-")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"link", "add", "fab0", "type", "veth", "peer", "name", "n0", "netns", peer.Name},
		{"addr", "add", "192.168.77.1/24", "dev", "fab0"},
		{"link", "set", "fab0", "up"},
	} {
		if out, err := n.ns.Output(ctx, "ip", args...); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	mustf(t, peer.IP(ctx, "addr", "add", "192.168.77.254/24", "dev", "n0"), "peer address")
	mustf(t, peer.IP(ctx, "link", "set", "n0", "up"), "peer link")
	mustf(t, peer.IP(ctx, "link", "set", "lo", "up"), "peer loopback")
	frrtest.Router(t, frrproc.Options{Netns: peer.Name, Config: []byte(gateFabricConfig)})
	fr := frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})

	spec := baseSpec("rev-1")
	spec.Underlay.Neighbors = []v1.UnderlayNeighbor{{Address: "192.168.77.254", RemoteASN: "internal"}}
	n.writeSpec(t, spec)
	a := startAgent(t, freePort(t), frrAgentArgs(n, fr, "reload", "--health-gate-timeout", "15s")...)
	waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-1 applied with FRR", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-1" && isReady(s)
	})
	sessionUp := func(ctx context.Context) (bool, string) {
		out, err := fr.Vtysh(ctx, "show bgp summary json")
		if err != nil {
			return false, err.Error()
		}
		var sum map[string]struct {
			Peers map[string]struct {
				State string `json:"state"`
			} `json:"peers"`
		}
		if err := json.Unmarshal(out, &sum); err != nil {
			return false, fmt.Sprintf("%v: %s", err, out)
		}
		return sum["ipv4Unicast"].Peers["192.168.77.254"].State == "Established" &&
			sum["l2VpnEvpn"].Peers["192.168.77.254"].State == "Established", string(out)
	}
	frrtest.Eventually(t, 60*time.Second, "the fabric session Established (IPv4 and EVPN)", sessionUp)

	bad := spec
	bad.Revision = "rev-wrong-asn"
	bad.Underlay.ASN = 65001
	bad.ExpectedMapVersion = bad.MapVersion()
	n.writeSpec(t, bad)
	st := waitStatus(t, a, n.statusFile(), 90*time.Second, "the wrong AS number failed", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.FailedRevision == "rev-wrong-asn"
	})
	if st.Status.AppliedRevision != "rev-1" {
		t.Errorf("appliedRevision %q, want the last good rev-1", st.Status.AppliedRevision)
	}
	for _, want := range []string{"health gate", "session 192.168.77.254 (ipv4-unicast) not Established"} {
		if !strings.Contains(st.Status.LastError, want) {
			t.Errorf("lastError %q does not say %q", st.Status.LastError, want)
		}
	}
	running, err := fr.Vtysh(ctx, "show running-config")
	mustf(t, err, "running config")
	if !strings.Contains(string(running), "router bgp 65000\n") {
		t.Errorf("FRR does not run the last good AS after the rollback:\n%s", running)
	}
	frrtest.Eventually(t, 60*time.Second, "the fabric session Established again", sessionUp)
	if !strings.Contains(a.out.String(), "health gate") {
		t.Errorf("the agent's log does not mention the health gate:\n%s", a.out.String())
	}
}
