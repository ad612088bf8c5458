package frr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/bfd"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// bfdPeerConfig is the fabric side: an iBGP peer that runs BFD toward the node with the same fast profile.
const bfdPeerConfig = `frr defaults datacenter
!
router bgp 65000
 bgp router-id 192.168.0.254
 no bgp default ipv4-unicast
 neighbor 192.168.0.1 remote-as internal
 neighbor 192.168.0.1 timers 1 3
 neighbor 192.168.0.1 bfd
 neighbor 192.168.0.1 bfd profile fast
 !
 address-family ipv4 unicast
  neighbor 192.168.0.1 activate
 exit-address-family
exit
!
bfd
 profile fast
  transmit-interval 100
  receive-interval 100
 exit
exit
`

// TestBFDDetectsPeerFailure: the fabric peer stops answering (every packet it sends is dropped, the link stays
// up, as with a dead line card or a hung router). With BFD (100 ms, multiplier 3) the node's bgpd drops the
// session on bfdd's word within a second; without BFD only the hold timer (3 s here, 90 s by FRR's default)
// ends it. The times are logged: they are the closing note's BFD detection times.
// It runs against the FRR that ships and the host's 8.4.
func TestBFDDetectsPeerFailure(t *testing.T) {
	t.Parallel()
	daemons := []string{"zebra", "bgpd", "bfdd"}
	for _, host := range []frrtest.FRR{frrtest.Shipped(t), frrtest.Host(t)} {
		for _, withBFD := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/bfd %v", host.Name, withBFD), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				node, peer := nodeAndPeer(t, ctx, "frrbfdn-", "frrbfdp-")
				frrtest.Router(t, frrproc.Options{Tools: host.Tools, Netns: peer.Name, Config: []byte(bfdPeerConfig), Daemons: daemons})

				session := frr.SessionOptions{HoldTime: 3 * time.Second, KeepaliveTime: time.Second}
				if withBFD {
					session.BFD = &bfd.Profile{ReceiveInterval: 100 * time.Millisecond, TransmitInterval: 100 * time.Millisecond}
				}
				cfg := frr.NodeConfig{FRR: frr.Version{Major: host.Major}, DisableIPv6Forwarding: true, Underlay: frr.Underlay{
					ASN: fabricASN, RouterID: netip.MustParseAddr("10.0.0.1"), VTEPSource: netip.MustParseAddr("10.0.0.1"),
					Neighbors: []frr.Neighbor{{Address: netip.MustParseAddr(rrAddr), RemoteAS: frr.RemoteASInternal, SessionOptions: session}},
				}}
				conf, err := frr.Render(&cfg)
				must(t, err)
				n := frrtest.Router(t, frrproc.Options{Tools: host.Tools, Netns: node.Name, Config: conf, Daemons: daemons})

				state := func(ctx context.Context) (neighborState, error) {
					out, err := n.Vtysh(ctx, "show bgp neighbors "+rrAddr+" json")
					if err != nil {
						return neighborState{}, err
					}
					var m map[string]neighborState
					if err := json.Unmarshal(out, &m); err != nil {
						return neighborState{}, fmt.Errorf("%w: %s", err, out)
					}
					return m[rrAddr], nil
				}
				frrtest.Eventually(t, 60*time.Second, "the session Established", func(ctx context.Context) (bool, string) {
					s, err := state(ctx)
					return err == nil && s.State == "Established", fmt.Sprintf("%+v %v", s, err)
				})
				if withBFD {
					frrtest.Eventually(t, 30*time.Second, "the BFD session up", func(ctx context.Context) (bool, string) {
						out, err := n.Vtysh(ctx, "show bfd peers json")
						return err == nil && strings.Contains(string(out), `"status":"up"`), fmt.Sprintf("%s %v", out, err)
					})
					// Settled: a session BFD takes down in its first moments (BFD comes up after BGP; the peer may end the
					// session once on a BFD down before that) is established again, and bgpd was told BFD is up.
					frrtest.Eventually(t, 30*time.Second, "the session settled with BFD up", func(ctx context.Context) (bool, string) {
						s, err := state(ctx)
						return err == nil && s.State == "Established" && s.BFD.Status == "Up" && s.UpMsec >= 2000, fmt.Sprintf("%+v %v", s, err)
					})
				}

				// The peer goes silent: its namespace sends nothing more (nftables drops its whole output).
				failed := time.Now()
				for _, cmd := range [][]string{
					{"add", "table", "inet", "silence"},
					{"add", "chain", "inet", "silence", "out", "{ type filter hook output priority 0 ; policy drop ; }"},
				} {
					if out, err := peer.Exec(ctx, "nft", cmd...); err != nil {
						t.Fatalf("nft: %v: %s", err, out)
					}
				}
				var down neighborState
				frrtest.Eventually(t, 30*time.Second, "the session down", func(ctx context.Context) (bool, string) {
					s, err := state(ctx)
					down = s
					return err == nil && s.State != "Established", fmt.Sprintf("%+v %v", s, err)
				})
				detected := time.Since(failed)
				t.Logf("%s, BFD %v: peer failure detected after %v (reason %q, notification %q)", host.Name, withBFD, detected.Round(time.Millisecond), down.LastResetDueTo, down.LastNotificationReason)
				if withBFD {
					// bgpd ends the session with a Cease/BFD Down notification on bfdd's word.
					if !strings.Contains(down.LastNotificationReason+down.LastResetDueTo, "BFD") {
						t.Errorf("the session went down for %q/%q, want BFD's report", down.LastResetDueTo, down.LastNotificationReason)
					}
					if detected >= session.HoldTime {
						t.Errorf("BFD took %v, not less than the hold time %v", detected, session.HoldTime)
					}
				} else if !strings.Contains(down.LastNotificationReason+down.LastResetDueTo, "Hold Timer") {
					t.Errorf("without BFD the session went down for %q/%q, want the hold timer", down.LastResetDueTo, down.LastNotificationReason)
				}
			})
		}
	}
}

type neighborState struct {
	State  string `json:"bgpState"`
	UpMsec int64  `json:"bgpTimerUpMsec"`
	BFD    struct {
		Status string `json:"status"`
	} `json:"peerBfdInfo"`
	LastResetDueTo         string `json:"lastResetDueTo"`
	LastNotificationReason string `json:"lastNotificationReason"`
}
