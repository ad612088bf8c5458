// Package bpftables translates a NodeNetworkConfigSpec into the eBPF router's tables (pkg/maps): interface names
// become ifindexes of the node's namespace, VRF names become the spec's BPF VRF ids with their routing table and
// VNI, redirect targets become egress ifindexes, and spec.dataplane.strict is set on every interface. It is pure:
// the caller supplies the name -> ifindex lookup of the namespace.
package bpftables

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrMissingLink marks a named interface that does not exist in the node's namespace. Like every problem of the
// spec it also matches validation.ErrInvalid; the field errors name field and value.
var ErrMissingLink = fmt.Errorf("%w: interface does not exist", validation.ErrInvalid)

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
		return "", validation.Join(field.ErrorList{field.Invalid(field.NewPath("expectedMapVersion"), spec.ExpectedMapVersion,
			"differs from the MapVersion() of the spec ("+mv+"): operator and agent disagree on the map content")})
	}
	return mv, nil
}

// Tables builds the desired tables. Every problem is reported: each a *field.Error naming the spec field and
// value, together matching validation.ErrInvalid, and ErrMissingLink when an interface does not exist.
func Tables(spec *v1.NodeNetworkConfigSpec, in Input) (maps.Tables, error) {
	var errs, missing field.ErrorList
	bad := func(path *field.Path, value any, format string, args ...any) {
		errs = append(errs, field.Invalid(path, value, fmt.Sprintf(format, args...)))
	}
	lookup := func(path *field.Path, name, what string) uint32 {
		idx, ok := in.Links(name)
		if !ok {
			missing = append(missing, field.Invalid(path, name, what+"does not exist on the node"))
			return 0
		}
		return uint32(idx)
	}

	var t maps.Tables
	vrfIDs := make(map[string]uint32, len(spec.VRFs))
	for i, v := range spec.VRFs {
		f := field.NewPath("vrfs").Index(i)
		if v.ID < v1.MinVRFID || v.ID > v1.MaxVRFID {
			bad(f.Child("id"), v.ID, "BPF VRF id must be within %d..%d", v1.MinVRFID, v1.MaxVRFID)
			continue
		}
		if v.TableID < v1.MinTableID {
			bad(f.Child("tableID"), v.TableID, "not a routing table")
			continue
		}
		if v.VNI < 0 || v.VNI > v1.MaxVNI {
			bad(f.Child("vni"), v.VNI, "must be within 0..%d", v1.MaxVNI)
			continue
		}
		if _, dup := vrfIDs[v.Name]; dup {
			errs = append(errs, field.Duplicate(f.Child("name"), v.Name))
			continue
		}
		vrfIDs[v.Name] = uint32(v.ID)
		entry := maps.VRF{ID: uint32(v.ID), TableID: uint32(v.TableID), VNI: uint32(v.VNI)}
		if dev := in.LookupDevices[v.Name]; dev != "" {
			entry.LookupIfindex = lookup(f, dev, "VRF device ")
		}
		t.VRFs = append(t.VRFs, entry)
	}

	redirects := map[uint32]bool{}
	for i, d := range spec.DataPlane.Interfaces {
		f := field.NewPath("dataplane", "interfaces").Index(i)
		mode, err := Mode(d.Mode)
		if err != nil {
			errs = append(errs, field.NotSupported(f.Child("mode"), d.Mode, []v1.InterfaceMode{v1.ModeRoute, v1.ModeRedirect, v1.ModePass}))
			continue
		}
		if d.VLAN < 0 || d.VLAN > v1.MaxVLAN {
			bad(f.Child("vlan"), d.VLAN, "must be within 0..%d", v1.MaxVLAN)
			continue
		}
		entry := maps.Interface{VLAN: uint16(d.VLAN), Mode: mode, Strict: spec.DataPlane.Strict}
		if d.VRF != "" {
			id, ok := vrfIDs[d.VRF]
			if !ok {
				bad(f.Child("vrf"), d.VRF, "not in vrfs")
				continue
			}
			entry.VRF = id
		} else if mode == maps.ModeRoute {
			errs = append(errs, field.Required(f.Child("vrf"), "required for mode route"))
			continue
		}
		entry.Ifindex = lookup(f.Child("name"), d.Name, "")
		if entry.Ifindex == 0 {
			continue
		}
		if mode == maps.ModeRedirect {
			if d.RedirectTarget == "" {
				errs = append(errs, field.Required(f.Child("redirectTarget"), "required for mode redirect"))
				continue
			}
			egress := lookup(f.Child("redirectTarget"), d.RedirectTarget, "")
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
	if err := errors.Join(validation.Join(errs), validation.JoinClass(ErrMissingLink, missing)); err != nil {
		return maps.Tables{}, err
	}
	// The spec checks above cover the router's; this guards against the two drifting apart.
	if err := t.Validate(); err != nil {
		return maps.Tables{}, fmt.Errorf("tables from the spec: %w", err)
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
	return 0, fmt.Errorf("interface mode %q: %w", m, validation.ErrInvalid)
}
