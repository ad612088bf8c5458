package dpctl

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/agent/bpftables"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/maps"
)

// File is the tables file `dataplane apply -f` reads: interfaces by NAME, resolved to ifindexes on the node.
//
//	revision: ""            # optional; default: a hash of the resolved tables
//	strict: false           # default for interfaces that do not set strict
//	vrfs:
//	  - {name: tenant-a, id: 1, table: 101, vni: 10101, lookupInterface: fwd-a}
//	interfaces:
//	  - {name: ra, vrf: tenant-a}                  # mode route is the default
//	  - {name: rx, mode: redirect, strict: true}
//	redirects:
//	  - {from: rx, to: ry, dstMAC: "02:00:00:00:00:01", srcMAC: "02:00:00:00:00:02"}
//	sbr:
//	  - {prefix: 10.50.0.0/24, vrf: tenant-a}      # traffic from the prefix is routed by tenant-a's table
type File struct {
	Revision   string      `json:"revision,omitempty"`
	Strict     bool        `json:"strict,omitempty"`
	VRFs       []VRF       `json:"vrfs,omitempty"`
	Interfaces []Interface `json:"interfaces,omitempty"`
	Redirects  []Redirect  `json:"redirects,omitempty"`
	SBR        []SBR       `json:"sbr,omitempty"`
}

// VRF is a tenant routing domain: the kernel routing table the router's bpf_fib_lookup searches.
type VRF struct {
	Name string `json:"name"`
	// ID keys the VRF's counters (v1.MinVRFID..v1.MaxVRFID); keep it stable across applies so counters keep counting.
	ID    int64 `json:"id"`
	Table int64 `json:"table"`
	VNI   int64 `json:"vni,omitempty"`
	// LookupInterface is the device whose forwarding flag the FIB lookup checks (a VRF device where one
	// exists); empty means the ingress interface.
	LookupInterface string `json:"lookupInterface,omitempty"`
}

// Interface is an ingress interface (optionally one VLAN on it) and what the router does with its packets.
type Interface struct {
	Name   string `json:"name"`
	VLAN   int64  `json:"vlan,omitempty"`
	VRF    string `json:"vrf,omitempty"`
	Mode   string `json:"mode,omitempty"` // route (default) | redirect | pass
	Strict *bool  `json:"strict,omitempty"`
}

// Redirect sends everything forwardable arriving on From out of To.
type Redirect struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Peer   bool   `json:"peer,omitempty"` // bpf_redirect_peer: To is a veth whose peer is in another namespace
	SrcMAC string `json:"srcMAC,omitempty"`
	DstMAC string `json:"dstMAC,omitempty"`
}

// SBR is a source-based routing entry (sbr_table): on the interfaces of VRFs that route by the main table, traffic
// from Prefix (a network address, IPv4 or IPv6) is routed by the table of VRF (a name from vrfs, as interfaces
// name theirs), as the kernel's "from <prefix> lookup <table>" rules do.
type SBR struct {
	Prefix string `json:"prefix"`
	VRF    string `json:"vrf"`
}

// Parse decodes and validates a tables file. Unknown fields are errors, so a typo never silently drops a setting.
// Every problem of the file matches fielderr.ErrInvalid; a field's problem is a *field.Error naming field and
// value as the file has them.
func Parse(data []byte) (File, error) {
	var generic any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		return File{}, fmt.Errorf("%w: tables file: %w", fielderr.ErrInvalid, err)
	}
	if ferr := unknownFields(nil, generic, reflect.TypeFor[File]()); ferr != nil {
		return File{}, fielderr.Join(field.ErrorList{ferr})
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return File{}, fmt.Errorf("%w: tables file: %w", fielderr.ErrInvalid, err)
	}
	if err := f.Validate(); err != nil {
		return File{}, err
	}
	return f, nil
}

// unknownFields reports the first key the file's types do not have, with its path (vrfs[0].tabel), which
// the JSON decoder's own message leaves out.
func unknownFields(path *field.Path, v any, t reflect.Type) *field.Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type mismatch; the decoder reports it
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fields[name] = t.Field(i).Type
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			child := field.NewPath(k)
			if path != nil {
				child = path.Child(k)
			}
			if !ok {
				return field.Invalid(child, k, "not a known field")
			}
			if ferr := unknownFields(child, obj[k], ft); ferr != nil {
				return ferr
			}
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range list {
			if ferr := unknownFields(path.Index(i), e, t.Elem()); ferr != nil {
				return ferr
			}
		}
	}
	return nil
}

// ParseMode maps the file's mode names to the router's modes; empty is route.
func ParseMode(s string) (maps.Mode, error) {
	if s == "" {
		return maps.ModeRoute, nil
	}
	return maps.ParseMode(s)
}

// Validate checks everything that can be checked without the node's interfaces, and returns every problem
// (each a *field.Error, together matching fielderr.ErrInvalid). The file's own rules are its syntax (names,
// modes, MACs, prefixes, the revision); the table rules are maps.Tables', checked on the file's tables with a
// placeholder for each interface name.
func (f File) Validate() error {
	var ph bpftables.Placeholders
	_, err := f.resolve(ph.Links())
	return err
}

// VRFNames maps VRF ids to the file's names, for readable dumps.
func (f File) VRFNames() map[uint32]string {
	m := make(map[uint32]string, len(f.VRFs))
	for _, v := range f.VRFs {
		m[uint32(v.ID)] = v.Name
	}
	return m
}

// Resolver looks interface names up (in the network namespace the CLI runs in).
type Resolver interface {
	Link(name string) (bpftables.Link, error)
}

// Tables resolves the file's names into the router's tables (bpftables, the translator the agent uses too).
func (f File) Tables(r Resolver) (maps.Tables, error) {
	return f.resolve(func(name string) (bpftables.Link, bool) {
		l, err := r.Link(name)
		return l, err == nil
	})
}

func (f File) resolve(links bpftables.Links) (maps.Tables, error) {
	d, errs := f.desired()
	t, err := d.Resolve(links)
	return t, errors.Join(fielderr.Join(errs), err)
}

// desired describes the file's tables by name, with the file's field paths; errs are the problems of the file's
// own syntax. Entries with such a problem are left out, so that the table rules do not report them twice.
func (f File) desired() (bpftables.Desired, field.ErrorList) {
	var errs syntaxErrs
	if len(f.Revision) > maps.MaxRevisionLen {
		errs.bad(field.NewPath("revision"), f.Revision, "longer than %d bytes", maps.MaxRevisionLen)
	}
	var d bpftables.Desired
	d.VRFs = f.desiredVRFs(&errs)
	d.Interfaces = f.desiredInterfaces(&errs)
	d.Redirects = f.desiredRedirects(&errs)
	d.SBR = f.desiredSBR(&errs)
	return d, field.ErrorList(errs)
}

// syntaxErrs collects the problems of the file's own syntax, in the order they are found.
type syntaxErrs field.ErrorList

// bad records that the field at path has an invalid value.
func (errs *syntaxErrs) bad(path *field.Path, value any, format string, args ...any) {
	*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
}

// ifName reports whether name is a valid interface name (empty ones only when not required), recording why not.
func (errs *syntaxErrs) ifName(path *field.Path, name string, required bool) bool {
	switch {
	case name == "" && required:
		*errs = append(*errs, field.Required(path, "an interface name"))
	case len(name) > v1.MaxInterfaceNameLen:
		errs.bad(path, name, "longer than %d bytes", v1.MaxInterfaceNameLen)
	case strings.ContainsAny(name, "/ \t\n") || name == "." || name == "..":
		errs.bad(path, name, "not a valid interface name")
	default:
		return true
	}
	return false
}

// mac parses an optional MAC address (empty: the zero MAC); false, with the problem recorded, when it is invalid.
func (errs *syntaxErrs) mac(path *field.Path, s string) (maps.MAC, bool) {
	if s == "" {
		return maps.MAC{}, true
	}
	m, err := maps.ParseMAC(s)
	if err != nil {
		errs.bad(path, s, "not a MAC address")
	}
	return m, err == nil
}

// desiredVRFs describes the file's VRFs, leaving out those with an invalid lookup interface.
func (f File) desiredVRFs(errs *syntaxErrs) []bpftables.VRF {
	var out []bpftables.VRF
	for i, v := range f.VRFs {
		p := field.NewPath("vrfs").Index(i)
		if v.Name == "" {
			*errs = append(*errs, field.Required(p.Child("name"), "a VRF name"))
		}
		if !errs.ifName(p.Child("lookupInterface"), v.LookupInterface, false) {
			continue
		}
		out = append(out, bpftables.VRF{Name: v.Name, ID: v.ID, TableID: v.Table, VNI: v.VNI, LookupDevice: v.LookupInterface,
			At: bpftables.VRFPaths{Entry: p, Name: p.Child("name"), ID: p.Child("id"), TableID: p.Child("table"),
				VNI: p.Child("vni"), LookupDevice: p.Child("lookupInterface")}})
	}
	return out
}

// desiredInterfaces describes the file's interfaces (strict defaulting to the file's), leaving out those with an
// invalid name or mode.
func (f File) desiredInterfaces(errs *syntaxErrs) []bpftables.Interface {
	var out []bpftables.Interface
	for i, in := range f.Interfaces {
		p := field.NewPath("interfaces").Index(i)
		mode, err := ParseMode(in.Mode)
		if err != nil {
			*errs = append(*errs, field.NotSupported(p.Child("mode"), in.Mode, []string{"route", "redirect", "pass"}))
		}
		if !errs.ifName(p.Child("name"), in.Name, true) || err != nil {
			continue
		}
		strict := f.Strict
		if in.Strict != nil {
			strict = *in.Strict
		}
		out = append(out, bpftables.Interface{Name: in.Name, VLAN: in.VLAN, VRF: in.VRF, Mode: mode, Strict: strict,
			At: bpftables.InterfacePaths{Entry: p, Name: p.Child("name"), VLAN: p.Child("vlan"), VRF: p.Child("vrf"), Mode: p.Child("mode")}})
	}
	return out
}

// desiredRedirects describes the file's redirects, leaving out those with an invalid interface name or MAC.
func (f File) desiredRedirects(errs *syntaxErrs) []bpftables.Redirect {
	var out []bpftables.Redirect
	for i, r := range f.Redirects {
		p := field.NewPath("redirects").Index(i)
		okFrom, okTo := errs.ifName(p.Child("from"), r.From, true), errs.ifName(p.Child("to"), r.To, true)
		src, okSrc := errs.mac(p.Child("srcMAC"), r.SrcMAC)
		dst, okDst := errs.mac(p.Child("dstMAC"), r.DstMAC)
		if !okFrom || !okTo || !okSrc || !okDst {
			continue
		}
		out = append(out, bpftables.Redirect{From: r.From, To: r.To, Peer: r.Peer, SrcMAC: src, DstMAC: dst,
			At: bpftables.RedirectPaths{Entry: p, From: p.Child("from"), To: p.Child("to"), SrcMAC: p.Child("srcMAC"), DstMAC: p.Child("dstMAC")}})
	}
	return out
}

// desiredSBR describes the file's source-based routing entries, leaving out those without a valid prefix or a VRF.
func (f File) desiredSBR(errs *syntaxErrs) []bpftables.SBRPrefix {
	var out []bpftables.SBRPrefix
	for i, e := range f.SBR {
		p := field.NewPath("sbr").Index(i)
		prefix, err := netip.ParsePrefix(e.Prefix)
		switch {
		case e.Prefix == "":
			*errs = append(*errs, field.Required(p.Child("prefix"), "a CIDR prefix"))
		case err != nil:
			errs.bad(p.Child("prefix"), e.Prefix, "not a CIDR prefix")
		}
		if e.VRF == "" {
			*errs = append(*errs, field.Required(p.Child("vrf"), "a VRF name"))
		}
		if err != nil || e.VRF == "" {
			continue
		}
		out = append(out, bpftables.SBRPrefix{Prefix: prefix, VRF: e.VRF,
			At: bpftables.SBRPaths{Entry: p, Prefix: p.Child("prefix"), VRF: p.Child("vrf")}})
	}
	return out
}

// RevisionFor is the file's revision, or a content hash of the resolved tables (so applying the same content twice
// is a no-op, and a changed interface index changes the revision).
func (f File) RevisionFor(t maps.Tables) string {
	if f.Revision != "" {
		return f.Revision
	}
	h := t.Hash()
	return fmt.Sprintf("sha256:%x", h[:16])
}
