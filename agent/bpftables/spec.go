package bpftables

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/maps"
)

// Revision is the BPF generation revision the spec asks for: spec.expectedMapVersion, which must equal the
// spec's own MapVersion() (an operator and agent that disagree on the content hash would make the read-back
// meaningless); a spec without expectedMapVersion (standalone files) gets its MapVersion().
func Revision(spec *v1.NodeNetworkConfigSpec) (string, error) {
	mv := spec.MapVersion()
	if spec.ExpectedMapVersion != "" && spec.ExpectedMapVersion != mv {
		return "", fielderr.Join(field.ErrorList{field.Invalid(field.NewPath("expectedMapVersion"), spec.ExpectedMapVersion,
			"differs from the MapVersion() of the spec ("+mv+"): operator and agent disagree on the map content")})
	}
	return mv, nil
}

// FromSpec describes the tables of a spec by name. lookupDevices names, per VRF (spec name), the device whose
// forwarding flag bpf_fib_lookup checks: the VRF device where the kernel has one; VRFs without an entry use the
// ingress device. spec.dataplane.strict is set on every interface. A spec names the redirect target per
// interface, the router per device: the VLANs of one device must name the same target.
func FromSpec(spec *v1.NodeNetworkConfigSpec, lookupDevices map[string]string) Desired {
	ifaces := field.NewPath("dataplane", "interfaces")
	d := Desired{Tables: map[string]*field.Path{"vrfs": field.NewPath("vrfs"), "interfaces": ifaces, "redirects": ifaces,
		"sbr": field.NewPath("vrfs")}}
	for i, v := range spec.VRFs {
		p := field.NewPath("vrfs").Index(i)
		d.VRFs = append(d.VRFs, VRF{Name: v.Name, ID: int64(v.ID), TableID: int64(v.TableID), VNI: int64(v.VNI), LookupDevice: lookupDevices[v.Name],
			At: VRFPaths{Entry: p, Name: p.Child("name"), ID: p.Child("id"), TableID: p.Child("tableID"), VNI: p.Child("vni"), LookupDevice: p}})
		d.sbrPrefixes(v, p)
	}
	redirectAt := map[string]int{} // device -> index in spec.DataPlane.Interfaces
	for i, in := range spec.DataPlane.Interfaces {
		p := ifaces.Index(i)
		mode, err := Mode(in.Mode)
		if err != nil {
			d.Errs = append(d.Errs, field.NotSupported(p.Child("mode"), in.Mode, []v1.InterfaceMode{v1.ModeRoute, v1.ModeRedirect, v1.ModeFIB, v1.ModePass}))
			continue
		}
		if mode == maps.ModeFIB && in.VRF != "" {
			d.Errs = append(d.Errs, field.Invalid(p.Child("vrf"), in.VRF,
				"mode fib routes by the table of the interface's own VRF device: leave vrf empty, or use mode route to route in this VRF"))
			continue
		}
		if mode == maps.ModeRedirect {
			target := p.Child("redirectTarget")
			first, seen := redirectAt[in.Name]
			switch {
			case in.RedirectTarget == "":
				d.Errs = append(d.Errs, field.Required(target, "required for mode redirect"))
				continue
			case !seen:
				redirectAt[in.Name] = i
				d.Redirects = append(d.Redirects, Redirect{From: in.Name, To: in.RedirectTarget,
					At: RedirectPaths{Entry: p, From: p.Child("name"), To: target}})
			case spec.DataPlane.Interfaces[first].RedirectTarget != in.RedirectTarget:
				d.Errs = append(d.Errs, field.Invalid(target, in.RedirectTarget, fmt.Sprintf(
					"differs from %s %q: the router redirects per device, every VLAN of it to one target",
					ifaces.Index(first).Child("redirectTarget"), spec.DataPlane.Interfaces[first].RedirectTarget)))
				continue
			}
		}
		d.Interfaces = append(d.Interfaces, Interface{Name: in.Name, VLAN: int64(in.VLAN), VRF: in.VRF, Mode: mode, Strict: spec.DataPlane.Strict,
			At: InterfacePaths{Entry: p, Name: p.Child("name"), VLAN: p.Child("vlan"), VRF: p.Child("vrf"), Mode: p.Child("mode")}})
	}
	return d
}

// sbrPrefixes adds the source-based routing prefixes of the VRF at p: what the agent's "from <prefix> lookup
// <table>" rules (agent/nodenet) route, so that the router routes the same on the interfaces of the
// VRFs routing by main. A VRF routing by main itself has no rules (nodenet notes that): nothing to add.
func (d *Desired) sbrPrefixes(v v1.NodeVRF, p *field.Path) {
	if v.TableID == limits.MainTableID {
		return
	}
	for j, s := range v.SBRPrefixes {
		at := p.Child("sbrPrefixes").Index(j)
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			d.Errs = append(d.Errs, field.Invalid(at, s, "not a CIDR prefix"))
			continue
		}
		d.SBR = append(d.SBR, SBRPrefix{Prefix: prefix, VRF: v.Name, At: SBRPaths{Entry: at, Prefix: at, VRF: p.Child("name")}})
	}
}

// Mode maps the API's interface mode to the router's; "" is route (the CRD default).
func Mode(m v1.InterfaceMode) (maps.Mode, error) {
	switch m {
	case "", v1.ModeRoute:
		return maps.ModeRoute, nil
	case v1.ModeRedirect:
		return maps.ModeRedirect, nil
	case v1.ModeFIB:
		return maps.ModeFIB, nil
	case v1.ModePass:
		return maps.ModePass, nil
	}
	return 0, fmt.Errorf("interface mode %q: %w", m, fielderr.ErrInvalid)
}
