package controllers

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// waitSnapshots waits until the config controller took more snapshots with result than before.
func waitSnapshots(t *testing.T, op *operator, result string, before float64) float64 {
	t.Helper()
	var now float64
	waitFor(t, 30*time.Second, "a snapshot with result "+result, func() (bool, error) {
		now = counterValue(t, op.metrics.Snapshots.WithLabelValues(result))
		return now > before, nil
	})
	return now
}

func touchLabel(t *testing.T, name, value string) {
	t.Helper()
	env := shared.Get(t)
	ctx := context.Background()
	var c v1.VRFRouteConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatal(err)
	}
	orig := c.DeepCopy()
	metav1.SetMetaDataLabel(&c.ObjectMeta, "touched", value)
	if err := env.Client.Patch(ctx, &c, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// TestRevisionsFromSnapshots covers creation, de-duplication, ordering after A -> B -> A, the failed
// hash rule, inherited rollout annotations and debouncing, with only the config controller running.
func TestRevisionsFromSnapshots(t *testing.T) {
	env := shared.Get(t)
	resetCluster(t)
	opts := testOptions()
	opts.Debounce = 300 * time.Millisecond
	op := startOperator(t, opts, runConfig)
	ctx := context.Background()

	// The first snapshot comes without any resource: an empty revision.
	empty := waitRevision(t, 1)
	if len(empty.Spec.VRF) != 0 {
		t.Fatalf("first revision has %d VRFs, want an empty snapshot", len(empty.Spec.VRF))
	}

	if err := env.Client.Create(ctx, vrfConfig("blue", "blue", 100, 10)); err != nil {
		t.Fatal(err)
	}
	a1 := waitRevision(t, 2)
	if h, _ := a1.Spec.ContentHash(); h != a1.Spec.Revision || len(a1.Spec.VRF) != 1 || *a1.Spec.VRF[0].VNI != 100 {
		t.Fatalf("revision A: hash %s (content %s), vrfs %+v", a1.Spec.Revision, h, a1.Spec.VRF)
	}

	// A metadata-only change gives a snapshot but no revision.
	unchanged := counterValue(t, op.metrics.Snapshots.WithLabelValues("unchanged"))
	touchLabel(t, "blue", "1")
	unchanged = waitSnapshots(t, op, "unchanged", unchanged)
	if n := len(listRevisions(t)); n != 2 {
		t.Fatalf("%d revisions after a no-op change, want 2", n)
	}

	setVNI(t, "blue", 101) // B
	b := waitRevision(t, 3)
	setVNI(t, "blue", 100) // A again
	a2 := waitRevision(t, 4)
	if a2.Spec.Revision != a1.Spec.Revision || a2.Name == a1.Name || b.Spec.Revision == a1.Spec.Revision {
		t.Fatalf("A again: %s (hash %.12s), first A %s (hash %.12s), B hash %.12s", a2.Name, a2.Spec.Revision, a1.Name, a1.Spec.Revision, b.Spec.Revision)
	}
	if newest := newestRevision(listRevisions(t)); newest.Name != a2.Name {
		t.Fatalf("newest revision is %s, want %s (ordering is by sequence)", newest.Name, a2.Name)
	}

	// A failed newest revision: the same content is not retried...
	failed := a2.DeepCopy()
	failed.Status.Phase = v1.RevisionFailed
	if err := env.Client.Status().Patch(ctx, failed, client.MergeFrom(a2)); err != nil {
		t.Fatal(err)
	}
	touchLabel(t, "blue", "2")
	waitSnapshots(t, op, "unchanged", unchanged)
	if n := len(listRevisions(t)); n != 4 {
		t.Fatalf("%d revisions after a no-op change on a failed hash, want 4", n)
	}
	// ...until the content changes again; the rollout settings of the newest revision carry over.
	a2 = getRevision(t, a2.Name)
	orig := a2.DeepCopy()
	metav1.SetMetaDataAnnotation(&a2.ObjectMeta, AnnotationPaused, "true")
	metav1.SetMetaDataAnnotation(&a2.ObjectMeta, AnnotationMaxUnavailable, "25%")
	if err := env.Client.Patch(ctx, a2, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	setVNI(t, "blue", 102)
	c := waitRevision(t, 5)
	if c.Annotations[AnnotationPaused] != "true" || c.Annotations[AnnotationMaxUnavailable] != "25%" {
		t.Fatalf("new revision annotations %v, want paused and max-unavailable inherited", c.Annotations)
	}

	// A burst of changes within the debounce window yields far fewer revisions than changes, and the
	// newest holds the final content.
	before := len(listRevisions(t))
	const burst = 10
	for i := range burst {
		setVNI(t, "blue", int32(200+i))
	}
	waitFor(t, 30*time.Second, "the burst's final content", func() (bool, error) {
		n := newestRevision(listRevisions(t))
		return n != nil && *n.Spec.VRF[0].VNI == 200+burst-1, nil
	})
	if created := len(listRevisions(t)) - before; created >= burst/2 {
		t.Fatalf("a burst of %d changes created %d revisions: not debounced", burst, created)
	} else {
		t.Logf("a burst of %d changes created %d revision(s)", burst, created)
	}
	for _, r := range listRevisions(t) {
		if want := RevisionName(r.Spec.Sequence, r.Spec.Revision); r.Name != want {
			t.Errorf("revision %s, want name %s", r.Name, want)
		}
	}
}
