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

package webhook

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-network-network-operator-io-v1alpha1-link,mutating=false,failurePolicy=fail,sideEffects=None,groups=network.network-operator.io,resources=links,verbs=create;update,versions=v1alpha1,name=link.network-operator.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=network.network-operator.io,resources=links,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// addLinks adds the Links to a snapshot: no layer-2 network or VRF may take a Link's VNI.
func addLinks(ctx context.Context, r client.Reader, s *validation.Snapshot) error {
	var links v1.LinkList
	if err := r.List(ctx, &links); err != nil {
		return fmt.Errorf("list Links: %w", err)
	}
	s.Links = links.Items
	return nil
}

// addNodeLabels adds the Nodes' labels to a snapshot: a Link's interface name and VNI are unique on the nodes it
// meets other Links on.
func addNodeLabels(ctx context.Context, r client.Reader, s *validation.Snapshot) error {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes); err != nil {
		return fmt.Errorf("list Nodes: %w", err)
	}
	for _, n := range nodes.Items {
		s.NodeLabels = append(s.NodeLabels, n.Labels)
	}
	return nil
}

type linkValidator struct {
	reader     client.Reader
	vtepFamily v1.IPFamily
}

func (v *linkValidator) validate(ctx context.Context, obj *v1.Link) (admission.Warnings, error) {
	s, err := readSnapshot(ctx, v.reader, snapshotKinds{vrfs: true, layer2s: true})
	if err != nil {
		return nil, err
	}
	s.VTEPFamily = v.vtepFamily
	if err := addLinks(ctx, v.reader, s); err != nil {
		return nil, err
	}
	if err := addNodeLabels(ctx, v.reader, s); err != nil {
		return nil, err
	}
	return nil, invalid(v1.KindLink, obj.Name, validation.ValidateLink(obj, s))
}

func (v *linkValidator) ValidateCreate(ctx context.Context, obj *v1.Link) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *linkValidator) ValidateUpdate(ctx context.Context, _, obj *v1.Link) (admission.Warnings, error) {
	return v.validate(ctx, obj)
}

func (v *linkValidator) ValidateDelete(context.Context, *v1.Link) (admission.Warnings, error) {
	return nil, nil
}
