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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
