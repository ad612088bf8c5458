package nodenet

import (
	"cmp"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/bounds"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// maxIfName is the kernel's IFNAMSIZ-1.
const maxIfName = v1alpha1.MaxInterfaceNameLen

// Reserved kernel tables a VRF must not use.
// tableOnly decides whether the VRFs are table-only: forced, or in auto mode on a kernel without VRF devices. A
// mode the kernel cannot serve is refused: devices without VRF devices, tables without lookups by table id.
func tableOnly(s Settings, f Features) (bool, error) {
	var only bool
	switch {
	case s.VRFMode == VRFModeDevice && !f.VRF:
		return false, fmt.Errorf("settings vrfMode %s: %w (%s)", s.VRFMode, ErrVRFNotSupported, f.VRFReason)
	case s.VRFMode == VRFModeTableOnly:
		only = true
	case s.VRFMode == VRFModeAuto && !f.VRF:
		only = true
	}
	if only && s.NoTableLookup != "" {
		if s.VRFMode == VRFModeAuto {
			return false, fmt.Errorf("settings vrfMode %s: table-only VRFs (no VRF devices: %s): %w (%s)", s.VRFMode,
				f.VRFReason, ErrTableLookupNotSupported, s.NoTableLookup)
		}
		return false, fmt.Errorf("settings vrfMode %s: %w (%s)", s.VRFMode, ErrTableLookupNotSupported, s.NoTableLookup)
	}
	return only, nil
}

// CheckKernel refuses settings the kernel cannot serve whatever the spec (the VRF mode), so the agent stops at
// start instead of failing every revision.
func CheckKernel(settings Settings, f Features) error {
	s, err := settings.withDefaults()
	if err != nil {
		return err
	}
	_, err = tableOnly(s, f)
	return err
}

var reservedTables = map[int32]string{
	unix.RT_TABLE_DEFAULT: "default",
	unix.RT_TABLE_MAIN:    "main",
	unix.RT_TABLE_LOCAL:   "local",
}

// BuildDesired derives the objects nodenet wants from a spec, node-local settings and the kernel's features. It
// is pure and deterministic. Invalid input returns an error matching fielderr.ErrInvalid that names the field
// and value (a *field.Error);
// VRFModeDevice on a kernel without VRF devices returns ErrVRFNotSupported.
func BuildDesired(spec *v1alpha1.NodeNetworkConfigSpec, settings Settings, f Features) (*Desired, error) {
	s, err := settings.withDefaults()
	if err != nil {
		return nil, err
	}
	if spec == nil {
		return nil, fmt.Errorf("%w: spec is nil", fielderr.ErrInvalid)
	}
	b := builder{
		s: s, f: f, d: &Desired{RouteProtocol: s.RouteProtocol},
		vrfs: map[string]*VRFState{}, names: map[string]string{}, vnis: map[int32]string{},
		tables: map[uint32]string{}, mtus: map[string]int{},
	}
	if b.tableOnly, err = tableOnly(s, f); err != nil {
		return nil, err
	}
	if err := b.vtep(spec); err != nil {
		return nil, err
	}
	vrfs := slices.Clone(spec.VRFs)
	slices.SortFunc(vrfs, func(a, c v1alpha1.NodeVRF) int { return strings.Compare(a.Name, c.Name) })
	for _, v := range vrfs {
		if err := b.addVRF(v); err != nil {
			return nil, err
		}
	}
	rts := slices.Clone(spec.RoutingTables)
	slices.SortStableFunc(rts, func(a, c v1alpha1.NodeRoutingTable) int { return cmp.Compare(a.TableID, c.TableID) })
	for _, rt := range rts {
		if err := b.addRoutingTable(rt); err != nil {
			return nil, err
		}
	}
	for _, name := range s.VethVRFs {
		if err := b.addVeth(name); err != nil {
			return nil, err
		}
	}
	l2s := slices.Clone(spec.Layer2s)
	slices.SortFunc(l2s, func(a, c v1alpha1.NodeLayer2) int { return strings.Compare(a.Name, c.Name) })
	for _, l := range l2s {
		if err := b.addLayer2(l); err != nil {
			return nil, err
		}
	}
	if err := b.addLinks(spec.Links); err != nil {
		return nil, err
	}
	b.addRules()
	for _, v := range vrfs {
		if st, ok := b.vrfs[v.Name]; ok {
			b.d.VRFs = append(b.d.VRFs, *st)
		}
	}
	return b.d, nil
}

type builder struct {
	s         Settings
	f         Features
	d         *Desired
	tableOnly bool
	local     netip.Addr
	vrfs      map[string]*VRFState
	names     map[string]string // link name -> owner, for collisions
	vnis      map[int32]string  // vni -> owner
	tables    map[uint32]string // table -> owner
	mtus      map[string]int    // VRF -> MTU of its links (for the veth pair)
	sbr       []sbrPrefix       // source-based routing prefixes so far, for overlaps between VRFs
}

// sbrPrefix is a source-based routing prefix of the field owner in the VRF's sbrPrefixes (path vrf).
type sbrPrefix struct {
	prefix     netip.Prefix
	vrf, owner string
}

// invalid is the problem of one field: a *field.Error matching fielderr.ErrInvalid.
func invalid(path *field.Path, value any, format string, args ...any) error {
	return fielderr.Join(field.ErrorList{field.Invalid(path, value, fmt.Sprintf(format, args...))})
}

// vtep resolves the local VTEP address when any VXLAN is needed.
func (b *builder) vtep(spec *v1alpha1.NodeNetworkConfigSpec) error {
	need := len(spec.Layer2s) > 0
	for _, v := range spec.VRFs {
		if v.VNI != 0 {
			need = true
		}
	}
	for _, l := range spec.Links {
		if l.VXLAN != nil {
			need = true
		}
	}
	path := field.NewPath("settings", "vtepAddress")
	if b.s.VTEPAddress.IsValid() {
		b.local = b.s.VTEPAddress.Unmap()
	} else if need {
		path = field.NewPath("underlay", "vtepAddress")
		a, err := netip.ParseAddr(spec.Underlay.VTEPAddress)
		if err != nil {
			return invalid(path, spec.Underlay.VTEPAddress, "not an IP address (needed for the VXLAN devices)")
		}
		b.local = a.Unmap()
	}
	if !need {
		return nil
	}
	// Every VXLAN device sends from the VTEP address: IPv4 or IPv6 (the device then runs over IPv6), but one the
	// other VTEPs route to (a link-local one would need a device per peer link, as the kernel says).
	if a := b.local; a.Zone() != "" || a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() {
		return invalid(path, a.String(), "not a VTEP address the fabric can route (unspecified, loopback, link-local and multicast addresses are not)")
	}
	if b.local.Is6() {
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("VXLAN over IPv6 (local %s): 70 bytes of outer headers, 20 more than over IPv4: "+
			"the underlay's MTU must exceed every VXLAN's by 70", b.local))
	}
	return nil
}

// claim registers a link name, rejecting over-long names and collisions between two desired objects.
// claim registers the name of a link owner needs (the error names owner and the link name).
func (b *builder) claim(name string, owner *field.Path) error {
	if len(name) > maxIfName {
		return invalid(owner, name, "link name is %d bytes, the kernel allows %d", len(name), maxIfName)
	}
	if prev, dup := b.names[name]; dup {
		return invalid(owner, name, "link name is already used by %s", prev)
	}
	b.names[name] = owner.String()
	return nil
}

func (b *builder) claimVNI(vni int32, owner *field.Path) error {
	if errs := bounds.VNI(owner.Child("vni"), int64(vni)); len(errs) > 0 {
		return fielderr.Join(errs)
	}
	if prev, dup := b.vnis[vni]; dup {
		return invalid(owner.Child("vni"), vni, "already used by %s", prev)
	}
	b.vnis[vni] = owner.String()
	return nil
}

func (b *builder) mtu(mtu int32, path *field.Path) (int, error) {
	if mtu == 0 {
		return b.s.DefaultMTU, nil
	}
	if mtu < minLinkMTU || mtu > maxLinkMTU {
		return 0, invalid(path, mtu, "must be within %d..%d", minLinkMTU, maxLinkMTU)
	}
	return int(mtu), nil
}

func (b *builder) vxlan(vni int32) *VXLANSpec {
	return &VXLANSpec{VNI: uint32(vni), Local: b.local, Port: VXLANPort, Dev: b.s.VTEPInterface}
}

func (b *builder) addLink(l LinkSpec) { b.d.Links = append(b.d.Links, l) }

// flooding applies a VXLAN's flooding (f; nil: EVPN) to its device vx: EVPN leaves it without learning and
// without flood entries (zebra installs both); static flooding makes it learn remote MACs from the packets it
// receives, and returns the peer VTEPs to flood to, sorted: of the local VTEP's family, without the local one.
func (b *builder) flooding(path *field.Path, f *v1alpha1.Flooding, vx *VXLANSpec) (*VXLANSpec, []netip.Addr, error) {
	static, peers, errs := validation.ParseFlooding(path, f, vx.Local)
	if len(errs) > 0 {
		return nil, nil, fielderr.Join(errs)
	}
	if !static {
		return vx, nil, nil
	}
	learning := *vx
	learning.Learning = true
	slices.SortFunc(peers, netip.Addr.Compare)
	return &learning, peers, nil
}

func (b *builder) addVRF(v v1alpha1.NodeVRF) error {
	owner := field.NewPath("vrfs").Key(v.Name)
	if v.Name == "" {
		return fielderr.Join(field.ErrorList{field.Required(owner.Child("name"), "a VRF name")})
	}
	if strings.ContainsAny(v.Name, "/ \t\n:") {
		return invalid(owner.Child("name"), v.Name, "contains '/', ':' or white space")
	}
	if v.Name == v1alpha1.DefaultVRFName {
		return b.addDefaultVRF(v, owner)
	}
	if _, dup := b.vrfs[v.Name]; dup {
		return fielderr.Join(field.ErrorList{field.Duplicate(owner.Child("name"), v.Name)})
	}
	table, err := b.claimVRFTable(v.TableID, owner)
	if err != nil {
		return err
	}
	mtu, err := b.mtu(v.MTU, owner.Child("mtu"))
	if err != nil {
		return err
	}
	st := &VRFState{Name: v.Name, Table: table, Mode: VRFModeDevice}
	if st.SBR, err = b.sbrPrefixes(v.SBRPrefixes, owner.Child("sbrPrefixes")); err != nil {
		return err
	}
	if len(st.SBR) > 0 && b.s.NoTableLookup != "" {
		return fmt.Errorf("%s: %w", field.Forbidden(owner.Child("sbrPrefixes"), fmt.Sprintf(
			"source-based routing %v needs lookups by table id in the eBPF router (%s)", st.SBR, b.s.NoTableLookup)),
			ErrTableLookupNotSupported)
	}
	if err := b.addVRFDevice(v, owner, st); err != nil {
		return err
	}
	if v.VNI != 0 {
		if err := b.addL3VNI(v, owner, st, mtu); err != nil {
			return err
		}
	}
	for _, dst := range []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")} {
		b.d.Routes = append(b.d.Routes, RouteSpec{Table: table, Dst: dst, Type: RouteUnreachable, Metric: UnreachableMetric})
	}
	b.vrfs[v.Name] = st
	b.mtus[v.Name] = mtu
	return b.addLoopbacks(v, owner, st)
}

// addDefaultVRF adds the default VRF (owner is its path): its loopbacks, and a note when it lists source-based
// routing prefixes, which get no rules.
func (b *builder) addDefaultVRF(v v1alpha1.NodeVRF, owner *field.Path) error {
	// The node's main table: nothing to create but its loopbacks (the kernel routes their addresses in
	// main). Source-based routing into main is what happens without it.
	if err := b.addLoopbacks(v, owner, nil); err != nil {
		return err
	}
	if len(v.SBRPrefixes) > 0 {
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("%s: the default VRF routes by the main table: no source rules for %s",
			owner.Child("sbrPrefixes"), strings.Join(v.SBRPrefixes, ", ")))
	}
	return nil
}

// claimVRFTable checks a VRF's table id (owner is the VRF's path) and registers the table for owner, rejecting
// tables below the minimum, the kernel's reserved ones and tables another object already uses.
func (b *builder) claimVRFTable(tableID int32, owner *field.Path) (uint32, error) {
	if tableID < v1alpha1.MinTableID {
		return 0, invalid(owner.Child("tableID"), tableID, "must be at least %d", v1alpha1.MinTableID)
	}
	if name, ok := reservedTables[tableID]; ok {
		return 0, invalid(owner.Child("tableID"), tableID, "the kernel's %s table", name)
	}
	table := uint32(tableID)
	if prev, dup := b.tables[table]; dup {
		return 0, invalid(owner.Child("tableID"), tableID, "already used by %s", prev)
	}
	b.tables[table] = owner.String()
	return table, nil
}

// addVRFDevice adds the VRF device of st, or, with table-only VRFs, marks st table-only with a note instead.
func (b *builder) addVRFDevice(v v1alpha1.NodeVRF, owner *field.Path, st *VRFState) error {
	if b.tableOnly {
		st.Mode = VRFModeTableOnly
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("vrf %s: table-only (%s); the eBPF router routes by table %d", v.Name, b.tableOnlyReason(), st.Table))
		return nil
	}
	st.Device = b.s.Names.VRF + v.Name
	if err := b.claim(st.Device, owner); err != nil {
		return err
	}
	b.addLink(LinkSpec{Name: st.Device, Kind: KindVRF, Alias: Alias(RoleVRF, v.Name), VRF: v.Name, Table: st.Table})
	return nil
}

// addL3VNI adds the L3VNI of a VRF with a VNI: its bridge in the VRF and its VXLAN port, a member of st.
func (b *builder) addL3VNI(v v1alpha1.NodeVRF, owner *field.Path, st *VRFState, mtu int) error {
	if err := b.claimVNI(v.VNI, owner); err != nil {
		return err
	}
	st.VNI = uint32(v.VNI)
	st.Bridge = b.s.Names.L3Bridge + v.Name
	st.VXLAN = b.s.Names.L3VXLAN + v.Name
	if err := b.claim(st.Bridge, owner); err != nil {
		return err
	}
	if err := b.claim(st.VXLAN, owner); err != nil {
		return err
	}
	b.addLink(LinkSpec{Name: st.Bridge, Kind: KindBridge, Alias: Alias(RoleL3Bridge, v.Name), VRF: v.Name, MTU: mtu, Master: st.Device})
	b.addLink(LinkSpec{Name: st.VXLAN, Kind: KindVXLAN, Alias: Alias(RoleL3VXLAN, v.Name), VRF: v.Name, MTU: mtu,
		Master: st.Bridge, VXLAN: b.vxlan(v.VNI), Port: &PortFlags{Learning: false, NeighSuppress: true}})
	st.Members = append(st.Members, st.Bridge)
	return nil
}

// addLoopbacks adds a VRF's loopbacks (st nil: the default VRF): a dummy device in the VRF with the node's
// address, or, on a kernel without dummies, an empty bridge (no ports, so no traffic; it carries the address the
// same way). In a table-only VRF the address gets no prefix route; the VRF's table gets its local (and
// connected) route, and a source rule sends what the node sends from it through the table, as for gateways.
// A loopback without address (a standalone file without one, or an operator before address allocation) is created without one,
// with a note, so the address is only added when it comes.
func (b *builder) addLoopbacks(v v1alpha1.NodeVRF, owner *field.Path, st *VRFState) error {
	kind := KindDummy
	if !b.f.Dummy && len(v.Loopbacks) > 0 {
		kind = KindBridge
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("%s: empty bridges stand in for dummy devices (%s)", owner.Child("loopbacks"), b.f.DummyReason))
	}
	tableOnly := st != nil && st.Mode == VRFModeTableOnly
	for _, lb := range v.Loopbacks {
		path := owner.Child("loopbacks").Key(lb.Name)
		if lb.Name == "" || lb.Name == "lo" || strings.ContainsAny(lb.Name, "/: \t\n") {
			return invalid(path.Child("name"), lb.Name, "empty, the kernel's lo, or contains '/', ':' or white space")
		}
		subnet, err := netip.ParsePrefix(lb.Subnet)
		if err != nil || subnet.Addr().Is4In6() || subnet.Masked() != subnet {
			return invalid(path.Child("subnet"), lb.Subnet, "not a CIDR given by its network address")
		}
		l := LinkSpec{Name: lb.Name, Kind: kind, Alias: Alias(RoleLoopback, v.Name+"/"+lb.Name), VRF: v.Name}
		if err := b.claim(lb.Name, path.Child("name")); err != nil {
			return err
		}
		if st != nil {
			l.Master = st.Device
		}
		if lb.Address == "" {
			b.d.Notes = append(b.d.Notes, fmt.Sprintf("%s: empty (no address given): %s is created without one",
				path.Child("address"), lb.Name))
		} else {
			a, err := netip.ParsePrefix(lb.Address)
			if err != nil || a.Addr().Is4In6() {
				return invalid(path.Child("address"), lb.Address, "not an address with prefix length")
			}
			if !subnet.Contains(a.Addr()) || a.Bits() < subnet.Bits() {
				return invalid(path.Child("address"), lb.Address, "not inside subnet %s", subnet)
			}
			l.Addrs = []Address{{Prefix: a, NoPrefixRoute: tableOnly}}
		}
		b.addLink(l)
		if st == nil {
			continue
		}
		st.Members = append(st.Members, l.Name)
		if tableOnly {
			b.addGatewayRoutes(st, l.Name, l.Addrs)
		}
	}
	return nil
}

// sbrPrefixes checks a VRF's source-based routing prefixes: CIDRs given by their network address, sorted. A
// prefix may overlap others of the same VRF, but not one of another VRF: the kernel tries rules of one priority
// in the order they were added, not by prefix length, so which VRF such a source reaches would be arbitrary.
func (b *builder) sbrPrefixes(prefixes []string, path *field.Path) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, s := range prefixes {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, invalid(path.Index(i), s, "not a CIDR prefix")
		}
		if p.Addr().Is4In6() {
			return nil, invalid(path.Index(i), s, "an IPv4-mapped IPv6 prefix: give the IPv4 prefix")
		}
		if p.Masked() != p {
			return nil, invalid(path.Index(i), s, "not a network address (the prefix is %s)", p.Masked())
		}
		for _, have := range b.sbr {
			if have.prefix.Overlaps(p) && have.vrf != path.String() {
				return nil, invalid(path.Index(i), s, "overlaps %s of %s: a source may be routed by one VRF only", have.prefix, have.owner)
			}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
			b.sbr = append(b.sbr, sbrPrefix{prefix: p, vrf: path.String(), owner: path.Index(i).String()})
		}
	}
	slices.SortFunc(out, func(a, c netip.Prefix) int { return strings.Compare(a.String(), c.String()) })
	return out, nil
}

// RoutingTablePrefix starts the name of a routing table's VRF: "taas.<tableID>" (das-schiff's RoutingTable).
const RoutingTablePrefix = "taas."

// addRoutingTable adds the VRF of a host routing table (RoutingTable): a VRF device on the table, which FRR
// redistributes into BGP and imports into the cluster VRF. The table's routes are its owner's (host processes):
// nodenet adds none, not even the unreachable default of tenant VRFs, so the table keeps working as it did. On a
// kernel without VRF devices there is nothing to create.
func (b *builder) addRoutingTable(rt v1alpha1.NodeRoutingTable) error {
	owner := field.NewPath("routingTables").Key(strconv.FormatInt(rt.TableID, 10))
	if rt.TableID < 1 || rt.TableID > math.MaxUint32 {
		return invalid(owner.Child("tableID"), rt.TableID, "must be within 1..%d", uint32(math.MaxUint32))
	}
	if name, ok := reservedTables[int32(min(rt.TableID, math.MaxInt32))]; ok {
		return invalid(owner.Child("tableID"), rt.TableID, "the kernel's %s table", name)
	}
	if want := RoutingTablePrefix + strconv.FormatInt(rt.TableID, 10); rt.Name != want {
		return invalid(owner.Child("name"), rt.Name, "must be %s (the VRF of table %d)", want, rt.TableID)
	}
	table := uint32(rt.TableID)
	if prev, dup := b.tables[table]; dup {
		return invalid(owner.Child("tableID"), rt.TableID, "already used by %s", prev)
	}
	b.tables[table] = owner.String()
	st := VRFState{Name: rt.Name, Table: table, Mode: VRFModeDevice, Device: rt.Name}
	if b.tableOnly {
		st.Mode, st.Device = VRFModeTableOnly, ""
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("routing table %s: table-only (%s); table %d exists without it", rt.Name,
			b.tableOnlyReason(), table))
	} else {
		if err := b.claim(rt.Name, owner.Child("name")); err != nil {
			return err
		}
		b.addLink(LinkSpec{Name: rt.Name, Kind: KindVRF, Alias: Alias(RoleRoutingTable, rt.Name), VRF: rt.Name, Table: table})
	}
	b.d.RoutingTables = append(b.d.RoutingTables, st)
	return nil
}

func (b *builder) tableOnlyReason() string {
	if !b.f.VRF {
		return b.f.VRFReason
	}
	return "settings force table-only"
}

func (b *builder) addVeth(vrf string) error {
	owner := field.NewPath("settings", "vethVRFs").Key(vrf)
	st, ok := b.vrfs[vrf]
	if !ok {
		// Node-local settings may name a VRF the current revision does not have (any more): not an error.
		b.d.Notes = append(b.d.Notes, fmt.Sprintf("%s: no such VRF in the spec (or the default VRF): no veth pair", owner))
		return nil
	}
	def, in := b.s.Names.VethDefault+vrf, b.s.Names.VethVRF+vrf
	if err := b.claim(def, owner); err != nil {
		return err
	}
	if err := b.claim(in, owner); err != nil {
		return err
	}
	mtu := b.mtus[vrf]
	b.addLink(LinkSpec{Name: def, Kind: KindVeth, Alias: Alias(RoleVethDefault, vrf), VRF: vrf, MTU: mtu,
		Peer: in, PeerAlias: Alias(RoleVethVRF, vrf)})
	b.addLink(LinkSpec{Name: in, Kind: KindVeth, Alias: Alias(RoleVethVRF, vrf), VRF: vrf, MTU: mtu,
		Peer: def, PeerAlias: Alias(RoleVethDefault, vrf), Master: st.Device})
	st.Members = append(st.Members, in)
	return nil
}

func (b *builder) addLayer2(l v1alpha1.NodeLayer2) error {
	owner := field.NewPath("layer2s").Key(l.Name)
	st, mtu, err := b.checkLayer2(l, owner)
	if err != nil {
		return err
	}
	mac, err := anycastMAC(l.AnycastMAC, owner.Child("anycastMac"))
	if err != nil {
		return err
	}
	tableOnlyVRF := st != nil && st.Mode == VRFModeTableOnly
	addrs, err := gatewayAddrs(l.AnycastGateways, owner.Child("anycastGateways"), tableOnlyVRF)
	if err != nil {
		return err
	}
	br, err := b.addLayer2Links(l, owner, st, mtu, mac, addrs)
	if err != nil {
		return err
	}
	if st == nil {
		return nil
	}
	st.Members = append(st.Members, br)
	if tableOnlyVRF {
		b.addGatewayRoutes(st, br, addrs)
	}
	return nil
}

// checkLayer2 checks a layer-2 network's name, VLAN, VNI and MTU and returns its VRF (nil: the default VRF)
// and the MTU of its links.
func (b *builder) checkLayer2(l v1alpha1.NodeLayer2, owner *field.Path) (*VRFState, int, error) {
	if l.Name == "" || strings.ContainsAny(l.Name, " \t\n:") {
		return nil, 0, invalid(owner.Child("name"), l.Name, "empty or contains ':' or white space")
	}
	if l.VLAN < v1alpha1.MinVLAN || l.VLAN > v1alpha1.MaxVLAN {
		return nil, 0, invalid(owner.Child("vlan"), l.VLAN, "must be within %d..%d", v1alpha1.MinVLAN, v1alpha1.MaxVLAN)
	}
	if err := b.claimVNI(l.VNI, owner); err != nil {
		return nil, 0, err
	}
	mtu, err := b.mtu(l.MTU, owner.Child("mtu"))
	if err != nil {
		return nil, 0, err
	}
	if l.VRF == "" || l.VRF == v1alpha1.DefaultVRFName {
		return nil, mtu, nil
	}
	st, ok := b.vrfs[l.VRF]
	if !ok {
		return nil, 0, invalid(owner.Child("vrf"), l.VRF, "no such VRF in the spec")
	}
	return st, mtu, nil
}

// anycastMAC parses the gateway MAC of a layer-2 network ("": none): a unicast Ethernet address.
func anycastMAC(s string, path *field.Path) (net.HardwareAddr, error) {
	if s == "" {
		return nil, nil
	}
	mac, err := net.ParseMAC(s)
	if err != nil || len(mac) != 6 {
		return nil, invalid(path, s, "not an Ethernet MAC address")
	}
	if mac[0]&1 != 0 {
		return nil, invalid(path, s, "a multicast address")
	}
	return mac, nil
}

// gatewayAddrs parses the anycast gateway addresses of a layer-2 network, sorted. In a table-only VRF they get
// no prefix route (the kernel would put it into the main table); addGatewayRoutes puts it into the VRF's.
func gatewayAddrs(gateways []string, path *field.Path, tableOnlyVRF bool) ([]Address, error) {
	var addrs []Address
	seen := map[netip.Prefix]bool{}
	for i, g := range gateways {
		p, err := netip.ParsePrefix(g)
		if err != nil {
			return nil, invalid(path.Index(i), g, "not an address with prefix length")
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits())
		if seen[p] {
			return nil, fielderr.Join(field.ErrorList{field.Duplicate(path.Index(i), p.String())})
		}
		seen[p] = true
		addrs = append(addrs, Address{Prefix: p, NoPrefixRoute: tableOnlyVRF})
	}
	slices.SortFunc(addrs, func(a, c Address) int { return strings.Compare(a.Prefix.String(), c.Prefix.String()) })
	return addrs, nil
}

// addLayer2Links adds the network's bridge (returned) with its VXLAN port and, with a trunk, its 802.1Q port.
func (b *builder) addLayer2Links(l v1alpha1.NodeLayer2, owner *field.Path, st *VRFState, mtu int, mac net.HardwareAddr,
	addrs []Address) (string, error) {
	vlan := strconv.Itoa(int(l.VLAN))
	br, vx := b.s.Names.L2Bridge+vlan, b.s.Names.L2VXLAN+vlan
	if err := b.claim(br, owner); err != nil {
		return "", err
	}
	if err := b.claim(vx, owner); err != nil {
		return "", err
	}
	master := ""
	if st != nil {
		master = st.Device
	}
	b.addLink(LinkSpec{Name: br, Kind: KindBridge, Alias: Alias(RoleL2Bridge, l.Name), VRF: l.VRF, Layer2: l.Name,
		MTU: mtu, MAC: mac, Master: master, Addrs: addrs, SegmentationOff: l.DisableSegmentation})
	vxl, flood, err := b.flooding(owner.Child("flooding"), l.Flooding, b.vxlan(l.VNI))
	if err != nil {
		return "", err
	}
	b.addLink(LinkSpec{Name: vx, Kind: KindVXLAN, Alias: Alias(RoleL2VXLAN, l.Name), VRF: l.VRF, Layer2: l.Name,
		MTU: mtu, Master: br, VXLAN: vxl, Flood: flood, Port: &PortFlags{Learning: vxl.Learning, NeighSuppress: l.NeighSuppression}})
	if b.s.L2Trunk == "" {
		return br, nil
	}
	name := b.s.Names.VLAN + vlan
	if err := b.claim(name, owner); err != nil {
		return "", err
	}
	if b.f.VLAN {
		b.addLink(LinkSpec{Name: name, Kind: KindVLAN, Alias: Alias(RoleVLAN, l.Name), VRF: l.VRF, Layer2: l.Name,
			MTU: mtu, Master: br, VLAN: &VLANSpec{Parent: b.s.L2Trunk, ID: int(l.VLAN)}})
	} else {
		b.d.Unsupported = append(b.d.Unsupported, Unsupported{
			Object: fmt.Sprintf("vlan %s (layer2 %s: vlan %d on %s, master %s)", name, l.Name, l.VLAN, b.s.L2Trunk, br),
			Err:    fmt.Errorf("%w: %s", ErrVLANNotSupported, b.f.VLANReason),
		})
	}
	return br, nil
}

// addGatewayRoutes adds to a table-only VRF's table what a VRF device would have put there: the connected
// route and the local route of each gateway (or loopback) address on link br. The eBPF router needs the local routes to
// hand traffic for the gateway to the kernel.
func (b *builder) addGatewayRoutes(st *VRFState, br string, addrs []Address) {
	for _, a := range addrs {
		conn := RouteSpec{Table: st.Table, Dst: a.Prefix.Masked(), Type: RouteUnicast, Dev: br}
		local := RouteSpec{Table: st.Table, Dst: netip.PrefixFrom(a.Prefix.Addr(), a.Prefix.Addr().BitLen()), Type: RouteLocal, Dev: br}
		if a.Prefix.Addr().Is4() {
			conn.Src, local.Src = a.Prefix.Addr(), a.Prefix.Addr()
		} else {
			// IPv6 routes get metric 1024 when added with 0; say so, so the observed route matches.
			conn.Metric, local.Metric = 256, 1024
		}
		if !a.Prefix.IsSingleIP() {
			b.d.Routes = append(b.d.Routes, conn)
		}
		b.d.Routes = append(b.d.Routes, local)
		st.Gateways = append(st.Gateways, a.Prefix.Addr())
	}
}

// addRules routes traffic entering or leaving a table-only VRF's links through the VRF's table (a VRF device
// does this with the kernel's l3mdev rule), and traffic from a VRF's source-based routing prefixes.
func (b *builder) addRules() {
	names := make([]string, 0, len(b.vrfs))
	for n := range b.vrfs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := b.vrfs[n]
		// Source-based routing, in both modes: after the l3mdev rule (1000) and the table-only VRFs' interface
		// rules (RulePriority), so traffic of a VRF's own interfaces stays in that VRF whatever its source; the
		// rules catch the rest (the default VRF's traffic) before the main table.
		for _, p := range st.SBR {
			b.d.Rules = append(b.d.Rules, RuleSpec{Priority: b.s.RulePriority + 1, Family: familyOf(p.Addr()), Src: p, Table: st.Table})
		}
		if st.Mode != VRFModeTableOnly {
			continue
		}
		for _, m := range st.Members {
			for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
				b.d.Rules = append(b.d.Rules,
					RuleSpec{Priority: b.s.RulePriority, Family: fam, Iif: m, Table: st.Table},
					RuleSpec{Priority: b.s.RulePriority, Family: fam, Oif: m, Table: st.Table})
			}
		}
		// A reply from a gateway address is routed without an oif (only VRF devices give one), so the oif
		// rules miss it; a source rule sends it through the VRF's table like the l3mdev rule would.
		for _, gw := range st.Gateways {
			b.d.Rules = append(b.d.Rules, RuleSpec{Priority: b.s.RulePriority, Family: familyOf(gw),
				Src: netip.PrefixFrom(gw, gw.BitLen()), Table: st.Table})
		}
	}
}

func familyOf(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}
