package validation

import (
	"fmt"
	"net/netip"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// ValidateRoutingTable checks a RoutingTable; with a non-nil snapshot also that no other RoutingTable has its
// table id.
func ValidateRoutingTable(obj *v1.RoutingTable, s *Snapshot) field.ErrorList {
	p := field.NewPath("spec", "tableId")
	id := obj.Spec.TableID
	errs := validateRange(p, id, v1.MinRoutingTableID, v1.MaxRoutingTableID, "table id (below the VRF tables 1000000000+VNI)")
	if id >= v1.DefaultTableID && id <= v1.LocalTableID {
		errs = append(errs, field.Invalid(p, id, "is a table of the kernel (253 default, 254 main, 255 local): pick another"))
	}
	if s == nil {
		return errs
	}
	for i := range s.RoutingTables {
		o := &s.RoutingTables[i]
		if o.Name != obj.Name && o.Spec.TableID == id {
			errs = append(errs, field.Invalid(p, id, fmt.Sprintf("table already used by RoutingTable %q", o.Name)))
		}
	}
	return errs
}

// ValidateMirrorTarget checks a MirrorTarget. Its VRF and loopback may not exist yet (any apply order): the
// operator holds the target back until they do.
func ValidateMirrorTarget(obj *v1.MirrorTarget) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Type != v1.MirrorTargetL2GRE && spec.Type != v1.MirrorTargetL3GRE {
		errs = append(errs, field.NotSupported(p.Child("type"), spec.Type, []v1.MirrorTargetType{v1.MirrorTargetL2GRE, v1.MirrorTargetL3GRE}))
	}
	if a, err := netip.ParseAddr(spec.DestinationIP); err != nil || a.Zone() != "" || a.Is4In6() || !a.IsGlobalUnicast() && !a.IsPrivate() {
		errs = append(errs, field.Invalid(p.Child("destinationIP"), spec.DestinationIP, "not a unicast IP address a collector can have"))
	}
	if spec.TunnelKey != nil {
		errs = append(errs, validateRange(p.Child("key"), *spec.TunnelKey, 0, v1.MaxGREKey, "GRE key")...)
	}
	errs = append(errs, validateVRFName(p.Child("destinationVrf"), spec.DestinationVrf)...)
	if spec.DestinationVrf == v1.DefaultVRFName || spec.DestinationVrf == v1.ClusterVRFName {
		errs = append(errs, field.Invalid(p.Child("destinationVrf"), spec.DestinationVrf,
			"must be a VRF of a VRFRouteConfiguration (with a VNI), not default or cluster"))
	}
	errs = append(errs, validateInterfaceName(p.Child("sourceLoopback"), spec.SourceLoopback)...)
	return errs
}

// protocols are the IP protocol names a TrafficMatch takes besides numbers; ports need one of portProtocols.
var protocols = map[string]bool{"tcp": true, "udp": true, "sctp": true, "icmp": true, "icmpv6": true}
var portProtocols = map[string]bool{"tcp": true, "udp": true, "sctp": true, "6": true, "17": true, "132": true}

// ValidateMirrorSelector checks a MirrorSelector. The referenced objects may not exist yet (any apply order): the
// operator holds the selector back until they do.
func ValidateMirrorSelector(obj *v1.MirrorSelector) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Direction != v1.MirrorIngress && spec.Direction != v1.MirrorEgress {
		errs = append(errs, field.NotSupported(p.Child("direction"), spec.Direction, []v1.MirrorDirection{v1.MirrorIngress, v1.MirrorEgress}))
	}
	tp, sp := p.Child("mirrorTarget"), p.Child("mirrorSource")
	if spec.MirrorTarget.Kind != v1.KindMirrorTarget {
		errs = append(errs, field.NotSupported(tp.Child("kind"), spec.MirrorTarget.Kind, []string{v1.KindMirrorTarget}))
	}
	if k := spec.MirrorSource.Kind; k != v1.KindLayer2NetworkConfiguration && k != v1.KindVRFRouteConfiguration {
		errs = append(errs, field.NotSupported(sp.Child("kind"), k, []string{v1.KindLayer2NetworkConfiguration, v1.KindVRFRouteConfiguration}))
	}
	for _, r := range []struct {
		path  *field.Path
		group *string
		ns    *string
		name  string
	}{{tp, spec.MirrorTarget.APIGroup, spec.MirrorTarget.Namespace, spec.MirrorTarget.Name}, {sp, spec.MirrorSource.APIGroup, spec.MirrorSource.Namespace, spec.MirrorSource.Name}} {
		if r.group != nil && *r.group != v1.GroupVersion.Group {
			errs = append(errs, field.Invalid(r.path.Child("apiGroup"), *r.group,
				"not this API group: leave apiGroup out (or write "+v1.GroupVersion.Group+")"))
		}
		if r.ns != nil && *r.ns != "" {
			errs = append(errs, field.Invalid(r.path.Child("namespace"), *r.ns, "the objects are cluster-scoped: leave namespace out"))
		}
		if r.name == "" {
			errs = append(errs, field.Required(r.path.Child("name"), "the name of the referenced object"))
		}
	}
	m := &spec.TrafficMatch
	mp := p.Child("trafficMatch")
	var family [2]int // bit length of src and dst prefix
	for i, pfx := range []*string{m.SrcPrefix, m.DstPrefix} {
		if pfx == nil {
			continue
		}
		path := mp.Child([]string{"srcPrefix", "dstPrefix"}[i])
		if n, ferr := parseNetwork(path, *pfx); ferr != nil {
			errs = append(errs, ferr)
		} else {
			family[i] = n.Addr().BitLen()
		}
	}
	if family[0] != 0 && family[1] != 0 && family[0] != family[1] {
		errs = append(errs, field.Invalid(mp.Child("dstPrefix"), *m.DstPrefix, fmt.Sprintf("another address family than srcPrefix %s", *m.SrcPrefix)))
	}
	proto := ""
	if m.Protocol != nil {
		proto = *m.Protocol
		if n, err := strconv.Atoi(proto); !protocols[proto] && (err != nil || n < 0 || n > 255) {
			errs = append(errs, field.Invalid(mp.Child("protocol"), proto, "not an IP protocol: tcp, udp, sctp, icmp, icmpv6 or a number 0..255"))
		}
	}
	for i, port := range []*int32{m.SrcPort, m.DstPort} {
		if port == nil {
			continue
		}
		path := mp.Child([]string{"srcPort", "dstPort"}[i])
		errs = append(errs, validateRange(path, int64(*port), 0, 65535, "port")...)
		if !portProtocols[proto] {
			errs = append(errs, field.Invalid(path, int64(*port), "a port needs protocol tcp, udp or sctp: write trafficMatch.protocol"))
		}
	}
	return errs
}
