package nodespec

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// Node annotations read by Build.
const (
	AnnotationASN                = "network.network-operator.io/asn"
	AnnotationRouterID           = "network.network-operator.io/router-id"
	AnnotationVTEPAddress        = "network.network-operator.io/vtep-address"
	AnnotationUnderlayInterfaces = "network.network-operator.io/underlay-interfaces"
	// AnnotationUnderlayNeighbors lists numbered underlay neighbours, comma-separated: IPv4 or IPv6 addresses, an
	// IPv6 link-local one with its interface as "fe80::1%eth0". It replaces the operator's --underlay-neighbors.
	AnnotationUnderlayNeighbors = "network.network-operator.io/underlay-neighbors"
)

const (
	// TableIDBase + VNI is the routing table of a VRF with a VNI (v1.VRFTableIDBase, shared with standalone mode).
	TableIDBase = v1.VRFTableIDBase
	// MainTableID is the kernel's main table, used by the VRFs without VNI ("default", "cluster").
	MainTableID = v1.MainTableID
	// MaxVRFID is the largest BPF VRF id (v1.MaxVRFID: the router's counter array has one entry per id, 0 = unassigned).
	MaxVRFID = v1.MaxVRFID
	// DefaultL2MTU is used when a Layer2NetworkConfiguration leaves mtu unset.
	DefaultL2MTU = 1500
)

// ErrNodeIncomplete marks a problem of the Node itself (underlay annotations or addresses): any revision would
// fail the same way until the Node is fixed. Problems of the revision content match fielderr.ErrInvalid
// instead: the revision cannot be rolled out on this node, retrying does not help.
var ErrNodeIncomplete = errors.New("node underlay incomplete")

// Underlay is the operator-wide underlay configuration.
type Underlay struct {
	// ASN of the nodes unless a Node annotation says otherwise.
	ASN int64
	// Interfaces are the default fabric uplinks.
	Interfaces []string
	// RemoteASN of the uplink neighbours (unnumbered and numbered): a number, "internal" or "external".
	RemoteASN string
	// Neighbors are the default numbered neighbours (AnnotationUnderlayNeighbors' syntax: "2001:db8::1",
	// "fe80::1%eth0"), e.g. the fabric's route reflectors.
	Neighbors []string
	// Families are the unicast address families the underlay carries (v1.UnderlaySpec.AddressFamilies); empty:
	// the VTEP family alone.
	Families []v1.IPFamily
	// VTEPFamily is the fabric's VTEP address family: every node's VTEP address must be of it. "": not enforced
	// (each node's VTEP is of its own family; static flooding pairs only nodes of one family). A node without the
	// vtep-address annotation takes its router id, or with IPv6 its first global IPv6 InternalIP.
	VTEPFamily v1.IPFamily
	// BFD on every underlay session; nil: none.
	BFD *v1.BFDProfile
}

// Options are the operator-level inputs of Build.
type Options struct {
	Underlay Underlay
	// Strict makes the eBPF router drop what it cannot forward.
	Strict bool
	// Interfaces are extra data-plane interfaces; each is configured on nodes that have its VRF.
	Interfaces []v1.DataPlaneInterface
	// L2Gateways puts the bridge of every layer-2 network with anycast gateways in a tenant VRF under the eBPF
	// router: traffic the workloads send to their gateway is routed in the VRF's table there.
	L2Gateways bool
	// HealthProbes go into every node's spec: each node must reach them after a change (the agent's health gate).
	HealthProbes []v1.HealthProbe
}

// Build returns the spec of node for revision rev. current is the node's present spec (nil when it has
// none): it only supplies the BPF VRF ids to keep. The result carries rev.Revision and its MapVersion.
func Build(rev *v1.NetworkConfigRevisionSpec, node *corev1.Node, current *v1.NodeNetworkConfigSpec, opts Options) (v1.NodeNetworkConfigSpec, error) {
	spec := v1.NodeNetworkConfigSpec{Revision: rev.Revision}
	nodeLabels := labels.Set(node.Labels)
	underlay, nodeErrs := buildUnderlay(node, opts.Underlay)
	spec.Underlay = underlay

	vrfs, errs := buildVRFs(rev.VRF, nodeLabels, current)
	spec.VRFs = vrfs
	vrfNames := make(map[string]bool, len(vrfs))
	for _, v := range vrfs {
		vrfNames[v.Name] = true
	}

	l2s, l2Nets, l2Errs := buildLayer2s(rev.Layer2, nodeLabels, vrfNames, underlay.VTEPAddress)
	errs = append(errs, l2Errs...)
	spec.Layer2s = l2s

	peers, peerErrs := buildBGPPeers(rev.BGP, rev.Layer2, nodeLabels, l2Nets)
	errs = append(errs, peerErrs...)
	spec.BGPPeers = peers

	links, linkErrs := buildLinks(rev.Links, nodeLabels, underlay.VTEPAddress)
	errs = append(errs, linkErrs...)
	spec.Links = links

	spec.RoutingTables = buildRoutingTables(rev.RoutingTables)
	mirrors, mirrorErrs := buildMirrors(rev, vrfs, l2s)
	errs = append(errs, mirrorErrs...)
	spec.Mirrors = mirrors

	spec.DataPlane = buildDataPlane(vrfs, l2s, opts)
	if len(opts.HealthProbes) > 0 {
		spec.HealthProbes = slices.SortedFunc(slices.Values(opts.HealthProbes), func(a, b v1.HealthProbe) int { return cmp.Compare(a.Name, b.Name) })
	}
	if err := errors.Join(fielderr.JoinClass(ErrNodeIncomplete, nodeErrs), fielderr.Join(errs)); err != nil {
		return v1.NodeNetworkConfigSpec{}, fmt.Errorf("node %s, revision %.12s: %w", node.Name, rev.Revision, err)
	}
	spec.ExpectedMapVersion = spec.MapVersion()
	return spec, nil
}

// selects reports whether sel (nil = every node) matches the node's labels.
func selects(path *field.Path, sel *metav1.LabelSelector, nodeLabels labels.Set) (bool, *field.Error) {
	if sel == nil {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, field.Invalid(path, sel.String(), fmt.Sprintf("not a valid label selector: %v", err))
	}
	return s.Matches(nodeLabels), nil
}

// buildUnderlay returns the underlay and the problems of the Node (ErrNodeIncomplete).
func buildUnderlay(node *corev1.Node, u Underlay) (v1.UnderlaySpec, field.ErrorList) {
	var errs field.ErrorList
	annotation := field.NewPath("metadata", "annotations")
	out := v1.UnderlaySpec{ASN: u.ASN, BFD: u.BFD.DeepCopy()}
	if s, ok := node.Annotations[AnnotationASN]; ok {
		var asnErrs field.ErrorList
		out.ASN, asnErrs = bgp.ParseASN(annotation.Key(AnnotationASN), s)
		errs = append(errs, asnErrs...)
	} else {
		errs = append(errs, bgp.ValidateASN(field.NewPath("underlay", "asn"), out.ASN)...)
	}

	out.RouterID = node.Annotations[AnnotationRouterID]
	if out.RouterID == "" {
		out.RouterID = internalIPv4(node)
	}
	routerIDOK := true
	if a, err := netip.ParseAddr(out.RouterID); err != nil || !a.Is4() {
		routerIDOK = false
		errs = append(errs, field.Invalid(annotation.Key(AnnotationRouterID), out.RouterID,
			"must be an IPv4 address (set the annotation or give the Node an IPv4 InternalIP)"))
	}
	// The VTEP address: the annotation's, else the router id (IPv4 VTEPs) or the Node's IPv6 InternalIP.
	vtepPath := annotation.Key(AnnotationVTEPAddress)
	out.VTEPAddress = node.Annotations[AnnotationVTEPAddress]
	check := true
	switch {
	case out.VTEPAddress != "":
	case u.VTEPFamily != v1.IPv6:
		out.VTEPAddress, check = out.RouterID, routerIDOK // a bad router id has its own error
	default:
		if out.VTEPAddress = internalIP(node, v1.IPv6); out.VTEPAddress == "" {
			errs = append(errs, field.Required(vtepPath, "the fabric's VTEPs are IPv6: set the annotation or give the Node an IPv6 InternalIP"))
		}
	}
	if out.VTEPAddress != "" && check {
		a, verrs := validation.ValidateVTEPAddress(vtepPath, out.VTEPAddress)
		errs = append(errs, verrs...)
		if a.IsValid() && u.VTEPFamily != "" && validation.FamilyOf(a) != u.VTEPFamily {
			errs = append(errs, field.Invalid(vtepPath, out.VTEPAddress, fmt.Sprintf(
				"an %s address, but the fabric's VTEPs are %s (--underlay-vtep-family): a VXLAN device reaches VTEPs of its own family only",
				validation.FamilyOf(a), u.VTEPFamily)))
		} else if a.IsValid() && len(u.Families) > 0 && !slices.Contains(u.Families, validation.FamilyOf(a)) {
			errs = append(errs, field.Invalid(vtepPath, out.VTEPAddress, fmt.Sprintf(
				"an %s address, but the underlay carries %v only (--underlay-address-families): the other nodes would not learn it",
				validation.FamilyOf(a), u.Families)))
		}
	}
	out.AddressFamilies = slices.Clone(u.Families)

	out.Interfaces = slices.Clone(u.Interfaces)
	if s, ok := node.Annotations[AnnotationUnderlayInterfaces]; ok {
		out.Interfaces = nil
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out.Interfaces = append(out.Interfaces, f)
			}
		}
	}
	remote := cmp.Or(u.RemoteASN, bgp.RemoteASExternal)
	numbered, nerrs := underlayNeighbors(node, u.Neighbors, remote, validation.UnderlayFamilies(&out))
	errs = append(errs, nerrs...)
	linkLocalOn := map[string]bool{}
	for _, n := range numbered {
		linkLocalOn[n.Interface] = n.Interface != ""
	}
	for i, ifname := range out.Interfaces {
		if ifname == "" || len(ifname) > v1.MaxInterfaceNameLen {
			errs = append(errs, field.Invalid(field.NewPath("underlay", "interfaces").Index(i), ifname,
				fmt.Sprintf("not an interface name (1..%d bytes)", v1.MaxInterfaceNameLen)))
		}
		if !linkLocalOn[ifname] { // a link-local neighbour on the uplink is its session: no unnumbered one beside it
			out.Neighbors = append(out.Neighbors, v1.UnderlayNeighbor{Interface: ifname, RemoteASN: remote})
		}
	}
	out.Neighbors = append(out.Neighbors, numbered...)
	return out, errs
}

// underlayNeighbors are the node's numbered underlay neighbours: the annotation's, else the operator's, each
// checked against the underlay's families (errors name the annotation or the underlay's neighbours).
func underlayNeighbors(node *corev1.Node, defaults []string, remote string, families []v1.IPFamily) ([]v1.UnderlayNeighbor, field.ErrorList) {
	list, path := defaults, field.NewPath("underlay", "neighbors")
	if s, ok := node.Annotations[AnnotationUnderlayNeighbors]; ok {
		list, path = nil, field.NewPath("metadata", "annotations").Key(AnnotationUnderlayNeighbors)
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				list = append(list, f)
			}
		}
	}
	var out []v1.UnderlayNeighbor
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, s := range list {
		n := ParseUnderlayNeighbor(s, remote)
		key, nerrs := validation.ValidateUnderlayNeighbor(path.Index(i), &n, families)
		switch {
		case len(nerrs) > 0:
			errs = append(errs, nerrs...)
		case seen[key]:
			errs = append(errs, field.Duplicate(path.Index(i), s))
		default:
			seen[key] = true
			out = append(out, n)
		}
	}
	return out, errs
}

// ParseUnderlayNeighbor reads one numbered neighbour as AnnotationUnderlayNeighbors and --underlay-neighbors write
// it: an address, or an IPv6 link-local address with its interface as the zone ("fe80::1%eth0").
func ParseUnderlayNeighbor(s, remoteASN string) v1.UnderlayNeighbor {
	n := v1.UnderlayNeighbor{Address: s, RemoteASN: remoteASN}
	if addr, zone, ok := strings.Cut(s, "%"); ok {
		n.Address, n.Interface = addr, zone
	}
	return n
}

// internalIP is the Node's first InternalIP of the family ("" when it has none).
func internalIP(node *corev1.Node, fam v1.IPFamily) string {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && validation.FamilyOf(ip) == fam && ip.IsGlobalUnicast() {
			return ip.Unmap().String()
		}
	}
	return ""
}

func internalIPv4(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip.String()
		}
	}
	return ""
}

func prefixItems(items []v1.PrefixItem) []v1.NodePrefixItem {
	if len(items) == 0 {
		return nil
	}
	out := make([]v1.NodePrefixItem, len(items))
	for i, p := range items {
		out[i] = v1.NodePrefixItem{CIDR: p.CIDR, Seq: p.EffectiveSeq(i), GE: p.GE, LE: p.LE, Action: p.Action}
	}
	return out
}

// noVNIVRF reports whether name is one of the VRFs that live in the main table without an L3 VNI.
func noVNIVRF(name string) bool { return name == v1.DefaultVRFName || name == v1.ClusterVRFName }

// TableID is the routing table of a VRF (see the package documentation); path names its VNI in errors.
func TableID(path *field.Path, name string, vni int32) (int32, *field.Error) {
	switch {
	case vni >= v1.MinVNI && vni <= v1.MaxVNI:
		return TableIDBase + vni, nil
	case vni == 0 && noVNIVRF(name):
		return MainTableID, nil
	default:
		return 0, field.Invalid(path, vni, fmt.Sprintf("VNI of VRF %q must be within %d..%d (only %q and %q go without)",
			name, v1.MinVNI, v1.MaxVNI, v1.DefaultVRFName, v1.ClusterVRFName))
	}
}

func buildVRFs(items []v1.VRFRevision, nodeLabels labels.Set, current *v1.NodeNetworkConfigSpec) ([]v1.NodeVRF, field.ErrorList) {
	var errs field.ErrorList
	byName := map[string]*v1.NodeVRF{}
	for i := range items {
		it := &items[i]
		f := field.NewPath("vrf").Key(it.Name)
		ok, ferr := selects(f.Child("nodeSelector"), it.NodeSelector, nodeLabels)
		if ferr != nil {
			errs = append(errs, ferr)
		}
		if !ok {
			continue
		}
		v, ferr := vrfOf(byName, f, it)
		if ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		mergeVRFRevision(v, it)
		errs = append(errs, mergeLoopbacks(f, v, it)...)
	}

	vrfs := make([]v1.NodeVRF, 0, len(byName))
	for _, v := range byName {
		sortVRF(v)
		errs = append(errs, leakSeqErrors(v)...)
		vrfs = append(vrfs, *v)
	}
	if ferr := assignVRFIDs(vrfs, current); ferr != nil {
		errs = append(errs, ferr)
	}
	slices.SortFunc(vrfs, func(a, b v1.NodeVRF) int { return cmp.Compare(a.Name, b.Name) })
	return vrfs, errs
}

// vrfOf returns the node VRF that it (at f) configures, adding it to byName with its table on its first
// configuration. It fails when the table is invalid or the VNI differs from another configuration's.
func vrfOf(byName map[string]*v1.NodeVRF, f *field.Path, it *v1.VRFRevision) (*v1.NodeVRF, *field.Error) {
	var vni int32
	if it.VNI != nil {
		vni = *it.VNI
	}
	v := byName[it.VRF]
	if v == nil {
		table, ferr := TableID(f.Child("vni"), it.VRF, vni)
		if ferr != nil {
			return nil, ferr
		}
		v = &v1.NodeVRF{Name: it.VRF, TableID: table, VNI: vni}
		byName[it.VRF] = v
	} else if v.VNI != vni {
		return nil, field.Invalid(f.Child("vni"), vni, fmt.Sprintf("differs from VNI %d of another configuration of VRF %q", v.VNI, it.VRF))
	}
	return v, nil
}

// mergeVRFRevision adds the route target, MTU, leak, aggregates and SBR prefixes of it to the node VRF v.
func mergeVRFRevision(v *v1.NodeVRF, it *v1.VRFRevision) {
	if it.RouteTarget != nil && *it.RouteTarget != "" && !slices.Contains(v.RouteTargets, *it.RouteTarget) {
		v.RouteTargets = append(v.RouteTargets, *it.RouteTarget)
	}
	if it.MTU != nil && *it.MTU > v.MTU {
		v.MTU = *it.MTU // the largest wins: a smaller one would cut the other's traffic
	}
	communities, additive := it.AllCommunities()
	v.Leaks = append(v.Leaks, v1.VRFLeak{
		Source:              it.Name,
		Seq:                 it.Seq,
		Import:              prefixItems(it.Import),
		Export:              prefixItems(it.Export),
		Communities:         communities,
		AdditiveCommunities: additive,
	})
	v.Aggregates = append(v.Aggregates, it.Aggregate...)
	v.SBRPrefixes = append(v.SBRPrefixes, it.SBRPrefixes...)
}

// mergeLoopbacks adds the loopbacks of it (at f) to the node VRF v; an invalid subnet, or one that differs from
// another configuration's for the same loopback, is an error.
func mergeLoopbacks(f *field.Path, v *v1.NodeVRF, it *v1.VRFRevision) field.ErrorList {
	var errs field.ErrorList
	for j, lo := range it.Loopbacks {
		k := slices.IndexFunc(v.Loopbacks, func(o v1.NodeLoopback) bool { return o.Name == lo.Name })
		switch {
		case !validSubnet(lo.Subnet):
			errs = append(errs, field.Invalid(f.Child("loopbacks").Index(j).Child("subnet"), lo.Subnet, "not a CIDR given by its network address"))
		case k < 0:
			v.Loopbacks = append(v.Loopbacks, v1.NodeLoopback{Name: lo.Name, Subnet: lo.Subnet})
		case v.Loopbacks[k].Subnet != lo.Subnet:
			errs = append(errs, field.Invalid(f.Child("loopbacks").Index(j).Child("subnet"), lo.Subnet, fmt.Sprintf(
				"loopback %q of VRF %q has subnet %s in another configuration", lo.Name, it.VRF, v.Loopbacks[k].Subnet)))
		}
	}
	return errs
}

// sortVRF puts v's lists in their canonical order, dropping duplicate aggregates and SBR prefixes; leaks go by
// sequence, then source.
func sortVRF(v *v1.NodeVRF) {
	slices.Sort(v.RouteTargets)
	slices.Sort(v.Aggregates)
	v.Aggregates = slices.Compact(v.Aggregates)
	slices.Sort(v.SBRPrefixes)
	v.SBRPrefixes = slices.Compact(v.SBRPrefixes)
	slices.SortFunc(v.Loopbacks, func(a, b v1.NodeLoopback) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(v.Leaks, func(a, b v1.VRFLeak) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Source, b.Source)) })
}

// leakSeqErrors reports the leaks of v (sorted by sortVRF) that share a sequence with the one before them.
func leakSeqErrors(v *v1.NodeVRF) field.ErrorList {
	var errs field.ErrorList
	for i := 1; i < len(v.Leaks); i++ {
		if v.Leaks[i].Seq == v.Leaks[i-1].Seq {
			errs = append(errs, field.Invalid(field.NewPath("vrf").Key(v.Leaks[i].Source).Child("seq"), v.Leaks[i].Seq,
				fmt.Sprintf("also used by %q in VRF %q", v.Leaks[i-1].Source, v.Name)))
		}
	}
	return errs
}

// validSubnet reports whether s is a CIDR given by its network address (as validation requires of loopback subnets).
func validSubnet(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && p.Masked() == p
}

// assignVRFIDs keeps the ids of the current spec and gives new VRFs the lowest free ids in (VNI, name) order.
func assignVRFIDs(vrfs []v1.NodeVRF, current *v1.NodeNetworkConfigSpec) *field.Error {
	kept := map[string]int32{}
	if current != nil {
		for _, v := range current.VRFs {
			if v.ID >= v1.MinVRFID && v.ID <= MaxVRFID {
				kept[v.Name] = v.ID
			}
		}
	}
	used := map[int32]bool{}
	for i := range vrfs {
		if id, ok := kept[vrfs[i].Name]; ok {
			vrfs[i].ID = id
			used[id] = true
		}
	}
	slices.SortFunc(vrfs, func(a, b v1.NodeVRF) int { return cmp.Or(cmp.Compare(a.VNI, b.VNI), cmp.Compare(a.Name, b.Name)) })
	next := int32(v1.MinVRFID)
	for i := range vrfs {
		if vrfs[i].ID != 0 {
			continue
		}
		for used[next] {
			next++
		}
		if next > MaxVRFID {
			return field.Invalid(field.NewPath("vrfs"), len(vrfs), fmt.Sprintf("VRFs on one node exceed the %d BPF VRF ids", MaxVRFID))
		}
		vrfs[i].ID = next
		used[next] = true
	}
	return nil
}

func buildLayer2s(items []v1.Layer2Revision, nodeLabels labels.Set, vrfNames map[string]bool, vtep string) ([]v1.NodeLayer2, map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	var out []v1.NodeLayer2
	onNode := map[string]bool{}
	for i := range items {
		it := &items[i]
		f := field.NewPath("layer2").Key(it.Name)
		ok, ferr := selects(f.Child("nodeSelector"), it.NodeSelector, nodeLabels)
		if ferr != nil {
			errs = append(errs, ferr)
		}
		if !ok {
			continue
		}
		if it.VRF != "" && !vrfNames[it.VRF] && !noVNIVRF(it.VRF) {
			errs = append(errs, field.Invalid(f.Child("vrf"), it.VRF, "not configured on this node (no VRFRouteConfiguration selects it)"))
			continue
		}
		l2 := v1.NodeLayer2{
			Name:               it.Name,
			VLAN:               it.ID,
			VNI:                it.VNI,
			MTU:                cmp.Or(it.MTU, DefaultL2MTU),
			VRF:                it.VRF,
			AnycastMAC:         it.AnycastMac,
			AnycastGateways:    slices.Clone(it.AnycastGateways),
			AdvertiseNeighbors: it.AdvertiseNeighbors,

			DisableSegmentation: it.DisableSegmentation,
		}
		if it.NeighSuppression != nil {
			l2.NeighSuppression = *it.NeighSuppression
		}
		var ferrs field.ErrorList
		if l2.Flooding, ferrs = staticFlooding(f.Child("flooding"), it.Flooding, vtep); len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		out = append(out, l2)
		onNode[it.Name] = true
	}
	slices.SortFunc(out, func(a, b v1.NodeLayer2) int { return cmp.Compare(a.Name, b.Name) })
	return out, onNode, errs
}

func buildBGPPeers(items []v1.BGPRevision, l2Items []v1.Layer2Revision, nodeLabels labels.Set, l2OnNode map[string]bool) ([]v1.NodeBGPPeer, field.ErrorList) {
	l2ByName := make(map[string]*v1.Layer2Revision, len(l2Items))
	for i := range l2Items {
		l2ByName[l2Items[i].Name] = &l2Items[i]
	}
	var errs field.ErrorList
	var out []v1.NodeBGPPeer
	for i := range items {
		it := &items[i]
		f := field.NewPath("bgp").Key(it.Name)
		ok, ferr := selects(f.Child("nodeSelector"), it.NodeSelector, nodeLabels)
		if ferr != nil {
			errs = append(errs, ferr)
		}
		if !ok {
			continue
		}
		p := v1.NodeBGPPeer{
			Name:              it.Name,
			RemoteASN:         it.RemoteASN,
			HoldTime:          it.HoldTime,
			KeepaliveTime:     it.KeepaliveTime,
			MaximumPrefixes:   it.MaximumPrefixes,
			EnableBFD:         it.EnableBFD || it.BFD != nil,
			BFD:               it.BFD.DeepCopy(),
			Import:            prefixItems(it.Import),
			Export:            prefixItems(it.Export),
			PasswordSecretRef: it.PasswordSecretRef, // the reference only: the agent reads the value
		}
		switch {
		case it.PeeringVlan != nil:
			l2 := l2ByName[it.PeeringVlan.Name]
			if l2 == nil {
				errs = append(errs, field.Invalid(f.Child("peeringVlan", "name"), it.PeeringVlan.Name, "not a Layer2NetworkConfiguration of the revision"))
				continue
			}
			if !l2OnNode[l2.Name] {
				continue // the network is not on this node: nothing to listen on
			}
			p.VRF = l2.VRF
			for j, gw := range l2.AnycastGateways {
				pfx, err := netip.ParsePrefix(gw)
				if err != nil {
					errs = append(errs, field.Invalid(field.NewPath("layer2").Key(l2.Name).Child("anycastGateways").Index(j), gw, "not an address/prefix"))
					continue
				}
				p.ListenRanges = append(p.ListenRanges, pfx.Masked().String())
			}
		case it.LoopbackPeer != nil:
			p.Addresses = slices.Clone(it.LoopbackPeer.IPAddresses)
		default:
			errs = append(errs, field.Required(f, "needs peeringVlan or loopbackPeer"))
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b v1.NodeBGPPeer) int { return cmp.Compare(a.Name, b.Name) })
	return out, errs
}

func buildDataPlane(vrfs []v1.NodeVRF, l2s []v1.NodeLayer2, opts Options) v1.DataPlaneSpec {
	dp := v1.DataPlaneSpec{Strict: opts.Strict}
	have := map[string]bool{}
	for _, v := range vrfs {
		have[v.Name] = true
		if v.VNI == 0 {
			continue
		}
		for _, prefix := range []string{v1.BridgePrefix, v1.VXLANPrefix} {
			dp.Interfaces = append(dp.Interfaces, v1.DataPlaneInterface{Name: prefix + v.Name, VRF: v.Name, Mode: v1.ModeRoute, Hook: v1.HookAuto})
		}
	}
	if opts.L2Gateways {
		for _, l2 := range l2s {
			if have[l2.VRF] && !noVNIVRF(l2.VRF) && len(l2.AnycastGateways) > 0 {
				dp.Interfaces = append(dp.Interfaces, v1.DataPlaneInterface{Name: v1.L2BridgePrefix + strconv.Itoa(int(l2.VLAN)),
					VRF: l2.VRF, Mode: v1.ModeRoute, Hook: v1.HookAuto})
			}
		}
	}
	for _, i := range opts.Interfaces {
		if i.VRF == "" || have[i.VRF] {
			// The CRD defaults these; setting them here keeps the stored spec equal to the built one.
			i.Mode = cmp.Or(i.Mode, v1.ModeRoute)
			i.Hook = cmp.Or(i.Hook, v1.HookAuto)
			dp.Interfaces = append(dp.Interfaces, i)
		}
	}
	slices.SortFunc(dp.Interfaces, func(a, b v1.DataPlaneInterface) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.VLAN, b.VLAN))
	})
	return dp
}
