// Package bpftables is the one translator from names to the eBPF router's tables (pkg/maps): interface names
// become ifindexes of the node's namespace, VRF names become BPF VRF ids, redirect targets become egress
// ifindexes. A NodeNetworkConfigSpec (FromSpec) and the tables file of `dataplane apply` (agent/dpctl)
// both describe tables by name as a Desired; Resolve turns it into maps.Tables. The table rules are
// maps.Tables.ValidateFrom's alone: Resolve checks only what names add (unknown VRF names, duplicate VRF names,
// interfaces that do not exist) and reports the router's rules in the source's fields and values. It is pure: the
// caller supplies the name -> ifindex lookup.
package bpftables

import (
	"errors"
	"fmt"
	"math"
	"net/netip"

	"github.com/vishvananda/netlink"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrMissingLink marks a named interface that does not exist in the node's namespace. Like every problem of the
// source it also matches fielderr.ErrInvalid; the field errors name field and value.
var ErrMissingLink = fmt.Errorf("%w: interface does not exist", fielderr.ErrInvalid)

// Link is what the tables take from an interface of the node.
type Link struct {
	Ifindex int
	// Peer: the tc router hands what it routes out of the interface to the interface's other end directly
	// (maps.Interface.Peer); see PeerLink.
	Peer bool
}

// Links looks interface names up in the node's namespace; ok is false when there is no such link.
type Links func(name string) (link Link, ok bool)

// PeerLink is the one rule for maps.Interface.Peer: a veth (kind) whose other end is in another network namespace
// (a pod's, a container's), with the veth's own root qdisc (noqueue, "" where not reported). The router's
// bpf_redirect_peer then skips the link's transmit side - its qdisc and tc egress - and the backlog queue behind
// it; a link shaped by a qdisc of its own keeps the ordinary path. rootQdisc is asked only when the rest holds; when
// it fails, the link keeps the ordinary path.
func PeerLink(kind string, peerInOtherNetns bool, rootQdisc func() (string, error)) bool {
	if kind != "veth" || !peerInOtherNetns {
		return false
	}
	q, err := rootQdisc()
	return err == nil && (q == "noqueue" || q == "")
}

// LinkOf is what the tables take from a kernel link (IFLA_LINK_NETNSID set: a veth's peer is in another
// namespace); qdiscs lists a link's qdiscs (netlink.Handle.QdiscList).
func LinkOf(l netlink.Link, qdiscs func(netlink.Link) ([]netlink.Qdisc, error)) Link {
	a := l.Attrs()
	return Link{Ifindex: a.Index, Peer: PeerLink(l.Type(), a.NetNsID >= 0, func() (string, error) {
		qs, err := qdiscs(l)
		root := ""
		for _, q := range qs {
			if q.Attrs().Parent == netlink.HANDLE_ROOT {
				root = q.Type()
			}
		}
		return root, err
	})}
}

// Desired is tables by name, each entry with the paths of its fields in the source (a spec, a file).
type Desired struct {
	VRFs       []VRF
	Interfaces []Interface
	Redirects  []Redirect
	SBR        []SBRPrefix
	// Errs are the source's own problems found while building Desired (e.g. an unknown mode name); Resolve
	// reports them with its own.
	Errs field.ErrorList
	// Tables names each whole table ("vrfs", "interfaces", "redirects", "sbr") in the source, for errors about a
	// table's size; missing: the table's own name.
	Tables map[string]*field.Path
}

// VRF is a vrf_table entry by name.
type VRF struct {
	Name         string
	ID           int64
	TableID      int64
	VNI          int64
	LookupDevice string // "" = the ingress interface
	At           VRFPaths
}

// VRFPaths are the source paths of a VRF's fields; nil where the source has no such field.
type VRFPaths struct{ Entry, Name, ID, TableID, VNI, LookupDevice *field.Path }

// Interface is an iface_table entry by name.
type Interface struct {
	Name   string
	VLAN   int64
	VRF    string // "" = none
	Mode   maps.Mode
	Strict bool
	At     InterfacePaths
}

// InterfacePaths are the source paths of an interface's fields.
type InterfacePaths struct{ Entry, Name, VLAN, VRF, Mode *field.Path }

// SBRPrefix is an sbr_table entry by name: traffic from Prefix is routed by VRF's table.
type SBRPrefix struct {
	Prefix netip.Prefix
	VRF    string
	At     SBRPaths
}

// SBRPaths are the source paths of an sbr prefix's fields.
type SBRPaths struct{ Entry, Prefix, VRF *field.Path }

// Redirect is a redirect_table entry by name.
type Redirect struct {
	From, To       string
	Peer           bool
	SrcMAC, DstMAC maps.MAC
	At             RedirectPaths
}

// RedirectPaths are the source paths of a redirect's fields.
type RedirectPaths struct{ Entry, From, To, SrcMAC, DstMAC *field.Path }

// Resolve builds the tables of d with links. Every problem is reported: each a *field.Error naming the source's
// field and value, together matching fielderr.ErrInvalid, and ErrMissingLink when an interface does not exist.
// The tables are normalised.
func (d Desired) Resolve(links Links) (maps.Tables, error) {
	r := resolver{links: links, errs: append(field.ErrorList(nil), d.Errs...), origin: origin{tables: d.Tables},
		absent: Placeholders{base: absentBase}}
	var t maps.Tables
	vrfIDs := make(map[string]uint32, len(d.VRFs))
	vrfNamed := make(map[string]bool, len(d.VRFs))
	for _, v := range d.VRFs {
		entry := maps.VRF{ID: fit32(v.ID, math.MaxUint32), TableID: fit32(v.TableID, 0), VNI: fit32(v.VNI, math.MaxUint32)}
		if vrfNamed[v.Name] {
			r.errs = append(r.errs, field.Duplicate(v.At.Name, v.Name))
		} else {
			vrfNamed[v.Name], vrfIDs[v.Name] = true, entry.ID
		}
		if v.LookupDevice != "" {
			entry.LookupIfindex = r.ifindex(v.At.LookupDevice, v.LookupDevice)
		}
		t.VRFs = append(t.VRFs, entry)
		r.origin.vrfs = append(r.origin.vrfs, entryOrigin{v.At.Entry, v.Name, map[string]source{
			"id": {v.At.ID, v.ID}, "tableID": {v.At.TableID, v.TableID}, "vni": {v.At.VNI, v.VNI},
			"lookupIfindex": {v.At.LookupDevice, v.LookupDevice},
		}})
	}
	for _, in := range d.Interfaces {
		entry := maps.Interface{VLAN: fit16(in.VLAN), Mode: in.Mode, Strict: in.Strict}
		if in.VRF != "" {
			id, ok := vrfIDs[in.VRF]
			if !ok {
				r.errs = append(r.errs, field.Invalid(in.At.VRF, in.VRF, "not in vrfs"))
				continue
			}
			entry.VRF = id
		}
		entry.Ifindex, entry.Peer = r.link(in.At.Name, in.Name)
		t.Interfaces = append(t.Interfaces, entry)
		r.origin.interfaces = append(r.origin.interfaces, entryOrigin{in.At.Entry, fmt.Sprintf("%s vlan %d", in.Name, in.VLAN), map[string]source{
			"ifindex": {in.At.Name, in.Name}, "vlan": {in.At.VLAN, in.VLAN}, "vrf": {in.At.VRF, in.VRF},
			"mode": {in.At.Mode, in.Mode.String()},
		}})
	}
	for _, rd := range d.Redirects {
		t.Redirects = append(t.Redirects, maps.Redirect{Ifindex: r.ifindex(rd.At.From, rd.From),
			EgressIfindex: r.ifindex(rd.At.To, rd.To), Peer: rd.Peer, SrcMAC: rd.SrcMAC, DstMAC: rd.DstMAC})
		r.origin.redirects = append(r.origin.redirects, entryOrigin{rd.At.Entry, rd.From, map[string]source{
			"ifindex": {rd.At.From, rd.From}, "egressIfindex": {rd.At.To, rd.To},
			"srcMAC": {rd.At.SrcMAC, macString(rd.SrcMAC)}, "dstMAC": {rd.At.DstMAC, macString(rd.DstMAC)},
		}})
	}
	for _, e := range d.SBR {
		id, ok := vrfIDs[e.VRF]
		if !ok {
			r.errs = append(r.errs, field.Invalid(e.At.VRF, e.VRF, "not in vrfs"))
			continue
		}
		t.SBR = append(t.SBR, maps.SBR{Prefix: e.Prefix, VRF: id})
		r.origin.sbr = append(r.origin.sbr, entryOrigin{e.At.Entry, e.Prefix.String(), map[string]source{
			"prefix": {e.At.Prefix, e.Prefix.String()}, "vrf": {e.At.VRF, e.VRF},
		}})
	}
	if err := errors.Join(fielderr.Join(r.errs), fielderr.JoinClass(ErrMissingLink, r.missing),
		t.ValidateFrom(&r.origin)); err != nil {
		return maps.Tables{}, err
	}
	return t.Normalize(), nil
}

type resolver struct {
	links         Links
	errs, missing field.ErrorList
	origin        origin
	// absent numbers names that do not exist, so that the table rules still see one interface per name.
	absent Placeholders // base absentBase
}

// ifindex resolves name; one that does not exist is recorded and gets a placeholder.
func (r *resolver) ifindex(path *field.Path, name string) uint32 {
	idx, _ := r.link(path, name)
	return idx
}

// link resolves name to its ifindex and whether the router hands packets to its peer; one that does not exist is
// recorded and gets a placeholder (no peer).
func (r *resolver) link(path *field.Path, name string) (uint32, bool) {
	l, ok := r.links(name)
	if !ok || l.Ifindex <= 0 || l.Ifindex > math.MaxUint32 {
		r.missing = append(r.missing, field.Invalid(path, name, "does not exist on the node"))
		return uint32(r.absent.Ifindex(name)), false
	}
	return uint32(l.Ifindex), l.Peer
}

// placeholderBase is above any real ifindex (the kernel's are positive ints, counted up from 1); absentBase
// above the placeholders of names that will exist.
const (
	placeholderBase = 1 << 30
	absentBase      = 1 << 31
)

// Placeholders numbers interfaces that do not exist (yet): the ones a plan creates, or every name of a file
// checked away from its node. Each name gets one number, above any real ifindex, in the order first asked.
type Placeholders struct {
	Names []string // in the order numbered
	at    map[string]int
	base  int // 0: placeholderBase
}

// Ifindex is name's placeholder.
func (p *Placeholders) Ifindex(name string) int {
	if idx, ok := p.at[name]; ok {
		return idx
	}
	if p.at == nil {
		p.at = map[string]int{}
	}
	if p.base == 0 {
		p.base = placeholderBase
	}
	p.at[name] = p.base + len(p.Names)
	p.Names = append(p.Names, name)
	return p.at[name]
}

// Links is a lookup that numbers every name.
func (p *Placeholders) Links() Links {
	return func(name string) (Link, bool) { return Link{Ifindex: p.Ifindex(name)}, true }
}

// fit32 converts a source number; one that does not fit becomes bad, a value the table rules refuse (the
// error then reports the source's value).
func fit32(v int64, bad uint32) uint32 {
	if v < 0 || v > math.MaxUint32 {
		return bad
	}
	return uint32(v)
}

// fit16 converts a VLAN id; one that does not fit becomes a VLAN the table rules refuse.
func fit16(v int64) uint16 {
	if v < 0 || v > math.MaxUint16 {
		return math.MaxUint16
	}
	return uint16(v)
}

func macString(m maps.MAC) string {
	if m.IsZero() {
		return ""
	}
	return m.String()
}

// source is where one field of an entry came from.
type source struct {
	path  *field.Path
	value any
}

// entryOrigin is where one table entry came from.
type entryOrigin struct {
	path   *field.Path
	value  any // of the whole entry
	fields map[string]source
}

// origin maps the entries of the resolved tables back to the source (maps.Origin).
type origin struct {
	vrfs, interfaces, redirects, sbr []entryOrigin
	// tables names each whole table in the source; nil: the table's own name.
	tables map[string]*field.Path
}

func (o *origin) Field(table string, i int, name string, value any) (*field.Path, any) {
	var entries []entryOrigin
	switch table {
	case "vrfs":
		entries = o.vrfs
	case "interfaces":
		entries = o.interfaces
	case "redirects":
		entries = o.redirects
	case "sbr":
		entries = o.sbr
	}
	if i < 0 || i >= len(entries) {
		if p := o.tables[table]; p != nil {
			return p, value
		}
		return field.NewPath(table), value
	}
	e := entries[i]
	if s, ok := e.fields[name]; ok && s.path != nil {
		return s.path, s.value
	}
	if name == "" {
		return e.path, e.value
	}
	return e.path.Child(name), value
}
