package nodespec

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// buildRoutingTables: every RoutingTable is on every node (das-schiff's RoutingTable has no node selector).
func buildRoutingTables(items []v1.RoutingTableRevision) []v1.NodeRoutingTable {
	var out []v1.NodeRoutingTable
	for i := range items {
		t := v1.NodeRoutingTable{Name: items[i].VRFName(), TableID: items[i].TableID}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b v1.NodeRoutingTable) int { return cmp.Compare(a.TableID, b.TableID) })
	return out
}

// buildMirrors resolves every MirrorSelector whose source is on the node with its MirrorTarget. A selector
// whose source (Layer2 network or VRF) is not on the node is skipped, as in das-schiff. One whose target's VRF
// or loopback is missing on the node cannot work there: that is an error (the operator holds such selectors
// back before a revision is made, so it only happens when node selectors differ).
func buildMirrors(rev *v1.NetworkConfigRevisionSpec, vrfs []v1.NodeVRF, l2s []v1.NodeLayer2) ([]v1.NodeMirror, field.ErrorList) {
	targets := make(map[string]*v1.MirrorTargetRevision, len(rev.MirrorTargets))
	for i := range rev.MirrorTargets {
		targets[rev.MirrorTargets[i].Name] = &rev.MirrorTargets[i]
	}
	vrfOfConfig := make(map[string]string, len(rev.VRF))
	for i := range rev.VRF {
		vrfOfConfig[rev.VRF[i].Name] = rev.VRF[i].VRF
	}
	vrfByName := make(map[string]*v1.NodeVRF, len(vrfs))
	for i := range vrfs {
		vrfByName[vrfs[i].Name] = &vrfs[i]
	}
	var errs field.ErrorList
	var out []v1.NodeMirror
	for i := range rev.MirrorSelectors {
		sel := &rev.MirrorSelectors[i]
		f := field.NewPath("mirrorSelector").Key(sel.Name)
		m := v1.NodeMirror{Name: sel.Name, Direction: sel.Direction, Match: *sel.TrafficMatch.DeepCopy()}
		switch src := sel.MirrorSource; src.Kind {
		case v1.KindLayer2NetworkConfiguration:
			if !slices.ContainsFunc(l2s, func(l v1.NodeLayer2) bool { return l.Name == src.Name }) {
				continue
			}
			m.Layer2 = src.Name
		case v1.KindVRFRouteConfiguration:
			vrf, ok := vrfOfConfig[src.Name]
			if !ok || vrfByName[vrf] == nil {
				continue
			}
			m.VRF = vrf
		default:
			errs = append(errs, field.NotSupported(f.Child("mirrorSource", "kind"), src.Kind,
				[]string{v1.KindLayer2NetworkConfiguration, v1.KindVRFRouteConfiguration}))
			continue
		}
		t := targets[sel.MirrorTarget.Name]
		if t == nil {
			errs = append(errs, field.Invalid(f.Child("mirrorTarget", "name"), sel.MirrorTarget.Name, "not a MirrorTarget of the revision"))
			continue
		}
		tv := vrfByName[t.DestinationVrf]
		switch {
		case tv == nil:
			errs = append(errs, field.Invalid(field.NewPath("mirrorTarget").Key(t.Name).Child("destinationVrf"), t.DestinationVrf,
				fmt.Sprintf("VRF not configured on this node, where MirrorSelector %q mirrors", sel.Name)))
			continue
		case !slices.ContainsFunc(tv.Loopbacks, func(l v1.NodeLoopback) bool { return l.Name == t.SourceLoopback }):
			errs = append(errs, field.Invalid(field.NewPath("mirrorTarget").Key(t.Name).Child("sourceLoopback"), t.SourceLoopback,
				fmt.Sprintf("VRF %q has no such loopback on this node", t.DestinationVrf)))
			continue
		}
		m.Target = v1.NodeMirrorTarget{Name: t.Name, Type: t.Type, DestinationIP: t.DestinationIP, Key: t.TunnelKey,
			VRF: t.DestinationVrf, SourceLoopback: t.SourceLoopback}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b v1.NodeMirror) int { return cmp.Compare(a.Name, b.Name) })
	return out, errs
}
