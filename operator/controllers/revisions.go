package controllers

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// newestRevision is the revision with the highest sequence (nil when there is none).
func newestRevision(revs []v1.NetworkConfigRevision) *v1.NetworkConfigRevision {
	var newest *v1.NetworkConfigRevision
	for i := range revs {
		if newest == nil || revs[i].Spec.Sequence > newest.Spec.Sequence {
			newest = &revs[i]
		}
	}
	return newest
}

// byNewest sorts revisions by sequence, newest first.
func byNewest(revs []*v1.NetworkConfigRevision) {
	slices.SortFunc(revs, func(a, b *v1.NetworkConfigRevision) int { return cmp.Compare(b.Spec.Sequence, a.Spec.Sequence) })
}

// target is the newest revision that has not failed (nil when every revision failed). revs is newest first.
func target(revs []*v1.NetworkConfigRevision) *v1.NetworkConfigRevision {
	for _, r := range revs {
		if r.Status.Phase != v1.RevisionFailed {
			return r
		}
	}
	return nil
}

// lastGood is the newest revision that completed a rollout and has not failed since (nil when none did).
func lastGood(revs []*v1.NetworkConfigRevision) *v1.NetworkConfigRevision {
	for _, r := range revs {
		if r.Status.Phase != v1.RevisionFailed && meta.IsStatusConditionTrue(r.Status.Conditions, ConditionRolledOut) {
			return r
		}
	}
	return nil
}

// prunable returns the revisions to delete: everything except the target, the last good revision, the
// keep newest and the revisions a node configuration references. revs is newest first.
func prunable(revs []*v1.NetworkConfigRevision, tgt *v1.NetworkConfigRevision, referenced map[types.UID]bool, keep int) []*v1.NetworkConfigRevision {
	good := lastGood(revs)
	var out []*v1.NetworkConfigRevision
	for i, r := range revs {
		if i < keep || r == tgt || r == good || referenced[r.UID] {
			continue
		}
		out = append(out, r)
	}
	return out
}
