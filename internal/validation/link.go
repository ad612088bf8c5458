/*
Copyright 2026 The network-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package validation

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bounds"
)

// LinkKind is what a Link is: "bridge", "vxlan" or "unmanaged" ("" when none of them is set).
func LinkKind(s *v1.LinkSpec) string {
	switch {
	case s.Bridge != nil:
		return "bridge"
	case s.VXLAN != nil:
		return "vxlan"
	case s.Unmanaged != nil:
		return "unmanaged"
	}
	return ""
}

// LinkRef is one reference of a Link's VXLAN to another Link: its device or its master.
type LinkRef struct {
	Field string // "device" or "master"
	Name  string
}

// LinkRefs lists the references of a Link (device first).
func LinkRefs(s *v1.LinkSpec) []LinkRef {
	if s.VXLAN == nil {
		return nil
	}
	var out []LinkRef
	if s.VXLAN.Device != nil {
		out = append(out, LinkRef{"device", s.VXLAN.Device.Name})
	}
	if s.VXLAN.Master != nil {
		out = append(out, LinkRef{"master", s.VXLAN.Master.Name})
	}
	return out
}

// LinkRefKindError says why a Link of kind target cannot be referenced as ref ("" when it can): a master is a
// bridge, a device a bridge or an unmanaged interface (the VXLAN's underlay). The admission webhook and the
// operator's hold-back share it.
func LinkRefKindError(ref LinkRef, target string) string {
	switch {
	case ref.Field == "master" && target != "bridge":
		return fmt.Sprintf("Link %q is a %s: a master must be a bridge", ref.Name, target)
	case ref.Field == "device" && target != "bridge" && target != "unmanaged":
		return fmt.Sprintf("Link %q is a %s: a device must be a bridge or unmanaged", ref.Name, target)
	}
	return ""
}

// ValidateLink checks a Link. With a non-nil snapshot also its references (to Links that exist; one that does not
// exist yet is admitted, the operator holds the Link back until it does), that no dependency cycle forms, that the
// Links referring to this one still find the kind they need, and that its interface name and VNI are free: no
// other Link on a node both select (equal selectors, or an existing Node matched by both) has them, and no layer-2
// network or VRF uses the VNI, and that static flooding peers are of the fabric's VTEP family (Snapshot.VTEPFamily).
func ValidateLink(obj *v1.Link, s *Snapshot) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	errs := validateInterfaceName(p.Child("interfaceName"), spec.InterfaceName)
	for _, prefix := range v1.AgentInterfacePrefixes() {
		if strings.HasPrefix(spec.InterfaceName, prefix) {
			errs = append(errs, field.Invalid(p.Child("interfaceName"), spec.InterfaceName, fmt.Sprintf(
				"starts with %q: the node agent names its own interfaces so (reserved: %s)", prefix,
				strings.Join(v1.AgentInterfacePrefixes(), " "))))
		}
	}
	errs = append(errs, validateNodeSelector(p.Child("nodeSelector"), spec.NodeSelector)...)
	set := 0
	for _, has := range []bool{spec.Bridge != nil, spec.VXLAN != nil, spec.Unmanaged != nil} {
		if has {
			set++
		}
	}
	if set != 1 {
		errs = append(errs, field.Invalid(p, LinkKind(spec), fmt.Sprintf(
			"exactly one of bridge, vxlan and unmanaged must be set (%d are)", set)))
	}
	if b := spec.Bridge; b != nil && b.MTU != 0 {
		errs = append(errs, validateRange(p.Child("bridge", "mtu"), int64(b.MTU), v1.MinMTU, v1.MaxMTU, "MTU")...)
	}
	if x := spec.VXLAN; x != nil {
		xp := p.Child("vxlan")
		errs = append(errs, bounds.VNI(xp.Child("vnid"), int64(x.VNID))...)
		if x.Port != 0 {
			errs = append(errs, validateRange(xp.Child("port"), int64(x.Port), v1.MinPort, v1.MaxPort, "UDP port")...)
		}
		if x.MTU != 0 {
			errs = append(errs, validateRange(xp.Child("mtu"), int64(x.MTU), v1.MinMTU, v1.MaxMTU, "MTU")...)
		}
		errs = append(errs, ValidateFlooding(xp.Child("flooding"), x.Flooding)...)
		if (x.Flooding == nil || x.Flooding.Mode != v1.FloodingStatic) && x.Master == nil {
			errs = append(errs, field.Required(xp.Child("master"),
				"flooding evpn (the default) needs a master bridge: FRR's zebra takes only VXLANs in a bridge (or set flooding.mode static)"))
		}
		for _, r := range LinkRefs(spec) {
			rp := xp.Child(r.Field, "name")
			for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
				errs = append(errs, field.Invalid(rp, r.Name, msg))
			}
			if r.Name == obj.Name {
				errs = append(errs, field.Invalid(rp, r.Name, "a Link cannot refer to itself"))
			}
		}
	}
	if s == nil || len(errs) > 0 {
		return errs
	}
	return append(errs, validateLinkAmongOthers(obj, s)...)
}

// validateLinkAmongOthers holds the cross-object rules of ValidateLink.
func validateLinkAmongOthers(obj *v1.Link, s *Snapshot) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if x := obj.Spec.VXLAN; x != nil {
		errs = append(errs, ValidateFloodingFamily(p.Child("vxlan", "flooding"), x.Flooding, s.VTEPFamily)...)
	}
	links := map[string]*v1.LinkSpec{obj.Name: &obj.Spec}
	for i := range s.Links {
		if s.Links[i].Name != obj.Name {
			links[s.Links[i].Name] = &s.Links[i].Spec
		}
	}
	for _, r := range LinkRefs(&obj.Spec) {
		rp := p.Child("vxlan", r.Field, "name")
		if cycle := linkCycle(links, obj.Name, r.Name); cycle != nil {
			errs = append(errs, field.Invalid(rp, r.Name, "dependency cycle: "+strings.Join(cycle, " -> ")))
			continue
		}
		if target := links[r.Name]; target != nil {
			if msg := LinkRefKindError(r, LinkKind(target)); msg != "" {
				errs = append(errs, field.Invalid(rp, r.Name, msg))
			}
		}
	}
	for _, o := range slices.Sorted(maps.Keys(links)) {
		if o == obj.Name {
			continue
		}
		for _, r := range LinkRefs(links[o]) {
			if r.Name != obj.Name {
				continue
			}
			if msg := LinkRefKindError(r, LinkKind(&obj.Spec)); msg != "" {
				errs = append(errs, field.Invalid(p, LinkKind(&obj.Spec), fmt.Sprintf("Link %q has this Link as its %s: %s",
					o, r.Field, msg)))
			}
		}
		other := links[o]
		if !s.overlap(obj.Spec.NodeSelector, other.NodeSelector) {
			continue
		}
		if other.InterfaceName == obj.Spec.InterfaceName {
			errs = append(errs, field.Invalid(p.Child("interfaceName"), obj.Spec.InterfaceName,
				fmt.Sprintf("also the interface of Link %q on the same nodes", o)))
		}
		if obj.Spec.VXLAN != nil && other.VXLAN != nil && other.VXLAN.VNID == obj.Spec.VXLAN.VNID {
			errs = append(errs, field.Invalid(p.Child("vxlan", "vnid"), int64(obj.Spec.VXLAN.VNID),
				fmt.Sprintf("VNI already used by Link %q on the same nodes", o)))
		}
	}
	if x := obj.Spec.VXLAN; x != nil {
		if other := s.vniUser(int64(x.VNID), obj.Name, v1.KindLink, ""); other != "" {
			errs = append(errs, field.Invalid(p.Child("vxlan", "vnid"), int64(x.VNID), "VNI already used by "+other))
		}
	}
	return errs
}

// linkCycle returns the cycle "from -> to -> ... -> from" when following references from to leads back to from
// (nil when it does not; references to Links that do not exist end the walk).
func linkCycle(links map[string]*v1.LinkSpec, from, to string) []string {
	path := []string{from}
	seen := map[string]bool{from: false}
	var walk func(name string) bool
	walk = func(name string) bool {
		path = append(path, name)
		if name == from {
			return true
		}
		if seen[name] || links[name] == nil {
			path = path[:len(path)-1]
			return false
		}
		seen[name] = true
		for _, r := range LinkRefs(links[name]) {
			if walk(r.Name) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if walk(to) {
		return path
	}
	return nil
}

// overlap reports whether two node selectors (nil: every node) may select one node: when they are equal, or when
// an existing Node matches both. (Nodes that come later are checked when the operator builds their
// configuration.)
func (s *Snapshot) overlap(a, b *metav1.LabelSelector) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	sa, errA := selectorOrAll(a)
	sb, errB := selectorOrAll(b)
	if errA != nil || errB != nil {
		return false // reported by validateNodeSelector
	}
	for _, l := range s.NodeLabels {
		if sa.Matches(labels.Set(l)) && sb.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

func selectorOrAll(sel *metav1.LabelSelector) (labels.Selector, error) {
	if sel == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(sel)
}
