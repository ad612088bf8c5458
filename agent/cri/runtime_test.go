package cri_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/network-operator/network-operator/agent/cri"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/images"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestRealRuntime asks a real containerd (a node of test/harness/kubenodes: kubelet + containerd in their own
// namespaces) for the network namespaces of a pod and of a hostNetwork pod: the pod's is found through its pid
// (the namespace's bind mount lives in the node's mount namespace, not this process's: the path way says so) and
// holds the pod's IP; the hostNetwork pod's is refused.
func TestRealRuntime(t *testing.T) {
	testreq.Commands(t, "containerd", "runc", "ctr", "unshare", "nsenter")
	assets, err := testenv.AssetsDir()
	testreq.Need(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	nodeBins := os.Getenv("NETOP_K8S_BINARIES")
	_, err = os.Stat(filepath.Join(nodeBins, "kubelet"))
	testreq.Need(t, "node binaries (make k8s-binaries; NETOP_K8S_BINARIES names their directory)", err)
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local"} {
		_, err := os.Stat(p)
		testreq.Need(t, "CNI plugins (make deps installs containernetworking-plugins)", err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	built, err := images.Build(ctx, images.Options{ModuleDir: root, OutDir: t.TempDir(), Repo: "localhost/cri-test",
		Tag: "t", Meta: images.Meta{Version: "t", Created: time.Unix(0, 0)}}, "pause")
	testreq.Need(t, "the pause image (test/harness/images builds it with go)", err)
	pause := kubenodes.ImageRef{Archive: built[0].Path, Name: "localhost/cri-test/pause:t"}
	c, err := kubenodes.Start(ctx, kubenodes.Options{Prefix: fmt.Sprintf("cr%d-", os.Getpid()%100000), WorkDir: filepath.Join(t.TempDir(), "cluster"),
		APIServerBinDir: assets, NodeBinDir: nodeBins, PauseImage: pause, Nodes: []kubenodes.NodeSpec{{Name: "node-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close the node: %v", err)
		}
	})
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default service account, which the controller manager makes.
	err = wait.Poll(ctx, 200*time.Millisecond, time.Minute, "service account default/default", func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, hostNet bool) *corev1.Pod {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{HostNetwork: hostNet, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "pause", Image: pause.Name, ImagePullPolicy: corev1.PullNever}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var got *corev1.Pod
		err := wait.Poll(ctx, 200*time.Millisecond, 2*time.Minute, "pod "+name+" running", func(ctx context.Context) (bool, string, error) {
			p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			got = p
			return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pod, host := run("web", false), run("host", true)
	sock := c.Nodes()[0].CRISocket()

	for _, src := range []cri.Source{cri.SourceAuto, cri.SourcePID} {
		t.Run("pod via "+string(src), func(t *testing.T) {
			cl, err := cri.New(sock, cri.Options{Source: src})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			n, err := cl.PodNetns(ctx, string(pod.UID))
			if err != nil {
				t.Fatal(err)
			}
			if n.Source != cri.SourcePID {
				t.Errorf("found through %s (%s), want the pid: the namespace's bind mount is in the node's mount namespace", n.Source, n.Path)
			}
			h, err := n.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			nl, err := netlink.NewHandleAt(h)
			if err != nil {
				t.Fatal(err)
			}
			defer nl.Close()
			addrs, err := nl.AddrList(nil, netlink.FAMILY_V4)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, a := range addrs {
				found = found || a.IP.Equal(net.ParseIP(pod.Status.PodIP))
			}
			if !found {
				t.Errorf("namespace %s has %v, not the pod's IP %s", n.Path, addrs, pod.Status.PodIP)
			}
		})
	}
	t.Run("pod via path: not visible here, says so", func(t *testing.T) {
		cl, err := cri.New(sock, cri.Options{Source: cri.SourcePath})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, err = cl.PodNetns(ctx, string(pod.UID))
		if !errors.Is(err, cri.ErrNetnsUnavailable) || !strings.Contains(err.Error(), "is not visible here") {
			t.Fatalf("err = %v, want ErrNetnsUnavailable saying the path is not visible", err)
		}
		t.Logf("path way from outside the node's mount namespace: %v", err)
	})
	t.Run("podnet applies into the found namespace, the host is clean after the pod", func(t *testing.T) {
		applyIntoRealPod(ctx, t, c.Nodes()[0], cs, pod)
	})
	t.Run("hostNetwork pod refused", func(t *testing.T) {
		cl, err := cri.New(sock, cri.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if _, err := cl.PodNetns(ctx, string(host.UID)); !errors.Is(err, cri.ErrHostNetwork) {
			t.Fatalf("err = %v, want ErrHostNetwork", err)
		}
	})
}

// applyIntoRealPod puts a veth and a macvlan into the real pod (found through the runtime) from the node's
// namespace, where a bridge stands in for the network's, tunes the CNI's eth0, then deletes the pod: once the
// kubelet has torn its sandbox down, the host side is cleaned from the record alone.
func applyIntoRealPod(ctx context.Context, t *testing.T, node *kubenodes.Node, cs kubernetes.Interface, pod *corev1.Pod) {
	nodeNS, err := netns.GetFromPath(node.Netns)
	must(t, err)
	defer nodeNS.Close()
	host, err := netlink.NewHandleAt(nodeNS)
	must(t, err)
	defer host.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "l2br.100", MTU: 1450}}
	must(t, host.LinkAdd(br))
	t.Cleanup(func() { _ = host.LinkDel(br) })
	must(t, host.LinkSetUp(br))
	store := podrecords.New(filepath.Join(t.TempDir(), "pods"))
	a, err := podnet.New(host, podnet.Options{Store: store, HostNS: nodeNS})
	must(t, err)
	cl, err := cri.New(node.CRISocket(), cri.Options{})
	must(t, err)
	defer cl.Close()
	n, err := cl.PodNetns(ctx, string(pod.UID))
	must(t, err)
	h, err := n.Open()
	must(t, err)
	cfg := v1.PodNetworkConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cnf"}, Spec: v1.PodNetworkConfigSpec{
		Primary: &v1.PrimaryInterfaceTuning{Name: "eth0", MTU: ptr.To(int32(1400))},
		Interfaces: []v1.PodInterface{{Name: "net1", Type: v1.PodInterfaceVeth, Network: "net-a"},
			{Name: "mv1", Type: v1.PodInterfaceMACVLAN, Network: "net-a"}}}}
	in := podnet.Input{Pod: podnet.Pod{Namespace: "default", Name: pod.Name, UID: string(pod.UID)}, Configs: []v1.PodNetworkConfig{cfg},
		Node: &v1.NodeNetworkConfigSpec{Layer2s: []v1.NodeLayer2{{Name: "net-a", VLAN: 100, VNI: 10100, MTU: 1450}}}}
	p, err := a.Plan(ctx, in, h)
	must(t, err)
	start := time.Now()
	_, err = a.Apply(ctx, p, h)
	must(t, err)
	t.Logf("applied into the real pod in %v:\n%s", time.Since(start), p)
	pl, err := netlink.NewHandleAt(h)
	must(t, err)
	for _, name := range []string{"net1", "mv1"} {
		if _, err := pl.LinkByName(name); err != nil {
			t.Errorf("%s in the pod: %v", name, err)
		}
	}
	if eth0, err := pl.LinkByName("eth0"); err != nil || eth0.Attrs().MTU != 1400 {
		t.Errorf("the CNI's eth0: %v %v, want mtu 1400", eth0, err)
	}
	pl.Close()
	h.Close()

	zero := int64(0)
	must(t, cs.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	err = wait.Poll(ctx, 100*time.Millisecond, 2*time.Minute, "the pod's sandbox gone", func(ctx context.Context) (bool, string, error) {
		_, err := cl.PodNetns(ctx, string(pod.UID))
		if errors.Is(err, cri.ErrNoSandbox) {
			return true, "", nil
		}
		return false, fmt.Sprintf("runtime: %v", err), nil
	})
	must(t, err)
	p, err = a.Plan(ctx, podnet.Input{Pod: in.Pod}, 0)
	must(t, err)
	_, err = a.Apply(ctx, p, 0)
	must(t, err)
	t.Logf("after the pod:\n%s", p)
	links, err := host.LinkList()
	must(t, err)
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Alias, podnet.AliasPrefix) {
			t.Errorf("host link %s (%s) left after the pod", l.Attrs().Name, l.Attrs().Alias)
		}
	}
	if uids, err := store.UIDs(); err != nil || len(uids) > 0 {
		t.Errorf("records left: %v %v", uids, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
