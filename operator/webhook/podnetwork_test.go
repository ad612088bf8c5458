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

package webhook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

// podNetwork builds an unstructured PodNetworkConfig from a YAML spec.
func podNetwork(t *testing.T, ns, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("spec of %s: %v", name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": s}}
	u.SetAPIVersion(v1.GroupVersion.String())
	u.SetKind("PodNetworkConfig")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func createNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	env := shared.Get(t)
	if err := env.Client.Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// podL2 creates a Layer2NetworkConfiguration admitting the namespaces whose label tenant is one of tenants.
func podL2(t *testing.T, name string, id int32, tenants []string, gateways ...string) *v1.Layer2NetworkConfiguration {
	t.Helper()
	env := shared.Get(t)
	l2 := &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.Layer2NetworkConfigurationSpec{
		ID: id, VNI: 400000 + id, MTU: 1500, AnycastMac: "02:00:00:00:04:00", AnycastGateways: gateways,
		PodNamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tenant", Operator: metav1.LabelSelectorOpIn, Values: tenants}}}}}
	if err := env.Client.Create(ctxT(t), l2); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return l2
}

// warnings collects the API server's warning headers of one client.
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.text
	w.text = nil
	return out
}

// TestPodNetworkAdmission: tenant A asking for tenant B's network, an address outside the network's range, and a
// pool overlapping another tenant's on a shared network are refused, each naming the field and the value; so is
// every other rule of internal/validation, by the schema or the webhook. A network the administrator withdraws
// is withdrawn with warnings naming the PodNetworkConfigs it orphans; those can still be relabelled, not changed.
func TestPodNetworkAdmission(t *testing.T) {
	env := shared.Get(t)
	createNamespace(t, "pn-tenant-a", map[string]string{"tenant": "pn-a"})
	createNamespace(t, "pn-tenant-b", map[string]string{"tenant": "pn-b"})
	podL2(t, "pn-a-net", 410, []string{"pn-a"}, "10.41.0.1/24", "fd00:41::1/64")
	podL2(t, "pn-b-net", 411, []string{"pn-b"}, "10.42.0.1/24")
	podL2(t, "pn-shared", 412, []string{"pn-a", "pn-b"}, "10.43.0.1/24")

	good := podNetwork(t, "pn-tenant-a", "cnf", `{podSelector: {matchLabels: {app: cnf}}, primary: {mtu: 1400},
      interfaces: [{name: net1, type: veth, network: pn-a-net, addresses: {ranges: [10.41.0.64/27, "fd00:41::100/120"], static: [10.41.0.10]}},
                   {name: net2, type: macvlan, network: pn-shared, macvlanMode: bridge, addresses: {ranges: [10.43.0.64/27]}},
                   {name: net1.7, type: vlan, parent: net1, vlan: 7, addresses: {ranges: [192.168.7.0/24]}}],
      routes: [{destination: 10.100.0.0/16, gateway: 10.41.0.1}],
      sysctls: [{name: net.ipv4.conf.net1.rp_filter, value: "2"}, {name: net.ipv4.ip_local_port_range, value: "20000 30000"}]}`)
	if err := env.Client.Create(ctxT(t), good); err != nil {
		t.Fatalf("good PodNetworkConfig refused: %v", err)
	}
	if err := env.Client.Create(ctxT(t), podNetwork(t, "pn-tenant-b", "same-vlan-pool", `{podSelector: {},
      interfaces: [{name: net1, type: veth, network: pn-shared, addresses: {ranges: [10.43.0.96/27]}},
                   {name: net1.7, type: vlan, parent: net1, vlan: 7, addresses: {ranges: [192.168.7.0/24]}}]}`)); err != nil {
		t.Fatalf("tenant B's pool beside tenant A's refused: %v", err)
	}

	bad := []struct {
		ns, spec, path, value, by string
	}{
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-b-net}]}`,
			"spec.interfaces[0].network", `"pn-b-net": no Layer2NetworkConfiguration "pn-b-net" admits pods of namespace "pn-tenant-a"`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: nope}]}`,
			"spec.interfaces[0].network", `"nope": no Layer2NetworkConfiguration "nope" admits`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-a-net, addresses: {static: [10.42.0.10]}}]}`,
			"spec.interfaces[0].addresses.static[0]", `"10.42.0.10": outside the subnets of network "pn-a-net"`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-a-net, addresses: {ranges: [10.41.0.0/28]}}]}`,
			"spec.interfaces[0].addresses.ranges[0]", `"10.41.0.0/28": contains the gateway 10.41.0.1`, "webhook"},
		{"pn-tenant-b", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-shared, addresses: {ranges: [10.43.0.80/28]}}]}`,
			"spec.interfaces[0].addresses.ranges[0]", `"10.43.0.80/28": overlaps the pool of PodNetworkConfig pn-tenant-a/cnf (interface net2) on network "pn-shared"`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-a-net, addresses: {ranges: [10.41.0.64/27, 10.41.0.128/27]}}]}`,
			"spec.interfaces[0].addresses.ranges[1]", `"10.41.0.128/27": a second IPv4 range`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth}]}`, "spec.interfaces[0].network", "a veth interface joins", "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: v7, type: vlan, vlan: 7}]}`, "spec.interfaces[0].parent", "the primary interface eth0", "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: v7, type: vlan, parent: eth1, vlan: 7}]}`, "spec.interfaces[0].parent", `"eth1": not an interface of the pod`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: v7, type: vlan, parent: eth0, vlan: 4095}]}`, "spec.interfaces[0].vlan", "4095", "schema"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: br0, type: bridge, ports: [eth0]}]}`, "spec.interfaces[0].ports[0]", `"eth0": is the primary interface`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: v7, type: vlan, parent: br0, vlan: 7}, {name: br0, type: bridge, ports: [v7]}]}`,
			"spec.interfaces[1].ports[0]", `"v7": dependency cycle: v7 -> br0 -> v7`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: eth0, type: vlan, parent: eth0, vlan: 7}]}`, "spec.interfaces[0].name", `"eth0": is the name of the primary interface`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: lo, type: bridge}]}`, "spec.interfaces[0].name", `"lo": is reserved`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: a-very-long-name, type: bridge}]}`, "spec.interfaces[0].name", "a-very-long-name", "schema"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: gre1, type: gre}]}`, "spec.interfaces[0].type", `"gre"`, "schema"},
		{"pn-tenant-a", `{podSelector: {}, primary: {mtu: 500}}`, "spec.primary.mtu", "500", "schema"},
		{"pn-tenant-a", `{podSelector: {}, interfaces: [{name: net1, type: veth, network: pn-a-net, mtu: 9000}]}`, "spec.interfaces[0].mtu", `9000: above the MTU 1500 of network "pn-a-net"`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, sysctls: [{name: kernel.shmmax, value: "1"}]}`, "spec.sysctls[0].name", `"kernel.shmmax": not in the allow-list of pod sysctls: net.ipv4.conf.<if>.{rp_filter`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, sysctls: [{name: net.ipv4.conf.net9.rp_filter, value: "1"}]}`, "spec.sysctls[0].name", "net9 is not an interface of the pod", "webhook"},
		{"pn-tenant-a", `{podSelector: {}, sysctls: [{name: net.ipv4.ip_forward, value: "on"}]}`, "spec.sysctls[0].value", `"on": not a value this sysctl takes`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, routes: [{destination: default6, gateway: 10.41.0.1}]}`, "spec.routes[0].gateway", `"10.41.0.1": another IP family than the destination default6`, "webhook"},
		{"pn-tenant-a", `{podSelector: {}, routes: [{destination: 10.9.0.0/16}]}`, "spec.routes[0].interface", "an on-link route needs its interface", "webhook"},
		{"pn-tenant-a", `{podSelector: {matchLabels: {"a b": c}}}`, "spec.podSelector.matchLabels", `"a b"`, "webhook"},
	}
	for i, b := range bad {
		name := fmt.Sprintf("bad-%02d", i)
		t.Run(fmt.Sprintf("%s/%s", name, b.path), func(t *testing.T) {
			err := env.Client.Create(ctxT(t), podNetwork(t, b.ns, name, b.spec))
			if err == nil {
				t.Fatalf("accepted %s", b.spec)
			}
			checkRejection(t, err, b.path, b.value, b.by)
		})
	}
	var stored v1.PodNetworkConfigList
	if err := env.Client.List(ctxT(t), &stored); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range stored.Items {
		names = append(names, o.Namespace+"/"+o.Name)
	}
	slices.Sort(names)
	if want := []string{"pn-tenant-a/cnf", "pn-tenant-b/same-vlan-pool"}; !slices.Equal(names, want) {
		t.Errorf("stored %v after the rejections, want %v", names, want)
	}

	t.Run("tenant A changing to tenant B's network", func(t *testing.T) {
		var cnf v1.PodNetworkConfig
		if err := env.Client.Get(ctxT(t), client.ObjectKey{Namespace: "pn-tenant-a", Name: "cnf"}, &cnf); err != nil {
			t.Fatal(err)
		}
		rv := cnf.ResourceVersion
		cnf.Spec.Interfaces[0].Network, cnf.Spec.Interfaces[0].Addresses = "pn-b-net", nil
		err := env.Client.Update(ctxT(t), &cnf)
		if err == nil {
			t.Fatal("update accepted")
		}
		checkRejection(t, err, "spec.interfaces[0].network", `"pn-b-net"`, "webhook")
		if err := env.Client.Get(ctxT(t), client.ObjectKeyFromObject(&cnf), &cnf); err != nil || cnf.ResourceVersion != rv {
			t.Errorf("stored object changed by a rejected update (%v)", err)
		}
	})

	t.Run("withdrawn network", func(t *testing.T) {
		var w warnings
		cfg := rest.CopyConfig(env.Config)
		cfg.WarningHandler = &w
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		var shared v1.Layer2NetworkConfiguration
		if err := c.Get(ctxT(t), client.ObjectKey{Name: "pn-shared"}, &shared); err != nil {
			t.Fatal(err)
		}
		shared.Spec.PodNamespaceSelector.MatchExpressions[0].Values = []string{"pn-b"}
		if err := c.Update(ctxT(t), &shared); err != nil {
			t.Fatalf("the administrator cannot withdraw a network: %v", err)
		}
		got := w.take()
		if len(got) != 1 || !strings.Contains(got[0], `PodNetworkConfig pn-tenant-a/cnf, interface net2: spec.podNamespaceSelector no longer admits namespace "pn-tenant-a"`) {
			t.Errorf("warnings %q, want one naming pn-tenant-a/cnf's interface net2", got)
		}
		var cnf v1.PodNetworkConfig
		if err := c.Get(ctxT(t), client.ObjectKey{Namespace: "pn-tenant-a", Name: "cnf"}, &cnf); err != nil {
			t.Fatal(err)
		}
		cnf.Labels = map[string]string{"owner": "team-a"}
		if err := c.Update(ctxT(t), &cnf); err != nil {
			t.Errorf("a metadata change of the orphaned PodNetworkConfig refused: %v", err)
		}
		cnf.Spec.Primary.MTU = new(int32(1300))
		err = c.Update(ctxT(t), &cnf)
		if err == nil {
			t.Fatal("a spec change keeping the withdrawn network accepted")
		}
		checkRejection(t, err, "spec.interfaces[1].network", `"pn-shared"`, "webhook")
	})
}

// TestTenantRBAC: with the chart's tenant roles (config/default, rendered from the chart) bound by a RoleBinding
// in its namespace, a tenant manages PodNetworkConfigs there and nowhere else, cannot write their status, and
// cannot touch the networks; the viewer role only reads.
func TestTenantRBAC(t *testing.T) {
	env := shared.Get(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "default", "network-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	roles := 0
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" && strings.HasPrefix(u.GetName(), "network-operator-podnetwork-") {
			if err := env.Client.Create(ctxT(t), u); err != nil {
				t.Fatal(err)
			}
			roles++
		}
	}
	if roles != 2 {
		t.Fatalf("%d tenant ClusterRoles in config/default, want editor and viewer", roles)
	}
	createNamespace(t, "rbac-a", nil)
	createNamespace(t, "rbac-b", nil)
	for user, role := range map[string]string{"alice": "network-operator-podnetwork-editor", "bob": "network-operator-podnetwork-viewer"} {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "rbac-a", Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
		if err := env.Client.Create(ctxT(t), rb); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) client.Client {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob := as("alice"), as("bob")
	// RBAC answers from an informer: a fresh binding may take a moment to count.
	mtu := func(ns, name string) *v1.PodNetworkConfig {
		return &v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1.PodNetworkConfigSpec{Primary: &v1.PrimaryInterfaceTuning{MTU: new(int32(1400))}}}
	}
	waitFor(t, "alice may create PodNetworkConfigs in rbac-a", func() error {
		return alice.Create(ctxT(t), mtu("rbac-a", "mtu"))
	})
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
	forbidden("alice creates in rbac-b", alice.Create(ctxT(t), mtu("rbac-b", "mtu")))
	var cnf v1.PodNetworkConfig
	if err := alice.Get(ctxT(t), client.ObjectKey{Namespace: "rbac-a", Name: "mtu"}, &cnf); err != nil {
		t.Fatal(err)
	}
	cnf.Status.Allocations = []v1.PodAddressAllocation{{Pod: "p", PodUID: "u", Interface: "net1", Address: "10.0.0.1/24"}}
	forbidden("alice writes the status", alice.Status().Update(ctxT(t), &cnf))
	forbidden("alice creates a network", alice.Create(ctxT(t), &v1.Layer2NetworkConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "alices"},
		Spec: v1.Layer2NetworkConfigurationSpec{ID: 499, VNI: 400499, MTU: 1500}}))
	var l2s v1.Layer2NetworkConfigurationList
	forbidden("alice lists the networks", alice.List(ctxT(t), &l2s))
	var list v1.PodNetworkConfigList
	waitFor(t, "bob may list PodNetworkConfigs in rbac-a", func() error {
		return bob.List(ctxT(t), &list, client.InNamespace("rbac-a"))
	})
	if len(list.Items) != 1 {
		t.Errorf("bob lists %d PodNetworkConfigs, want 1", len(list.Items))
	}
	forbidden("bob creates", bob.Create(ctxT(t), mtu("rbac-a", "bobs")))
	forbidden("bob lists rbac-b", bob.List(ctxT(t), &list, client.InNamespace("rbac-b")))
	if err := alice.Delete(ctxT(t), &cnf); err != nil {
		t.Errorf("alice deletes hers: %v", err)
	}
}

// waitFor retries f until it succeeds (RBAC decisions follow bindings through an informer).
func waitFor(t *testing.T, what string, f func() error) {
	t.Helper()
	waittest.Must(t, 20*time.Millisecond, 30*time.Second, what, waittest.Check(func() (bool, error) {
		err := f()
		return err == nil, err
	}))
}

// TestPodNetworkSamples applies config/samples/podnetwork-*.yaml as `kubectl apply --validate=strict` would, in
// file order (each file brings its namespace): the samples of the documentation pass the schema and admission.
func TestPodNetworkSamples(t *testing.T) {
	env := shared.Get(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "podnetwork-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("samples %v: want the extra interface and the MTU tuning", files)
	}
	var configs []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			err := env.Client.Create(ctxT(t), u, client.FieldValidation("Strict"))
			if u.GetKind() == "Namespace" && apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %s %s refused: %v", filepath.Base(f), u.GetKind(), u.GetName(), err)
			}
			if u.GetKind() == "PodNetworkConfig" {
				configs = append(configs, u.GetNamespace()+"/"+u.GetName())
			}
		}
	}
	slices.Sort(configs)
	if want := []string{"tenant-a/cnf-tenant-network", "tenant-a/mtu-1400"}; !slices.Equal(configs, want) {
		t.Errorf("PodNetworkConfigs of the samples %v, want %v", configs, want)
	}
}
