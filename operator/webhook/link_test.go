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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// kubectl runs the kubectl of the node binaries (make k8s-binaries; $NETOP_K8S_BINARIES) against env as a cluster
// administrator and returns its output.
func kubectl(t *testing.T, env *testenv.Env, args ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(os.Getenv("NETOP_K8S_BINARIES"), "kubectl")
	_, err := os.Stat(bin)
	if os.Getenv("NETOP_K8S_BINARIES") == "" {
		err = errors.New("NETOP_K8S_BINARIES is not set")
	}
	testreq.Need(t, "kubectl (make k8s-binaries; NETOP_K8S_BINARIES names its directory)", err)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctxT(t), bin, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

func linkObject(t *testing.T, name, spec string) *unstructured.Unstructured {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("spec of %s: %v", name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": s}}
	u.SetAPIVersion(v1.GroupVersion.String())
	u.SetKind(v1.KindLink)
	u.SetName(name)
	return u
}

// deleteLinks removes every Link (and the gateway sample's network) so the package's other tests see none.
func deleteLinks(t *testing.T) {
	t.Helper()
	env := shared.Get(t)
	if err := env.Client.DeleteAllOf(context.Background(), &v1.Link{}); err != nil {
		t.Error(err)
	}
	l2 := &v1.Layer2NetworkConfiguration{}
	l2.Name = "gateway-net"
	if err := env.Client.Delete(context.Background(), l2); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

// TestLinkAdmission: kubectl applies the gateway-network samples (layer-2 network and Links) and applies them again
// unchanged; Links are admitted in any order (a reference to a Link that does not exist yet waits in the
// operator); bad Links are refused, by the schema or the webhook, naming the field and the value.
func TestLinkAdmission(t *testing.T) {
	env := shared.Get(t)
	t.Cleanup(func() { deleteLinks(t) })
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "config", "samples", "gateway-network")
	out, err := kubectl(t, env, "apply", "-k", dir)
	if err != nil {
		t.Fatalf("kubectl apply -k %s: %v\n%s", dir, err, out)
	}
	for _, want := range []string{"layer2networkconfiguration.network.network-operator.io/gateway-net created",
		"link.network.network-operator.io/uplink created", "link.network.network-operator.io/gateway-bridge created",
		"link.network.network-operator.io/gateway-vxlan created"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply says %q, not %q", out, want)
		}
	}
	if out, err := kubectl(t, env, "apply", "-k", dir); err != nil || strings.Count(out, " unchanged") != 4 {
		t.Errorf("kubectl apply again: %v\n%s", err, out)
	}
	var vx v1.Link
	if err := env.Client.Get(ctxT(t), client.ObjectKey{Name: "gateway-vxlan"}, &vx); err != nil {
		t.Fatal(err)
	}
	if x := vx.Spec.VXLAN; x == nil || x.VNID != 500501 || x.Master.Name != "gateway-bridge" || x.Flooding.Mode != v1.FloodingStatic {
		t.Errorf("stored gateway-vxlan %+v", vx.Spec)
	}

	good := []struct{ name, spec string }{
		// Any apply order: the VXLAN before its bridge and uplink.
		{"order-vxlan", `{interfaceName: ordvx, vxlan: {vnid: 7001, device: {name: order-uplink}, master: {name: order-bridge}, flooding: {mode: static}}}`},
		{"order-bridge", `{interfaceName: ordbr, bridge: {}}`},
		{"order-uplink", `{interfaceName: eth1, unmanaged: {}}`},
		{"evpn-vxlan", `{interfaceName: evx, vxlan: {vnid: 7002, master: {name: order-bridge}}}`},
		{"listed-peers", `{interfaceName: lvx, vxlan: {vnid: 7003, flooding: {mode: static, peers: [192.0.2.1, 192.0.2.2]}}}`},
	}
	for _, g := range good {
		if err := env.Client.Create(ctxT(t), linkObject(t, g.name, g.spec)); err != nil {
			t.Fatalf("good Link %s refused: %v", g.name, err)
		}
	}

	bad := []rejection{
		{spec: `{interfaceName: x0}`, path: "spec", value: "exactly one of bridge, vxlan and unmanaged must be set", by: "schema"},
		{spec: `{interfaceName: x0, bridge: {}, unmanaged: {}}`, path: "spec", value: "exactly one of bridge, vxlan and unmanaged", by: "schema"},
		{spec: `{interfaceName: interface-longer0, bridge: {}}`, path: "spec.interfaceName", value: "interface name interface-longer0 has more than 15 bytes", by: "schema"},
		{spec: `{interfaceName: "a/b", bridge: {}}`, path: "spec.interfaceName", value: `"a/b"`, by: "webhook"},
		{spec: `{interfaceName: l2br.7, bridge: {}}`, path: "spec.interfaceName", value: `starts with "l2br."`, by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {port: 4789, flooding: {mode: static}}}`, path: "spec.vxlan.vnid", value: "Required value", by: "schema"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 16777216, flooding: {mode: static}}}`, path: "spec.vxlan.vnid", value: "16777216", by: "schema"},
		{spec: `{interfaceName: x0, bridge: {mtu: 9001}}`, path: "spec.bridge.mtu", value: "9001", by: "schema"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010}}`, path: "spec.vxlan.master", value: "needs a master bridge", by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010, flooding: {mode: evpn, peers: [192.0.2.1]}}}`, path: "spec.vxlan.flooding.peers", value: "192.0.2.1", by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010, flooding: {mode: static, peers: [192.0.2.1, 192.0.2.1]}}}`, path: "spec.vxlan.flooding.peers[1]", value: `Duplicate value: "192.0.2.1"`, by: "schema"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010, flooding: {mode: static, peers: [192.0.2.1, "2001:db8::1"]}}}`, path: "spec.vxlan.flooding.peers[1]", value: `"2001:db8::1"`, by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010, master: {name: order-uplink}, flooding: {mode: static}}}`, path: "spec.vxlan.master.name", value: `Link "order-uplink" is a unmanaged: a master must be a bridge`, by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7010, device: {name: order-vxlan}, flooding: {mode: static}}}`, path: "spec.vxlan.device.name", value: `"order-vxlan"`, by: "webhook"},
		{spec: `{interfaceName: gwbr0, bridge: {}, nodeSelector: {matchLabels: {network.example.com/gateway-network: "true"}}}`, path: "spec.interfaceName",
			value: `also the interface of Link "gateway-bridge" on the same nodes`, by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 500500, flooding: {mode: static}}}`, path: "spec.vxlan.vnid", value: `Layer2NetworkConfiguration "gateway-net"`, by: "webhook"},
		{spec: `{interfaceName: x0, vxlan: {vnid: 7001, flooding: {mode: static}}}`, path: "spec.vxlan.vnid", value: `Link "order-vxlan"`, by: "webhook"},
	}
	for i, b := range bad {
		name := fmt.Sprintf("bad-link-%02d", i)
		t.Run(fmt.Sprintf("%s/%s", name, b.path), func(t *testing.T) {
			err := env.Client.Create(ctxT(t), linkObject(t, name, b.spec))
			if err == nil {
				t.Fatalf("accepted Link %s", b.spec)
			}
			checkRejection(t, err, b.path, b.value, b.by)
		})
	}

	t.Run("a dependency cycle, and a bridge another Link needs turned into a VXLAN", func(t *testing.T) {
		u := linkObject(t, "order-bridge", `{interfaceName: ordbr, vxlan: {vnid: 7020, master: {name: order-vxlan}}}`)
		var cur unstructured.Unstructured
		cur.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctxT(t), client.ObjectKey{Name: "order-bridge"}, &cur); err != nil {
			t.Fatal(err)
		}
		u.SetResourceVersion(cur.GetResourceVersion())
		err := env.Client.Update(ctxT(t), u)
		if err == nil {
			t.Fatal("update accepted")
		}
		checkRejection(t, err, "spec.vxlan.master.name", "dependency cycle: order-bridge -> order-vxlan -> order-bridge", "webhook")
		checkRejection(t, err, "spec", `Link "evpn-vxlan" has this Link as its master`, "webhook")
	})

	var links v1.LinkList
	if err := env.Client.List(ctxT(t), &links); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links.Items {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	if want := []string{"evpn-vxlan", "gateway-bridge", "gateway-vxlan", "listed-peers", "order-bridge", "order-uplink", "order-vxlan", "uplink"}; !slices.Equal(names, want) {
		t.Errorf("stored Links %v, want %v", names, want)
	}
}
