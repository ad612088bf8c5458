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
	"net/netip"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/bounds"
)

// Snapshot holds the existing objects the cross-object rules compare with. An object with the same name as the
// validated one is its previous version and is ignored.
type Snapshot struct {
	VRFRouteConfigurations []v1.VRFRouteConfiguration
	Layer2Networks         []v1.Layer2NetworkConfiguration
	BGPPeerings            []v1.BGPPeering
	RoutingTables          []v1.RoutingTable
	// Links, and the labels of the existing Nodes (for Links that may meet on a node).
	Links      []v1.Link
	NodeLabels []map[string]string
	// PodNetworkConfigs of every namespace (an object is the validated one's previous version when namespace and
	// name match), and the labels of the namespaces the PodNetworkConfig rules ask about.
	PodNetworkConfigs []v1.PodNetworkConfig
	NamespaceLabels   map[string]map[string]string
	// VTEPFamily is the fabric's VTEP address family (the operator's --underlay-vtep-family; "": not known):
	// static flooding peers are of it.
	VTEPFamily v1.IPFamily
}

// vniUser is the first other object using a VNI.
func (s *Snapshot) vniUser(vni int64, self string, selfKind string, selfVRF string) string {
	for i := range s.Layer2Networks {
		l := &s.Layer2Networks[i]
		if (selfKind == "Layer2NetworkConfiguration" && l.Name == self) || int64(l.Spec.VNI) != vni {
			continue
		}
		return fmt.Sprintf("Layer2NetworkConfiguration %q", l.Name)
	}
	for i := range s.VRFRouteConfigurations {
		v := &s.VRFRouteConfigurations[i]
		if (selfKind == "VRFRouteConfiguration" && v.Name == self) || v.Spec.VNI == nil || int64(*v.Spec.VNI) != vni {
			continue
		}
		// Several VRFRouteConfigurations describe the same VRF: they share its VNI.
		if selfKind == "VRFRouteConfiguration" && v.Spec.VRF == selfVRF {
			continue
		}
		return fmt.Sprintf("VRF %q (VRFRouteConfiguration %q)", v.Spec.VRF, v.Name)
	}
	if selfKind == v1.KindLink {
		return "" // Links share VNIs with each other on disjoint nodes (ValidateLink)
	}
	for i := range s.Links {
		if x := s.Links[i].Spec.VXLAN; x != nil && int64(x.VNID) == vni {
			return fmt.Sprintf("Link %q", s.Links[i].Name)
		}
	}
	return ""
}

// ValidateVRFRouteConfiguration checks a VRFRouteConfiguration; with a non-nil snapshot also VNI uniqueness, the
// VRF's VNI being the same in all its VRFRouteConfigurations, and the route-map seq being unique per VRF.
func ValidateVRFRouteConfiguration(obj *v1.VRFRouteConfiguration, s *Snapshot) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	errs := validateVRFName(p.Child("vrf"), spec.VRF)
	switch {
	case spec.VNI != nil:
		errs = append(errs, bounds.VNI(p.Child("vni"), int64(*spec.VNI))...)
	case spec.VRF != v1.DefaultVRFName && spec.VRF != v1.ClusterVRFName:
		errs = append(errs, field.Required(p.Child("vni"), fmt.Sprintf(
			"VRF %q needs its L3 VNI: write spec.vni (%d..%d, the same in every VRFRouteConfiguration of the VRF; "+
				"das-schiff v0.2 read it from the node vnimap file, which the operator does not have)", spec.VRF, v1.MinVNI, v1.MaxVNI)))
	}
	if spec.RouteTarget != nil {
		errs = append(errs, bgp.ValidateRouteTarget(p.Child("routeTarget"), *spec.RouteTarget, false)...)
	}
	errs = append(errs, validateRange(p.Child("seq"), int64(spec.Seq), v1.MinRouteMapSeq, v1.MaxRouteMapSeq, "route-map sequence")...)
	errs = append(errs, validatePrefixList(p.Child("import"), spec.Import)...)
	errs = append(errs, validatePrefixList(p.Child("export"), spec.Export)...)
	seen := map[netip.Prefix]int{}
	for i, a := range spec.Aggregate {
		ap := p.Child("aggregate").Index(i)
		pfx, ferr := parseNetwork(ap, a)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		if _, dup := seen[pfx]; dup {
			errs = append(errs, field.Duplicate(ap, a))
		}
		seen[pfx] = i
	}
	if spec.Community != nil {
		errs = append(errs, validateCommunities(p.Child("community"), *spec.Community)...)
	}
	for i, c := range spec.Communities {
		errs = append(errs, validateCommunities(p.Child("communities").Index(i), c)...)
	}
	errs = append(errs, validateNetworks(p.Child("sbrPrefixes"), spec.SBRPrefixes)...)
	names := map[string]bool{}
	for i, lo := range spec.Loopbacks {
		lp := p.Child("loopbacks").Index(i)
		errs = append(errs, validateInterfaceName(lp.Child("name"), lo.Name)...)
		if names[lo.Name] {
			errs = append(errs, field.Duplicate(lp.Child("name"), lo.Name))
		}
		names[lo.Name] = true
		if _, ferr := parseNetwork(lp.Child("subnet"), lo.Subnet); ferr != nil {
			errs = append(errs, ferr)
		}
	}
	if spec.MTU != nil {
		errs = append(errs, validateRange(p.Child("mtu"), int64(*spec.MTU), v1.MinMTU, v1.MaxMTU, "MTU")...)
	}
	errs = append(errs, validateNodeSelector(p.Child("nodeSelector"), spec.NodeSelector)...)

	if s == nil {
		return errs
	}
	if spec.VNI != nil {
		vni := int64(*spec.VNI)
		if other := s.vniUser(vni, obj.Name, "VRFRouteConfiguration", spec.VRF); other != "" {
			errs = append(errs, field.Invalid(p.Child("vni"), vni, "VNI already used by "+other))
		}
	}
	for i := range s.VRFRouteConfigurations {
		o := &s.VRFRouteConfigurations[i]
		if o.Name == obj.Name || o.Spec.VRF != spec.VRF {
			continue
		}
		if o.Spec.Seq == spec.Seq {
			errs = append(errs, field.Invalid(p.Child("seq"), int64(spec.Seq), fmt.Sprintf(
				"route-map sequence already used for VRF %q by VRFRouteConfiguration %q", spec.VRF, o.Name)))
		}
		if spec.VNI != nil && o.Spec.VNI != nil && *o.Spec.VNI != *spec.VNI {
			errs = append(errs, field.Invalid(p.Child("vni"), int64(*spec.VNI), fmt.Sprintf(
				"VRF %q has VNI %d in VRFRouteConfiguration %q", spec.VRF, *o.Spec.VNI, o.Name)))
		}
	}
	return errs
}

// ValidateLayer2NetworkConfiguration checks a Layer2NetworkConfiguration; with a non-nil snapshot also VNI and
// VLAN uniqueness, that its VRF exists, and that static flooding peers are of the fabric's VTEP family
// (Snapshot.VTEPFamily).
func ValidateLayer2NetworkConfiguration(obj *v1.Layer2NetworkConfiguration, s *Snapshot) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	errs := validateRange(p.Child("id"), int64(spec.ID), v1.MinVLAN, v1.MaxVLAN, "VLAN id")
	errs = append(errs, bounds.VNI(p.Child("vni"), int64(spec.VNI))...)
	errs = append(errs, validateRange(p.Child("mtu"), int64(spec.MTU), v1.MinMTU, v1.MaxMTU, "MTU")...)
	if spec.AnycastMac != "" {
		if ferr := validateMAC(p.Child("anycastMac"), spec.AnycastMac); ferr != nil {
			errs = append(errs, ferr)
		}
	}
	if len(spec.AnycastGateways) > 0 && spec.AnycastMac == "" {
		errs = append(errs, field.Required(p.Child("anycastMac"),
			fmt.Sprintf("anycastGateways %v need an anycastMac", spec.AnycastGateways)))
	}
	seen := map[netip.Addr]bool{}
	for i, g := range spec.AnycastGateways {
		gp := p.Child("anycastGateways").Index(i)
		pfx, ferr := parseCIDR(gp, g)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		if pfx.Bits() < pfx.Addr().BitLen() && pfx.Masked().Addr() == pfx.Addr() {
			errs = append(errs, field.Invalid(gp, g,
				"is the network address: a gateway needs a host address with the prefix length, e.g. "+
					pfx.Addr().Next().String()+"/"+fmt.Sprint(pfx.Bits())))
		}
		if seen[pfx.Addr()] {
			errs = append(errs, field.Duplicate(gp, g))
		}
		seen[pfx.Addr()] = true
	}
	if spec.VRF != "" {
		errs = append(errs, validateVRFName(p.Child("vrf"), spec.VRF)...)
	}
	errs = append(errs, validateNodeSelector(p.Child("nodeSelector"), spec.NodeSelector)...)
	errs = append(errs, ValidateFlooding(p.Child("flooding"), spec.Flooding)...)
	errs = append(errs, validateNodeSelector(p.Child("podNamespaceSelector"), spec.PodNamespaceSelector)...)

	if s == nil {
		return errs
	}
	errs = append(errs, ValidateFloodingFamily(p.Child("flooding"), spec.Flooding, s.VTEPFamily)...)
	if other := s.vniUser(int64(spec.VNI), obj.Name, "Layer2NetworkConfiguration", ""); other != "" {
		errs = append(errs, field.Invalid(p.Child("vni"), int64(spec.VNI), "VNI already used by "+other))
	}
	for i := range s.Layer2Networks {
		o := &s.Layer2Networks[i]
		if o.Name != obj.Name && o.Spec.ID == spec.ID {
			errs = append(errs, field.Invalid(p.Child("id"), int64(spec.ID),
				fmt.Sprintf("VLAN already used by Layer2NetworkConfiguration %q", o.Name)))
		}
	}
	// A VRF no VRFRouteConfiguration defines yet is no error: objects are applied in any order; the operator
	// leaves the network out of the rollout until the VRF exists (controllers, Resolved condition).
	return errs
}

// validateCommunities checks one community entry: communities separated by white space, optionally with the
// word "additive" (FRR's "set community" syntax, which das-schiff passes through).
func validateCommunities(path *field.Path, entry string) field.ErrorList {
	list, _ := v1.SplitCommunities([]string{entry})
	if len(list) == 0 {
		return field.ErrorList{field.Invalid(path, entry, "no community: write AA:NN, A:B:C or a well-known name such as no-export")}
	}
	var errs field.ErrorList
	for _, c := range list {
		if _, err := bgp.ParseCommunity(c); err != nil {
			msg := err.Error()
			if c != entry {
				msg = fmt.Sprintf("%q: %s", c, msg)
			}
			errs = append(errs, field.Invalid(path, entry, msg))
		}
	}
	return errs
}

// ValidateBGPPeering checks a BGPPeering; with a non-nil snapshot also that its Layer2 network exists and has
// gateways (the listen range), and that no other peering uses the same network or loopback address.
func ValidateBGPPeering(obj *v1.BGPPeering, s *Snapshot) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	switch {
	case spec.PeeringVlan == nil && spec.LoopbackPeer == nil:
		errs = append(errs, field.Required(p.Child("peeringVlan"), "exactly one of peeringVlan and loopbackPeer must be set"))
	case spec.PeeringVlan != nil && spec.LoopbackPeer != nil:
		errs = append(errs, field.Invalid(p.Child("loopbackPeer", "ips"), spec.LoopbackPeer.IPAddresses, fmt.Sprintf(
			"exactly one of peeringVlan and loopbackPeer must be set; peeringVlan is %q", spec.PeeringVlan.Name)))
	}
	if spec.PeeringVlan != nil {
		np := p.Child("peeringVlan", "name")
		if spec.PeeringVlan.Name == "" {
			errs = append(errs, field.Required(np, "the Layer2NetworkConfiguration to peer on"))
		}
		for _, msg := range validation.IsDNS1123Subdomain(spec.PeeringVlan.Name) {
			errs = append(errs, field.Invalid(np, spec.PeeringVlan.Name, msg))
		}
	}
	if spec.LoopbackPeer != nil {
		lp := p.Child("loopbackPeer", "ips")
		if old := spec.LoopbackPeer.RenamedIPAddresses; len(old) > 0 {
			errs = append(errs, field.Invalid(p.Child("loopbackPeer", "ipAddresses"), old,
				"ipAddresses is now spelt ips, the name das-schiff uses: write ips"))
		}
		if len(spec.LoopbackPeer.IPAddresses) == 0 {
			errs = append(errs, field.Required(lp, "at least one address"))
		}
		seen := map[netip.Addr]bool{}
		for i, a := range spec.LoopbackPeer.IPAddresses {
			addr, err := netip.ParseAddr(a)
			switch {
			case err != nil || addr.Zone() != "":
				errs = append(errs, field.Invalid(lp.Index(i), a, "not an IP address"))
			case addr.Is4In6():
				errs = append(errs, field.Invalid(lp.Index(i), a, "IPv4-mapped IPv6 address: write the IPv4 form"))
			case !addr.IsGlobalUnicast() && !addr.IsPrivate():
				errs = append(errs, field.Invalid(lp.Index(i), a, "not a unicast address a workload can have"))
			case seen[addr]:
				errs = append(errs, field.Duplicate(lp.Index(i), a))
			}
			seen[addr] = true
		}
	}
	errs = append(errs, bgp.ValidateASN(p.Child("remoteASN"), spec.RemoteASN)...)
	if spec.MaximumPrefixes != nil {
		errs = append(errs, validateRange(p.Child("maximumPrefixes"), *spec.MaximumPrefixes, v1.MinMaximumPrefixes, v1.MaxMaximumPrefixes, "maximum prefixes")...)
	}
	errs = append(errs, validateTimers(p, spec.HoldTime, spec.KeepaliveTime)...)
	if spec.BFD != nil {
		errs = append(errs, spec.BFD.Profile().Validate(p.Child("bfd"))...)
	}
	if ref := spec.PasswordSecretRef; ref != nil {
		rp := p.Child("passwordSecretRef")
		for _, msg := range validation.IsDNS1123Label(ref.Namespace) {
			errs = append(errs, field.Invalid(rp.Child("namespace"), ref.Namespace, msg))
		}
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, msg))
		}
		for _, msg := range validation.IsConfigMapKey(ref.Key) {
			errs = append(errs, field.Invalid(rp.Child("key"), ref.Key, msg))
		}
	}
	errs = append(errs, validatePrefixList(p.Child("import"), spec.Import)...)
	errs = append(errs, validatePrefixList(p.Child("export"), spec.Export)...)
	errs = append(errs, validateNodeSelector(p.Child("nodeSelector"), spec.NodeSelector)...)

	if s == nil {
		return errs
	}
	if spec.PeeringVlan != nil && spec.PeeringVlan.Name != "" {
		errs = append(errs, s.checkPeeringVlan(p.Child("peeringVlan", "name"), obj.Name, spec.PeeringVlan.Name)...)
	}
	if spec.LoopbackPeer != nil {
		errs = append(errs, s.checkLoopbacks(p.Child("loopbackPeer", "ips"), obj.Name, spec.LoopbackPeer.IPAddresses)...)
	}
	return errs
}

func (s *Snapshot) checkPeeringVlan(path *field.Path, self, l2 string) field.ErrorList {
	var errs field.ErrorList
	var net *v1.Layer2NetworkConfiguration
	for i := range s.Layer2Networks {
		if s.Layer2Networks[i].Name == l2 {
			net = &s.Layer2Networks[i]
		}
	}
	// A network that does not exist yet is no error (any apply order): the operator holds the peering back
	// until it does. One that exists must have gateways.
	if net != nil && len(net.Spec.AnycastGateways) == 0 {
		errs = append(errs, field.Invalid(path, l2, fmt.Sprintf(
			"Layer2NetworkConfiguration %q has no anycastGateways to derive the BGP listen range from", l2)))
	}
	for i := range s.BGPPeerings {
		o := &s.BGPPeerings[i]
		if o.Name != self && o.Spec.PeeringVlan != nil && o.Spec.PeeringVlan.Name == l2 {
			errs = append(errs, field.Invalid(path, l2, fmt.Sprintf("BGPPeering %q already peers on this network", o.Name)))
		}
	}
	return errs
}

func (s *Snapshot) checkLoopbacks(path *field.Path, self string, addrs []string) field.ErrorList {
	var errs field.ErrorList
	for i, a := range addrs {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			continue // reported above
		}
		for j := range s.BGPPeerings {
			o := &s.BGPPeerings[j]
			if o.Name == self || o.Spec.LoopbackPeer == nil {
				continue
			}
			for _, b := range o.Spec.LoopbackPeer.IPAddresses {
				if other, err := netip.ParseAddr(b); err == nil && other == addr {
					errs = append(errs, field.Invalid(path.Index(i), a, fmt.Sprintf("BGPPeering %q already peers with this address", o.Name)))
				}
			}
		}
	}
	return errs
}

// validateTimers: FRR sets keepalive and hold time together; hold time v1.MinHoldTimeSeconds..v1.MaxHoldTimeSeconds,
// keepalive 1 s..hold time, both in whole seconds.
func validateTimers(p *field.Path, hold, keepalive *metav1.Duration) field.ErrorList {
	var errs field.ErrorList
	hp, kp := p.Child("holdTime"), p.Child("keepaliveTime")
	switch {
	case hold == nil && keepalive == nil:
		return nil
	case hold == nil:
		return field.ErrorList{field.Required(hp, fmt.Sprintf("holdTime is required with keepaliveTime %s", keepalive.Duration))}
	case keepalive == nil:
		return field.ErrorList{field.Required(kp, fmt.Sprintf("keepaliveTime is required with holdTime %s", hold.Duration))}
	}
	h, k := hold.Duration, keepalive.Duration
	if h%time.Second != 0 {
		errs = append(errs, field.Invalid(hp, h.String(), "must be whole seconds"))
	}
	if k%time.Second != 0 {
		errs = append(errs, field.Invalid(kp, k.String(), "must be whole seconds"))
	}
	if h < v1.MinHoldTimeSeconds*time.Second || h > v1.MaxHoldTimeSeconds*time.Second {
		errs = append(errs, field.Invalid(hp, h.String(), fmt.Sprintf("must be within %ds..%ds",
			v1.MinHoldTimeSeconds, v1.MaxHoldTimeSeconds)))
	}
	if k < time.Second {
		errs = append(errs, field.Invalid(kp, k.String(), "must be at least 1s"))
	}
	if k > h {
		errs = append(errs, field.Invalid(kp, k.String(), fmt.Sprintf("must not be longer than holdTime %s", h)))
	}
	return errs
}
