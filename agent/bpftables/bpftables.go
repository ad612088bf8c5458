// Package bpftables translates a NodeNetworkConfigSpec into the eBPF router's tables (pkg/maps): interface names
// become ifindexes of the node's namespace, VRF names become the spec's BPF VRF ids with their routing table and
// VNI, redirect targets become egress ifindexes, and spec.dataplane.strict is set on every interface. It is pure:
// the caller supplies the name -> ifindex lookup of the namespace.
package bpftables

import (
	"errors"
	"fmt"
	"strconv"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrInvalid marks a spec that cannot be turned into tables; every such error is a *FieldError.
var ErrInvalid = errors.New("spec cannot be turned into BPF tables")

// ErrMissingLink marks a named interface that does not exist in the node's namespace (also a *FieldError).
var ErrMissingLink = errors.New("interface does not exist")

// FieldError names the spec field and value that cannot be translated.
type FieldError struct {
	Field string
	Value any
	Msg   string
	Err   error // ErrInvalid or ErrMissingLink
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %v %s", e.Field, e.Value, e.Msg) }

// Is matches ErrInvalid for every FieldError and ErrMissingLink for missing interfaces.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid || target == e.Err }

// Links looks interface names up in the node's namespace; ok is false when there is no such link.
type Links func(name string) (ifindex int, ok bool)

// Input is what Tables needs besides the spec.
type Input struct {
	Links Links
	// LookupDevices names, per VRF (spec name), the device whose forwarding flag bpf_fib_lookup checks: the VRF
	// device where the kernel has one. VRFs without an entry use the ingress device (lookup_ifindex 0).
	LookupDevices map[string]string
}

// Revision is the BPF generation revision the spec asks for: spec.expectedMapVersion, which must equal the
// spec's own MapVersion() (an operator and agent that disagree on the content hash would make the read-back
// meaningless); a spec without expectedMapVersion (standalone files) gets its MapVersion().
func Revision(spec *v1.NodeNetworkConfigSpec) (string, error) {
	mv := spec.MapVersion()
	if spec.ExpectedMapVersion != "" && spec.ExpectedMapVersion != mv {
		return "", &FieldError{Field: "expectedMapVersion", Value: strconv.Quote(spec.ExpectedMapVersion),
			Msg: "differs from the MapVersion() of the spec (" + mv + "): operator and agent disagree on the map content", Err: ErrInvalid}
	}
	return mv, nil
}

// Tables builds the desired tables. Every problem is reported (errors.Join of *FieldError).
func Tables(spec *v1.NodeNetworkConfigSpec, in Input) (maps.Tables, error) {
	var errs []error
	bad := func(err error, field string, value any, msg string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Value: value, Msg: fmt.Sprintf(msg, args...), Err: err})
	}
	lookup := func(field, name string) uint32 {
		idx, ok := in.Links(name)
		if !ok {
			bad(ErrMissingLink, field, strconv.Quote(name), "does not exist on the node")
			return 0
		}
		return uint32(idx)
	}

	var t maps.Tables
	vrfIDs := make(map[string]uint32, len(spec.VRFs))
	for i, v := range spec.VRFs {
		f := fmt.Sprintf("vrfs[%d]", i)
		if v.ID < 1 || v.ID >= maps.MaxVRFs {
			bad(ErrInvalid, f+".id", v.ID, "is out of range (1..%d)", maps.MaxVRFs-1)
			continue
		}
		if v.TableID < 1 {
			bad(ErrInvalid, f+".tableID", v.TableID, "is not a routing table")
			continue
		}
		if v.VNI < 0 || v.VNI > v1.MaxVNI {
			bad(ErrInvalid, f+".vni", v.VNI, "is out of range (0..%d)", v1.MaxVNI)
			continue
		}
		if _, dup := vrfIDs[v.Name]; dup {
			bad(ErrInvalid, f+".name", strconv.Quote(v.Name), "is listed twice")
			continue
		}
		vrfIDs[v.Name] = uint32(v.ID)
		entry := maps.VRF{ID: uint32(v.ID), TableID: uint32(v.TableID), VNI: uint32(v.VNI)}
		if dev := in.LookupDevices[v.Name]; dev != "" {
			entry.LookupIfindex = lookup(f+" (VRF device)", dev)
		}
		t.VRFs = append(t.VRFs, entry)
	}

	redirects := map[uint32]bool{}
	for i, d := range spec.DataPlane.Interfaces {
		f := fmt.Sprintf("dataplane.interfaces[%d]", i)
		mode, err := Mode(d.Mode)
		if err != nil {
			bad(ErrInvalid, f+".mode", strconv.Quote(string(d.Mode)), "is not route, redirect or pass")
			continue
		}
		if d.VLAN < 0 || d.VLAN > v1.MaxVLAN {
			bad(ErrInvalid, f+".vlan", d.VLAN, "is out of range (0..%d)", v1.MaxVLAN)
			continue
		}
		entry := maps.Interface{VLAN: uint16(d.VLAN), Mode: mode, Strict: spec.DataPlane.Strict}
		if d.VRF != "" {
			id, ok := vrfIDs[d.VRF]
			if !ok {
				bad(ErrInvalid, f+".vrf", strconv.Quote(d.VRF), "is not in vrfs")
				continue
			}
			entry.VRF = id
		} else if mode == maps.ModeRoute {
			bad(ErrInvalid, f+".vrf", `""`, "is required for mode route")
			continue
		}
		entry.Ifindex = lookup(f+".name", d.Name)
		if entry.Ifindex == 0 {
			continue
		}
		if mode == maps.ModeRedirect {
			if d.RedirectTarget == "" {
				bad(ErrInvalid, f+".redirectTarget", `""`, "is required for mode redirect")
				continue
			}
			egress := lookup(f+".redirectTarget", d.RedirectTarget)
			if egress == 0 {
				continue
			}
			// One redirect per ingress device: every VLAN of it goes to the same target.
			if !redirects[entry.Ifindex] {
				redirects[entry.Ifindex] = true
				t.Redirects = append(t.Redirects, maps.Redirect{Ifindex: entry.Ifindex, EgressIfindex: egress})
			}
		}
		t.Interfaces = append(t.Interfaces, entry)
	}
	if err := errors.Join(errs...); err != nil {
		return maps.Tables{}, err
	}
	if err := t.Validate(); err != nil {
		return maps.Tables{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return t.Normalize(), nil
}

// Mode maps the API's interface mode to the router's; "" is route (the CRD default).
func Mode(m v1.InterfaceMode) (maps.Mode, error) {
	switch m {
	case "", v1.ModeRoute:
		return maps.ModeRoute, nil
	case v1.ModeRedirect:
		return maps.ModeRedirect, nil
	case v1.ModePass:
		return maps.ModePass, nil
	}
	return 0, fmt.Errorf("interface mode %q: %w", m, ErrInvalid)
}
