package controllers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// ManagerCacheOptions are the informer settings of the operator's manager. The operator caches every Node and every
// NodeNetworkConfig of the cluster, so its memory grows with the nodes: CacheOptions (pods trimmed), no object keeps
// its managed fields (nothing in the operator reads them; updates and patches leave them alone), and Nodes keep
// only what the operator reads (trimNode).
func ManagerCacheOptions() cache.Options {
	o := CacheOptions()
	o.DefaultTransform = cache.TransformStripManagedFields()
	o.ByObject[&corev1.Node{}] = cache.ByObject{Transform: trimNode}
	return o
}

// trimNode keeps what the operator reads of a Node: the node configuration's inputs (name, UID, labels,
// annotations, addresses), its Ready condition (the rollout's pace and the rollout predicate) and the labels
// (admission of Links). The kubelet's images, capacity, node info and other conditions are most of a Node.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{
		TypeMeta: n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Generation: n.Generation,
			Labels: n.Labels, Annotations: n.Annotations, CreationTimestamp: n.CreationTimestamp, DeletionTimestamp: n.DeletionTimestamp},
		Status: corev1.NodeStatus{Addresses: n.Status.Addresses},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{c}
		}
	}
	return out, nil
}
