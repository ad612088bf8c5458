package maps

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/internal/validation"
)

// Tables is the desired (or live) content of the router's tables. Order does
// not matter: Normalize sorts, Hash and Apply do not depend on input order.
type Tables struct {
	Interfaces []Interface `json:"interfaces,omitempty"`
	VRFs       []VRF       `json:"vrfs,omitempty"`
	Redirects  []Redirect  `json:"redirects,omitempty"`
}

// Interface is one iface_table entry: packets arriving on {Ifindex, VLAN}.
type Interface struct {
	Ifindex uint32 `json:"ifindex"`
	VLAN    uint16 `json:"vlan,omitempty"` // 802.1Q VLAN id, 0 = untagged
	VRF     uint32 `json:"vrf,omitempty"`  // required for route mode; counters bucket otherwise
	Mode    Mode   `json:"mode"`
	Strict  bool   `json:"strict,omitempty"` // drop instead of pass when a lookup fails
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

// Validate checks the tables against the program's rules. It returns every problem found, each a *field.Error
// naming the field and value, together matching validation.ErrInvalid; nil when valid.
func (t Tables) Validate() error {
	var errs field.ErrorList
	bad := func(path *field.Path, value any, format string, args ...any) {
		errs = append(errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
	}

	vrfAt := make(map[uint32]int, len(t.VRFs))
	for i, v := range t.VRFs {
		f := field.NewPath("vrfs").Index(i)
		switch {
		case v.ID == 0:
			bad(f.Child("id"), v.ID, "reserved for interfaces not in the tables")
		case v.ID >= MaxVRFs:
			bad(f.Child("id"), v.ID, "must be within 1..%d: the router counts VRFs in an array of %d", MaxVRFs-1, MaxVRFs)
		}
		if first, dup := vrfAt[v.ID]; dup {
			bad(f.Child("id"), v.ID, "duplicate of vrfs[%d]", first)
		} else {
			vrfAt[v.ID] = i
		}
		if v.TableID < v1.MinTableID {
			bad(f.Child("tableID"), v.TableID, "reserved: not a routing table")
		}
		if v.VNI > v1.MaxVNI {
			bad(f.Child("vni"), v.VNI, "must be within 0..%d (24 bits)", v1.MaxVNI)
		}
	}
	if len(t.VRFs) > MaxVRFs {
		errs = append(errs, field.TooMany(field.NewPath("vrfs"), len(t.VRFs), MaxVRFs))
	}

	redirectAt := make(map[uint32]int, len(t.Redirects))
	for i, r := range t.Redirects {
		f := field.NewPath("redirects").Index(i)
		if r.Ifindex == 0 {
			bad(f.Child("ifindex"), r.Ifindex, "not a valid ifindex")
		}
		if first, dup := redirectAt[r.Ifindex]; dup {
			bad(f.Child("ifindex"), r.Ifindex, "duplicate of redirects[%d]", first)
		} else {
			redirectAt[r.Ifindex] = i
		}
		if r.EgressIfindex == 0 {
			bad(f.Child("egressIfindex"), r.EgressIfindex, "not a valid ifindex")
		}
		if r.DstMAC.IsZero() && !r.SrcMAC.IsZero() {
			bad(f.Child("dstMAC"), r.DstMAC.String(), "must be set when srcMAC is set")
		}
		if !r.DstMAC.IsZero() && r.SrcMAC.IsZero() {
			bad(f.Child("srcMAC"), r.SrcMAC.String(), "must be set when dstMAC is set")
		}
		if r.SrcMAC.IsGroup() {
			bad(f.Child("srcMAC"), r.SrcMAC.String(), "a group address")
		}
	}
	if len(t.Redirects) > MaxEntries {
		errs = append(errs, field.TooMany(field.NewPath("redirects"), len(t.Redirects), MaxEntries))
	}

	ifaceAt := make(map[InterfaceKey]int, len(t.Interfaces))
	for i, in := range t.Interfaces {
		f := field.NewPath("interfaces").Index(i)
		if in.Ifindex == 0 {
			bad(f.Child("ifindex"), in.Ifindex, "not a valid ifindex")
		}
		if in.VLAN > v1.MaxVLAN {
			bad(f.Child("vlan"), in.VLAN, "must be within 0..%d", v1.MaxVLAN)
		}
		if first, dup := ifaceAt[in.Key()]; dup {
			bad(f, in.Key().String(), "duplicate of interfaces[%d]", first)
		} else {
			ifaceAt[in.Key()] = i
		}
		if !in.Mode.Valid() {
			bad(f.Child("mode"), uint8(in.Mode), "not a known mode")
		}
		if in.VRF >= MaxVRFs {
			bad(f.Child("vrf"), in.VRF, "must be below %d: the router counts VRFs in an array of %d", MaxVRFs, MaxVRFs)
		} else if _, ok := vrfAt[in.VRF]; in.VRF != 0 && !ok {
			bad(f.Child("vrf"), in.VRF, "not in vrfs")
		} else if in.VRF == 0 && in.Mode == ModeRoute {
			bad(f.Child("vrf"), in.VRF, "required for mode route")
		}
		if _, ok := redirectAt[in.Ifindex]; in.Mode == ModeRedirect && !ok && in.Ifindex != 0 {
			bad(f.Child("ifindex"), in.Ifindex, "mode redirect but no redirects entry")
		}
	}
	if len(t.Interfaces) > MaxEntries {
		errs = append(errs, field.TooMany(field.NewPath("interfaces"), len(t.Interfaces), MaxEntries))
	}
	return validation.Join(errs)
}

// MaxEntries is the largest number of entries per table: the hash maps hold two generations during an Apply.
const MaxEntries = min(limits.IfaceTableSize, limits.VRFTableSize, limits.RedirectTableSize) / 2

// Normalize returns a copy with every table sorted by key.
func (t Tables) Normalize() Tables {
	n := Tables{
		Interfaces: slices.Clone(t.Interfaces),
		VRFs:       slices.Clone(t.VRFs),
		Redirects:  slices.Clone(t.Redirects),
	}
	slices.SortFunc(n.Interfaces, func(a, b Interface) int {
		return cmp.Or(cmp.Compare(a.Ifindex, b.Ifindex), cmp.Compare(a.VLAN, b.VLAN))
	})
	slices.SortFunc(n.VRFs, func(a, b VRF) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(n.Redirects, func(a, b Redirect) int { return cmp.Compare(a.Ifindex, b.Ifindex) })
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
	h.Write(b)
	return [32]byte(h.Sum(nil))
}

// Equal reports whether both tables have the same content.
func (t Tables) Equal(o Tables) bool {
	a, b := t.Normalize(), o.Normalize()
	return slices.Equal(a.Interfaces, b.Interfaces) && slices.Equal(a.VRFs, b.VRFs) &&
		slices.Equal(a.Redirects, b.Redirects)
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
}

// Zero reports whether the tables are equal.
func (d Diff) Zero() bool { return d.Interfaces.Zero() && d.VRFs.Zero() && d.Redirects.Zero() }

// DiffTables compares two tables entry by entry.
func DiffTables(old, new Tables) Diff {
	return Diff{
		Interfaces: diff(old.Interfaces, new.Interfaces, Interface.Key),
		VRFs:       diff(old.VRFs, new.VRFs, func(v VRF) uint32 { return v.ID }),
		Redirects:  diff(old.Redirects, new.Redirects, func(r Redirect) uint32 { return r.Ifindex }),
	}
}

// Entry conversion between the desired types and the map types.

func (i Interface) entry(slot uint32) (IfaceKey, IfaceValue) {
	v := IfaceValue{VrfId: i.VRF, Mode: bpfMode(i.Mode)}
	if i.Strict {
		v.Flags = bpfIfaceFlags(IfaceFlagStrict)
	}
	return IfaceKey{Slot: slot, Ifindex: i.Ifindex, Vlan: i.VLAN}, v
}

func interfaceFrom(k IfaceKey, v IfaceValue) Interface {
	return Interface{Ifindex: k.Ifindex, VLAN: k.Vlan, VRF: v.VrfId, Mode: Mode(v.Mode),
		Strict: uint8(v.Flags)&IfaceFlagStrict != 0}
}

func (v VRF) entry(slot uint32) (VRFKey, VRFValue) {
	return VRFKey{Slot: slot, VrfId: v.ID}, VRFValue{TableId: v.TableID, Vni: v.VNI, LookupIfindex: v.LookupIfindex}
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
