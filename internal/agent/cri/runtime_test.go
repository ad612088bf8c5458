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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/network-operator/network-operator/internal/agent/cri"
	"github.com/network-operator/network-operator/internal/images"
	"github.com/network-operator/network-operator/internal/kubenodes"
	testenv "github.com/network-operator/network-operator/internal/testenv"
	"github.com/network-operator/network-operator/internal/testreq"
	"github.com/network-operator/network-operator/internal/wait"
)

// TestRealRuntime asks a real containerd (a node of internal/kubenodes: kubelet + containerd in their own
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
	testreq.Need(t, "the pause image (internal/images builds it with go)", err)
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
