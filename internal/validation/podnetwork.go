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
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podaddr"
)

// minIPv6MTU is the smallest MTU the kernel keeps IPv6 on an interface with.
const minIPv6MTU = 1280

// maxPodNetworkWarnings bounds the warnings a Layer2NetworkConfiguration change gets about PodNetworkConfigs.
const maxPodNetworkWarnings = 10

// NetworkAdmitsNamespace is the one rule of who may attach pods to a layer-2 network: the network's
// podNamespaceSelector selects the namespace's labels. Unset admits no namespace; an empty selector ({}) admits
// every namespace. Admission (ValidatePodNetworkConfig), the operator (allocation, status) and the agents ask it.
// A selector that does not parse (admission refuses it) admits none, with the error.
func NetworkAdmitsNamespace(l2 *v1.Layer2NetworkConfiguration, nsLabels map[string]string) (bool, error) {
	if l2 == nil || l2.Spec.PodNamespaceSelector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(l2.Spec.PodNamespaceSelector)
	if err != nil {
		return false, fmt.Errorf("podNamespaceSelector of Layer2NetworkConfiguration %s: %w", l2.Name, err)
	}
	return sel.Matches(labels.Set(nsLabels)), nil
}

// ResolvedPodInterface is an interface of a PodNetworkConfig resolved against its network.
type ResolvedPodInterface struct {
	// Admitted is true for an interface inside the pod (vlan, bridge), and for a veth or macvlan whose network
	// exists and admits the namespace (NetworkAdmitsNamespace).
	Admitted bool
	// Pool is the interface's address pool: nil when it asks for none, is not admitted, or the pool is invalid.
	Pool *podaddr.Pool
	// Errs say why it is not admitted or what is wrong with the pool, naming the fields under path.
	Errs field.ErrorList
}

// ResolvePodInterface resolves one interface (at path) of a PodNetworkConfig in namespace (labels nsLabels)
// against l2, the Layer2NetworkConfiguration its network names (nil: none of that name). Admission and the
// operator's allocator both decide with it, so a pool the webhook admitted is the pool the allocator hands out.
func ResolvePodInterface(path *field.Path, in *v1.PodInterface, namespace string, nsLabels map[string]string,
	l2 *v1.Layer2NetworkConfiguration) ResolvedPodInterface {
	ap := path.Child("addresses")
	if !PodInterfaceJoinsNetwork(in.Type) {
		pool, errs := podaddr.Parse(ap, in.Addresses, nil)
		return ResolvedPodInterface{Admitted: true, Pool: pool, Errs: errs}
	}
	if ok, _ := NetworkAdmitsNamespace(l2, nsLabels); !ok {
		// One message whether the network is missing or does not admit the namespace: a tenant learns nothing
		// about networks it may not use.
		return ResolvedPodInterface{Errs: field.ErrorList{field.Invalid(path.Child("network"), in.Network, fmt.Sprintf(
			"no Layer2NetworkConfiguration %q admits pods of namespace %q: the cluster administrator names the namespaces "+
				"that may use a network in its spec.podNamespaceSelector", in.Network, namespace))}}
	}
	pool, errs := podaddr.Parse(ap, in.Addresses, podaddr.NetworkOf(l2))
	return ResolvedPodInterface{Admitted: true, Pool: pool, Errs: errs}
}

// PodInterfaceJoinsNetwork says whether an interface of the type joins a layer-2 network (veth, macvlan) or is
// inside the pod (vlan, bridge).
func PodInterfaceJoinsNetwork(t v1.PodInterfaceType) bool {
	return t == v1.PodInterfaceVeth || t == v1.PodInterfaceMACVLAN
}

// PodPrimaryInterface is the name of the pod's primary interface: spec.primary.name, default eth0.
func PodPrimaryInterface(spec *v1.PodNetworkConfigSpec) string {
	if spec.Primary != nil && spec.Primary.Name != "" {
		return spec.Primary.Name
	}
	return v1.DefaultPrimaryInterface
}

// ValidatePodNetworkConfig checks a PodNetworkConfig; with a non-nil snapshot also that every network exists and
// admits the namespace (s.NamespaceLabels), that the pools lie in the networks' subnets, and that they overlap no
// other PodNetworkConfig's pool on the same network, in any namespace.
func ValidatePodNetworkConfig(obj *v1.PodNetworkConfig, s *Snapshot) field.ErrorList {
	spec := &obj.Spec
	p := field.NewPath("spec")
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("podSelector"))
	primary := PodPrimaryInterface(spec)
	if spec.Primary != nil {
		errs = append(errs, validatePodPrimary(p.Child("primary"), spec.Primary)...)
	}
	ip := p.Child("interfaces")
	index, podIfaces, nameErrs := indexPodInterfaceNames(ip, spec, primary)
	errs = append(errs, nameErrs...)
	errs = append(errs, validatePodInterfaceKinds(ip, spec, primary, index)...)
	errs = append(errs, validatePodInterfaceCycles(ip, spec, index)...)
	errs = append(errs, validatePodRoutes(p.Child("routes"), spec.Routes, podIfaces)...)
	errs = append(errs, validatePodSysctls(p.Child("sysctls"), spec.Sysctls, podIfaces)...)

	// Networks and pools.
	pools, networks, poolErrs := resolvePodInterfacePools(ip, obj, s)
	errs = append(errs, poolErrs...)
	errs = append(errs, validatePodMTUs(ip, spec, primary, index, pools, networks)...)
	errs = append(errs, validatePodPoolOverlaps(ip, spec, pools)...)
	if s != nil {
		errs = append(errs, s.checkPodPoolOverlaps(ip, obj, pools)...)
	}
	return errs
}

// validatePodPrimary checks the tuning of the primary interface (spec.primary, at pp): its name, MTU and
// transmit queue length.
func validatePodPrimary(pp *field.Path, t *v1.PrimaryInterfaceTuning) field.ErrorList {
	var errs field.ErrorList
	if t.Name != "" {
		errs = append(errs, validatePodInterfaceName(pp.Child("name"), t.Name)...)
	}
	if t.MTU != nil {
		errs = append(errs, validateRange(pp.Child("mtu"), int64(*t.MTU), v1.MinPodMTU, v1.MaxMTU, "MTU")...)
	}
	if t.TxQueueLen != nil {
		errs = append(errs, validateRange(pp.Child("txQueueLen"), int64(*t.TxQueueLen), 0, v1.MaxPodTxQueueLen, "transmit queue length")...)
	}
	return errs
}

// indexPodInterfaceNames checks the names of spec.interfaces (unique, not the primary's) and returns the index of
// each name accepted and the pod's interface names (the primary first, then those accepted).
func indexPodInterfaceNames(ip *field.Path, spec *v1.PodNetworkConfigSpec, primary string) (map[string]int, []string, field.ErrorList) {
	var errs field.ErrorList
	podIfaces := []string{primary}
	index := map[string]int{}
	for i := range spec.Interfaces {
		in := &spec.Interfaces[i]
		np := ip.Index(i).Child("name")
		errs = append(errs, validatePodInterfaceName(np, in.Name)...)
		switch _, dup := index[in.Name]; {
		case in.Name == primary:
			errs = append(errs, field.Invalid(np, in.Name, "is the name of the primary interface (spec.primary.name, default eth0)"))
		case dup:
			errs = append(errs, field.Duplicate(np, in.Name))
		default:
			index[in.Name] = i
			podIfaces = append(podIfaces, in.Name)
		}
	}
	return index, podIfaces, errs
}

// validatePodSysctls checks spec.sysctls (at path) against the allow-list (PodSysctlAllowed), naming the value
// when only the value is wrong, else the name.
func validatePodSysctls(path *field.Path, sysctls []v1.PodSysctl, podIfaces []string) field.ErrorList {
	var errs field.ErrorList
	for i, sc := range sysctls {
		sp := path.Index(i)
		switch err := PodSysctlAllowed(sc.Name, sc.Value, podIfaces); {
		case errors.Is(err, ErrSysctlValue):
			errs = append(errs, field.Invalid(sp.Child("value"), sc.Value, err.Error()))
		case err != nil:
			errs = append(errs, field.Invalid(sp.Child("name"), sc.Name, err.Error()))
		}
	}
	return errs
}

// resolvePodInterfacePools resolves each interface of obj against its network in s (ResolvePodInterface) and
// returns, per interface, its pool and its network (nil where unknown), with the errors of the resolution.
func resolvePodInterfacePools(ip *field.Path, obj *v1.PodNetworkConfig, s *Snapshot) (
	[]*podaddr.Pool, []*v1.Layer2NetworkConfiguration, field.ErrorList) {
	spec := &obj.Spec
	var errs field.ErrorList
	pools := make([]*podaddr.Pool, len(spec.Interfaces))
	networks := make([]*v1.Layer2NetworkConfiguration, len(spec.Interfaces))
	for i := range spec.Interfaces {
		in := &spec.Interfaces[i]
		if PodInterfaceJoinsNetwork(in.Type) && (s == nil || in.Network == "") {
			continue // without the snapshot there is no subnet to check against; a missing network is reported by validatePodInterfaceKinds
		}
		var l2 *v1.Layer2NetworkConfiguration
		if s != nil && PodInterfaceJoinsNetwork(in.Type) {
			l2 = s.layer2(in.Network)
		}
		var nsLabels map[string]string
		if s != nil {
			nsLabels = s.NamespaceLabels[obj.Namespace]
		}
		r := ResolvePodInterface(ip.Index(i), in, obj.Namespace, nsLabels, l2)
		errs = append(errs, r.Errs...)
		pools[i], networks[i] = r.Pool, l2
	}
	return pools, networks, errs
}

// validatePodPoolOverlaps refuses pools of one PodNetworkConfig that overlap each other: each pool is checked
// against those of the interfaces before it.
func validatePodPoolOverlaps(ip *field.Path, spec *v1.PodNetworkConfigSpec, pools []*podaddr.Pool) field.ErrorList {
	var errs field.ErrorList
	for i := range spec.Interfaces {
		for j := range i {
			if pools[i] == nil || pools[j] == nil {
				continue
			}
			if o := pools[i].Overlap(pools[j]); o != nil {
				errs = append(errs, field.Invalid(ip.Index(i).Child("addresses", o.Field).Index(o.Index), o.Value, fmt.Sprintf(
					"overlaps the pool of interface %s: %s; the pools of one PodNetworkConfig must not overlap", spec.Interfaces[j].Name, o.Detail)))
			}
		}
	}
	return errs
}

// validatePodInterfaceName: a Linux interface name the pod can have: not lo, and not all or default (the
// kernel's sysctl directories net.ipv{4,6}.conf.{all,default}, which an interface cannot share).
func validatePodInterfaceName(path *field.Path, name string) field.ErrorList {
	if errs := validateInterfaceName(path, name); len(errs) > 0 {
		return errs
	}
	switch name {
	case "lo", "all", "default":
		return field.ErrorList{field.Invalid(path, name, "is reserved in every network namespace (lo, all, default)")}
	}
	return nil
}

// validatePodInterfaceKinds checks what each interface type needs and allows: veth and macvlan a network; vlan a
// parent interface of the pod and a VLAN id; bridge ports among the other interfaces, each used once.
func validatePodInterfaceKinds(ip *field.Path, spec *v1.PodNetworkConfigSpec, primary string, index map[string]int) field.ErrorList {
	var errs field.ErrorList
	portOf := map[string]string{} // port -> its bridge
	vlans := map[string]int{}     // parent/vlan -> interface index
	for i := range spec.Interfaces {
		in := &spec.Interfaces[i]
		p := ip.Index(i)
		errs = append(errs, validatePodInterfaceTypeFields(p, in)...)
		switch in.Type {
		case v1.PodInterfaceVeth, v1.PodInterfaceMACVLAN:
			errs = append(errs, validatePodNetworkInterface(p, in)...)
			continue
		case v1.PodInterfaceVLAN:
			errs = append(errs, validatePodVLAN(ip, spec, i, primary, index, vlans)...)
		case v1.PodInterfaceBridge:
			errs = append(errs, validatePodBridgePorts(ip, spec, i, primary, index, portOf)...)
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), in.Type, []v1.PodInterfaceType{
				v1.PodInterfaceVeth, v1.PodInterfaceMACVLAN, v1.PodInterfaceVLAN, v1.PodInterfaceBridge}))
			continue
		}
		if in.Network != "" {
			errs = append(errs, field.Invalid(p.Child("network"), in.Network, fmt.Sprintf(
				"only for types veth and macvlan: a %s interface is inside the pod", in.Type)))
		}
	}
	return errs
}

// otherPodInterfaces lists, for messages, the names of spec.interfaces other than self ("none" when there are none).
func otherPodInterfaces(spec *v1.PodNetworkConfigSpec, self string) string {
	var names []string
	for _, in := range spec.Interfaces {
		if in.Name != self {
			names = append(names, in.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// validatePodInterfaceTypeFields refuses the fields of another type that interface in (at p) sets: macvlanMode
// only for macvlan, parent and vlan only for vlan, ports only for bridge.
func validatePodInterfaceTypeFields(p *field.Path, in *v1.PodInterface) field.ErrorList {
	var errs field.ErrorList
	only := func(path *field.Path, value any, set bool, t v1.PodInterfaceType) {
		if set {
			errs = append(errs, field.Invalid(path, value, "only for type "+string(t)))
		}
	}
	if in.Type != v1.PodInterfaceMACVLAN {
		only(p.Child("macvlanMode"), in.MACVLANMode, in.MACVLANMode != "", v1.PodInterfaceMACVLAN)
	}
	if in.Type != v1.PodInterfaceVLAN {
		only(p.Child("parent"), in.Parent, in.Parent != "", v1.PodInterfaceVLAN)
		only(p.Child("vlan"), int64(in.VLAN), in.VLAN != 0, v1.PodInterfaceVLAN)
	}
	if in.Type != v1.PodInterfaceBridge {
		only(p.Child("ports"), in.Ports, len(in.Ports) > 0, v1.PodInterfaceBridge)
	}
	return errs
}

// validatePodNetworkInterface checks a veth or macvlan interface (at p): it names its network, and a macvlan's
// mode is a supported one.
func validatePodNetworkInterface(p *field.Path, in *v1.PodInterface) field.ErrorList {
	var errs field.ErrorList
	if in.Network == "" {
		errs = append(errs, field.Required(p.Child("network"), fmt.Sprintf("the Layer2NetworkConfiguration a %s interface joins", in.Type)))
	}
	if in.Type == v1.PodInterfaceMACVLAN && in.MACVLANMode != "" && !slices.Contains(
		[]v1.MACVLANMode{v1.MACVLANBridge, v1.MACVLANPrivate, v1.MACVLANVEPA, v1.MACVLANPassthru}, in.MACVLANMode) {
		errs = append(errs, field.NotSupported(p.Child("macvlanMode"), in.MACVLANMode,
			[]v1.MACVLANMode{v1.MACVLANBridge, v1.MACVLANPrivate, v1.MACVLANVEPA, v1.MACVLANPassthru}))
	}
	return errs
}

// validatePodVLAN checks vlan interface i: its parent is another interface of the pod, its VLAN id is in range,
// and no other interface is the same VLAN on the same parent (vlans: parent/vlan -> interface index, updated).
func validatePodVLAN(ip *field.Path, spec *v1.PodNetworkConfigSpec, i int, primary string, index map[string]int,
	vlans map[string]int) field.ErrorList {
	var errs field.ErrorList
	in := &spec.Interfaces[i]
	p := ip.Index(i)
	pp := p.Child("parent")
	_, isIface := index[in.Parent]
	switch {
	case in.Parent == "":
		errs = append(errs, field.Required(pp, fmt.Sprintf("the pod interface the VLAN sits on: the primary interface %s or one of spec.interfaces", primary)))
	case in.Parent == in.Name:
		errs = append(errs, field.Invalid(pp, in.Parent, "a VLAN interface cannot be its own parent"))
	case in.Parent != primary && !isIface:
		errs = append(errs, field.Invalid(pp, in.Parent, fmt.Sprintf(
			"not an interface of the pod: the primary interface %s or one of spec.interfaces (%s)", primary, otherPodInterfaces(spec, in.Name))))
	}
	vp := p.Child("vlan")
	switch {
	case in.VLAN == 0:
		errs = append(errs, field.Required(vp, fmt.Sprintf("the 802.1Q VLAN id, %d..%d", v1.MinVLAN, v1.MaxVLAN)))
	default:
		errs = append(errs, validateRange(vp, int64(in.VLAN), v1.MinVLAN, v1.MaxVLAN, "VLAN id")...)
	}
	key := fmt.Sprintf("%s/%d", in.Parent, in.VLAN)
	if j, dup := vlans[key]; dup && in.Parent != "" && in.VLAN != 0 {
		errs = append(errs, field.Invalid(vp, int64(in.VLAN), fmt.Sprintf(
			"interface %s already is VLAN %d on %s", spec.Interfaces[j].Name, in.VLAN, in.Parent)))
	} else {
		vlans[key] = i
	}
	return errs
}

// validatePodBridgePorts checks the ports of bridge interface i: each once, another non-bridge interface of
// spec.interfaces (not the primary), not a port of another bridge (portOf: port -> its bridge, updated), and
// without addresses of its own.
func validatePodBridgePorts(ip *field.Path, spec *v1.PodNetworkConfigSpec, i int, primary string, index map[string]int,
	portOf map[string]string) field.ErrorList {
	var errs field.ErrorList
	in := &spec.Interfaces[i]
	p := ip.Index(i)
	seen := map[string]bool{}
	for k, port := range in.Ports {
		pp := p.Child("ports").Index(k)
		j, isIface := index[port]
		switch {
		case seen[port]:
			errs = append(errs, field.Duplicate(pp, port))
		case port == in.Name:
			errs = append(errs, field.Invalid(pp, port, "a bridge cannot be its own port"))
		case port == primary:
			errs = append(errs, field.Invalid(pp, port, "is the primary interface, which belongs to the cluster's CNI: it cannot be a bridge port"))
		case !isIface:
			errs = append(errs, field.Invalid(pp, port, fmt.Sprintf("not an interface of spec.interfaces (%s)", otherPodInterfaces(spec, in.Name))))
		case spec.Interfaces[j].Type == v1.PodInterfaceBridge:
			errs = append(errs, field.Invalid(pp, port, "is a bridge: the kernel does not enslave a bridge to a bridge"))
		case portOf[port] != "":
			errs = append(errs, field.Invalid(pp, port, fmt.Sprintf("already a port of bridge %s", portOf[port])))
		default:
			portOf[port] = in.Name
			if spec.Interfaces[j].Addresses != nil {
				errs = append(errs, field.Invalid(ip.Index(j).Child("addresses"), port, fmt.Sprintf(
					"a bridge port carries no addresses: give them to bridge %s", in.Name)))
			}
		}
		seen[port] = true
	}
	return errs
}

// validatePodInterfaceCycles refuses interfaces that depend on each other in a circle (a vlan on its parent, a
// bridge on its ports): the agent creates them in dependency order and removes them in reverse.
func validatePodInterfaceCycles(ip *field.Path, spec *v1.PodNetworkConfigSpec, index map[string]int) field.ErrorList {
	type edge struct {
		to   int
		path *field.Path
		name string
	}
	deps := make([][]edge, len(spec.Interfaces))
	for i, in := range spec.Interfaces {
		switch in.Type {
		case v1.PodInterfaceVLAN:
			if j, ok := index[in.Parent]; ok && in.Parent != in.Name {
				deps[i] = append(deps[i], edge{j, ip.Index(i).Child("parent"), in.Parent})
			}
		case v1.PodInterfaceBridge:
			for k, port := range in.Ports {
				if j, ok := index[port]; ok && port != in.Name {
					deps[i] = append(deps[i], edge{j, ip.Index(i).Child("ports").Index(k), port})
				}
			}
		}
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(spec.Interfaces))
	var stack []int
	var cycle *field.Error
	var visit func(i int)
	visit = func(i int) {
		state[i] = visiting
		stack = append(stack, i)
		for _, e := range deps[i] {
			if cycle != nil {
				return
			}
			switch state[e.to] {
			case visiting:
				var names []string
				for _, k := range stack[slices.Index(stack, e.to):] {
					names = append(names, spec.Interfaces[k].Name)
				}
				names = append(names, e.name)
				cycle = field.Invalid(e.path, e.name, "dependency cycle: "+strings.Join(names, " -> "))
			case unseen:
				visit(e.to)
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range spec.Interfaces {
		if state[i] == unseen && cycle == nil {
			visit(i)
		}
	}
	if cycle != nil {
		return field.ErrorList{cycle}
	}
	return nil
}

// validatePodMTUs: every MTU within v1.MinPodMTU..v1.MaxMTU; a veth or macvlan not above its network's MTU, a
// VLAN not above its parent's (where known); at least 1280 on an interface with an IPv6 pool.
func validatePodMTUs(ip *field.Path, spec *v1.PodNetworkConfigSpec, primary string, index map[string]int,
	pools []*podaddr.Pool, networks []*v1.Layer2NetworkConfiguration) field.ErrorList {
	var errs field.ErrorList
	// mtu is an interface's MTU where the spec says it: its own, else its network's (veth, macvlan); 0: unknown.
	mtu := func(name string) int32 {
		if name == primary {
			if spec.Primary != nil && spec.Primary.MTU != nil {
				return *spec.Primary.MTU
			}
			return 0
		}
		i, ok := index[name]
		if !ok {
			return 0
		}
		if m := spec.Interfaces[i].MTU; m != nil {
			return *m
		}
		if networks[i] != nil {
			return networks[i].Spec.MTU
		}
		return 0
	}
	for i := range spec.Interfaces {
		in := &spec.Interfaces[i]
		mp := ip.Index(i).Child("mtu")
		if in.MTU != nil {
			m := *in.MTU
			if rerrs := validateRange(mp, int64(m), v1.MinPodMTU, v1.MaxMTU, "MTU"); len(rerrs) > 0 {
				errs = append(errs, rerrs...)
				continue
			}
			if l2 := networks[i]; l2 != nil && l2.Spec.MTU > 0 && m > l2.Spec.MTU {
				errs = append(errs, field.Invalid(mp, int64(m), fmt.Sprintf("above the MTU %d of network %q", l2.Spec.MTU, l2.Name)))
			}
			if in.Type == v1.PodInterfaceVLAN {
				if pm := mtu(in.Parent); pm > 0 && m > pm {
					errs = append(errs, field.Invalid(mp, int64(m), fmt.Sprintf("above the MTU %d of its parent %s", pm, in.Parent)))
				}
			}
		}
		if m := mtu(in.Name); m > 0 && m < minIPv6MTU && pools[i] != nil && pools[i].Has(podaddr.IPv6) {
			errs = append(errs, field.Invalid(mp, int64(m), fmt.Sprintf(
				"the interface has an IPv6 pool, and the kernel turns IPv6 off below an MTU of %d", minIPv6MTU)))
		}
	}
	return errs
}

// validatePodRoutes: a destination CIDR (or default / default6), a gateway of the destination's family, an
// interface of the pod; each destination once.
func validatePodRoutes(path *field.Path, routes []v1.PodRoute, podIfaces []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[netip.Prefix]bool{}
	for i, r := range routes {
		rp := path.Index(i)
		var dst netip.Prefix
		switch r.Destination {
		case "default":
			dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		case "default6":
			dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		default:
			var ferr *field.Error
			if dst, ferr = parseNetwork(rp.Child("destination"), r.Destination); ferr != nil {
				ferr.Detail += "; or default (IPv4) / default6 (IPv6)"
				errs = append(errs, ferr)
			}
		}
		if dst.IsValid() {
			if seen[dst] {
				errs = append(errs, field.Duplicate(rp.Child("destination"), r.Destination))
			}
			seen[dst] = true
		}
		if r.Gateway != "" {
			gp := rp.Child("gateway")
			gw, err := netip.ParseAddr(r.Gateway)
			switch {
			case err != nil || gw.Zone() != "":
				errs = append(errs, field.Invalid(gp, r.Gateway, "not an IP address"))
			case gw.Is4In6():
				errs = append(errs, field.Invalid(gp, r.Gateway, "IPv4-mapped IPv6 address: write the IPv4 form"))
			case gw.IsUnspecified() || gw.IsMulticast() || gw.IsLoopback():
				errs = append(errs, field.Invalid(gp, r.Gateway, "not a unicast address a next hop can have"))
			case dst.IsValid() && gw.BitLen() != dst.Addr().BitLen():
				errs = append(errs, field.Invalid(gp, r.Gateway, fmt.Sprintf("another IP family than the destination %s", r.Destination)))
			}
		}
		switch {
		case r.Interface != "" && !slices.Contains(podIfaces, r.Interface):
			errs = append(errs, field.Invalid(rp.Child("interface"), r.Interface, fmt.Sprintf(
				"not an interface of the pod (%s)", strings.Join(podIfaces, ", "))))
		case r.Interface == "" && r.Gateway == "":
			errs = append(errs, field.Required(rp.Child("interface"), "an on-link route needs its interface (or write a gateway)"))
		}
	}
	return errs
}

// Errors of PodSysctlAllowed.
var (
	// ErrSysctlNotAllowed: the sysctl is not in the allow-list (or names an interface the pod does not have).
	ErrSysctlNotAllowed = errors.New("not in the allow-list of pod sysctls")
	// ErrSysctlValue: the sysctl is allowed, the value is not one it takes.
	ErrSysctlValue = errors.New("not a value this sysctl takes")
)

const podSysctlAllowList = "net.ipv4.conf.<if>.{rp_filter,accept_redirects,send_redirects,arp_ignore,arp_announce,forwarding,proxy_arp}, " +
	"net.ipv6.conf.<if>.{accept_ra,forwarding,disable_ipv6,autoconf} (<if>: an interface of the pod, all or default), " +
	"net.ipv4.ip_forward, net.ipv4.ip_local_port_range, net.ipv4.ping_group_range"

// PodSysctlAllowed is the allow-list of the sysctls a PodNetworkConfig may set in a pod's network namespace: all
// are per network namespace, none changes the host. name is in dotted form; an interface name in it may hold
// dots (net.ipv4.conf.net1.100.rp_filter is interface net1.100). podInterfaces are the pod's interface names.
// It returns an error wrapping ErrSysctlNotAllowed or ErrSysctlValue, saying what is allowed.
func PodSysctlAllowed(name, value string, podInterfaces []string) error {
	if strings.Contains(name, "/") {
		return fmt.Errorf("%w: write the dotted form (net.ipv4.conf.net1.rp_filter); allowed are %s", ErrSysctlNotAllowed, podSysctlAllowList)
	}
	var lo, hi int64
	var pair bool
	var key string
	switch name {
	case "net.ipv4.ip_forward":
		lo, hi = 0, 1
	case "net.ipv4.ip_local_port_range":
		// The kernel refuses a low port below net.ipv4.ip_unprivileged_port_start (1024 by default).
		lo, hi, pair = 1024, 65535, true
	case "net.ipv4.ping_group_range":
		lo, hi, pair = 0, 2147483647, true
	default:
		var ok bool
		var iface string
		if iface, key, lo, hi, ok = podConfSysctl(name); !ok {
			return fmt.Errorf("%w: %s", ErrSysctlNotAllowed, podSysctlAllowList)
		}
		if iface != "all" && iface != "default" && !slices.Contains(podInterfaces, iface) {
			return fmt.Errorf("%w: %s is not an interface of the pod (%s) nor all or default", ErrSysctlNotAllowed,
				iface, strings.Join(podInterfaces, ", "))
		}
	}
	fields := strings.Fields(value)
	switch {
	case pair && len(fields) != 2:
		return fmt.Errorf("%w: write two numbers within %d..%d, low then high (\"32768 60999\")", ErrSysctlValue, lo, hi)
	case !pair && len(fields) != 1:
		return fmt.Errorf("%w: write a number within %d..%d", ErrSysctlValue, lo, hi)
	}
	var nums []int64
	for _, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%w: %q is not a number within %d..%d", ErrSysctlValue, f, lo, hi)
		}
		nums = append(nums, n)
	}
	if pair && nums[0] > nums[1] {
		return fmt.Errorf("%w: the low end %d is above the high end %d", ErrSysctlValue, nums[0], nums[1])
	}
	if key == "arp_ignore" && nums[0] > 3 && nums[0] != 8 {
		return fmt.Errorf("%w: arp_ignore takes 0..3 or 8", ErrSysctlValue)
	}
	return nil
}

// podConfSysctl parses net.ipv4.conf.<if>.<key> and net.ipv6.conf.<if>.<key> of the allow-list: the interface,
// the key and the values it takes.
func podConfSysctl(name string) (iface, key string, lo, hi int64, ok bool) {
	for _, fam := range []string{"net.ipv4.conf.", "net.ipv6.conf."} {
		rest, found := strings.CutPrefix(name, fam)
		if !found {
			continue
		}
		dot := strings.LastIndexByte(rest, '.')
		if dot <= 0 {
			return "", "", 0, 0, false
		}
		iface, key = rest[:dot], rest[dot+1:]
		if fam == "net.ipv4.conf." {
			switch key {
			case "rp_filter", "arp_announce":
				return iface, key, 0, 2, true
			case "arp_ignore":
				return iface, key, 0, 8, true
			case "accept_redirects", "send_redirects", "forwarding", "proxy_arp":
				return iface, key, 0, 1, true
			}
			return "", "", 0, 0, false
		}
		switch key {
		case "accept_ra":
			return iface, key, 0, 2, true
		case "forwarding", "disable_ipv6", "autoconf":
			return iface, key, 0, 1, true
		}
	}
	return "", "", 0, 0, false
}

// layer2 is the snapshot's Layer2NetworkConfiguration of that name, or nil.
func (s *Snapshot) layer2(name string) *v1.Layer2NetworkConfiguration {
	for i := range s.Layer2Networks {
		if s.Layer2Networks[i].Name == name {
			return &s.Layer2Networks[i]
		}
	}
	return nil
}

// checkPodPoolOverlaps refuses pools that overlap a pool of another PodNetworkConfig (any namespace) on the same
// network: two pods would get the same address.
func (s *Snapshot) checkPodPoolOverlaps(ip *field.Path, obj *v1.PodNetworkConfig, pools []*podaddr.Pool) field.ErrorList {
	var errs field.ErrorList
	for i := range obj.Spec.Interfaces {
		in := &obj.Spec.Interfaces[i]
		if pools[i] == nil || !PodInterfaceJoinsNetwork(in.Type) {
			continue
		}
		net := podaddr.NetworkOf(s.layer2(in.Network))
	others:
		for j := range s.PodNetworkConfigs {
			o := &s.PodNetworkConfigs[j]
			if o.Namespace == obj.Namespace && o.Name == obj.Name {
				continue
			}
			for k := range o.Spec.Interfaces {
				oi := &o.Spec.Interfaces[k]
				if oi.Network != in.Network || !PodInterfaceJoinsNetwork(oi.Type) {
					continue
				}
				op, _ := podaddr.Parse(field.NewPath("other"), oi.Addresses, net)
				if op == nil {
					continue
				}
				if ov := pools[i].Overlap(op); ov != nil {
					errs = append(errs, field.Invalid(ip.Index(i).Child("addresses", ov.Field).Index(ov.Index), ov.Value, fmt.Sprintf(
						"overlaps the pool of PodNetworkConfig %s/%s (interface %s) on network %q: %s; the pools on one network must not overlap",
						o.Namespace, o.Name, oi.Name, in.Network, ov.Detail)))
					continue others
				}
			}
		}
	}
	return errs
}

// PodNetworkWarnings are the admission warnings of a change of a Layer2NetworkConfiguration for the
// PodNetworkConfigs on it (s.PodNetworkConfigs, s.NamespaceLabels): those whose namespace it no longer admits and
// those whose pool no longer fits its subnets. The change is admitted - the cluster administrator may withdraw a
// network - and the operator reports them in their status (condition Allocated) and frees their addresses; the
// agents remove the interface from their pods.
func PodNetworkWarnings(l2 *v1.Layer2NetworkConfiguration, s *Snapshot) []string {
	var out []string
	for i := range s.PodNetworkConfigs {
		o := &s.PodNetworkConfigs[i]
		for k := range o.Spec.Interfaces {
			in := &o.Spec.Interfaces[k]
			if in.Network != l2.Name || !PodInterfaceJoinsNetwork(in.Type) {
				continue
			}
			r := ResolvePodInterface(field.NewPath("spec", "interfaces").Index(k), in, o.Namespace, s.NamespaceLabels[o.Namespace], l2)
			switch {
			case !r.Admitted:
				out = append(out, fmt.Sprintf("PodNetworkConfig %s/%s, interface %s: spec.podNamespaceSelector no longer admits namespace %q: "+
					"its pods lose the interface", o.Namespace, o.Name, in.Name, o.Namespace))
			case len(r.Errs) > 0:
				out = append(out, fmt.Sprintf("PodNetworkConfig %s/%s, interface %s: its address pool no longer fits the network: %s",
					o.Namespace, o.Name, in.Name, r.Errs[0].Error()))
			}
		}
	}
	slices.Sort(out)
	if len(out) > maxPodNetworkWarnings {
		out = append(out[:maxPodNetworkWarnings], fmt.Sprintf("and %d more PodNetworkConfig interfaces", len(out)-maxPodNetworkWarnings))
	}
	return out
}
