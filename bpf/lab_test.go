package bpf_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// The test topology, all in one fresh network namespace:
//
//	rin   (veth, forwarding on)  ingress of the routed cases; iface_table by VLAN
//	rout  (veth)                 egress: 10.1.0.1/24, fd00:1::1/64; neighbours .2 / ::2 permanent
//	rnof  (veth, forwarding off) lookup_ifindex of VRF 2 -> FWD_DISABLED; not in iface_table
//	rred  (veth)                 ingress of redirect mode (MAC rewrite) -> rout
//	rpeer (veth)                 ingress of redirect mode with bpf_redirect_peer -> rout
//
// Routing table 100 (VRF 1 and 2) holds the routes below; VRF 3 uses table 999,
// which does not exist; VRF 4 routes by main (only rout's connected routes),
// and traffic from VRF 1's sbr prefixes (addrSBR, sbr6) entering it by table 100.
var (
	macIn      = [6]byte{0x02, 0, 0, 0, 0x01, 0x01}
	macOut     = [6]byte{0x02, 0, 0, 0, 0x01, 0x02}
	macRed     = [6]byte{0x02, 0, 0, 0, 0x01, 0x03}
	macPeer    = [6]byte{0x02, 0, 0, 0, 0x01, 0x04}
	macNeigh   = [6]byte{0x02, 0, 0, 0, 0x02, 0x02} // permanent neighbour behind rout
	macClient  = [6]byte{0x02, 0, 0, 0, 0x03, 0x03} // sender of test packets
	macRedSrc  = maps.MAC{0x02, 0, 0, 0, 0x04, 0x01}
	macRedDst  = maps.MAC{0x02, 0, 0, 0, 0x04, 0x02}
	macBcast   = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	macMcast4  = [6]byte{0x01, 0x00, 0x5e, 0x00, 0x00, 0x05}
	macOther   = [6]byte{0x02, 0, 0, 0, 0x09, 0x09} // unicast, not ours
	tableID    = uint32(100)
	addrClient = netip.MustParseAddr("10.0.0.1")
	addrRoute  = netip.MustParseAddr("10.2.0.5")  // via 10.1.0.2, neighbour known
	addrNoNbr  = netip.MustParseAddr("10.3.0.5")  // via 10.1.0.3, no neighbour
	addrMTU    = netip.MustParseAddr("10.4.0.5")  // via 10.1.0.2, route mtu 1000 (locked)
	addrBlack  = netip.MustParseAddr("10.9.0.5")  // blackhole
	addrLocal  = netip.MustParseAddr("10.1.0.1")  // local route in table 100
	addrNoRt   = netip.MustParseAddr("192.0.2.1") // no route in table 100
	addrMain   = netip.MustParseAddr("10.8.0.5")  // via 10.1.0.2 in the main table only
	client6    = netip.MustParseAddr("fd00:a::1")
	addrSBR    = netip.MustParseAddr("10.0.5.1")  // in VRF 1's sbr prefix 10.0.5.0/24
	sbr6       = netip.MustParseAddr("fd00:5::1") // in VRF 1's sbr prefix fd00:5::/64
	route6     = netip.MustParseAddr("fd00:2::5")
	noNbr6     = netip.MustParseAddr("fd00:3::5")
	mtu6       = netip.MustParseAddr("fd00:4::5") // via fd00:1::2, route mtu 1280 (locked)
	black6     = netip.MustParseAddr("fd00:9::5")
	local6     = netip.MustParseAddr("fd00:1::1")
	main6      = netip.MustParseAddr("fd00:8::5") // via fd00:1::2 in the main table only
	gwRoute    = netip.MustParseAddr("10.1.0.2")
	gwNoNbr    = netip.MustParseAddr("10.1.0.3")
	gw6Route   = netip.MustParseAddr("fd00:1::2")
	gw6NoNbr   = netip.MustParseAddr("fd00:1::3")
)

// VLANs of rin in iface_table and what they select.
const (
	vlanUntagged     = 0   // VRF 1, route
	vlanRoute        = 100 // VRF 1, route
	vlanStrict       = 200 // VRF 1, route, strict
	vlanFwdOff       = 300 // VRF 2 (lookup via rnof), route
	vlanFwdOffStrict = 301 // VRF 2, route, strict
	vlanNoVRF        = 401 // raw entry: VRF 44 not in vrf_table
	vlanNoVRFStrict  = 402 // raw entry: VRF 44, strict
	vlanNoCounter    = 403 // raw entry (TestRouterVRFWithoutCounter only): VRF id without counter
	vlanPass         = 500 // VRF 1, pass
	vlanNoTable      = 700 // VRF 3 (table 999 does not exist), route
	vlanMain         = 600 // VRF 4 (the main table: source-based routing applies), route
	vlanFIB          = 800 // no VRF, fib: rin has no VRF device, so the main table
	vlanUnknown      = 999 // not in iface_table
	vrfNoVRF         = 44
)

type lab struct {
	ns                      netns.NsHandle
	name                    string
	in, out, nof, red, peer int // ifindexes
	objs                    *bpf.RouterObjects
	set                     *maps.Set
	tables                  maps.Tables
	rawIfaces               map[maps.InterfaceKey]maps.IfaceValue
	// outPeer gives rout an iface_table entry with Peer (a pass-mode entry: nothing arrives on it): the tc
	// router then hands what the fib routes out of rout to its peer (bpf_redirect_peer).
	outPeer bool
	// features pick the router's variant; nil: the running kernel's (bpf.RouterSpec).
	features *bpf.Features
}

// requireRoot: the tests create network namespaces and load BPF programs.
func requireRoot(tb testing.TB) {
	tb.Helper()
	testreq.Root(tb)
}

// inNS runs fn on a thread switched into the lab's namespace. BPF_PROG_TEST_RUN
// resolves the ctx ifindex in the calling thread's namespace.
func (l *lab) inNS(tb testing.TB, fn func() error) {
	tb.Helper()
	if err := runInNS(l.ns, fn); err != nil {
		tb.Fatal(err)
	}
}

func runInNS(ns netns.NsHandle, fn func() error) error { return netnsrun.Run(ns, fn) }

// newLab builds the namespace, loads the router unpinned and applies the test
// tables.
func newLab(tb testing.TB) *lab { return newLabWith(tb, false) }

// newLabWith is newLab, with rout marked Peer when outPeer.
func newLabWith(tb testing.TB, outPeer bool) *lab { return newLabFor(tb, outPeer, nil) }

// newLabFor is newLabWith with the router's variant for kernel features f (nil: the running kernel's).
func newLabFor(tb testing.TB, outPeer bool, f *bpf.Features) *lab {
	tb.Helper()
	requireRoot(tb)
	// The lab's VRFs are tables without devices: a variant that looks up by table id routes only where the
	// kernel's lookups take one.
	kernel, err := bpf.ProbeFeatures()
	if err != nil {
		tb.Fatal(err)
	}
	if f == nil || f.FIBTableID {
		if !kernel.FIBTableID {
			testreq.KernelLacks(tb, bpf.FeatureFIBTableID+" (the lab routes by table id, without VRF devices)",
				errors.New("bpf_fib_lookup answers EINVAL to BPF_FIB_LOOKUP_TBID"))
		}
	}
	l, err := buildLab(outPeer, f)
	if l != nil {
		tb.Cleanup(func() {
			if err := l.close(); err != nil {
				tb.Errorf("lab cleanup: %v", err)
			}
		})
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		testreq.KernelLacks(tb, "a BPF feature the router needs", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func buildLab(outPeer bool, f *bpf.Features) (*lab, error) {
	var suffix [4]byte
	rand.Read(suffix[:])
	l := &lab{name: "bpft-" + hex.EncodeToString(suffix[:]), outPeer: outPeer, features: f}

	ns, err := namedns.Create(l.name)
	if err != nil {
		return nil, err
	}
	l.ns = ns

	if err := l.topology(); err != nil {
		return l, err
	}
	if err := l.load(); err != nil {
		return l, err
	}
	return l, l.applyTables()
}

func (l *lab) close() error {
	var errs []error
	if l.set != nil {
		errs = append(errs, l.set.Close())
	}
	if l.objs != nil {
		errs = append(errs, l.objs.Close())
	}
	if l.ns.IsOpen() {
		errs = append(errs, l.ns.Close())
		errs = append(errs, namedns.Delete(l.name))
	}
	return errors.Join(errs...)
}

func (l *lab) topology() error {
	h, err := netlink.NewHandleAt(l.ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", l.name, err)
	}
	defer h.Close()

	veth := func(name string, mac [6]byte) (int, error) {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, HardwareAddr: net.HardwareAddr(mac[:])},
			PeerName: name + "p"}
		if err := h.LinkAdd(v); err != nil {
			return 0, fmt.Errorf("add veth %s: %w", name, err)
		}
		for _, n := range []string{name, name + "p"} {
			link, err := h.LinkByName(n)
			if err != nil {
				return 0, err
			}
			if err := h.LinkSetUp(link); err != nil {
				return 0, fmt.Errorf("set %s up: %w", n, err)
			}
		}
		link, err := h.LinkByName(name)
		if err != nil {
			return 0, err
		}
		return link.Attrs().Index, nil
	}
	for _, d := range []struct {
		name string
		mac  [6]byte
		idx  *int
	}{{"rin", macIn, &l.in}, {"rout", macOut, &l.out}, {"rnof", macOther, &l.nof},
		{"rred", macRed, &l.red}, {"rpeer", macPeer, &l.peer}} {
		if *d.idx, err = veth(d.name, d.mac); err != nil {
			return err
		}
	}

	out, err := h.LinkByIndex(l.out)
	if err != nil {
		return err
	}
	for _, a := range []string{"10.1.0.1/24", "fd00:1::1/64"} {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return err
		}
		addr.Flags = unix.IFA_F_NODAD
		if err := h.AddrAdd(out, addr); err != nil {
			return fmt.Errorf("add %s to rout: %w", a, err)
		}
	}
	for _, nb := range []netip.Addr{gwRoute, gw6Route} {
		n := &netlink.Neigh{LinkIndex: l.out, State: netlink.NUD_PERMANENT, IP: net.IP(nb.AsSlice()),
			HardwareAddr: net.HardwareAddr(macNeigh[:])}
		if err := h.NeighAdd(n); err != nil {
			return fmt.Errorf("add neighbour %s: %w", nb, err)
		}
	}

	prefix := func(s string) *net.IPNet {
		p := netip.MustParsePrefix(s)
		return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
	}
	ip := func(a netip.Addr) net.IP { return net.IP(a.AsSlice()) }
	routes := []*netlink.Route{
		{Dst: prefix("10.1.0.0/24"), LinkIndex: l.out, Scope: netlink.SCOPE_LINK},
		{Dst: prefix("fd00:1::/64"), LinkIndex: l.out},
		{Dst: prefix("10.2.0.0/24"), Gw: ip(gwRoute), LinkIndex: l.out},
		{Dst: prefix("10.3.0.0/24"), Gw: ip(gwNoNbr), LinkIndex: l.out},
		{Dst: prefix("10.4.0.0/24"), Gw: ip(gwRoute), LinkIndex: l.out, MTU: 1000, MTULock: true},
		{Dst: prefix("10.9.0.0/24"), Type: unix.RTN_BLACKHOLE},
		{Dst: prefix("10.1.0.1/32"), LinkIndex: l.out, Type: unix.RTN_LOCAL, Scope: netlink.SCOPE_HOST},
		{Dst: prefix("fd00:2::/64"), Gw: ip(gw6Route), LinkIndex: l.out},
		{Dst: prefix("fd00:3::/64"), Gw: ip(gw6NoNbr), LinkIndex: l.out},
		{Dst: prefix("fd00:4::/64"), Gw: ip(gw6Route), LinkIndex: l.out, MTU: 1280, MTULock: true},
		{Dst: prefix("fd00:9::/64"), Type: unix.RTN_BLACKHOLE},
		{Dst: prefix("fd00:1::1/128"), LinkIndex: l.out, Type: unix.RTN_LOCAL},
	}
	for _, r := range routes {
		r.Table = int(tableID)
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("add route %s table %d: %w", r.Dst, r.Table, err)
		}
	}
	// Routes of the main table only (mode fib), next to rout's connected ones.
	for _, r := range []*netlink.Route{
		{Dst: prefix("10.8.0.0/24"), Gw: ip(gwRoute), LinkIndex: l.out},
		{Dst: prefix("fd00:8::/64"), Gw: ip(gw6Route), LinkIndex: l.out},
	} {
		if err := h.RouteAdd(r); err != nil {
			return fmt.Errorf("add route %s table main: %w", r.Dst, err)
		}
	}

	// Forwarding on rin (what bpf_fib_lookup checks), off on rnof. Sysctls
	// are per namespace of the writing thread.
	return runInNS(l.ns, func() error {
		for _, s := range []struct{ path, val string }{
			{"/proc/sys/net/ipv4/conf/rin/forwarding", "1"},
			{"/proc/sys/net/ipv6/conf/rin/forwarding", "1"},
			{"/proc/sys/net/ipv4/conf/rnof/forwarding", "0"},
			{"/proc/sys/net/ipv6/conf/rnof/forwarding", "0"},
		} {
			if err := os.WriteFile(s.path, []byte(s.val), 0o644); err != nil {
				return fmt.Errorf("sysctl %s: %w", s.path, err)
			}
		}
		return nil
	})
}

func (l *lab) load() error {
	spec, err := bpf.RouterSpec()
	if l.features != nil {
		spec, err = bpf.RouterSpecFor(*l.features)
	}
	if err != nil {
		return err
	}
	for _, m := range spec.Maps {
		m.Pinning = ebpf.PinNone
	}
	var objs bpf.RouterObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("load router: %+v", ve)
		}
		return fmt.Errorf("load router: %w", err)
	}
	l.objs = &objs
	l.set, err = maps.New(&objs.RouterMaps)
	return err
}

func (l *lab) applyTables() error {
	l.tables = maps.Tables{
		VRFs: []maps.VRF{
			{ID: 1, TableID: tableID, VNI: 1001},
			{ID: 2, TableID: tableID, LookupIfindex: uint32(l.nof)},
			{ID: 3, TableID: 999},
			{ID: 4, TableID: limits.MainTableID},
		},
		Interfaces: []maps.Interface{
			{Ifindex: uint32(l.in), VLAN: vlanUntagged, VRF: 1, Mode: maps.ModeRoute},
			{Ifindex: uint32(l.in), VLAN: vlanRoute, VRF: 1, Mode: maps.ModeRoute},
			{Ifindex: uint32(l.in), VLAN: vlanStrict, VRF: 1, Mode: maps.ModeRoute, Strict: true},
			{Ifindex: uint32(l.in), VLAN: vlanFwdOff, VRF: 2, Mode: maps.ModeRoute},
			{Ifindex: uint32(l.in), VLAN: vlanFwdOffStrict, VRF: 2, Mode: maps.ModeRoute, Strict: true},
			{Ifindex: uint32(l.in), VLAN: vlanPass, VRF: 1, Mode: maps.ModePass},
			{Ifindex: uint32(l.in), VLAN: vlanNoTable, VRF: 3, Mode: maps.ModeRoute},
			{Ifindex: uint32(l.in), VLAN: vlanMain, VRF: 4, Mode: maps.ModeRoute},
			{Ifindex: uint32(l.in), VLAN: vlanFIB, Mode: maps.ModeFIB},
			{Ifindex: uint32(l.red), VRF: 1, Mode: maps.ModeRedirect},
			{Ifindex: uint32(l.peer), VRF: 1, Mode: maps.ModeRedirect},
			{Ifindex: uint32(l.red), VLAN: vlanRoute, VRF: 1, Mode: maps.ModeRedirect},
			{Ifindex: uint32(l.peer), VLAN: vlanRoute, VRF: 1, Mode: maps.ModeRedirect},
		},
		Redirects: []maps.Redirect{
			{Ifindex: uint32(l.red), EgressIfindex: uint32(l.out), SrcMAC: macRedSrc, DstMAC: macRedDst},
			{Ifindex: uint32(l.peer), EgressIfindex: uint32(l.out), Peer: true},
		},
		SBR: []maps.SBR{
			{Prefix: netip.PrefixFrom(addrSBR, 24).Masked(), VRF: 1},
			{Prefix: netip.PrefixFrom(sbr6, 64).Masked(), VRF: 1},
		},
	}
	if l.outPeer {
		l.tables.Interfaces = append(l.tables.Interfaces, maps.Interface{Ifindex: uint32(l.out), VRF: 1, Mode: maps.ModePass, Peer: true})
	}
	if _, err := l.set.Apply(context.Background(), l.tables, "bpf-test"); err != nil {
		return err
	}
	// States validated tables cannot express: an interface whose VRF is
	// missing. Written straight into the live slot.
	v, err := l.set.Version()
	if err != nil {
		return err
	}
	in, nof := uint32(l.in), uint32(l.nof)
	l.rawIfaces = map[maps.InterfaceKey]maps.IfaceValue{
		{Ifindex: in, VLAN: vlanNoVRF}:       {VrfId: vrfNoVRF, Mode: bpf.RouterIfaceModeIFACE_MODE_ROUTE},
		{Ifindex: in, VLAN: vlanNoVRFStrict}: {VrfId: vrfNoVRF, Mode: bpf.RouterIfaceModeIFACE_MODE_ROUTE, Flags: bpf.RouterIfaceFlagsIFACE_F_STRICT},
		// Redirect mode without a redirect_table entry (rnof has none).
		{Ifindex: nof, VLAN: vlanRoute}:  {VrfId: 1, Mode: bpf.RouterIfaceModeIFACE_MODE_REDIRECT},
		{Ifindex: nof, VLAN: vlanStrict}: {VrfId: 1, Mode: bpf.RouterIfaceModeIFACE_MODE_REDIRECT, Flags: bpf.RouterIfaceFlagsIFACE_F_STRICT},
	}
	for k, val := range l.rawIfaces {
		key := maps.IfaceKey{Slot: v.Slot, Ifindex: k.Ifindex, Vlan: k.VLAN}
		if err := l.objs.IfaceTable.Put(key, val); err != nil {
			return fmt.Errorf("raw iface entry %v: %w", key, err)
		}
	}
	return nil
}

// iface is the model's view of an iface_table entry.
type iface struct {
	vrf    uint32
	mode   maps.Mode
	strict bool
}

// lookupIface mirrors the program's iface_table lookup for the lab's tables.
func (l *lab) lookupIface(ifindex uint32, vlan uint16) (iface, bool) {
	for _, in := range l.tables.Interfaces {
		if in.Ifindex == ifindex && in.VLAN == vlan {
			return iface{in.VRF, in.Mode, in.Strict}, true
		}
	}
	if v, ok := l.rawIfaces[maps.InterfaceKey{Ifindex: ifindex, VLAN: vlan}]; ok {
		return iface{v.VrfId, maps.Mode(v.Mode), uint8(v.Flags)&maps.IfaceFlagStrict != 0}, true
	}
	return iface{}, false
}

// hook selects the program and how its context is built.
type hook int

const (
	hookTC hook = iota
	hookXDP
)

func (h hook) String() string { return [...]string{"tc", "xdp"}[h] }

// Return codes (linux/pkt_cls.h, linux/bpf.h).
const (
	tcActUnspec   = 0xffffffff // -1, TCX_NEXT
	tcActShot     = 2
	tcActRedirect = 7
	xdpDrop       = 1
	xdpPass       = 2
	xdpRedirect   = 4
)

func (h hook) passCode() uint32 {
	if h == hookTC {
		return tcActUnspec
	}
	return xdpPass
}

func (h hook) dropCode() uint32 {
	if h == hookTC {
		return tcActShot
	}
	return xdpDrop
}

func (h hook) redirectCode() uint32 {
	if h == hookTC {
		return tcActRedirect
	}
	return xdpRedirect
}

// skbCtx is the head of struct __sk_buff up to ifindex; BPF_PROG_TEST_RUN
// accepts a shorter ctx and zero-fills the rest.
type skbCtx struct {
	Len, PktType, Mark, QueueMapping, Protocol, VlanPresent, VlanTCI, VlanProto, Priority, IngressIfindex, Ifindex uint32
}

// xdpCtx is struct xdp_md.
type xdpCtx struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

func (l *lab) prog(h hook) *ebpf.Program {
	if h == hookTC {
		return l.objs.TcRouter
	}
	return l.objs.XdpRouter
}

func runOptions(h hook, ifindex int, frame []byte, repeat uint32) *ebpf.RunOptions {
	opts := &ebpf.RunOptions{Data: frame, DataOut: make([]byte, len(frame)+256), Repeat: repeat}
	if h == hookTC {
		opts.Context = skbCtx{Ifindex: uint32(ifindex)}
	} else {
		opts.Context = xdpCtx{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifindex)}
	}
	return opts
}

// run executes the program once on frame, in the lab's namespace; the caller
// must be on a thread inside it (inNS).
func (l *lab) run(h hook, ifindex int, frame []byte) (uint32, []byte, error) {
	opts := runOptions(h, ifindex, frame, 1)
	ret, err := l.prog(h).Run(opts)
	if err != nil {
		return 0, nil, fmt.Errorf("%s test run: %w", h, err)
	}
	return ret, opts.DataOut, nil
}

// counters reads the per-reason counters of the given VRFs, summed over CPUs.
func (l *lab) counters(vrfs ...uint32) (map[uint32][maps.ReasonSlots]maps.Counter, error) {
	out := map[uint32][maps.ReasonSlots]maps.Counter{}
	for _, vrf := range vrfs {
		var percpu []maps.VRFStats
		if err := l.objs.VrfCounters.Lookup(vrf, &percpu); err != nil {
			return nil, fmt.Errorf("counters of vrf %d: %w", vrf, err)
		}
		var sum [maps.ReasonSlots]maps.Counter
		for _, c := range percpu {
			for r, rc := range c.Reasons {
				sum[r] = sum[r].Add(maps.Counter{Packets: rc.Packets, Bytes: rc.Bytes})
			}
		}
		out[vrf] = sum
	}
	return out, nil
}

// kernelRejects reports whether BPF_PROG_TEST_RUN refuses the frame for tc:
// it wants a complete IPv4 / IPv6 header when the (outer) ethertype says so.
func kernelRejects(h hook, frame []byte) bool {
	if h != hookTC || len(frame) < 14 {
		return h == hookTC
	}
	switch binary.BigEndian.Uint16(frame[12:]) {
	case etherTypeIPv4:
		return len(frame) < 14+20
	case etherTypeIPv6:
		return len(frame) < 14+40
	}
	return false
}

// countedVRFs are all VRF buckets the lab's packets can land in.
var countedVRFs = []uint32{0, 1, 2, 3, 4, vrfNoVRF}

// delta runs fn and returns the single (vrf, reason) whose counter moved, with
// the bytes counted; it fails unless exactly one packet was counted.
func (l *lab) delta(fn func() error) (uint32, maps.Reason, uint64, error) {
	before, err := l.counters(countedVRFs...)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := fn(); err != nil {
		return 0, 0, 0, err
	}
	after, err := l.counters(countedVRFs...)
	if err != nil {
		return 0, 0, 0, err
	}
	var (
		n      uint64
		vrf    uint32
		reason maps.Reason
		bytes  uint64
	)
	for _, v := range countedVRFs {
		for r := range maps.ReasonSlots { // every slot: a reason counted in an unnamed slot fails below
			dp := after[v][r].Packets - before[v][r].Packets
			if dp != 0 {
				n += dp
				vrf, reason, bytes = v, maps.Reason(r), after[v][r].Bytes-before[v][r].Bytes
			}
		}
	}
	if n != 1 {
		return 0, 0, 0, fmt.Errorf("%d packets counted, want exactly 1", n)
	}
	return vrf, reason, bytes, nil
}
