package nodenet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/api/v1alpha1"
)

// linkRank orders a node's Links so that every Link comes after those it refers to: unmanaged interfaces and
// bridges (which refer to nothing) before VXLANs (whose device is a bridge or unmanaged, whose master a bridge).
// The planner creates bridges before bridge ports and deletes in reverse; this order makes the desired list read
// the same way.
func linkRank(l v1alpha1.NodeLink) int {
	switch {
	case l.Unmanaged != nil:
		return 0
	case l.Bridge != nil:
		return 1
	}
	return 2
}

// addLinks adds the node's Links (NodeLink): a bridge or VXLAN each, marked with the Link's name (RoleLink), or,
// for an unmanaged one, nothing but a note: the node has the interface, nodenet never changes it. A VXLAN's local
// address is the node's VTEP; it floods as a layer-2 network does (builder.flooding: static or EVPN). A reference
// must name a Link of the spec of the right kind: device a bridge or unmanaged one, master a bridge.
func (b *builder) addLinks(links []v1alpha1.NodeLink) error {
	links = slices.Clone(links)
	slices.SortFunc(links, func(a, c v1alpha1.NodeLink) int {
		return cmp.Or(cmp.Compare(linkRank(a), linkRank(c)), strings.Compare(a.Name, c.Name))
	})
	kinds := map[string]LinkKind{} // interface name -> kind ("" for unmanaged)
	for _, l := range links {
		owner := field.NewPath("links").Key(l.Name)
		if l.Name == "" || strings.ContainsAny(l.Name, " \t\n") {
			return invalid(owner.Child("name"), l.Name, "empty or contains white space")
		}
		if n := btoi(l.Bridge != nil) + btoi(l.VXLAN != nil) + btoi(l.Unmanaged != nil); n != 1 {
			return invalid(owner, n, "exactly one of bridge, vxlan and unmanaged must be set")
		}
		if err := b.claim(l.InterfaceName, owner.Child("interfaceName")); err != nil {
			return err
		}
		if l.InterfaceName == "" || strings.ContainsAny(l.InterfaceName, "/: \t\n") {
			return invalid(owner.Child("interfaceName"), l.InterfaceName, "not an interface name")
		}
		switch {
		case l.Unmanaged != nil:
			kinds[l.InterfaceName] = ""
			b.d.Notes = append(b.d.Notes, fmt.Sprintf("%s: %s is unmanaged: referred to, never changed", owner, l.InterfaceName))
		case l.Bridge != nil:
			mtu, err := b.linkMTU(l.Bridge.MTU, owner.Child("bridge", "mtu"))
			if err != nil {
				return err
			}
			kinds[l.InterfaceName] = KindBridge
			b.addLink(LinkSpec{Name: l.InterfaceName, Kind: KindBridge, Alias: Alias(RoleLink, l.Name), MTU: mtu})
		default:
			if err := b.addVXLANLink(l, owner, kinds); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *builder) addVXLANLink(l v1alpha1.NodeLink, owner *field.Path, kinds map[string]LinkKind) error {
	x, path := l.VXLAN, owner.Child("vxlan")
	if err := b.claimVNI(x.VNI, path); err != nil {
		return err
	}
	if x.Port < 1 || x.Port > 65535 {
		return invalid(path.Child("port"), x.Port, "must be within 1..65535")
	}
	mtu, err := b.linkMTU(x.MTU, path.Child("mtu"))
	if err != nil {
		return err
	}
	if k, ok := kinds[x.Device]; x.Device != "" && (!ok || k != "" && k != KindBridge) {
		return invalid(path.Child("device"), x.Device, "not the interface of a bridge or unmanaged Link of the spec")
	}
	if k, ok := kinds[x.Master]; x.Master != "" && (!ok || k != KindBridge) {
		return invalid(path.Child("master"), x.Master, "not the interface of a bridge Link of the spec")
	}
	vx, flood, err := b.flooding(path.Child("flooding"), x.Flooding,
		&VXLANSpec{VNI: uint32(x.VNI), Local: b.local, Port: int(x.Port), Dev: x.Device})
	if err != nil {
		return err
	}
	ls := LinkSpec{Name: l.InterfaceName, Kind: KindVXLAN, Alias: Alias(RoleLink, l.Name), MTU: mtu, Master: x.Master,
		VXLAN: vx, Flood: flood}
	if x.Master != "" {
		ls.Port = &PortFlags{Learning: vx.Learning} // learning only with static flooding; EVPN's come from zebra
	}
	b.addLink(ls)
	return nil
}

// linkMTU checks a Link's MTU: 0 leaves the kernel's as it is.
func (b *builder) linkMTU(mtu int32, path *field.Path) (int, error) {
	if mtu == 0 {
		return 0, nil
	}
	return b.mtu(mtu, path)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
