package kubenodes_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/network-operator/network-operator/internal/hostsnap"
	"github.com/network-operator/network-operator/internal/images"
	"github.com/network-operator/network-operator/internal/kubenodes"
	"github.com/network-operator/network-operator/internal/namedns"
	testenv "github.com/network-operator/network-operator/internal/testenv"
	"github.com/network-operator/network-operator/internal/testreq"
	"github.com/network-operator/network-operator/internal/wait"
)

func TestTwoNodes(t *testing.T) {
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
	before := hostsnap.Take(hostsnap.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	imgDir := t.TempDir()
	built, err := images.Build(ctx, images.Options{ModuleDir: root, OutDir: imgDir, Repo: "localhost/kubenodes-test",
		Tag: "t", Meta: images.Meta{Version: "t", Created: time.Unix(0, 0)}}, "pause")
	testreq.Need(t, "the pause image (internal/images builds it with go)", err)
	pause := kubenodes.ImageRef{Archive: built[0].Path, Name: "localhost/kubenodes-test/pause:t"}

	id := fmt.Sprintf("kt%d-", os.Getpid()%100000)
	callerNS := id + "caller"
	h, err := namedns.Create(callerNS)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	callerDeleted := false
	deleteCallerNS := func() {
		if !callerDeleted {
			callerDeleted = true
			if err := namedns.Delete(callerNS); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(deleteCallerNS)
	work := t.TempDir()
	start := time.Now()
	c, err := kubenodes.Start(ctx, kubenodes.Options{Prefix: id, WorkDir: filepath.Join(work, "cluster"), APIServerBinDir: assets,
		NodeBinDir: nodeBins, PauseImage: pause, Out: testWriter{t},
		Nodes: []kubenodes.NodeSpec{{Name: "node-a", Netns: namedns.Path(callerNS)}, {Name: "node-b", Labels: map[string]string{"role": "b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
	}()
	t.Logf("2 nodes Ready in %.1fs", time.Since(start).Seconds())
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("hostNetwork DaemonSet", func(t *testing.T) {
		labels := map[string]string{"app": "host"}
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "host", Namespace: "default"},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					HostNetwork: true, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					// The nodes' directory with mount propagation (as an agent mounts its node's CRI socket
					// directory): the runtime refuses it unless the path is on a shared or slave mount.
					Volumes: []corev1.Volume{{Name: "nodes", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: c.NodesDir()}}}},
					Containers: []corev1.Container{{Name: "pause", Image: pause.Name, ImagePullPolicy: corev1.PullNever,
						VolumeMounts: []corev1.VolumeMount{{Name: "nodes", MountPath: "/nodes", MountPropagation: ptr.To(corev1.MountPropagationHostToContainer)}}}}}}}}
		if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPods(t, ctx, cs, "app=host", 2)
	})

	t.Run("pod network and node-bound token", func(t *testing.T) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{"role": "b"},
				Containers: []corev1.Container{{Name: "web", Image: pause.Name, ImagePullPolicy: corev1.PullNever,
					Command: []string{"/usr/local/bin/pause", "-http", ":8080"}}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPods(t, ctx, cs, "app=web", 1)[0]
		if !c.Nodes()[1].PodCIDR.Contains(mustAddr(t, p.Status.PodIP)) {
			t.Errorf("pod IP %s not in node-b's pod subnet %s", p.Status.PodIP, c.Nodes()[1].PodCIDR)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + p.Status.PodIP + ":8080/")
		if err != nil {
			t.Fatalf("HTTP from the host to the pod: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.TrimSpace(string(body)) != "web" {
			t.Errorf("pod answered %q, want its hostname web", body)
		}
		logs, err := cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			t.Errorf("logs through the kubelet: %v", err)
		}
		t.Logf("logs of web: %q", logs)
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web", UID: p.UID}}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.AnonymousClientConfig(c.RESTConfig())
		cfg.BearerToken = tr.Status.Token
		as, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ssr, err := as.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := ssr.Status.UserInfo.Extra["authentication.kubernetes.io/node-name"]; len(got) != 1 || got[0] != "node-b" {
			t.Errorf("token bound to a pod on node-b: node-name claim %v, want [node-b] (extra %v)", got, ssr.Status.UserInfo.Extra)
		}
	})

	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	deleteCallerNS() // the caller's namespace is the caller's to delete
	// Only what is ours counts: other tests may run in parallel on the host.
	for _, f := range hostsnap.Diff(before, hostsnap.Take(hostsnap.Options{}), hostsnap.Ancestors(os.Getpid())) {
		if strings.Contains(f, id) || strings.Contains(f, "sysctl") || strings.Contains(f, "kubelet") ||
			strings.Contains(f, "containerd") || strings.Contains(f, "/var/lib/kubelet") {
			t.Errorf("left behind: %s", f)
		}
	}
}

func waitPods(t *testing.T, ctx context.Context, cs kubernetes.Interface, selector string, want int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	err := wait.Poll(ctx, 200*time.Millisecond, 2*time.Minute, "pods "+selector, func(ctx context.Context) (bool, string, error) {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		pods = l.Items
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == want, fmt.Sprintf("%d of %d running: %+v", running, want, pods), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatalf("pod IP %q: %v", s, err)
	}
	return a
}
