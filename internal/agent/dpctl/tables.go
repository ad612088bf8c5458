package dpctl

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
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
type File struct {
	Revision   string      `json:"revision,omitempty"`
	Strict     bool        `json:"strict,omitempty"`
	VRFs       []VRF       `json:"vrfs,omitempty"`
	Interfaces []Interface `json:"interfaces,omitempty"`
	Redirects  []Redirect  `json:"redirects,omitempty"`
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

// Parse decodes and validates a tables file. Unknown fields are errors, so a typo never silently drops a setting.
// Every problem of the file matches validation.ErrInvalid; a field's problem is a *field.Error naming field and
// value as the file has them.
func Parse(data []byte) (File, error) {
	var generic any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		return File{}, fmt.Errorf("%w: tables file: %w", validation.ErrInvalid, err)
	}
	if ferr := unknownFields(nil, generic, reflect.TypeFor[File]()); ferr != nil {
		return File{}, validation.Join(field.ErrorList{ferr})
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return File{}, fmt.Errorf("%w: tables file: %w", validation.ErrInvalid, err)
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
// (each a *field.Error, together matching validation.ErrInvalid).
func (f File) Validate() error {
	var errs field.ErrorList
	bad := func(path *field.Path, value any, format string, args ...any) {
		errs = append(errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
	}
	checkIfName := func(path *field.Path, name string, required bool) {
		switch {
		case name == "" && required:
			errs = append(errs, field.Required(path, "an interface name"))
		case len(name) > v1.MaxInterfaceNameLen:
			bad(path, name, "longer than %d bytes", v1.MaxInterfaceNameLen)
		case strings.ContainsAny(name, "/ \t\n") || name == "." || name == "..":
			bad(path, name, "not a valid interface name")
		}
	}

	if len(f.Revision) > maps.MaxRevisionLen {
		bad(field.NewPath("revision"), f.Revision, "longer than %d bytes", maps.MaxRevisionLen)
	}

	vrfByName := map[string]int{}
	vrfByID := map[int64]int{}
	for i, v := range f.VRFs {
		p := field.NewPath("vrfs").Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "a VRF name"))
		} else if first, dup := vrfByName[v.Name]; dup {
			bad(p.Child("name"), v.Name, "already defined by vrfs[%d]", first)
		} else {
			vrfByName[v.Name] = i
		}
		switch {
		case v.ID == 0:
			bad(p.Child("id"), v.ID, "reserved for traffic of unknown interfaces (use %d..%d)", v1.MinVRFID, v1.MaxVRFID)
		case v.ID < v1.MinVRFID || v.ID > v1.MaxVRFID:
			bad(p.Child("id"), v.ID, "BPF VRF id must be within %d..%d", v1.MinVRFID, v1.MaxVRFID)
		default:
			if first, dup := vrfByID[v.ID]; dup {
				bad(p.Child("id"), v.ID, "already used by vrfs[%d]", first)
			} else {
				vrfByID[v.ID] = i
			}
		}
		if v.Table < v1.MinTableID || v.Table > v1.MaxTableID {
			bad(p.Child("table"), v.Table, "not a routing table id (%d..%d)", v1.MinTableID, uint64(v1.MaxTableID))
		}
		if v.VNI < 0 || v.VNI > v1.MaxVNI {
			bad(p.Child("vni"), v.VNI, "must be within 0..%d (24 bits)", v1.MaxVNI)
		}
		checkIfName(p.Child("lookupInterface"), v.LookupInterface, false)
	}

	redirectFrom := map[string]int{}
	for i, r := range f.Redirects {
		p := field.NewPath("redirects").Index(i)
		checkIfName(p.Child("from"), r.From, true)
		checkIfName(p.Child("to"), r.To, true)
		if r.From != "" {
			if first, dup := redirectFrom[r.From]; dup {
				bad(p.Child("from"), r.From, "already has a redirect (redirects[%d])", first)
			} else {
				redirectFrom[r.From] = i
			}
		}
		if r.From != "" && r.From == r.To {
			bad(p.Child("to"), r.To, "the same interface as from")
		}
		src, srcErr := parseMAC(r.SrcMAC)
		if srcErr != nil {
			bad(p.Child("srcMAC"), r.SrcMAC, "not a MAC address")
		} else if src.IsGroup() {
			bad(p.Child("srcMAC"), r.SrcMAC, "a group (multicast) address")
		}
		if _, err := parseMAC(r.DstMAC); err != nil {
			bad(p.Child("dstMAC"), r.DstMAC, "not a MAC address")
		}
		if (r.SrcMAC == "") != (r.DstMAC == "") {
			bad(p, r.From, "needs both srcMAC and dstMAC, or neither")
		}
	}

	type ifKey struct {
		name string
		vlan int64
	}
	ifaceAt := map[ifKey]int{}
	redirectIfaces := map[string]bool{}
	for i, in := range f.Interfaces {
		p := field.NewPath("interfaces").Index(i)
		checkIfName(p.Child("name"), in.Name, true)
		if in.VLAN < 0 || in.VLAN > v1.MaxVLAN {
			bad(p.Child("vlan"), in.VLAN, "must be within 0..%d", v1.MaxVLAN)
		}
		k := ifKey{in.Name, in.VLAN}
		if first, dup := ifaceAt[k]; dup && in.Name != "" {
			bad(p.Child("name"), in.Name, "with vlan %d already listed as interfaces[%d]", in.VLAN, first)
		} else {
			ifaceAt[k] = i
		}
		mode, err := ParseMode(in.Mode)
		if err != nil {
			errs = append(errs, field.NotSupported(p.Child("mode"), in.Mode, []string{"route", "redirect", "pass"}))
			continue
		}
		if _, ok := vrfByName[in.VRF]; in.VRF != "" && !ok {
			bad(p.Child("vrf"), in.VRF, "not defined in vrfs")
		} else if in.VRF == "" && mode == maps.ModeRoute {
			errs = append(errs, field.Required(p.Child("vrf"), "required for mode route"))
		}
		if mode == maps.ModeRedirect {
			redirectIfaces[in.Name] = true
			if _, ok := redirectFrom[in.Name]; !ok && in.Name != "" {
				bad(p.Child("name"), in.Name, "mode redirect but no redirects entry with this from")
			}
		}
	}
	for i, r := range f.Redirects {
		if r.From != "" && !redirectIfaces[r.From] {
			bad(field.NewPath("redirects").Index(i).Child("from"), r.From, "not an interface with mode redirect")
		}
	}
	if n := len(f.Interfaces); n > maps.MaxEntries {
		errs = append(errs, field.TooMany(field.NewPath("interfaces"), n, maps.MaxEntries))
	}
	if n := len(f.Redirects); n > maps.MaxEntries {
		errs = append(errs, field.TooMany(field.NewPath("redirects"), n, maps.MaxEntries))
	}
	return validation.Join(errs)
}

func parseMAC(s string) (maps.MAC, error) {
	if s == "" {
		return maps.MAC{}, nil
	}
	return maps.ParseMAC(s)
}

// VRFNames maps VRF ids to the file's names, for readable dumps.
func (f File) VRFNames() map[uint32]string {
	m := make(map[uint32]string, len(f.VRFs))
	for _, v := range f.VRFs {
		m[uint32(v.ID)] = v.Name
	}
	return m
}

// Resolver turns interface names into ifindexes (in the network namespace the CLI runs in).
type Resolver interface {
	Ifindex(name string) (int, error)
}

// Tables resolves the file's names into the router's tables. Call it on a validated File.
func (f File) Tables(r Resolver) (maps.Tables, error) {
	var errs field.ErrorList
	resolve := func(path *field.Path, name string) uint32 {
		if name == "" {
			return 0
		}
		idx, err := r.Ifindex(name)
		if err != nil {
			errs = append(errs, field.Invalid(path, name, "not an interface on this node: "+err.Error()))
			return 0
		}
		return uint32(idx)
	}
	vrfID := make(map[string]uint32, len(f.VRFs))
	var t maps.Tables
	for i, v := range f.VRFs {
		vrfID[v.Name] = uint32(v.ID)
		t.VRFs = append(t.VRFs, maps.VRF{
			ID: uint32(v.ID), TableID: uint32(v.Table), VNI: uint32(v.VNI),
			LookupIfindex: resolve(field.NewPath("vrfs").Index(i).Child("lookupInterface"), v.LookupInterface),
		})
	}
	for i, in := range f.Interfaces {
		mode, err := ParseMode(in.Mode)
		if err != nil {
			return maps.Tables{}, fmt.Errorf("interfaces[%d].mode: %w (validate the file first)", i, err)
		}
		strict := f.Strict
		if in.Strict != nil {
			strict = *in.Strict
		}
		t.Interfaces = append(t.Interfaces, maps.Interface{
			Ifindex: resolve(field.NewPath("interfaces").Index(i).Child("name"), in.Name),
			VLAN:    uint16(in.VLAN), VRF: vrfID[in.VRF], Mode: mode, Strict: strict,
		})
	}
	for i, r := range f.Redirects {
		src, _ := parseMAC(r.SrcMAC)
		dst, _ := parseMAC(r.DstMAC)
		t.Redirects = append(t.Redirects, maps.Redirect{
			Ifindex:       resolve(field.NewPath("redirects").Index(i).Child("from"), r.From),
			EgressIfindex: resolve(field.NewPath("redirects").Index(i).Child("to"), r.To),
			Peer:          r.Peer, SrcMAC: src, DstMAC: dst,
		})
	}
	if err := validation.Join(errs); err != nil {
		return maps.Tables{}, err
	}
	// The file's checks cover the router's; this guards against the two drifting apart.
	if err := t.Validate(); err != nil {
		return maps.Tables{}, fmt.Errorf("resolved tables: %w", err)
	}
	return t, nil
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
