// Package maps is the typed view of the router's eBPF maps (bpf/router.h) and
// the atomic generation swap that replaces their contents.
//
// The program reads the live slot from the `version` map once per packet and
// looks up every table with that slot in the key, so a packet never mixes two
// generations. Set.Apply writes a complete new generation under the other slot,
// flips `version` in one update, waits for an RCU grace period and deletes the
// old slot's entries. With each generation it writes that slot's part of
// iface_cache, an array the program reads instead of iface_table and vrf_table
// when an entry matches the packet's interface and the live tables' hash.
package maps

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
)

// Map names, as pinned in the pin directory.
const (
	MapIfaceTable    = bpf.RouterMapIfaceTable
	MapVRFTable      = bpf.RouterMapVrfTable
	MapRedirectTable = bpf.RouterMapRedirectTable
	MapSBRTable      = bpf.RouterMapSbrTable
	MapVRFCounters   = bpf.RouterMapVrfCounters
	MapVersion       = bpf.RouterMapVersion
	// MapIfaceCache is derived from the tables (see ifaceCache); a Set without it works, the program then
	// takes the hash tables' path for every packet.
	MapIfaceCache = bpf.RouterMapIfaceCache
)

// MapNames lists every map of the router, in a fixed order.
var MapNames = [...]string{MapIfaceTable, MapVRFTable, MapRedirectTable, MapSBRTable, MapVRFCounters, MapVersion}

// MaxVRFs bounds VRF ids (exclusive): vrf_counters is an array of this size (MAX_VRFS in bpf/router.h).
const MaxVRFs = limits.MaxVRFs

// Mode is what the program does with packets of an interface.
type Mode uint8

const (
	ModePass     = Mode(bpf.RouterIfaceModeIFACE_MODE_PASS)
	ModeRoute    = Mode(bpf.RouterIfaceModeIFACE_MODE_ROUTE)
	ModeRedirect = Mode(bpf.RouterIfaceModeIFACE_MODE_REDIRECT)
	// ModeFIB routes by the table of the interface's own VRF device (main without one): for interfaces of VRFs
	// the tables do not hold. Its VRF (0 allowed) only names the counter.
	ModeFIB = Mode(bpf.RouterIfaceModeIFACE_MODE_FIB)
)

var modeNames = map[Mode]string{ModePass: "pass", ModeRoute: "route", ModeRedirect: "redirect", ModeFIB: "fib"}

func (m Mode) String() string {
	if n, ok := modeNames[m]; ok {
		return n
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Valid reports whether the program knows the mode.
func (m Mode) Valid() bool { _, ok := modeNames[m]; return ok }

// ParseMode is the inverse of Mode.String.
func ParseMode(s string) (Mode, error) {
	for m, n := range modeNames {
		if n == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("mode %q: want route, redirect, fib or pass", s)
}

func (m Mode) MarshalText() ([]byte, error) {
	if !m.Valid() {
		return nil, fmt.Errorf("invalid mode %d", uint8(m))
	}
	return []byte(m.String()), nil
}

func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MAC is an Ethernet address; the zero value means "not set".
type MAC [6]byte

func (m MAC) String() string             { return net.HardwareAddr(m[:]).String() }
func (m MAC) IsZero() bool               { return m == MAC{} }
func (m MAC) IsGroup() bool              { return m[0]&1 != 0 }
func (m MAC) Hardware() net.HardwareAddr { return net.HardwareAddr(m[:]) }

// ParseMAC parses a 6-byte Ethernet address in any form net.ParseMAC accepts.
func ParseMAC(s string) (MAC, error) {
	hw, err := net.ParseMAC(s)
	if err != nil {
		return MAC{}, fmt.Errorf("parse MAC %q: %w", s, err)
	}
	if len(hw) != 6 {
		return MAC{}, fmt.Errorf("parse MAC %q: %d bytes, want 6", s, len(hw))
	}
	return MAC(hw), nil
}

func (m MAC) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

func (m *MAC) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*m = MAC{}
		return nil
	}
	v, err := ParseMAC(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Typed views of the map keys and values (same memory layout as bpf2go's types,
// with String methods).
type (
	IfaceKey      bpf.RouterIfaceKey
	IfaceValue    bpf.RouterIfaceValue
	VRFKey        bpf.RouterVrfKey
	VRFValue      bpf.RouterVrfValue
	RedirectKey   bpf.RouterRedirectKey
	RedirectValue bpf.RouterRedirectValue
	SBRKey        bpf.RouterSbrKey
	SBRValue      bpf.RouterSbrValue
	VersionInfo   bpf.RouterVersionInfo
	VRFStats      bpf.RouterVrfStats
	// IfaceCacheValue is one iface_cache bucket.
	IfaceCacheValue bpf.RouterIfaceCacheValue
)

// Flag bits, as in bpf/router.h.
const (
	IfaceFlagStrict        = uint8(bpf.RouterIfaceFlagsIFACE_F_STRICT)
	IfaceFlagPeer          = uint8(bpf.RouterIfaceFlagsIFACE_F_PEER)
	VRFFlagSBR             = uint32(bpf.RouterVrfFlagsVRF_F_SBR)
	VRFFlagPeers           = uint32(bpf.RouterVrfFlagsVRF_F_PEERS)
	RedirectFlagPeer       = uint32(bpf.RouterRedirectFlagsREDIRECT_F_PEER)
	RedirectFlagRewriteMAC = uint32(bpf.RouterRedirectFlagsREDIRECT_F_REWRITE_MAC)
)

func (k IfaceKey) String() string {
	return fmt.Sprintf("{slot %d ifindex %d vlan %d}", k.Slot, k.Ifindex, k.Vlan)
}

func (v IfaceValue) String() string {
	s := fmt.Sprintf("{vrf %d mode %s", v.VrfId, Mode(v.Mode))
	if uint8(v.Flags)&IfaceFlagStrict != 0 {
		s += " strict"
	}
	if uint8(v.Flags)&IfaceFlagPeer != 0 {
		s += " peer"
	}
	return s + "}"
}

func (k VRFKey) String() string { return fmt.Sprintf("{slot %d vrf %d}", k.Slot, k.VrfId) }

func (v VRFValue) String() string {
	s := fmt.Sprintf("{table %d vni %d lookup-ifindex %d", v.TableId, v.Vni, v.LookupIfindex)
	flags := uint32(v.Flags)
	if flags&VRFFlagSBR != 0 {
		s += " sbr"
		flags &^= VRFFlagSBR
	}
	if flags&VRFFlagPeers != 0 {
		s += " peers"
		flags &^= VRFFlagPeers
	}
	if flags != 0 {
		s += fmt.Sprintf(" flags %#x", flags)
	}
	return s + "}"
}

// sbrKeyBits is the prefix length of an sbr_table key beyond the address: its slot.
const sbrKeyBits = 32

// sbrV4Bits is what an IPv4 prefix's length grows by in an sbr_table key: it is stored IPv4-mapped.
const sbrV4Bits = 96

// Prefix is the source prefix of the key; ok is false for a key no entry of this package has (a prefix length
// that does not cover the slot, or an IPv4-mapped prefix shorter than the mapping).
func (k SBRKey) Prefix() (p netip.Prefix, ok bool) {
	bits := int(k.Prefixlen) - sbrKeyBits
	if bits < 0 || bits > 128 {
		return netip.Prefix{}, false
	}
	a := netip.AddrFrom16(k.Addr)
	if a.Is4In6() && bits >= sbrV4Bits {
		return netip.PrefixFrom(a.Unmap(), bits-sbrV4Bits), true
	}
	return netip.PrefixFrom(a, bits), !a.Is4In6()
}

func (k SBRKey) String() string {
	if p, ok := k.Prefix(); ok {
		return fmt.Sprintf("{slot %d from %s}", k.Slot, p)
	}
	return fmt.Sprintf("{slot %d prefixlen %d addr %s}", k.Slot, k.Prefixlen, netip.AddrFrom16(k.Addr))
}

func (v SBRValue) String() string { return fmt.Sprintf("{vrf %d table %d}", v.VrfId, v.TableId) }

func (k RedirectKey) String() string { return fmt.Sprintf("{slot %d ifindex %d}", k.Slot, k.Ifindex) }

func (v RedirectValue) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{egress %d", v.EgressIfindex)
	if uint32(v.Flags)&RedirectFlagPeer != 0 {
		b.WriteString(" peer")
	}
	if uint32(v.Flags)&RedirectFlagRewriteMAC != 0 {
		fmt.Fprintf(&b, " smac %s dmac %s", MAC(v.Smac), MAC(v.Dmac))
	}
	b.WriteString("}")
	return b.String()
}

// RevisionString returns the revision without its NUL padding.
func (v VersionInfo) RevisionString() string {
	b := make([]byte, 0, len(v.Revision))
	for _, c := range v.Revision {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func (v VersionInfo) String() string {
	return fmt.Sprintf("{generation %d slot %d revision %q hash %s}", v.Generation, v.Slot,
		v.RevisionString(), hex.EncodeToString(v.TablesHash[:8]))
}

// Counter is a packet and byte count.
type Counter struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

func (c Counter) String() string { return fmt.Sprintf("%d pkts %d bytes", c.Packets, c.Bytes) }

// Add returns the sum of two counters.
func (c Counter) Add(o Counter) Counter { return Counter{c.Packets + o.Packets, c.Bytes + o.Bytes} }

func bpfMode(m Mode) bpf.RouterIfaceMode                { return bpf.RouterIfaceMode(m) }
func bpfIfaceFlags(f uint8) bpf.RouterIfaceFlags        { return bpf.RouterIfaceFlags(f) }
func bpfRedirectFlags(f uint32) bpf.RouterRedirectFlags { return bpf.RouterRedirectFlags(f) }
func bpfVRFFlags(f uint32) bpf.RouterVrfFlags           { return bpf.RouterVrfFlags(f) }
