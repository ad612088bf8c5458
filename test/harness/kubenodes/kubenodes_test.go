package kubenodes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/hostsnap"
	"github.com/network-operator/network-operator/test/harness/images"
	"github.com/network-operator/network-operator/test/harness/kubenodes"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// prerequisites checks what a cluster needs and builds the pause image.
func prerequisites(t *testing.T, ctx context.Context) (assets, nodeBins string, pause kubenodes.ImageRef) {
	t.Helper()
	testreq.Commands(t, "containerd", "runc", "ctr", "unshare", "nsenter")
	assets, err := testenv.AssetsDir()
	testreq.Need(t, "API-server binaries (kube-apiserver, etcd; make envtest builds them)", err)
	nodeBins = nodeBinaries()
	_, err = os.Stat(filepath.Join(nodeBins, "kubelet"))
	testreq.Need(t, "node binaries (make k8s-binaries; NETOP_K8S_BINARIES names their directory, else its cache)", err)
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local"} {
		_, err := os.Stat(p)
		testreq.Need(t, "CNI plugins (make deps installs containernetworking-plugins)", err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.Build(ctx, images.Options{ModuleDir: root, OutDir: t.TempDir(), Repo: "localhost/kubenodes-test",
		Tag: "t", Meta: images.Meta{Version: "t", Created: time.Unix(0, 0)}}, "pause")
	testreq.Need(t, "the pause image (test/harness/images builds it with go)", err)
	return assets, nodeBins, kubenodes.ImageRef{Archive: built[0].Path, Name: "localhost/kubenodes-test/pause:t"}
}

// nodeBinaries is the directory of kubelet and the other node binaries: $NETOP_K8S_BINARIES, else where
// hack/k8s-binaries.sh caches the default version's (the kernel lane's guest gets no such variable, and sees
// the host's cache).
func nodeBinaries() string {
	if dir := os.Getenv("NETOP_K8S_BINARIES"); dir != "" {
		return dir
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	version := os.Getenv("ENVTEST_K8S_VERSION")
	if version == "" {
		version = testenv.DefaultK8sVersion
	}
	return filepath.Join(cache, "network-operator", "k8s", version)
}

func TestTwoNodes(t *testing.T) {
	before := takeHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	assets, nodeBins, pause := prerequisites(t, ctx)

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
	checkLeftovers(t, before, id, work)
}

// TestOneNodeReadyOnCgroupV2: on a host with cgroup v2 only (any current systemd distribution; the kernel lane's
// Debian 13 guest, without systemd), one node comes Ready: its cgroup, kubelet's cgroupRoot, has the controllers
// kubelet needs and kubelet's QoS cgroups below it, and Close removes it. Elsewhere it skips naming the layout.
func TestOneNodeReadyOnCgroupV2(t *testing.T) {
	layout, unified, err := kubenodes.CgroupLayout()
	if err != nil {
		t.Fatal(err)
	}
	if !unified {
		testreq.KernelLacks(t, "cgroup v2 alone (the kernel lane runs this in Debian 13)", fmt.Errorf("/sys/fs/cgroup is %s", layout))
	}
	before := takeHost(t)
	// Generous: under QEMU's emulation a process starts 25-50 times slower than on a host.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	assets, nodeBins, pause := prerequisites(t, ctx)
	id := fmt.Sprintf("kv%d-", os.Getpid()%100000)
	work := t.TempDir()
	start := time.Now()
	c, err := kubenodes.Start(ctx, kubenodes.Options{Prefix: id, WorkDir: filepath.Join(work, "cluster"), APIServerBinDir: assets,
		NodeBinDir: nodeBins, PauseImage: pause, Out: testWriter{t}, Slowness: 10, Nodes: []kubenodes.NodeSpec{{Name: "node-v2"}}})
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
	t.Logf("1 node Ready on %s in %.1fs", layout, time.Since(start).Seconds())

	cgroup := filepath.Join("/sys/fs/cgroup", id+"k1") // the cluster's first node
	root, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(cgroup, "cgroup.controllers"))
	if err != nil {
		t.Fatalf("the node's cgroup: %v", err)
	}
	for _, ctrl := range []string{"cpu", "cpuset", "memory", "hugetlb", "pids"} { // kubelet's
		if slices.Contains(strings.Fields(string(root)), ctrl) && !slices.Contains(strings.Fields(string(have)), ctrl) {
			t.Errorf("controllers of %s: %q, want %s (the root has it)", cgroup, have, ctrl)
		}
	}
	if _, err := os.Stat(filepath.Join(cgroup, "kubepods", "besteffort")); err != nil {
		t.Errorf("kubelet's QoS cgroups below the node's: %v", err)
	}

	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cgroup); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the node's cgroup after Close: %v, want it gone", err)
	}
	checkLeftovers(t, before, id, work)
}

// hostSnapshot is the host before a test, and how many clusters of other processes shared it then.
type hostSnapshot struct {
	*hostsnap.Snapshot
	others int
}

func takeHost(t *testing.T) hostSnapshot {
	t.Helper()
	others, err := kubenodes.HostOtherHolders()
	if err != nil {
		t.Fatal(err)
	}
	return hostSnapshot{Snapshot: hostsnap.Take(hostsnap.Options{}), others: others}
}

// checkLeftovers fails for what the test's clusters (names starting with id, files in work) left on the host.
// Only what is ours counts: other tests may run in parallel, and while a cluster of theirs ran before or after
// ours, what clusters share (sysctls, mount points, the runtime directory) and their processes are theirs.
func checkLeftovers(t *testing.T, before hostSnapshot, id, work string) {
	t.Helper()
	others, err := kubenodes.HostOtherHolders()
	if err != nil {
		t.Error(err)
	}
	others += before.others
	for _, f := range hostsnap.Diff(before.Snapshot, hostsnap.Take(hostsnap.Options{}), hostsnap.Ancestors(os.Getpid())) {
		ours := strings.Contains(f, id) || strings.Contains(f, work)
		// Shared by every cluster: ours to restore when no cluster of another process ran meanwhile.
		shared := strings.Contains(f, "sysctl") || strings.Contains(f, "node state path")
		switch {
		case ours, shared && others == 0:
			t.Errorf("left behind: %s", f)
		case shared:
			t.Logf("%s (%d clusters of other processes ran)", f, others)
		default:
			t.Logf("%s (another test's)", f)
		}
	}
}

// TestOverlappingClusters: two clusters whose lives overlap, stopped in either order, each with pods (so shims
// that teardown kills) and one shim killed while its cluster runs, leave the host's runtime directory as it was
// and no socket of theirs in it.
func TestOverlappingClusters(t *testing.T) {
	before := takeHost(t)
	runtimeBefore := tree(t, kubenodes.HostRuntimeDir)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	assets, nodeBins, pause := prerequisites(t, ctx)
	id := fmt.Sprintf("ko%d-", os.Getpid()%100000)
	// A short work directory: containerd's sockets are in it (a unix socket's path has 104 bytes).
	base, err := os.MkdirTemp("", "ko")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	for i, order := range []string{"first started stops first", "last started stops first"} {
		t.Run(order, func(t *testing.T) {
			var clusters []*kubenodes.Cluster
			var killed, running []string // a's killed shim's sockets; b's running shims' sockets
			for j, name := range []string{"a", "b"} {
				c, err := kubenodes.Start(ctx, kubenodes.Options{Prefix: fmt.Sprintf("%s%d%s", id, i, name),
					WorkDir: filepath.Join(base, fmt.Sprintf("%d%s", i, name)), APIServerBinDir: assets, NodeBinDir: nodeBins,
					PauseImage: pause, Out: testWriter{t}, Nodes: []kubenodes.NodeSpec{{Name: "node-" + name}}})
				if err != nil {
					t.Fatal(err)
				}
				clusters = append(clusters, c)
				t.Cleanup(func() { _ = c.Close() }) // after a failure; Close is idempotent
				cs, err := kubernetes.NewForConfig(c.RESTConfig())
				if err != nil {
					t.Fatal(err)
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "p"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "p", Image: pause.Name, ImagePullPolicy: corev1.PullNever}}}}
				// The pod is admitted once the controller manager made the namespace's default service account.
				err = wait.Poll(ctx, 200*time.Millisecond, time.Minute, "pod p created", func(ctx context.Context) (bool, string, error) {
					_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
					return err == nil, fmt.Sprint(err), nil
				})
				if err != nil {
					t.Fatal(err)
				}
				waitPods(t, ctx, cs, "app=p", 1)
				shims := kubenodes.ShimSockets(c.Nodes()[0].CRISocket())
				if len(shims) == 0 {
					t.Fatalf("cluster %s: no shim found for its running pod", name)
				}
				for _, s := range shims {
					if _, err := os.Stat(s); err != nil {
						t.Errorf("shim socket of cluster %s: %v", name, err)
					}
				}
				if j == 0 {
					// A shim killed while its cluster runs leaves its socket (the kubelet starts the pod again).
					killed = shims
					killShims(t, c.Nodes()[0].CRISocket())
				} else {
					running = shims
				}
			}
			if order == "last started stops first" {
				slices.Reverse(clusters)
			}
			if err := clusters[0].Close(); err != nil {
				t.Error(err)
			}
			for _, s := range running {
				_, err := os.Lstat(s)
				if stopped := order == "last started stops first"; stopped != (err != nil) {
					t.Errorf("b's shim socket %s after the first cluster stopped: %v (b stopped: %v)", s, err, stopped)
				}
			}
			if err := clusters[1].Close(); err != nil {
				t.Error(err)
			}
			others, err := kubenodes.HostOtherHolders()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(running, killed...) {
				// A killed shim's socket goes with the last cluster out: now, unless another process runs one.
				if _, err := os.Lstat(s); err == nil && (others == 0 || slices.Contains(running, s)) {
					t.Errorf("shim socket %s left behind", s)
				}
			}
			if others += before.others; others > 0 {
				t.Logf("clusters of other processes used %s during the test: its contents are theirs too", kubenodes.HostRuntimeDir)
			} else if after := tree(t, kubenodes.HostRuntimeDir); !slices.Equal(after, runtimeBefore) {
				t.Errorf("%s after both clusters: %v, before: %v", kubenodes.HostRuntimeDir, after, runtimeBefore)
			}
		})
	}
	checkLeftovers(t, before, id, base)
}

// killShims SIGKILLs the shims of the containerd at address.
func killShims(t *testing.T, address string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(data), "containerd-shim") &&
			strings.Contains(string(data), "-address\x00"+address+"\x00") {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatalf("no shim of %s to kill", address)
	}
}

// tree lists the paths below root (nil when it does not exist).
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
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
