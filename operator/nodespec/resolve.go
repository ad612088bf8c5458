package nodespec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Held is a user object left out of a revision because something it references does not exist yet.
type Held struct {
	Kind, Name string
	// Reason says what is missing, e.g. `VRF "blue" is not defined by any VRFRouteConfiguration`.
	Reason string
}

// HoldBack removes from the snapshot every object whose references cannot be resolved within it, and returns
// them sorted by kind and name. Objects may be applied in any order (kubectl apply -f dir/): a Layer2 network
// admitted before its VRF waits here instead of making a revision that would fail on every node, and enters
// the next revision once the VRF exists. Removing one object may leave another dangling (a BGPPeering on a held
// network), so it repeats until nothing changes.
func HoldBack(rev *v1.NetworkConfigRevisionSpec) []Held {
	var held []Held
	for {
		n := len(held)
		held = append(held, holdOnce(rev)...)
		if len(held) == n {
			break
		}
	}
	slices.SortFunc(held, func(a, b Held) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
	return held
}

func holdOnce(rev *v1.NetworkConfigRevisionSpec) []Held {
	var held []Held
	vrfs := map[string]*v1.VRFRevision{} // VRF name -> a configuration of it
	vrfConfigs := map[string]bool{}
	loopbacks := map[string]bool{} // "vrf/loopback"
	for i := range rev.VRF {
		vrfs[rev.VRF[i].VRF] = &rev.VRF[i]
		vrfConfigs[rev.VRF[i].Name] = true
		for _, lo := range rev.VRF[i].Loopbacks {
			loopbacks[rev.VRF[i].VRF+"/"+lo.Name] = true
		}
	}
	rev.Layer2 = slices.DeleteFunc(rev.Layer2, func(l v1.Layer2Revision) bool {
		if l.VRF == "" || noVNIVRF(l.VRF) || vrfs[l.VRF] != nil {
			return false
		}
		held = append(held, Held{v1.KindLayer2NetworkConfiguration, l.Name,
			fmt.Sprintf("VRF %q is not defined by any VRFRouteConfiguration", l.VRF)})
		return true
	})
	l2s := map[string]*v1.Layer2Revision{}
	for i := range rev.Layer2 {
		l2s[rev.Layer2[i].Name] = &rev.Layer2[i]
	}
	rev.BGP = slices.DeleteFunc(rev.BGP, func(b v1.BGPRevision) bool {
		if b.PeeringVlan == nil {
			return false
		}
		reason := ""
		switch l2 := l2s[b.PeeringVlan.Name]; {
		case l2 == nil:
			reason = fmt.Sprintf("peeringVlan: Layer2NetworkConfiguration %q does not exist or is held back", b.PeeringVlan.Name)
		case len(l2.AnycastGateways) == 0:
			reason = fmt.Sprintf("peeringVlan: Layer2NetworkConfiguration %q has no anycastGateways to listen on", b.PeeringVlan.Name)
		default:
			return false
		}
		held = append(held, Held{"BGPPeering", b.Name, reason})
		return true
	})
	rev.MirrorTargets = slices.DeleteFunc(rev.MirrorTargets, func(t v1.MirrorTargetRevision) bool {
		reason := ""
		switch {
		case vrfs[t.DestinationVrf] == nil:
			reason = fmt.Sprintf("destinationVrf: VRF %q is not defined by any VRFRouteConfiguration", t.DestinationVrf)
		case !loopbacks[t.DestinationVrf+"/"+t.SourceLoopback]:
			reason = fmt.Sprintf("sourceLoopback: VRF %q has no loopback %q in its VRFRouteConfigurations", t.DestinationVrf, t.SourceLoopback)
		default:
			return false
		}
		held = append(held, Held{v1.KindMirrorTarget, t.Name, reason})
		return true
	})
	targets := map[string]bool{}
	for i := range rev.MirrorTargets {
		targets[rev.MirrorTargets[i].Name] = true
	}
	rev.MirrorSelectors = slices.DeleteFunc(rev.MirrorSelectors, func(s v1.MirrorSelectorRevision) bool {
		reason := ""
		switch {
		case !targets[s.MirrorTarget.Name]:
			reason = fmt.Sprintf("mirrorTarget: MirrorTarget %q does not exist or is held back", s.MirrorTarget.Name)
		case s.MirrorSource.Kind == v1.KindLayer2NetworkConfiguration && l2s[s.MirrorSource.Name] == nil:
			reason = fmt.Sprintf("mirrorSource: Layer2NetworkConfiguration %q does not exist or is held back", s.MirrorSource.Name)
		case s.MirrorSource.Kind == v1.KindVRFRouteConfiguration && !vrfConfigs[s.MirrorSource.Name]:
			reason = fmt.Sprintf("mirrorSource: VRFRouteConfiguration %q does not exist", s.MirrorSource.Name)
		default:
			return false
		}
		held = append(held, Held{"MirrorSelector", s.Name, reason})
		return true
	})
	return append(held, holdLinks(rev)...)
}
