package frrvty

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// Fixtures are real FRR 8.4 outputs from a node of the EVPN test fabric
// (iBGP to a route reflector at 192.168.0.254, VNIs 100 and 200).
func TestSummaryFromFRR(t *testing.T) {
	var s Summary
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-vrf-all-summary.json")), &s); err != nil {
		t.Fatal(err)
	}
	peers := s.Peers()
	if len(peers) != 2 {
		t.Fatalf("peers = %+v", peers)
	}
	v4, evpn := peers[0], peers[1]
	if v4.AddressFamily != AFIPv4Unicast || evpn.AddressFamily != AFL2VPNEVPN || evpn.VRF != "default" || evpn.Peer != "192.168.0.254" {
		t.Errorf("peer order/labels: %+v", peers)
	}
	if !evpn.Established() || evpn.RemoteAS != 65000 || evpn.PrefixesReceived != 2 || evpn.PrefixesSent != 2 ||
		evpn.Uptime() != 12*time.Second || evpn.ConnectionsEstablished != 1 || evpn.ConnectionsDropped != 0 {
		t.Errorf("evpn peer = %+v", evpn)
	}
	if v4.PrefixesReceived != 1 || s["default"].IPv4Unicast.RouterID != "10.0.0.1" || s["default"].L2VPNEVPN.AS != 65000 {
		t.Errorf("ipv4 = %+v / %+v", v4, s["default"].IPv4Unicast)
	}

	var down Summary
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-vrf-all-summary-down.json")), &down); err != nil {
		t.Fatal(err)
	}
	p := down["default"].L2VPNEVPN.Peers["192.168.0.254"]
	if p.Established() || p.State != StateIdle || p.ConnectionsDropped != 1 || p.PrefixesReceived != 0 {
		t.Errorf("down peer = %+v", p)
	}

	var rr Summary
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-vrf-all-summary-rr.json")), &rr); err != nil {
		t.Fatal(err)
	}
	if ps := rr.Peers(); len(ps) != 4 || !ps[0].DynamicPeer || ps[0].Peer != "192.168.0.1" {
		t.Errorf("route reflector peers = %+v", ps)
	}

	var evpnSum AFSummary
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-l2vpn-evpn-summary.json")), &evpnSum); err != nil {
		t.Fatal(err)
	}
	if evpnSum.TotalPeers != 1 || !evpnSum.Peers["192.168.0.254"].Established() {
		t.Errorf("evpn summary = %+v", evpnSum)
	}
}

func TestNeighborsFromFRR(t *testing.T) {
	var n map[string]NeighborState
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-neighbors.json")), &n); err != nil {
		t.Fatal(err)
	}
	rr := n["192.168.0.254"]
	if rr.State != StateEstablished || rr.UptimeMsec != 12000 || rr.ConnectionsEstablished != 1 || rr.RemoteAS != 65000 {
		t.Errorf("neighbor = %+v", rr)
	}
}

func TestEVPNFromFRR(t *testing.T) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(frrtest.Output(t, "show-bgp-l2vpn-evpn-route.json")), &raw); err != nil {
		t.Fatal(err)
	}
	routes := parseEVPNRoutes(raw)
	types := map[int]int{}
	for _, r := range routes {
		types[r.RouteType]++
		if r.RD == "" || r.NextHop == "" || r.RTs == "" {
			t.Errorf("incomplete route %+v", r)
		}
	}
	if len(routes) != 4 || types[2] != 2 || types[3] != 2 {
		t.Errorf("routes = %+v", routes)
	}
	vnis, err := parseVNIs([]byte(frrtest.Output(t, "show-bgp-l2vpn-evpn-vni.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(vnis) != 2 || vnis[100].InKernel != "True" || vnis[200].RD != "10.0.0.1:200" || vnis[200].ImportRTs[0] != "65000:9200" {
		t.Errorf("vnis = %+v", vnis)
	}
}
