// Package uninstall empties the nodes before a release goes: `network-operator uninstall`, run by the chart's
// pre-delete hook. The operator is scaled to zero (it would re-create what follows), the agent DaemonSet is
// deleted and its pods waited for, a cleanup DaemonSet - the agent image running `network-agent cleanup` with
// the agent pod's mounts and capabilities - runs on every node the agents ran on until each reports its node
// clean, and is deleted; last the operator's own objects (NodeNetworkConfigs, revisions) are deleted. Every step
// is idempotent and every wait has a deadline that names what was waited for.
package uninstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
)

// Options name the release's objects.
type Options struct {
	Namespace          string
	AgentDaemonSet     string
	OperatorDeployment string
	// CleanupImage runs `network-agent cleanup` (the agent image).
	CleanupImage string
	// Timeout bounds each wait.
	Timeout time.Duration
	Out     io.Writer
}

// cleanupSuffix names the cleanup DaemonSet after the agent's.
const cleanupSuffix = "-cleanup"

// pollInterval is how often a wait checks the cluster.
const pollInterval = 500 * time.Millisecond

// doneFile is what `network-agent cleanup --wait` writes once its node is clean (the readiness probe's file).
const doneFile = "/tmp/cleanup-done"

// ErrOptions is returned (wrapped) for options that name too little: nothing was changed.
var ErrOptions = errors.New("incomplete options")

// Check reports (as ErrOptions) a required option that is empty.
func (o Options) Check() error {
	if o.Namespace == "" || o.AgentDaemonSet == "" || o.OperatorDeployment == "" || o.CleanupImage == "" {
		return fmt.Errorf("%w: namespace %q, agent-daemonset %q, operator-deployment %q and cleanup-image %q are all required",
			ErrOptions, o.Namespace, o.AgentDaemonSet, o.OperatorDeployment, o.CleanupImage)
	}
	return nil
}

// Run carries out the uninstall.
func Run(ctx context.Context, c client.Client, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	u := &uninstaller{c: c, o: o}
	for _, step := range []struct {
		what string
		fn   func(context.Context) error
	}{
		{"scale the operator to 0", u.stopOperator},
		{"delete the agent DaemonSet", u.deleteAgents},
		{"clean every node", u.cleanNodes},
		{"delete NodeNetworkConfigs and revisions", u.deleteObjects},
	} {
		start := time.Now()
		if err := step.fn(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
		fmt.Fprintf(o.Out, "%s: done in %.1fs\n", step.what, time.Since(start).Seconds())
	}
	return nil
}

type uninstaller struct {
	c client.Client
	o Options
	// agent is the agent DaemonSet as it was (its pod template is the cleanup's model); nil when already gone.
	agent *appsv1.DaemonSet
}

func (u *uninstaller) stopOperator(ctx context.Context) error {
	var d appsv1.Deployment
	err := u.c.Get(ctx, client.ObjectKey{Namespace: u.o.Namespace, Name: u.o.OperatorDeployment}, &d)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = ptr.To[int32](0)
		if err := u.c.Patch(ctx, &d, patch); err != nil {
			return err
		}
	}
	return u.waitPodsGone(ctx, d.Spec.Selector, "operator pods")
}

func (u *uninstaller) deleteAgents(ctx context.Context) error {
	var ds appsv1.DaemonSet
	err := u.c.Get(ctx, client.ObjectKey{Namespace: u.o.Namespace, Name: u.o.AgentDaemonSet}, &ds)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	u.agent = ds.DeepCopy()
	if err := u.c.Delete(ctx, &ds, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return u.waitPodsGone(ctx, ds.Spec.Selector, "agent pods")
}

// cleanupDaemonSet is the agent's pod template reduced to one container running the cleanup, with the agent
// container's mounts and security context (and no FRR container: a pod's FRR is gone with the pod).
func (u *uninstaller) cleanupDaemonSet() (*appsv1.DaemonSet, error) {
	tmpl := u.agent.Spec.Template.DeepCopy()
	var agent *corev1.Container
	for i := range tmpl.Spec.Containers {
		if tmpl.Spec.Containers[i].Name == "agent" {
			agent = &tmpl.Spec.Containers[i]
		}
	}
	if agent == nil {
		return nil, fmt.Errorf("DaemonSet %s has no container \"agent\"", u.agent.Name)
	}
	name := u.o.AgentDaemonSet + cleanupSuffix
	sel := map[string]string{"app.kubernetes.io/name": name}
	c := corev1.Container{
		Name: "cleanup", Image: u.o.CleanupImage, ImagePullPolicy: agent.ImagePullPolicy,
		Command:         []string{"/usr/local/bin/network-agent", "cleanup", "--wait", "--done-file", doneFile},
		Args:            cleanupArgs(agent.Args),
		SecurityContext: agent.SecurityContext, VolumeMounts: agent.VolumeMounts,
		Env: agent.Env, // NODE_NAME: kept flags may name it ($(NODE_NAME) in --cri-socket)
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", doneFile}}},
			PeriodSeconds: 1},
	}
	tmpl.Labels = sel
	tmpl.Spec.InitContainers = nil
	tmpl.Spec.Containers = []corev1.Container{c}
	tmpl.Spec.AutomountServiceAccountToken = ptr.To(false)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: u.o.Namespace, Labels: sel},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: *tmpl},
	}, nil
}

// cleanupArgs keeps the agent's flags that say where its state is, and those of pod networking (whether it is on,
// how pods' namespaces are found, where its records are).
func cleanupArgs(agentArgs []string) []string {
	var out []string
	for _, a := range agentArgs {
		for _, f := range []string{"--pin-dir=", "--state-file=", "--frr-state-dir=",
			"--pod-network=", "--cri-socket=", "--pod-netns=", "--pod-state-dir=", "--pod-sysctl-dir="} {
			if len(a) > len(f) && a[:len(f)] == f {
				out = append(out, a)
			}
		}
	}
	return out
}

func (u *uninstaller) cleanNodes(ctx context.Context) error {
	if u.agent == nil {
		fmt.Fprintln(u.o.Out, "no agent DaemonSet: nothing to clean on the nodes")
		return nil
	}
	ds, err := u.cleanupDaemonSet()
	if err != nil {
		return err
	}
	if err := u.c.Create(ctx, ds); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	key := client.ObjectKeyFromObject(ds)
	err = wait.Poll(ctx, pollInterval, u.o.Timeout, "every node clean (DaemonSet "+key.String()+" ready)", func(ctx context.Context) (bool, string, error) {
		var cur appsv1.DaemonSet
		if err := u.c.Get(ctx, key, &cur); err != nil {
			return false, err.Error(), nil
		}
		st := cur.Status
		done := st.ObservedGeneration >= cur.Generation && st.NumberReady == st.DesiredNumberScheduled
		return done, fmt.Sprintf("%d of %d nodes clean", st.NumberReady, st.DesiredNumberScheduled), nil
	})
	if err != nil {
		return err
	}
	if err := u.c.Delete(ctx, ds, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return u.waitPodsGone(ctx, ds.Spec.Selector, "cleanup pods")
}

func (u *uninstaller) deleteObjects(ctx context.Context) error {
	var errs []error
	for _, obj := range []client.Object{&v1.NodeNetworkConfig{}, &v1.NetworkConfigRevision{}} {
		if err := u.c.DeleteAllOf(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %T: %w", obj, err))
		}
	}
	return errors.Join(errs...)
}

func (u *uninstaller) waitPodsGone(ctx context.Context, sel *metav1.LabelSelector, what string) error {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return err
	}
	return wait.Poll(ctx, pollInterval, u.o.Timeout, what+" gone", func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := u.c.List(ctx, &pods, client.InNamespace(u.o.Namespace), client.MatchingLabelsSelector{Selector: s}); err != nil {
			return false, err.Error(), nil
		}
		if len(pods.Items) > 0 {
			return false, fmt.Sprintf("%d left, e.g. %s", len(pods.Items), pods.Items[0].Name), nil
		}
		return true, "", nil
	})
}
