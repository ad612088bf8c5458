package frrdiff_test

// compareCase is a running config and a candidate file: one branch of frr-reload.py's diff each. refused8 names
// the command FRR 8 refuses in the script, where only frr-reload.py's retry (the "no" form with fewer words)
// gets through: pkg/frr then falls back to frr-reload.py. (FRR 10's frr-reload.py writes those forms itself.)
type compareCase struct {
	name, running, cand string
	refused8            string
}

const bgpBase = `router bgp 65000
 bgp router-id 10.0.0.1
 no bgp default ipv4-unicast
 neighbor fabric peer-group
 neighbor fabric remote-as internal
 neighbor 192.168.0.254 peer-group fabric
 !
 address-family ipv4 unicast
  network 10.0.0.1/32
  neighbor fabric activate
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor fabric activate
  advertise-all-vni
 exit-address-family
exit
!
`

var compareCases = []compareCase{
	{name: "prefix-list-entry-replaced", // the demo's export change: the same sequence number, another prefix
		running: bgpBase + "ip prefix-list pl_export seq 10 permit 10.96.0.0/12\nip prefix-list pl_export seq 20 permit 10.250.0.0/16\n",
		cand:    bgpBase + "ip prefix-list pl_export seq 10 permit 10.96.0.0/12\nip prefix-list pl_export seq 20 permit 10.251.0.0/16\n"},
	{name: "prefix-list-entry-added",
		running: bgpBase + "ip prefix-list pl_export seq 10 permit 10.96.0.0/12\n",
		cand:    bgpBase + "ip prefix-list pl_export seq 10 permit 10.96.0.0/12\nip prefix-list pl_export seq 20 permit 10.250.0.0/16 le 32\n"},
	{name: "prefix-list-normalised", // host bits and "le ge" order as FRR shows them: nothing to do
		running: "ip prefix-list pl seq 10 permit 10.1.0.0/16 ge 24 le 28\nipv6 prefix-list pl6 seq 5 permit fd00:1::/48 le 64\n",
		cand:    "ip prefix-list pl seq 10 permit 10.1.2.3/16 le 28 ge 24\nipv6 prefix-list pl6 seq 5 permit FD00:0001:0::1/48   le 64\n"},
	{name: "route-map-renamed",
		running: "router bgp 65000\n neighbor fabric peer-group\n neighbor fabric remote-as internal\n !\n address-family ipv4 unicast\n" +
			"  neighbor fabric route-map rm_a in\n exit-address-family\nexit\n!\nroute-map rm_a permit 10\n match ip address prefix-list pl\nexit\n",
		cand: "router bgp 65000\n neighbor fabric peer-group\n neighbor fabric remote-as internal\n !\n address-family ipv4 unicast\n" +
			"  neighbor fabric route-map rm_b in\n exit-address-family\nexit\n!\nroute-map rm_b permit 10\n match ip address prefix-list pl\nexit\n"},
	{name: "route-map-entry-changed",
		running: "route-map rm permit 10\n match ip address prefix-list pl\n set community 65000:1 additive\nexit\n!\nroute-map rm deny 65535\nexit\n",
		cand:    "route-map rm permit 10\n match ip address prefix-list pl\n set community 65000:2 additive\nexit\n!\nroute-map rm permit 20\n match ip address prefix-list pl2\nexit\n"},
	{name: "peer-group-deleted",
		running: bgpBase + "router bgp 65000\n neighbor calico peer-group\n neighbor calico remote-as 64512\n neighbor calico timers 10 30\n" +
			" bgp listen range 10.250.0.0/24 peer-group calico\n neighbor 10.250.1.1 peer-group calico\n neighbor 10.250.1.1 description lb\n" +
			" address-family ipv4 unicast\n  neighbor calico activate\n  neighbor calico maximum-prefix 100\n exit-address-family\nexit\n",
		cand: bgpBase},
	{name: "neighbor-deleted", // its remote-as goes after its address-family lines
		running: bgpBase + "router bgp 65000\n neighbor 10.1.1.1 remote-as 64600\n neighbor 10.1.1.1 timers 3 9\n address-family ipv4 unicast\n  neighbor 10.1.1.1 activate\n" +
			"  neighbor 10.1.1.1 prefix-list pl in\n exit-address-family\nexit\n",
		cand: bgpBase},
	{name: "peer-group-remote-as-changed",
		running: bgpBase,
		cand: `router bgp 65000
 bgp router-id 10.0.0.1
 no bgp default ipv4-unicast
 neighbor fabric peer-group
 neighbor fabric remote-as external
 neighbor eth0 interface peer-group fabric
 !
 address-family ipv4 unicast
  network 10.0.0.1/32
  neighbor fabric activate
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor fabric activate
  advertise-all-vni
 exit-address-family
exit
`},
	{name: "vrf-added", // the VRF block before the BGP lines that use it; an exit-vrf after its lines
		running: bgpBase,
		cand: "vrf tenant1\n vni 5001\nexit-vrf\n!\n" + bgpBase + "router bgp 65000\n address-family ipv4 unicast\n  import vrf tenant1\n exit-address-family\nexit\n" +
			"router bgp 65000 vrf tenant1\n bgp router-id 10.0.0.1\n address-family ipv4 unicast\n  redistribute connected\n  import vrf default\n exit-address-family\n" +
			" address-family l2vpn evpn\n  advertise ipv4 unicast\n exit-address-family\nexit\n"},
	{name: "vrf-deleted", // "import vrf" lines before the VRF's instance, the default instance stays
		running: "vrf tenant1\n vni 5001\nexit-vrf\n!\n" + bgpBase + "router bgp 65000\n address-family ipv4 unicast\n  import vrf tenant1\n exit-address-family\nexit\n" +
			"router bgp 65000 vrf tenant1\n bgp router-id 10.0.0.1\n address-family ipv4 unicast\n  redistribute connected\n  import vrf default\n exit-address-family\nexit\n",
		cand: bgpBase},
	{name: "instances-deleted", // the default instance after the VRF's
		running: bgpBase + "router bgp 65000 vrf tenant1\n bgp router-id 10.0.0.1\nexit\n",
		cand:    "ip prefix-list pl seq 5 permit any\n"},
	{name: "evpn-vnis",
		running: bgpBase + "router bgp 65000\n address-family l2vpn evpn\n  vni 100\n   rd 10.0.0.1:100\n  exit-vni\n  vni 200\n   route-target import 65000:200\n" +
			"   route-target export 65000:200\n  exit-vni\n exit-address-family\nexit\n",
		cand: bgpBase + "router bgp 65000\n address-family l2vpn evpn\n  vni 200\n   route-target both 65000:200\n  exit-vni\n  vni 300\n  exit-vni\n" +
			" exit-address-family\nexit\n"},
	{name: "address-family-deleted",
		running: bgpBase + "router bgp 65000\n address-family ipv6 unicast\n  redistribute connected\n  import vrf route-map rm6\n exit-address-family\nexit\n",
		cand:    bgpBase},
	{name: "no-form-removed", // deleting "no X" is "X"
		running: "router bgp 65000\n no bgp default ipv4-unicast\n no bgp ebgp-requires-policy\nexit\n",
		cand:    "router bgp 65000\n no bgp ebgp-requires-policy\n bgp bestpath as-path multipath-relax\nexit\n"},
	{name: "static-routes",
		running: "ip route 10.9.0.0/16 blackhole\nip route 10.8.0.0/16 192.168.0.1\n!\nvrf red\n ip route 10.7.0.0/16 blackhole\nexit-vrf\n",
		cand:    "ip route 10.8.0.0/16 192.168.0.1\nip route 10.6.0.0/16 10.0.0.1 vrf red\n"},
	{name: "interface-changed", // FRR refuses "no description TEXT": FRR 8's frr-reload.py retries without TEXT
		running:  "interface lo\n description loopback\n ip address 10.0.0.1/32\nexit\n",
		cand:     "interface lo\n ip address 10.0.0.2/32\nexit\n",
		refused8: "no description loopback"},
	{name: "unremovable-and-noise",
		running: "frr version 8.4.4\nfrr defaults datacenter\nhostname vm\nlog syslog informational\nservice integrated-vtysh-config\n!\nline vty\nexit\n",
		cand:    "frr defaults datacenter\nhostname node1\n"},
	{name: "network-lines", // a bare address is a /8 to BGP and to frr-reload.py
		running: "router bgp 65000\n address-family ipv4 unicast\n  network 10.0.0.0/8\n  network 192.168.1.0/24 route-map rm\n exit-address-family\nexit\n",
		cand:    "router bgp 65000\n address-family ipv4 unicast\n  network 10.0.0.1\n  network 192.168.1.7/24 route-map rm\n exit-address-family\nexit\n"},
	{name: "neighbor-moved-to-address-family",
		running: "router bgp 65000\n neighbor 10.1.1.1 remote-as 65001\n address-family ipv4 unicast\n  neighbor 10.1.1.1 soft-reconfiguration inbound\n exit-address-family\nexit\n",
		cand:    "router bgp 65000\n neighbor 10.1.1.1 remote-as 65001\n neighbor 10.1.1.1 soft-reconfiguration inbound\nexit\n"},
}
