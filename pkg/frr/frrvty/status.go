package frrvty

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// BGP session state read from FRR's JSON output, for the agent's status and
// metrics.

// Summary is "show bgp vrf all summary json": per VRF name, per address family.
type Summary map[string]VRFSummary

// VRFSummary holds the address families FRR reports for one VRF.
type VRFSummary struct {
	IPv4Unicast *AFSummary `json:"ipv4Unicast,omitempty"`
	IPv6Unicast *AFSummary `json:"ipv6Unicast,omitempty"`
	L2VPNEVPN   *AFSummary `json:"l2VpnEvpn,omitempty"`
}

// AFSummary is one address family of one BGP instance; it is also the whole
// output of "show bgp l2vpn evpn summary json".
type AFSummary struct {
	RouterID     string                 `json:"routerId"`
	AS           uint32                 `json:"as"`
	VRFName      string                 `json:"vrfName"`
	Peers        map[string]PeerSummary `json:"peers"`
	FailedPeers  int                    `json:"failedPeers"`
	TotalPeers   int                    `json:"totalPeers"`
	DynamicPeers int                    `json:"dynamicPeers"`
}

// PeerSummary is one peer line of a BGP summary.
type PeerSummary struct {
	Hostname               string `json:"hostname"`
	RemoteAS               uint32 `json:"remoteAs"`
	LocalAS                uint32 `json:"localAs"`
	DynamicPeer            bool   `json:"dynamicPeer"`
	MsgRcvd                uint64 `json:"msgRcvd"`
	MsgSent                uint64 `json:"msgSent"`
	PeerUptimeMsec         int64  `json:"peerUptimeMsec"`
	PeerUptimeEstablished  int64  `json:"peerUptimeEstablishedEpoch"`
	PrefixesReceived       uint64 `json:"pfxRcd"`
	PrefixesSent           uint64 `json:"pfxSnt"`
	State                  string `json:"state"`
	PeerState              string `json:"peerState"`
	ConnectionsEstablished uint64 `json:"connectionsEstablished"`
	ConnectionsDropped     uint64 `json:"connectionsDropped"`
}

// Peer states as FRR names them.
const (
	StateEstablished = "Established"
	StateIdle        = "Idle"
	StateActive      = "Active"
	StateConnect     = "Connect"
)

// Established reports whether the session is up.
func (p PeerSummary) Established() bool { return p.State == StateEstablished }

// Uptime is how long the session has been in its current state.
func (p PeerSummary) Uptime() time.Duration {
	return time.Duration(p.PeerUptimeMsec) * time.Millisecond
}

// AddressFamily names as used in PeerStatus.
const (
	AFIPv4Unicast = "ipv4-unicast"
	AFIPv6Unicast = "ipv6-unicast"
	AFL2VPNEVPN   = "l2vpn-evpn"
)

// PeerStatus is one peer of one address family in one VRF, flattened for
// status reporting and metrics labels.
type PeerStatus struct {
	VRF           string
	AddressFamily string
	Peer          string
	PeerSummary
}

// Peers flattens the summary, sorted by VRF, address family and peer.
func (s Summary) Peers() []PeerStatus {
	var out []PeerStatus
	for vrf, v := range s {
		for _, af := range []struct {
			name string
			sum  *AFSummary
		}{{AFIPv4Unicast, v.IPv4Unicast}, {AFIPv6Unicast, v.IPv6Unicast}, {AFL2VPNEVPN, v.L2VPNEVPN}} {
			if af.sum == nil {
				continue
			}
			for peer, p := range af.sum.Peers {
				out = append(out, PeerStatus{VRF: vrf, AddressFamily: af.name, Peer: peer, PeerSummary: p})
			}
		}
	}
	slices.SortFunc(out, func(a, b PeerStatus) int {
		return cmp.Or(cmp.Compare(a.VRF, b.VRF), cmp.Compare(a.AddressFamily, b.AddressFamily), cmp.Compare(a.Peer, b.Peer))
	})
	return out
}

// Summary reads "show bgp vrf all summary json".
func (t Target) Summary(ctx context.Context) (Summary, error) {
	var s Summary
	if err := t.ShowJSON(ctx, "show bgp vrf all summary json", &s); err != nil {
		return nil, fmt.Errorf("bgp summary: %w", err)
	}
	return s, nil
}

// Answering checks that zebra and bgpd answer: "show bgp summary json" of the default instance, whose size does
// not grow with the VRFs (the summary of every VRF took bgpd tens of ms with 1000 of them).
func (t Target) Answering(ctx context.Context) error {
	var s map[string]any
	if err := t.ShowJSON(ctx, "show bgp summary json", &s); err != nil {
		return fmt.Errorf("bgp summary: %w", err)
	}
	return nil
}

// Alive checks that zebra and bgpd run and answer on their vty sockets, whatever their config (an empty one
// has no BGP instance, for which "show bgp summary json" fails).
func (t Target) Alive(ctx context.Context) error {
	for _, d := range []string{"zebra", "bgpd"} {
		if _, err := t.daemonCommand(ctx, d, "show version"); err != nil {
			return err
		}
	}
	return nil
}

// EVPNSummary reads "show bgp l2vpn evpn summary json".
func (t Target) EVPNSummary(ctx context.Context) (*AFSummary, error) {
	var s AFSummary
	if err := t.ShowJSON(ctx, "show bgp l2vpn evpn summary json", &s); err != nil {
		return nil, fmt.Errorf("evpn summary: %w", err)
	}
	return &s, nil
}

// NeighborState is the part of "show bgp [vrf X] neighbors json" used to tell a
// session reset apart from a long-lived one.
type NeighborState struct {
	RemoteAS               uint32 `json:"remoteAs"`
	State                  string `json:"bgpState"`
	UptimeMsec             int64  `json:"bgpTimerUpMsec"`
	EstablishedEpoch       int64  `json:"bgpTimerUpEstablishedEpoch"`
	ConnectionsEstablished uint64 `json:"connectionsEstablished"`
	ConnectionsDropped     uint64 `json:"connectionsDropped"`
	LastResetReason        string `json:"lastResetDueTo"`
}

// Neighbors reads "show bgp [vrf X] neighbors json" keyed by peer.
func (t Target) Neighbors(ctx context.Context, vrf string) (map[string]NeighborState, error) {
	cmd := "show bgp neighbors json"
	if vrf != "" {
		cmd = "show bgp vrf " + vrf + " neighbors json"
	}
	var n map[string]NeighborState
	if err := t.ShowJSON(ctx, cmd, &n); err != nil {
		return nil, fmt.Errorf("bgp neighbors: %w", err)
	}
	return n, nil
}

// VNI is one entry of "show bgp l2vpn evpn vni json".
type VNI struct {
	VNI          uint32   `json:"vni"`
	Type         string   `json:"type"`
	InKernel     string   `json:"inKernel"`
	RD           string   `json:"rd"`
	OriginatorIP string   `json:"originatorIp"`
	ImportRTs    []string `json:"importRts"`
	ExportRTs    []string `json:"exportRts"`
}

// VNIs reads "show bgp l2vpn evpn vni json", keyed by VNI.
func (t Target) VNIs(ctx context.Context) (map[uint32]VNI, error) {
	out, err := t.Show(ctx, "show bgp l2vpn evpn vni json")
	if err != nil {
		return nil, fmt.Errorf("evpn vnis: %w", err)
	}
	return parseVNIs(out)
}

// parseVNIs keeps the numeric keys; the others are global flags and counters.
func parseVNIs(out []byte) (map[uint32]VNI, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("decode evpn vnis: %w", err)
	}
	vnis := map[uint32]VNI{}
	for k, v := range raw {
		n, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			continue
		}
		var vni VNI
		if err := json.Unmarshal(v, &vni); err != nil {
			return nil, fmt.Errorf("decode evpn vni %s: %w", k, err)
		}
		vnis[uint32(n)] = vni
	}
	return vnis, nil
}

// EVPNRoute is one path of "show bgp l2vpn evpn route json".
type EVPNRoute struct {
	RD        string
	Prefix    string
	RouteType int
	NextHop   string
	RTs       string
	Best      bool
}

// EVPNRoutes reads "show bgp l2vpn evpn route [type macip|multicast|prefix] json"
// (typ "" = all) into a flat, sorted list.
func (t Target) EVPNRoutes(ctx context.Context, typ string) ([]EVPNRoute, error) {
	cmd := "show bgp l2vpn evpn route json"
	if typ != "" {
		cmd = "show bgp l2vpn evpn route type " + typ + " json"
	}
	var raw map[string]any
	if err := t.ShowJSON(ctx, cmd, &raw); err != nil {
		return nil, fmt.Errorf("evpn routes: %w", err)
	}
	return parseEVPNRoutes(raw), nil
}

// parseEVPNRoutes walks {rd: {rd: "...", prefix: {paths: [[{...}]]}}}; the
// top level also has counters (numPrefix, numPaths) that are not RDs.
func parseEVPNRoutes(raw map[string]any) []EVPNRoute {
	var out []EVPNRoute
	for rdKey, rdVal := range raw {
		rdMap, ok := rdVal.(map[string]any)
		if !ok {
			continue
		}
		for pfx, pv := range rdMap {
			pm, ok := pv.(map[string]any)
			if !ok {
				continue
			}
			paths, _ := pm["paths"].([]any)
			for _, group := range paths {
				list, ok := group.([]any)
				if !ok {
					// Some FRR versions give a flat list of paths.
					list = []any{group}
				}
				for _, p := range list {
					path, ok := p.(map[string]any)
					if !ok {
						continue
					}
					r := EVPNRoute{RD: rdKey, Prefix: pfx}
					if n, ok := path["routeType"].(float64); ok {
						r.RouteType = int(n)
					}
					r.Best, _ = path["bestpath"].(bool)
					if ec, ok := path["extendedCommunity"].(map[string]any); ok {
						r.RTs, _ = ec["string"].(string)
					}
					if nhs, ok := path["nexthops"].([]any); ok && len(nhs) > 0 {
						if nh, ok := nhs[0].(map[string]any); ok {
							r.NextHop, _ = nh["ip"].(string)
						}
					}
					out = append(out, r)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b EVPNRoute) int {
		return cmp.Or(cmp.Compare(a.RD, b.RD), cmp.Compare(a.Prefix, b.Prefix), cmp.Compare(a.NextHop, b.NextHop))
	})
	return out
}
