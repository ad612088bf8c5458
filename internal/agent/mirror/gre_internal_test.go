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
