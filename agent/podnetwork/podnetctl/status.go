package podnetctl

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// FieldManager is the server-side apply field manager of the agent of one node: each agent owns the
// status.pods entries of its node's pods, the operator the allocations and conditions, and none overwrites
// another's.
func FieldManager(node string) string { return "network-agent/" + node }

// statusWriter keeps this node's status.pods entries of every PodNetworkConfig and writes them with server-side
// apply when they change. Writes of one config are serialised, so entries of two pods never race.
type statusWriter struct {
	c     client.Client
	node  string
	owner string

	mu sync.Mutex
	// entries are the node's entries per config (by namespace/name and UID: a re-created config starts over).
	entries map[configKey]map[string]v1.PodNetworkStatus
}

type configKey struct {
	types.NamespacedName
	uid types.UID
}

func newStatusWriter(c client.Client, node string) *statusWriter {
	return &statusWriter{c: c, node: node, owner: FieldManager(node), entries: map[configKey]map[string]v1.PodNetworkStatus{}}
}

// set makes pod's entry in cfg's status e (nil: no entry) and writes the node's entries when they changed.
func (w *statusWriter) set(ctx context.Context, cfg *v1.PodNetworkConfig, pod string, e *v1.PodNetworkStatus) error {
	return w.update(ctx, cfg, func(m map[string]v1.PodNetworkStatus) {
		if e == nil {
			delete(m, pod)
			return
		}
		m[pod] = *e
	})
}

// update changes the node's entries of cfg with f and writes them when they changed.
func (w *statusWriter) update(ctx context.Context, cfg *v1.PodNetworkConfig, f func(map[string]v1.PodNetworkStatus)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := configKey{NamespacedName: types.NamespacedName{Namespace: cfg.Namespace, Name: cfg.Name}, uid: cfg.UID}
	cur, ok := w.entries[key]
	if !ok {
		// First touch since the start: what the object holds of this node is what the agent wrote before.
		cur = map[string]v1.PodNetworkStatus{}
		for _, p := range cfg.Status.Pods {
			if p.Node == w.node {
				cur[p.Name] = p
			}
		}
		for k := range w.entries {
			if k.NamespacedName == key.NamespacedName {
				delete(w.entries, k) // an older object of that name
			}
		}
		w.entries[key] = cur
	}
	next := maps.Clone(cur)
	f(next)
	if reflect.DeepEqual(next, cur) {
		return nil
	}
	if err := w.apply(ctx, cfg, next); err != nil {
		if apierrors.IsNotFound(err) {
			delete(w.entries, key)
			return nil
		}
		return err
	}
	w.entries[key] = next
	return nil
}

// apply writes the node's entries of cfg (all of them: server-side apply removes the node's entries it no longer
// lists, and leaves every other field manager's alone).
func (w *statusWriter) apply(ctx context.Context, cfg *v1.PodNetworkConfig, m map[string]v1.PodNetworkStatus) error {
	pods := make([]any, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		e := m[name]
		e.Name, e.Node = name, w.node
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&e)
		if err != nil {
			return fmt.Errorf("status entry of pod %s: %w", name, err)
		}
		pods = append(pods, u)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(),
		"kind":       "PodNetworkConfig",
		"metadata":   map[string]any{"name": cfg.Name, "namespace": cfg.Namespace},
		"status":     map[string]any{"pods": pods},
	}}
	if err := w.c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(w.owner), client.ForceOwnership); err != nil {
		return fmt.Errorf("write status.pods of PodNetworkConfig %s/%s (%s): %w", cfg.Namespace, cfg.Name,
			strings.Join(slices.Sorted(maps.Keys(m)), ", "), err)
	}
	return nil
}
