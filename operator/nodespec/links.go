package nodespec

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
)

// buildLinks returns the Links the node is selected by, sorted by name, with their references resolved to the
// interface names of the Links they name and their flooding as for a layer-2 network (staticFlooding; vtep is the
// node's VTEP address). A reference to a Link the node does not have, two Links with one interface name or VNI
// on the node, cannot be built (the hold-back already left out references to Links that do not exist or are of
// the wrong kind).
func buildLinks(items []v1.LinkRevision, nodeLabels labels.Set, vtep string) ([]v1.NodeLink, field.ErrorList) {
	var errs field.ErrorList
	selected := map[string]*v1.LinkRevision{}
	for i := range items {
		it := &items[i]
		ok, ferr := selects(field.NewPath("link").Key(it.Name).Child("nodeSelector"), it.NodeSelector, nodeLabels)
		if ferr != nil {
			errs = append(errs, ferr)
		}
		if ok {
			selected[it.Name] = it
		}
	}
	var out []v1.NodeLink
	byInterface, byVNI := map[string]string{}, map[int32]string{}
	for i := range items {
		it := selected[items[i].Name]
		if it == nil {
			continue
		}
		f := field.NewPath("link").Key(it.Name)
		if prev, dup := byInterface[it.InterfaceName]; dup {
			errs = append(errs, field.Invalid(f.Child("interfaceName"), it.InterfaceName,
				fmt.Sprintf("also the interface of Link %q on this node", prev)))
			continue
		}
		byInterface[it.InterfaceName] = it.Name
		nl := v1.NodeLink{Name: it.Name, InterfaceName: it.InterfaceName, Bridge: it.Bridge.DeepCopy(), Unmanaged: it.Unmanaged.DeepCopy()}
		if x := it.VXLAN; x != nil {
			if prev, dup := byVNI[x.VNID]; dup {
				errs = append(errs, field.Invalid(f.Child("vxlan", "vnid"), x.VNID, fmt.Sprintf("also the VNI of Link %q on this node", prev)))
				continue
			}
			byVNI[x.VNID] = it.Name
			nx := &v1.NodeVXLANLink{VNI: x.VNID, Port: cmp.Or(x.Port, v1.VXLANDefaultPort), MTU: x.MTU}
			var ferrs field.ErrorList
			nx.Flooding, ferrs = staticFlooding(f.Child("vxlan", "flooding"), x.Flooding, vtep)
			for _, r := range validation.LinkRefs(&it.LinkSpec) {
				target := selected[r.Name]
				rp := f.Child("vxlan", r.Field, "name")
				switch {
				case target == nil:
					ferrs = append(ferrs, field.Invalid(rp, r.Name, "no Link of that name is on this node (its nodeSelector leaves the node out)"))
				case validation.LinkRefKindError(r, validation.LinkKind(&target.LinkSpec)) != "":
					ferrs = append(ferrs, field.Invalid(rp, r.Name, validation.LinkRefKindError(r, validation.LinkKind(&target.LinkSpec))))
				case r.Field == "device":
					nx.Device = target.InterfaceName
				default:
					nx.Master = target.InterfaceName
				}
			}
			if len(ferrs) > 0 {
				errs = append(errs, ferrs...)
				continue
			}
			nl.VXLAN = nx
		}
		out = append(out, nl)
	}
	slices.SortFunc(out, func(a, b v1.NodeLink) int { return cmp.Compare(a.Name, b.Name) })
	return out, errs
}

// holdLinks removes the Links whose references do not resolve within the snapshot: a Link that does not exist
// (or is held back itself), or one of the wrong kind (validation.LinkRefKindError).
func holdLinks(rev *v1.NetworkConfigRevisionSpec) []Held {
	var held []Held
	links := map[string]*v1.LinkSpec{}
	for i := range rev.Links {
		links[rev.Links[i].Name] = &rev.Links[i].LinkSpec
	}
	rev.Links = slices.DeleteFunc(rev.Links, func(l v1.LinkRevision) bool {
		for _, r := range validation.LinkRefs(&l.LinkSpec) {
			reason := ""
			if t := links[r.Name]; t == nil {
				reason = fmt.Sprintf("%s: Link %q does not exist or is held back", r.Field, r.Name)
			} else if msg := validation.LinkRefKindError(r, validation.LinkKind(t)); msg != "" {
				reason = r.Field + ": " + msg
			}
			if reason != "" {
				held = append(held, Held{v1.KindLink, l.Name, reason})
				return true
			}
		}
		return false
	})
	return held
}
