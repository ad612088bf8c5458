package maps

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/bounds"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// Tables is the desired (or live) content of the router's tables. Order does
// not matter: Normalize sorts, Hash and Apply do not depend on input order.
type Tables struct {
	Interfaces []Interface `json:"interfaces,omitempty"`
	VRFs       []VRF       `json:"vrfs,omitempty"`
	Redirects  []Redirect  `json:"redirects,omitempty"`
	// SBR are the source-based routing prefixes (sbr_table): on the interfaces of VRFs that route by the main
	// table, traffic from a prefix is routed in its VRF's table, as the kernel's "from <prefix> lookup <table>"
	// rules do.
	SBR []SBR `json:"sbr,omitempty"`
}

// SBR is one sbr_table entry: traffic from Prefix is routed by VRF's table.
type SBR struct {
	Prefix netip.Prefix `json:"prefix"` // IPv4 or IPv6, the network address
	VRF    uint32       `json:"vrf"`
}

// Interface is one iface_table entry: packets arriving on {Ifindex, VLAN}.
type Interface struct {
	Ifindex uint32 `json:"ifindex"`
	VLAN    uint16 `json:"vlan,omitempty"` // 802.1Q VLAN id, 0 = untagged
	VRF     uint32 `json:"vrf,omitempty"`  // required for route mode; counters bucket otherwise
	Mode    Mode   `json:"mode"`
	Strict  bool   `json:"strict,omitempty"` // drop instead of pass when a lookup fails
	// Peer: the interface is a veth whose peer is in another namespace. The tc router hands packets it routes
	// out of it (its untagged entry) straight to the peer (bpf_redirect_peer); XDP ignores it.
	Peer bool `json:"peer,omitempty"`
}

// VRF is one vrf_table entry.
type VRF struct {
	ID            uint32 `json:"id"`                      // 1..MaxVRFs-1
	TableID       uint32 `json:"tableID"`                 // kernel routing table
	VNI           uint32 `json:"vni,omitempty"`           // L3 VNI, 24 bit
	LookupIfindex uint32 `json:"lookupIfindex,omitempty"` // 0 = ingress interface
}

// Redirect is one redirect_table entry: everything forwardable arriving on
// Ifindex goes out of EgressIfindex.
type Redirect struct {
	Ifindex       uint32 `json:"ifindex"`
	EgressIfindex uint32 `json:"egressIfindex"`
	// Peer uses bpf_redirect_peer (EgressIfindex is a veth whose peer is in
	// another namespace); tc only, XDP falls back to bpf_redirect.
	Peer bool `json:"peer,omitempty"`
	// DstMAC, when set, is written as destination MAC together with SrcMAC.
	SrcMAC MAC `json:"srcMAC,omitzero"`
	DstMAC MAC `json:"dstMAC,omitzero"`
}

// InterfaceKey identifies an Interface.
type InterfaceKey struct {
	Ifindex uint32
	VLAN    uint16
}

func (k InterfaceKey) String() string { return fmt.Sprintf("{ifindex %d vlan %d}", k.Ifindex, k.VLAN) }

// Key of the interface entry.
func (i Interface) Key() InterfaceKey { return InterfaceKey{i.Ifindex, i.VLAN} }

// Origin says where the entries of Tables came from (a file or a spec that names interfaces), so that Validate's
// errors name the source's fields and values instead of the tables' ifindexes.
type Origin interface {
	// Field returns the path and value to report for field (its JSON name in Tables, "" for the whole entry) of
	// entry i of table ("vrfs", "interfaces", "redirects" or "sbr"; i is -1 for the table itself) whose value is value.
	Field(table string, i int, field string, value any) (*field.Path, any)
}

// tablesOrigin names the tables' own fields.
type tablesOrigin struct{}

func (tablesOrigin) Field(table string, i int, name string, value any) (*field.Path, any) {
	p := field.NewPath(table)
	if i >= 0 {
		p = p.Index(i)
	}
	if name != "" {
		p = p.Child(name)
	}
	return p, value
}

// Validate checks the tables against the program's rules. It returns every problem found, each a *field.Error
// naming the field and value, together matching fielderr.ErrInvalid; nil when valid.
func (t Tables) Validate() error { return t.ValidateFrom(nil) }

// ValidateFrom is Validate with errors that name the fields and values of origin (nil: the tables' own). It is
// the one place of the table rules: every translator into Tables relies on it.
func (t Tables) ValidateFrom(origin Origin) error {
	if origin == nil {
		origin = tablesOrigin{}
	}
	v := tableValidator{origin: origin}
	vrfAt := v.vrfs(t.VRFs)
	redirectAt := v.redirects(t.Redirects)
	v.interfaces(t.Interfaces, vrfAt, redirectAt)
	v.sbr(t.SBR, t.VRFs, vrfAt)
	return fielderr.Join(v.errs)
}

type tableValidator struct {
	origin Origin
	errs   field.ErrorList
}

func (v *tableValidator) bad(table string, i int, name string, value any, format string, args ...any) {
	p, val := v.origin.Field(table, i, name, value)
	v.errs = append(v.errs, field.Invalid(p, val, fmt.Sprintf(format, args...)))
}

// at names entry i of table for a message ("duplicate of vrfs[0]").
func (v *tableValidator) at(table string, i int) string {
	p, _ := v.origin.Field(table, i, "", nil)
	return p.String()
}

func (v *tableValidator) tooMany(table string, n int) {
	if n > limitOf(table) {
		p, _ := v.origin.Field(table, -1, "", nil)
		v.errs = append(v.errs, field.TooMany(p, n, limitOf(table)))
	}
}

func limitOf(table string) int {
	if table == "vrfs" {
		return MaxVRFs
	}
	return MaxEntries
}

func (v *tableValidator) vrfs(vrfs []VRF) map[uint32]int {
	const tbl = "vrfs"
	vrfAt := make(map[uint32]int, len(vrfs))
	for i, vrf := range vrfs {
		switch {
		case vrf.ID == 0:
			v.bad(tbl, i, "id", vrf.ID, "reserved for interfaces not in the tables")
		case vrf.ID >= MaxVRFs:
			v.bad(tbl, i, "id", vrf.ID, "must be within 1..%d: the router counts VRFs in an array of %d", MaxVRFs-1, MaxVRFs)
		}
		if first, dup := vrfAt[vrf.ID]; dup {
			v.bad(tbl, i, "id", vrf.ID, "duplicate of %s", v.at(tbl, first))
		} else {
			vrfAt[vrf.ID] = i
		}
		if vrf.TableID < bounds.MinTableID {
			v.bad(tbl, i, "tableID", vrf.TableID, "reserved: not a routing table")
		}
		if vrf.VNI > bounds.MaxVNI {
			v.bad(tbl, i, "vni", vrf.VNI, "must be within 0..%d (24 bits)", bounds.MaxVNI)
		}
	}
	v.tooMany(tbl, len(vrfs))
	return vrfAt
}

func (v *tableValidator) redirects(redirects []Redirect) map[uint32]int {
	const tbl = "redirects"
	redirectAt := make(map[uint32]int, len(redirects))
	for i, r := range redirects {
		if r.Ifindex == 0 {
			v.bad(tbl, i, "ifindex", r.Ifindex, "not a valid ifindex")
		}
		if first, dup := redirectAt[r.Ifindex]; dup {
			v.bad(tbl, i, "ifindex", r.Ifindex, "duplicate of %s", v.at(tbl, first))
		} else {
			redirectAt[r.Ifindex] = i
		}
		switch {
		case r.EgressIfindex == 0:
			v.bad(tbl, i, "egressIfindex", r.EgressIfindex, "not a valid ifindex")
		case r.EgressIfindex == r.Ifindex:
			// A redirect does not decrement the TTL: two hosts sending back what they receive loop forever.
			v.bad(tbl, i, "egressIfindex", r.EgressIfindex, "the same interface as the ingress interface")
		}
		if r.DstMAC.IsZero() && !r.SrcMAC.IsZero() {
			v.bad(tbl, i, "dstMAC", r.DstMAC.String(), "must be set when srcMAC is set")
		}
		if !r.DstMAC.IsZero() && r.SrcMAC.IsZero() {
			v.bad(tbl, i, "srcMAC", r.SrcMAC.String(), "must be set when dstMAC is set")
		}
		if r.SrcMAC.IsGroup() {
			v.bad(tbl, i, "srcMAC", r.SrcMAC.String(), "a group address")
		}
	}
	v.tooMany(tbl, len(redirects))
	return redirectAt
}

func (v *tableValidator) interfaces(ifaces []Interface, vrfAt, redirectAt map[uint32]int) {
	const tbl = "interfaces"
	ifaceAt := make(map[InterfaceKey]int, len(ifaces))
	for i, in := range ifaces {
		if in.Ifindex == 0 {
			v.bad(tbl, i, "ifindex", in.Ifindex, "not a valid ifindex")
		}
		if in.VLAN > bounds.MaxVLAN {
			v.bad(tbl, i, "vlan", in.VLAN, "must be within 0..%d", bounds.MaxVLAN)
		}
		if first, dup := ifaceAt[in.Key()]; dup {
			v.bad(tbl, i, "", in.Key().String(), "duplicate of %s", v.at(tbl, first))
		} else {
			ifaceAt[in.Key()] = i
		}
		if !in.Mode.Valid() {
			v.bad(tbl, i, "mode", uint8(in.Mode), "not a known mode")
		}
		if in.VRF >= MaxVRFs {
			v.bad(tbl, i, "vrf", in.VRF, "must be below %d: the router counts VRFs in an array of %d", MaxVRFs, MaxVRFs)
		} else if _, ok := vrfAt[in.VRF]; in.VRF != 0 && !ok {
			v.bad(tbl, i, "vrf", in.VRF, "not in vrfs")
		} else if in.VRF == 0 && in.Mode == ModeRoute {
			v.bad(tbl, i, "vrf", in.VRF, "required for mode route")
		}
		if _, ok := redirectAt[in.Ifindex]; in.Mode == ModeRedirect && !ok && in.Ifindex != 0 {
			v.bad(tbl, i, "ifindex", in.Ifindex, "mode redirect but no redirects entry")
		}
	}
	v.tooMany(tbl, len(ifaces))
}

func (v *tableValidator) sbr(sbr []SBR, vrfs []VRF, vrfAt map[uint32]int) {
	const tbl = "sbr"
	for i, e := range sbr {
		p := e.Prefix
		switch {
		case !p.IsValid():
			v.bad(tbl, i, "prefix", p.String(), "not a CIDR prefix")
		case p.Addr().Zone() != "":
			v.bad(tbl, i, "prefix", p.String(), "has a zone")
		case p.Addr().Is4In6():
			v.bad(tbl, i, "prefix", p.String(), "an IPv4-mapped IPv6 prefix: give the IPv4 prefix")
		case p != p.Masked():
			v.bad(tbl, i, "prefix", p.String(), "not a network address (the prefix is %s)", p.Masked())
		default:
			for j, o := range sbr[:i] {
				if !o.Prefix.IsValid() || o.Prefix != o.Prefix.Masked() || !o.Prefix.Overlaps(p) {
					continue
				}
				if o.Prefix == p {
					v.bad(tbl, i, "prefix", p.String(), "duplicate of %s", v.at(tbl, j))
					break
				}
				if o.VRF != e.VRF {
					// The kernel's rules of both VRFs would share one priority: the order between them
					// is the kernel's, not the longest match.
					v.bad(tbl, i, "prefix", p.String(), "overlaps %s of %s, another VRF", o.Prefix, v.at(tbl, j))
					break
				}
			}
		}
		if at, ok := vrfAt[e.VRF]; !ok || e.VRF == 0 {
			v.bad(tbl, i, "vrf", e.VRF, "not in vrfs")
		} else if vrfs[at].TableID == limits.MainTableID {
			v.bad(tbl, i, "vrf", e.VRF, "routes by the main table (%d), where traffic without a rule goes anyway",
				limits.MainTableID)
		}
	}
	v.tooMany(tbl, len(sbr))
}

// MaxEntries is the largest number of entries per table: the maps hold two generations during an Apply.
const MaxEntries = min(limits.IfaceTableSize, limits.VRFTableSize, limits.RedirectTableSize, limits.SBRTableSize) / 2

// Normalize returns a copy with every table sorted by key.
func (t Tables) Normalize() Tables {
	n := Tables{
		Interfaces: slices.Clone(t.Interfaces),
		VRFs:       slices.Clone(t.VRFs),
		Redirects:  slices.Clone(t.Redirects),
		SBR:        slices.Clone(t.SBR),
	}
	slices.SortFunc(n.Interfaces, func(a, b Interface) int {
		return cmp.Or(cmp.Compare(a.Ifindex, b.Ifindex), cmp.Compare(a.VLAN, b.VLAN))
	})
	slices.SortFunc(n.VRFs, func(a, b VRF) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(n.Redirects, func(a, b Redirect) int { return cmp.Compare(a.Ifindex, b.Ifindex) })
	slices.SortFunc(n.SBR, func(a, b SBR) int {
		return cmp.Or(a.Prefix.Addr().Compare(b.Prefix.Addr()), cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits()),
			cmp.Compare(a.VRF, b.VRF))
	})
	return n
}

// Hash is a deterministic SHA-256 of the tables' content, independent of order.
// Empty and nil tables hash the same.
func (t Tables) Hash() [32]byte {
	n := t.Normalize()
	h := sha256.New()
	var b []byte
	put32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	boolByte := func(v bool) byte {
		if v {
			return 1
		}
		return 0
	}

	b = append(b, "network-operator tables v1\x00"...)
	put32(uint32(len(n.Interfaces)))
	for _, i := range n.Interfaces {
		put32(i.Ifindex)
		b = binary.LittleEndian.AppendUint16(b, i.VLAN)
		put32(i.VRF)
		b = append(b, byte(i.Mode), boolByte(i.Strict))
	}
	// Only when there are any, as for sbr below: tables without peers hash as before the flag existed.
	if n.hasPeers() {
		b = append(b, "peers\x00"...)
		for _, i := range n.Interfaces {
			b = append(b, boolByte(i.Peer))
		}
	}
	put32(uint32(len(n.VRFs)))
	for _, v := range n.VRFs {
		put32(v.ID)
		put32(v.TableID)
		put32(v.VNI)
		put32(v.LookupIfindex)
	}
	put32(uint32(len(n.Redirects)))
	for _, r := range n.Redirects {
		put32(r.Ifindex)
		put32(r.EgressIfindex)
		b = append(b, boolByte(r.Peer))
		b = append(b, r.SrcMAC[:]...)
		b = append(b, r.DstMAC[:]...)
	}
	// Only when there are any: tables without sbr entries hash as before sbr_table existed, so an upgrade
	// finds the live generation unchanged.
	if len(n.SBR) > 0 {
		b = append(b, "sbr\x00"...)
		put32(uint32(len(n.SBR)))
		for _, e := range n.SBR {
			k, _ := e.entry(0, 0)
			put32(k.Prefixlen)
			b = append(b, k.Addr[:]...)
			put32(e.VRF)
		}
	}
	h.Write(b)
	return [32]byte(h.Sum(nil))
}

// Equal reports whether both tables have the same content.
func (t Tables) Equal(o Tables) bool {
	a, b := t.Normalize(), o.Normalize()
	return slices.Equal(a.Interfaces, b.Interfaces) && slices.Equal(a.VRFs, b.VRFs) &&
		slices.Equal(a.Redirects, b.Redirects) && slices.Equal(a.SBR, b.SBR)
}

// Change counts the difference of one table between two generations.
type Change struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
}

func (c Change) String() string { return fmt.Sprintf("+%d -%d ~%d", c.Added, c.Removed, c.Changed) }

// Zero reports whether nothing changed.
func (c Change) Zero() bool { return c == Change{} }

func diff[K comparable, V comparable](old, new []V, key func(V) K) Change {
	var c Change
	before := make(map[K]V, len(old))
	for _, v := range old {
		before[key(v)] = v
	}
	for _, v := range new {
		o, ok := before[key(v)]
		switch {
		case !ok:
			c.Added++
		case o != v:
			c.Changed++
		}
		delete(before, key(v))
	}
	c.Removed = len(before)
	return c
}

// Diff is the change per table from old to new.
type Diff struct {
	Interfaces Change `json:"interfaces"`
	VRFs       Change `json:"vrfs"`
	Redirects  Change `json:"redirects"`
	SBR        Change `json:"sbr"`
}

// Zero reports whether the tables are equal.
func (d Diff) Zero() bool {
	return d.Interfaces.Zero() && d.VRFs.Zero() && d.Redirects.Zero() && d.SBR.Zero()
}

// DiffTables compares two tables entry by entry.
func DiffTables(old, new Tables) Diff {
	return Diff{
		Interfaces: diff(old.Interfaces, new.Interfaces, Interface.Key),
		VRFs:       diff(old.VRFs, new.VRFs, func(v VRF) uint32 { return v.ID }),
		Redirects:  diff(old.Redirects, new.Redirects, func(r Redirect) uint32 { return r.Ifindex }),
		SBR:        diff(old.SBR, new.SBR, func(e SBR) netip.Prefix { return e.Prefix }),
	}
}

// Entry conversion between the desired types and the map types.

func (i Interface) entry(slot uint32) (IfaceKey, IfaceValue) {
	var flags uint8
	if i.Strict {
		flags |= IfaceFlagStrict
	}
	if i.Peer {
		flags |= IfaceFlagPeer
	}
	return IfaceKey{Slot: slot, Ifindex: i.Ifindex, Vlan: i.VLAN}, IfaceValue{VrfId: i.VRF, Mode: bpfMode(i.Mode), Flags: bpfIfaceFlags(flags)}
}

func interfaceFrom(k IfaceKey, v IfaceValue) Interface {
	return Interface{Ifindex: k.Ifindex, VLAN: k.Vlan, VRF: v.VrfId, Mode: Mode(v.Mode),
		Strict: uint8(v.Flags)&IfaceFlagStrict != 0, Peer: uint8(v.Flags)&IfaceFlagPeer != 0}
}

// vrfDerived is what a VRF entry's flags take from the rest of the tables.
type vrfDerived struct {
	sbr   bool // the tables have sbr entries: VRFs routing by main get VRF_F_SBR
	peers bool // an interface has Peer: every VRF gets VRF_F_PEERS
}

func (t Tables) vrfDerived() vrfDerived { return vrfDerived{sbr: len(t.SBR) > 0, peers: t.hasPeers()} }

func (t Tables) hasPeers() bool {
	return slices.ContainsFunc(t.Interfaces, func(i Interface) bool { return i.Peer })
}

// entry of the VRF, with the flags d derives.
func (v VRF) entry(slot uint32, d vrfDerived) (VRFKey, VRFValue) {
	var flags uint32
	if d.sbr && v.TableID == limits.MainTableID {
		flags |= VRFFlagSBR
	}
	if d.peers {
		flags |= VRFFlagPeers
	}
	return VRFKey{Slot: slot, VrfId: v.ID}, VRFValue{TableId: v.TableID, Vni: v.VNI, LookupIfindex: v.LookupIfindex,
		Flags: bpfVRFFlags(flags)}
}

func vrfFrom(k VRFKey, v VRFValue) VRF {
	return VRF{ID: k.VrfId, TableID: v.TableId, VNI: v.Vni, LookupIfindex: v.LookupIfindex}
}

func (r Redirect) entry(slot uint32) (RedirectKey, RedirectValue) {
	var flags uint32
	if r.Peer {
		flags |= RedirectFlagPeer
	}
	if !r.DstMAC.IsZero() {
		flags |= RedirectFlagRewriteMAC
	}
	return RedirectKey{Slot: slot, Ifindex: r.Ifindex},
		RedirectValue{EgressIfindex: r.EgressIfindex, Flags: bpfRedirectFlags(flags), Smac: r.SrcMAC, Dmac: r.DstMAC}
}

func redirectFrom(k RedirectKey, v RedirectValue) Redirect {
	r := Redirect{Ifindex: k.Ifindex, EgressIfindex: v.EgressIfindex, Peer: uint32(v.Flags)&RedirectFlagPeer != 0}
	if uint32(v.Flags)&RedirectFlagRewriteMAC != 0 {
		r.SrcMAC, r.DstMAC = v.Smac, v.Dmac
	}
	return r
}

// ifaceCacheBucket is iface_cache_bucket() of bpf/router.h: the bucket of {ifindex, vlan} within a slot.
func ifaceCacheBucket(ifindex uint32, vlan uint16) uint32 {
	return (ifindex + uint32(vlan)*limits.IfaceCacheVLANMul) & (limits.IfaceCacheBuckets - 1)
}

// cacheStamp is what the program compares an iface_cache entry's stamp with: the first 8 bytes of the live
// version's tables hash, read as the program reads them (a native-endian __u64).
func cacheStamp(hash [32]byte) uint64 { return binary.NativeEndian.Uint64(hash[:8]) }

// ifaceCache is the content of one slot of iface_cache for t (normalised, valid) whose Hash is hash: every bucket,
// an interface in its bucket when it is the first there by key (the others are found in iface_table), empty
// buckets with ifindex 0, all stamped with hash.
func ifaceCache(t Tables, hash [32]byte) []IfaceCacheValue {
	stamp := cacheStamp(hash)
	vrfs := make(map[uint32]VRF, len(t.VRFs))
	for _, v := range t.VRFs {
		vrfs[v.ID] = v
	}
	derived := t.vrfDerived()
	buckets := make([]IfaceCacheValue, limits.IfaceCacheBuckets)
	for i := range buckets {
		buckets[i].Stamp = stamp
	}
	for _, in := range t.Interfaces {
		b := &buckets[ifaceCacheBucket(in.Ifindex, in.VLAN)]
		if b.Ifindex != 0 {
			continue
		}
		_, iv := in.entry(0)
		*b = IfaceCacheValue{Stamp: stamp, Ifindex: in.Ifindex, Vlan: in.VLAN, Mode: iv.Mode, Flags: iv.Flags, VrfId: iv.VrfId}
		if in.Mode == ModeRoute {
			_, vv := vrfs[in.VRF].entry(0, derived)
			b.TableId, b.LookupIfindex, b.VrfFlags = vv.TableId, vv.LookupIfindex, vv.Flags
		}
	}
	return buckets
}

// entry of the prefix; table is its VRF's table.
func (e SBR) entry(slot, table uint32) (SBRKey, SBRValue) {
	k := SBRKey{Slot: slot, Prefixlen: uint32(sbrKeyBits + e.Prefix.Bits()), Addr: e.Prefix.Addr().As16()}
	if e.Prefix.Addr().Is4() {
		k.Prefixlen += sbrV4Bits
	}
	return k, SBRValue{VrfId: e.VRF, TableId: table}
}

func sbrFrom(k SBRKey, v SBRValue) SBR {
	p, _ := k.Prefix()
	return SBR{Prefix: p, VRF: v.VrfId}
}
