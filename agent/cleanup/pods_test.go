package cleanup_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/network-operator/network-operator/agent/cleanup"
	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCleanupPods: an uninstall removes what pod networking made - the pod's interfaces and its tuning restored
// (in its namespace while it exists), the veth's host end, the records - and nothing else.
func TestCleanupPods(t *testing.T) {
	l := lab.New(t)
	ctx := context.Background()
	l.MustBuild(ctx, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "node"}, {Name: "pod"}},
		Veths:      []lab.Veth{{A: lab.Port{NS: "pod", Name: "eth0", MTU: 1500}, B: lab.Port{NS: "node", Name: "cnih"}}},
		Devices: []lab.Device{{Kind: lab.KindBridge, Port: lab.Port{NS: "node", Name: "l2br.100", MTU: 1450,
			Addrs: []string{"10.40.0.1/24"}}}},
	})
	node, pod := l.NS("node"), l.NS("pod")
	store := podrecords.New(filepath.Join(t.TempDir(), "pods"))
	pods, err := podnet.New(node.Handle(), podnet.Options{Store: store, HostNS: node.NsHandle()})
	must(t, err)
	uid := "9a1c-cleanup"
	cfg := v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "cnf"}, Spec: v1.PodNetworkConfigSpec{
		Primary:    &v1.PrimaryInterfaceTuning{Name: "eth0", MTU: ptr.To(int32(1400))},
		Interfaces: []v1.PodInterface{{Name: "net1", Type: v1.PodInterfaceVeth, Network: "net-a"}},
	}}
	in := podnet.Input{Pod: podnet.Pod{Namespace: "t", Name: "cnf-0", UID: uid}, Configs: []v1.PodNetworkConfig{cfg},
		Node: &v1.NodeNetworkConfigSpec{Layer2s: []v1.NodeLayer2{{Name: "net-a", VLAN: 100, VNI: 10100, MTU: 1450}}}}
	p, err := pods.Plan(ctx, in, pod.NsHandle())
	must(t, err)
	_, err = pods.Apply(ctx, p, pod.NsHandle())
	must(t, err)

	nc, err := nodenet.New(node.Handle(), nodenet.Settings{NetNS: node.NsHandle()})
	must(t, err)
	o := cleanup.Options{Netlink: nc, Pods: pods, Files: []string{store.Dir()},
		PodNetns: func(_ context.Context, u string) (netns.NsHandle, error) {
			if u != uid {
				t.Errorf("asked for the namespace of pod %s", u)
			}
			return netns.GetFromPath(pod.Path)
		}}
	plan, err := cleanup.PlanCleanup(ctx, o)
	must(t, err)
	defer plan.Close()
	text := plan.String()
	t.Logf("cleanup plan:\n%s", text)
	for _, want := range []string{"set mtu of pod eth0 1400 -> 1500 (restoring the original)", "delete host veth " + podnet.HostVethName(uid, "net1"),
		"remove " + store.Dir()} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan does not %q", want)
		}
	}
	var out bytes.Buffer
	must(t, cleanup.Apply(ctx, o, plan, &out))
	after, err := cleanup.PlanCleanup(ctx, o)
	must(t, err)
	defer after.Close()
	if !after.Empty() {
		t.Errorf("left after the cleanup:\n%s", after)
	}
	eth0, err := pod.Link("eth0")
	must(t, err)
	if eth0.Attrs().MTU != 1500 {
		t.Errorf("eth0 mtu %d, want 1500 again", eth0.Attrs().MTU)
	}
	for _, ns := range []*lab.Netns{node, pod} {
		links, err := ns.Handle().LinkList()
		must(t, err)
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) {
				t.Errorf("%s: link %s (%s) left", ns.Logical, l.Attrs().Name, l.Attrs().Alias)
			}
		}
	}
	if _, err := node.Link("l2br.100"); err != nil {
		t.Errorf("the bridge (not ours) is gone: %v", err)
	}
}
