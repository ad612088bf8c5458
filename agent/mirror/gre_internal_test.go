package mirror

import (
	"net/netip"
	"testing"
)

// A tunnel without a source address is still of its remote's family: netlink picks the kind from the local
// address, and a nil one made an IPv4 gretap an ip6gretap, which the kernel refuses (ERANGE).
func TestTunnelKindFollowsRemote(t *testing.T) {
	for _, tc := range []struct {
		kind, local, remote, want string
	}{
		{"gretap", "", "192.0.2.1", "gretap"},
		{"gretap", "10.0.0.1", "192.0.2.1", "gretap"},
		{"ip6gretap", "", "2001:db8::1", "ip6gretap"},
		{"ip6gretap", "2001:db8::2", "2001:db8::1", "ip6gretap"},
		{"gre", "", "192.0.2.1", "gre"},
		{"ip6gre", "", "2001:db8::1", "ip6gre"},
	} {
		tun := Tunnel{Device: "gm.x", Kind: tc.kind, Remote: netip.MustParseAddr(tc.remote)}
		if tc.local != "" {
			tun.Local = netip.MustParseAddr(tc.local)
		}
		if got := tun.link(0, 0).Type(); got != tc.want {
			t.Errorf("%s tunnel local %q remote %s: netlink kind %s, want %s", tc.kind, tc.local, tc.remote, got, tc.want)
		}
	}
}

// The source loopback routes a tunnel's outer packets only in a VRF, where it is a slave of the VRF device. In
// the default VRF it is a plain dummy: as the tunnel's underlay device it would swallow every copy (the kernel
// sends a tunnel's packets out of its underlay when no route goes through it), so the tunnel has none there.
func TestTunnelUnderlayOnlyInVRF(t *testing.T) {
	for _, tc := range []struct {
		vrf, loopback, want string
	}{
		{"", "lo.mir", ""},
		{"vr.mir", "lo.mir", "lo.mir"},
		{"vr.mir", "", ""},
	} {
		tun := Tunnel{Device: "gm.x", Kind: "gretap", VRF: tc.vrf, Loopback: tc.loopback}
		if got := tun.underlay(); got != tc.want {
			t.Errorf("tunnel in VRF %q with loopback %q: underlay %q, want %q", tc.vrf, tc.loopback, got, tc.want)
		}
	}
	inDefault := Tunnel{Target: "c", Device: "gm.c", Kind: "gretap", Remote: netip.MustParseAddr("192.0.2.1")}
	withLoopback := inDefault
	withLoopback.Loopback = "lo.mir"
	if inDefault.alias() != withLoopback.alias() {
		t.Error("in the default VRF the source loopback changes the tunnel's alias, though not the tunnel")
	}
}
