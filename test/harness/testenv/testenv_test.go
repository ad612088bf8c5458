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

package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

func writeBins(t *testing.T, dir string, mode os.FileMode, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAssetsDir(t *testing.T) {
	tmp := t.TempDir()
	cached := filepath.Join(tmp, "cache", "network-operator", "envtest", "1.99.0-3.9.0")
	tests := []struct {
		name    string
		env     map[string]string
		setup   func(t *testing.T)
		want    string
		wantErr bool
	}{
		{name: "KUBEBUILDER_ASSETS with binaries",
			env:   map[string]string{"KUBEBUILDER_ASSETS": filepath.Join(tmp, "a")},
			setup: func(t *testing.T) { writeBins(t, filepath.Join(tmp, "a"), 0o755, "kube-apiserver", "etcd") },
			want:  filepath.Join(tmp, "a")},
		{name: "KUBEBUILDER_ASSETS without etcd",
			env:     map[string]string{"KUBEBUILDER_ASSETS": filepath.Join(tmp, "b")},
			setup:   func(t *testing.T) { writeBins(t, filepath.Join(tmp, "b"), 0o755, "kube-apiserver") },
			wantErr: true},
		{name: "not executable",
			env:     map[string]string{"KUBEBUILDER_ASSETS": filepath.Join(tmp, "c")},
			setup:   func(t *testing.T) { writeBins(t, filepath.Join(tmp, "c"), 0o644, "kube-apiserver", "etcd") },
			wantErr: true},
		{name: "script cache for the given versions",
			env: map[string]string{"KUBEBUILDER_ASSETS": "", "XDG_CACHE_HOME": filepath.Join(tmp, "cache"),
				"ENVTEST_K8S_VERSION": "1.99.0", "ENVTEST_ETCD_VERSION": "3.9.0"},
			setup: func(t *testing.T) { writeBins(t, cached, 0o755, "kube-apiserver", "etcd") },
			want:  cached},
		{name: "script cache empty",
			env: map[string]string{"KUBEBUILDER_ASSETS": "", "XDG_CACHE_HOME": filepath.Join(tmp, "nocache"),
				"ENVTEST_K8S_VERSION": "", "ENVTEST_ETCD_VERSION": ""},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.setup != nil {
				tt.setup(t)
			}
			got, err := AssetsDir()
			if tt.wantErr {
				if !errors.Is(err, ErrNoAssets) || !strings.Contains(err.Error(), "make envtest") {
					t.Fatalf("want ErrNoAssets telling to run make envtest, got %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("AssetsDir() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "config", "crd", "bases")); err != nil {
		t.Errorf("repository root %s has no config/crd/bases: %v", root, err)
	}
}

// Serving the webhooks here and pointing them at a server elsewhere cannot both hold: Start refuses before it
// starts anything.
func TestStartRefusesBothWebhookKinds(t *testing.T) {
	_, err := Start(context.Background(), Options{ExternalWebhooks: true, Webhooks: func(manager.Manager) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Fatalf("Start with both webhook kinds: err = %v, want a refusal naming both options", err)
	}
}

// A control plane whose webhooks an operator elsewhere serves: the configuration is installed, pointing at a
// loopback port with a certificate made for this run, and the work directory holds etcd's data.
func TestStartExternalWebhooks(t *testing.T) {
	_, err := AssetsDir()
	testreq.Available(t, "API-server binaries (kube-apiserver, etcd)", err)
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, err := Start(ctx, Options{ExternalWebhooks: true, WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	host, port, certDir := env.WebhookServing()
	if host != "127.0.0.1" || port == 0 {
		t.Errorf("webhook serving at %s:%d, want 127.0.0.1 and a port", host, port)
	}
	if _, err := os.Stat(filepath.Join(certDir, "tls.crt")); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "etcd", "member")); err != nil {
		t.Errorf("etcd data not in the work directory: %v", err)
	}
	var hooks admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := env.Client.List(ctx, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks.Items) == 0 {
		t.Fatal("no ValidatingWebhookConfiguration installed")
	}
	for _, h := range hooks.Items {
		for _, w := range h.Webhooks {
			if w.ClientConfig.URL == nil || !strings.Contains(*w.ClientConfig.URL, fmt.Sprintf("127.0.0.1:%d", port)) {
				t.Errorf("webhook %s/%s does not point at 127.0.0.1:%d: %+v", h.Name, w.Name, port, w.ClientConfig)
			}
		}
	}
	kubeconfig, err := env.UserKubeconfig("someone", "a-group")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the user's kubeconfig does not authenticate: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != "someone" || !slices.Contains(u.Groups, "a-group") {
		t.Errorf("the user's kubeconfig authenticates as %q in %v, want someone in a-group", u.Username, u.Groups)
	}
}
