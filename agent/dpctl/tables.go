package dpctl

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

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
	// ID keys the VRF's counters (1..4095); keep it stable across applies so counters keep counting.
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

// ErrInvalid is wrapped by every problem found in a tables file.
var ErrInvalid = errors.New("invalid tables file")

// FieldError names the field of the tables file and the value that is wrong.
type FieldError struct {
	Field string // e.g. interfaces[2].vrf
	Value any
	Msg   string // e.g. is not defined in vrfs
}

func (e *FieldError) Error() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%s: %q %s", e.Field, s, e.Msg)
	}
	return fmt.Sprintf("%s: %v %s", e.Field, e.Value, e.Msg)
}

// Is makes errors.Is(err, ErrInvalid) hold.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

// maxIfName is IFNAMSIZ-1.
const maxIfName = 15

// Parse decodes and validates a tables file. Unknown fields are errors, so a typo never silently drops a setting.
func Parse(data []byte) (File, error) {
	var generic any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		return File{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := unknownFields("", generic, reflect.TypeFor[File]()); err != nil {
		return File{}, err
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return File{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := f.Validate(); err != nil {
		return File{}, err
	}
	return f, nil
}

// unknownFields reports the first key the file's types do not have, with its path (vrfs[0].tabel), which
// the JSON decoder's own message leaves out.
func unknownFields(path string, v any, t reflect.Type) error {
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
			field := k
			if path != "" {
				field = path + "." + k
			}
			if !ok {
				return &FieldError{Field: field, Value: k, Msg: "is not a known field"}
			}
			if err := unknownFields(field, obj[k], ft); err != nil {
				return err
			}
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range list {
			if err := unknownFields(fmt.Sprintf("%s[%d]", path, i), e, t.Elem()); err != nil {
				return err
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
// (errors.Join of *FieldError).
func (f File) Validate() error {
	var errs []error
	bad := func(field string, value any, msg string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Value: value, Msg: fmt.Sprintf(msg, args...)})
	}
	checkIfName := func(field, name string, required bool) {
		switch {
		case name == "" && required:
			bad(field, name, "is required")
		case len(name) > maxIfName:
			bad(field, name, "is longer than %d bytes", maxIfName)
		case strings.ContainsAny(name, "/ \t\n") || name == "." || name == "..":
			bad(field, name, "is not a valid interface name")
		}
	}

	if len(f.Revision) >= 64 {
		bad("revision", f.Revision, "is longer than 63 bytes")
	}

	vrfByName := map[string]int{}
	vrfByID := map[int64]int{}
	for i, v := range f.VRFs {
		p := fmt.Sprintf("vrfs[%d]", i)
		if v.Name == "" {
			bad(p+".name", v.Name, "is required")
		} else if first, dup := vrfByName[v.Name]; dup {
			bad(p+".name", v.Name, "is already defined by vrfs[%d]", first)
		} else {
			vrfByName[v.Name] = i
		}
		switch {
		case v.ID == 0:
			bad(p+".id", v.ID, "is reserved for traffic of unknown interfaces (use 1-%d)", maps.MaxVRFs-1)
		case v.ID < 0 || v.ID >= maps.MaxVRFs:
			bad(p+".id", v.ID, "is out of range (1-%d)", maps.MaxVRFs-1)
		default:
			if first, dup := vrfByID[v.ID]; dup {
				bad(p+".id", v.ID, "is already used by vrfs[%d]", first)
			} else {
				vrfByID[v.ID] = i
			}
		}
		if v.Table <= 0 || v.Table > 0xffffffff {
			bad(p+".table", v.Table, "is not a routing table id (1-4294967295)")
		}
		if v.VNI < 0 || v.VNI >= 1<<24 {
			bad(p+".vni", v.VNI, "does not fit in 24 bits")
		}
		checkIfName(p+".lookupInterface", v.LookupInterface, false)
	}

	redirectFrom := map[string]int{}
	for i, r := range f.Redirects {
		p := fmt.Sprintf("redirects[%d]", i)
		checkIfName(p+".from", r.From, true)
		checkIfName(p+".to", r.To, true)
		if r.From != "" {
			if first, dup := redirectFrom[r.From]; dup {
				bad(p+".from", r.From, "already has a redirect (redirects[%d])", first)
			} else {
				redirectFrom[r.From] = i
			}
		}
		if r.From != "" && r.From == r.To {
			bad(p+".to", r.To, "is the same interface as from")
		}
		src, srcErr := parseMAC(r.SrcMAC)
		if srcErr != nil {
			bad(p+".srcMAC", r.SrcMAC, "is not a MAC address")
		} else if src.IsGroup() {
			bad(p+".srcMAC", r.SrcMAC, "is a group (multicast) address")
		}
		if _, err := parseMAC(r.DstMAC); err != nil {
			bad(p+".dstMAC", r.DstMAC, "is not a MAC address")
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
		p := fmt.Sprintf("interfaces[%d]", i)
		checkIfName(p+".name", in.Name, true)
		if in.VLAN < 0 || in.VLAN > 4094 {
			bad(p+".vlan", in.VLAN, "is out of range (0-4094)")
		}
		k := ifKey{in.Name, in.VLAN}
		if first, dup := ifaceAt[k]; dup && in.Name != "" {
			bad(p+".name", in.Name, "with vlan %d is already listed as interfaces[%d]", in.VLAN, first)
		} else {
			ifaceAt[k] = i
		}
		mode, err := ParseMode(in.Mode)
		if err != nil {
			bad(p+".mode", in.Mode, "is not a mode (route, redirect, pass)")
			continue
		}
		if _, ok := vrfByName[in.VRF]; in.VRF != "" && !ok {
			bad(p+".vrf", in.VRF, "is not defined in vrfs")
		} else if in.VRF == "" && mode == maps.ModeRoute {
			bad(p+".vrf", in.VRF, "is required for mode route")
		}
		if mode == maps.ModeRedirect {
			redirectIfaces[in.Name] = true
			if _, ok := redirectFrom[in.Name]; !ok && in.Name != "" {
				bad(p+".name", in.Name, "has mode redirect but no redirects entry with this from")
			}
		}
	}
	for i, r := range f.Redirects {
		if r.From != "" && !redirectIfaces[r.From] {
			bad(fmt.Sprintf("redirects[%d].from", i), r.From, "is not an interface with mode redirect")
		}
	}
	if n := len(f.Interfaces); n > maps.MaxEntries {
		bad("interfaces", n, "entries exceed the limit %d", maps.MaxEntries)
	}
	if n := len(f.Redirects); n > maps.MaxEntries {
		bad("redirects", n, "entries exceed the limit %d", maps.MaxEntries)
	}
	return errors.Join(errs...)
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
	var errs []error
	resolve := func(field, name string) uint32 {
		if name == "" {
			return 0
		}
		idx, err := r.Ifindex(name)
		if err != nil {
			errs = append(errs, &FieldError{Field: field, Value: name, Msg: "is not an interface on this node: " + err.Error()})
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
			LookupIfindex: resolve(fmt.Sprintf("vrfs[%d].lookupInterface", i), v.LookupInterface),
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
			Ifindex: resolve(fmt.Sprintf("interfaces[%d].name", i), in.Name),
			VLAN:    uint16(in.VLAN), VRF: vrfID[in.VRF], Mode: mode, Strict: strict,
		})
	}
	for i, r := range f.Redirects {
		src, _ := parseMAC(r.SrcMAC)
		dst, _ := parseMAC(r.DstMAC)
		t.Redirects = append(t.Redirects, maps.Redirect{
			Ifindex:       resolve(fmt.Sprintf("redirects[%d].from", i), r.From),
			EgressIfindex: resolve(fmt.Sprintf("redirects[%d].to", i), r.To),
			Peer:          r.Peer, SrcMAC: src, DstMAC: dst,
		})
	}
	if err := errors.Join(errs...); err != nil {
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
