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

// Package webhook serves the validating admission webhooks of the user-facing network resources. The checks
// live in internal/validation; this package feeds them the object and a snapshot of the existing objects (for VNI,
// VLAN and sequence uniqueness and references; for a PodNetworkConfig the networks, the other PodNetworkConfigs
// and the labels of its namespace), read straight from the API server.
package webhook

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-vrfrouteconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=vrfrouteconfigurations,verbs=create;update,versions=v1alpha1,name=vrfrouteconfiguration.network-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-layer2networkconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=layer2networkconfigurations,verbs=create;update,versions=v1alpha1,name=layer2networkconfiguration.network-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-bgppeering,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=bgppeerings,verbs=create;update,versions=v1alpha1,name=bgppeering.network-operator.io,admissionReviewVersions=v1

// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-routingtable,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=routingtables,verbs=create;update,versions=v1alpha1,name=routingtable.network-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-mirrortarget,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=mirrortargets,verbs=create;update,versions=v1alpha1,name=mirrortarget.network-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-mirrorselector,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=mirrorselectors,verbs=create;update,versions=v1alpha1,name=mirrorselector.network-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-podnetworkconfig,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=podnetworkconfigs,verbs=create;update,versions=v1alpha1,name=podnetworkconfig.network-operator.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=network.network-operator.io,resources=vrfrouteconfigurations;layer2networkconfigurations;bgppeerings;routingtables;podnetworkconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Options are what the webhooks know of the operator's configuration.
type Options struct {
	// VTEPFamily is the fabric's VTEP address family (--underlay-vtep-family; "": not known): static flooding
	// peers of layer-2 networks and Links must be of it.
	VTEPFamily v1.IPFamily
}

// Setup registers the validating webhooks on the manager's webhook server (Options{}.Setup: without what the
// operator's flags say). Existing objects are read with the manager's API reader (not the cache): admission must
// see objects created a moment ago.
func (o Options) Setup(mgr ctrl.Manager) error {
	r := mgr.GetAPIReader()
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.VRFRouteConfiguration{}).
		WithValidator(&vrfValidator{reader: r}).Complete(); err != nil {
		return fmt.Errorf("register VRFRouteConfiguration webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.Layer2NetworkConfiguration{}).
		WithValidator(&layer2Validator{reader: r, vtepFamily: o.VTEPFamily}).Complete(); err != nil {
		return fmt.Errorf("register Layer2NetworkConfiguration webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.BGPPeering{}).
		WithValidator(&bgpValidator{reader: r}).Complete(); err != nil {
		return fmt.Errorf("register BGPPeering webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.RoutingTable{}).
		WithValidator(&tableValidator{reader: r}).Complete(); err != nil {
		return fmt.Errorf("register RoutingTable webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.MirrorTarget{}).
		WithValidator(checkOnly[*v1.MirrorTarget]{kind: v1.KindMirrorTarget, check: validation.ValidateMirrorTarget}).Complete(); err != nil {
		return fmt.Errorf("register MirrorTarget webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.MirrorSelector{}).
		WithValidator(checkOnly[*v1.MirrorSelector]{kind: "MirrorSelector", check: validation.ValidateMirrorSelector}).Complete(); err != nil {
		return fmt.Errorf("register MirrorSelector webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.Link{}).
		WithValidator(&linkValidator{reader: r, vtepFamily: o.VTEPFamily}).Complete(); err != nil {
		return fmt.Errorf("register Link webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &v1.PodNetworkConfig{}).
		WithValidator(&podNetworkValidator{reader: r}).Complete(); err != nil {
		return fmt.Errorf("register PodNetworkConfig webhook: %w", err)
	}
	return nil
}

// snapshot lists the kinds a rule needs.
type snapshotKinds struct{ vrfs, layer2s, bgps, tables, podnets bool }

func readSnapshot(ctx context.Context, r client.Reader, k snapshotKinds) (*validation.Snapshot, error) {
	s := &validation.Snapshot{}
	if k.vrfs {
		var l v1.VRFRouteConfigurationList
		if err := r.List(ctx, &l); err != nil {
			return nil, fmt.Errorf("list VRFRouteConfigurations: %w", err)
		}
		s.VRFRouteConfigurations = l.Items
	}
	if k.layer2s {
		var l v1.Layer2NetworkConfigurationList
		if err := r.List(ctx, &l); err != nil {
			return nil, fmt.Errorf("list Layer2NetworkConfigurations: %w", err)
		}
		s.Layer2Networks = l.Items
	}
	if k.bgps {
		var l v1.BGPPeeringList
		if err := r.List(ctx, &l); err != nil {
			return nil, fmt.Errorf("list BGPPeerings: %w", err)
		}
		s.BGPPeerings = l.Items
	}
	if k.tables {
		var l v1.RoutingTableList
		if err := r.List(ctx, &l); err != nil {
			return nil, fmt.Errorf("list RoutingTables: %w", err)
		}
		s.RoutingTables = l.Items
	}
	if k.podnets {
		var l v1.PodNetworkConfigList
		if err := r.List(ctx, &l); err != nil {
			return nil, fmt.Errorf("list PodNetworkConfigs: %w", err)
		}
		s.PodNetworkConfigs = l.Items
	}
	return s, nil
}

// readNamespaceLabels adds the labels of the named namespaces to the snapshot (a namespace that does not exist
// has none).
func readNamespaceLabels(ctx context.Context, r client.Reader, s *validation.Snapshot, names ...string) error {
	if s.NamespaceLabels == nil {
		s.NamespaceLabels = map[string]map[string]string{}
	}
	for _, name := range names {
		if _, done := s.NamespaceLabels[name]; done {
			continue
		}
		var ns corev1.Namespace
		switch err := r.Get(ctx, client.ObjectKey{Name: name}, &ns); {
		case apierrors.IsNotFound(err):
			s.NamespaceLabels[name] = nil
		case err != nil:
			return fmt.Errorf("get namespace %s: %w", name, err)
		default:
			s.NamespaceLabels[name] = ns.Labels
		}
	}
	return nil
}

// invalid turns a non-empty error list into the API's Invalid status, which the API server shows as
// `<Kind>.<group> "<name>" is invalid: [spec.x: Invalid value: ...]`.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}

type vrfValidator struct{ reader client.Reader }

func (v *vrfValidator) validate(ctx context.Context, obj *v1.VRFRouteConfiguration) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{vrfs: true, layer2s: true})
	if err != nil {
		return nil, err
	}
	if err := addLinks(ctx, v.reader, s); err != nil {
		return nil, err
	}
	return nil, invalid("VRFRouteConfiguration", obj.Name, validation.ValidateVRFRouteConfiguration(obj, s))
}

func (v *vrfValidator) ValidateCreate(ctx context.Context, obj *v1.VRFRouteConfiguration) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *vrfValidator) ValidateUpdate(ctx context.Context, _, obj *v1.VRFRouteConfiguration) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *vrfValidator) ValidateDelete(context.Context, *v1.VRFRouteConfiguration) (admission.Warnings, error) {
	return nil, nil
}

type layer2Validator struct {
	reader     client.Reader
	vtepFamily v1.IPFamily
}

// validate checks the network and, when it is admitted, warns about the PodNetworkConfigs on it that the change
// orphans (namespace no longer admitted, pool no longer in the subnets): the administrator may withdraw a network,
// the operator reports them in their status.
func (v *layer2Validator) validate(ctx context.Context, obj *v1.Layer2NetworkConfiguration) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{vrfs: true, layer2s: true, podnets: true})
	if err != nil {
		return nil, err
	}
	s.VTEPFamily = v.vtepFamily
	if err := addLinks(ctx, v.reader, s); err != nil {
		return nil, err
	}
	if err := invalid("Layer2NetworkConfiguration", obj.Name, validation.ValidateLayer2NetworkConfiguration(obj, s)); err != nil {
		return nil, err
	}
	for i := range s.PodNetworkConfigs {
		if err := readNamespaceLabels(ctx, v.reader, s, s.PodNetworkConfigs[i].Namespace); err != nil {
			return nil, err
		}
	}
	return validation.PodNetworkWarnings(obj, s), nil
}

func (v *layer2Validator) ValidateCreate(ctx context.Context, obj *v1.Layer2NetworkConfiguration) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *layer2Validator) ValidateUpdate(ctx context.Context, _, obj *v1.Layer2NetworkConfiguration) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *layer2Validator) ValidateDelete(context.Context, *v1.Layer2NetworkConfiguration) (admission.Warnings, error) {
	return nil, nil
}

type bgpValidator struct{ reader client.Reader }

func (v *bgpValidator) validate(ctx context.Context, obj *v1.BGPPeering) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{layer2s: true, bgps: true})
	if err != nil {
		return nil, err
	}
	return nil, invalid("BGPPeering", obj.Name, validation.ValidateBGPPeering(obj, s))
}

func (v *bgpValidator) ValidateCreate(ctx context.Context, obj *v1.BGPPeering) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *bgpValidator) ValidateUpdate(ctx context.Context, _, obj *v1.BGPPeering) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *bgpValidator) ValidateDelete(context.Context, *v1.BGPPeering) (admission.Warnings, error) {
	return nil, nil
}

type tableValidator struct{ reader client.Reader }

func (v *tableValidator) validate(ctx context.Context, obj *v1.RoutingTable) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{tables: true})
	if err != nil {
		return nil, err
	}
	return nil, invalid("RoutingTable", obj.Name, validation.ValidateRoutingTable(obj, s))
}

func (v *tableValidator) ValidateCreate(ctx context.Context, obj *v1.RoutingTable) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *tableValidator) ValidateUpdate(ctx context.Context, _, obj *v1.RoutingTable) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *tableValidator) ValidateDelete(context.Context, *v1.RoutingTable) (admission.Warnings, error) {
	return nil, nil
}

type podNetworkValidator struct{ reader client.Reader }

func (v *podNetworkValidator) validate(ctx context.Context, obj *v1.PodNetworkConfig) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{layer2s: true, podnets: true})
	if err != nil {
		return nil, err
	}
	if err := readNamespaceLabels(ctx, v.reader, s, obj.Namespace); err != nil {
		return nil, err
	}
	return nil, invalid("PodNetworkConfig", obj.Name, validation.ValidatePodNetworkConfig(obj, s))
}

func (v *podNetworkValidator) ValidateCreate(ctx context.Context, obj *v1.PodNetworkConfig) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

// ValidateUpdate checks a changed spec. An update that leaves the spec as it is (labels, annotations, finalizers)
// is admitted even when the resource no longer passes (its network withdrawn by the administrator): a tenant can
// still manage an orphaned resource; its status says what is wrong.
func (v *podNetworkValidator) ValidateUpdate(ctx context.Context, old, obj *v1.PodNetworkConfig) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, obj.Spec) {
		return nil, nil
	}
	return v.validate(ctx, obj)
}

func (v *podNetworkValidator) ValidateDelete(context.Context, *v1.PodNetworkConfig) (admission.Warnings, error) {
	return nil, nil
}

// checkOnly validates a kind without cross-object rules: its references may be applied later (the operator
// holds it back until they exist).
type checkOnly[T client.Object] struct {
	kind  string
	check func(T) field.ErrorList
}

func (c checkOnly[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, invalid(c.kind, obj.GetName(), c.check(obj))
}

func (c checkOnly[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return nil, invalid(c.kind, obj.GetName(), c.check(obj))
}

func (c checkOnly[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}
