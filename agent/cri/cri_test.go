package cri_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/network-operator/network-operator/agent/cri"
)

// sandbox is one sandbox of the fake runtime.
type sandbox struct {
	id, podUID string
	state      runtimeapi.PodSandboxState
	created    int64
	hostNet    bool
	pid        int
	netnsPath  string
	noInfo     bool
}

// fakeRuntime is an in-process CRI runtime service answering ListPodSandbox and PodSandboxStatus like
// containerd (verbose info with pid and runtime spec).
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	mu        sync.Mutex
	sandboxes []sandbox
}

func (f *fakeRuntime) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &runtimeapi.ListPodSandboxResponse{}
	for _, s := range f.sandboxes {
		fl := req.GetFilter()
		if st := fl.GetState(); st != nil && st.GetState() != s.state {
			continue
		}
		if uid, ok := fl.GetLabelSelector()[cri.PodUIDLabel]; ok && uid != s.podUID {
			continue
		}
		resp.Items = append(resp.Items, &runtimeapi.PodSandbox{Id: s.id, State: s.state, CreatedAt: s.created,
			Labels: map[string]string{cri.PodUIDLabel: s.podUID}})
	}
	return resp, nil
}

func (f *fakeRuntime) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sandboxes {
		if s.id != req.GetPodSandboxId() {
			continue
		}
		mode := runtimeapi.NamespaceMode_POD
		if s.hostNet {
			mode = runtimeapi.NamespaceMode_NODE
		}
		resp := &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{Id: s.id, State: s.state, CreatedAt: s.created,
			Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{Network: mode}}}}}
		if req.GetVerbose() && !s.noInfo {
			info := map[string]any{"pid": s.pid, "processStatus": "running", "netNamespaceClosed": false,
				"runtimeSpec": map[string]any{"linux": map[string]any{"namespaces": []map[string]string{
					{"type": "pid"}, {"type": "network", "path": s.netnsPath}}}}}
			data, err := json.Marshal(info)
			if err != nil {
				return nil, err
			}
			resp.Info = map[string]string{"info": string(data)}
		}
		return resp, nil
	}
	return nil, status.Errorf(codes.NotFound, "an error occurred when try to find sandbox %q: not found", req.GetPodSandboxId())
}

// serve runs the fake runtime on a unix socket until the test ends and returns the socket's path.
func serve(t *testing.T, f *fakeRuntime) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("fake runtime: %v", err)
		}
	})
	return sock
}

// procRoot makes a proc directory whose pid 2 is kthreadd (the host's PID namespace) or not, with pid 4242's
// ns/net.
func procRoot(t *testing.T, host bool) string {
	t.Helper()
	root := t.TempDir()
	stat := "2 (kthreadd) S 0 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 20 0 1 0 8 0 0"
	if !host {
		stat = "2 (sh) S 1 2 2 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0"
	}
	for _, d := range []string{"2", "4242/ns"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "2", "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "4242", "ns", "net"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestPodNetns(t *testing.T) {
	dir := t.TempDir()
	// A namespace file as the agent sees a mounted netns directory: this process's own (nsfs).
	visible := "/proc/" + strconv.Itoa(os.Getpid()) + "/ns/net"
	hidden := filepath.Join(dir, "not-mounted", "cni-2222")
	// The empty mount point a runtime in another mount namespace mounted the namespace on.
	mountPoint := filepath.Join(dir, "cni-3333")
	if err := os.WriteFile(mountPoint, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{sandboxes: []sandbox{
		{id: "old-ready-sandbox-of-pod-a", podUID: "pod-a", state: runtimeapi.PodSandboxState_SANDBOX_READY, created: 1, pid: 1, netnsPath: hidden},
		{id: "new-ready-sandbox-of-pod-a", podUID: "pod-a", state: runtimeapi.PodSandboxState_SANDBOX_READY, created: 2, pid: 4242, netnsPath: visible},
		{id: "stopped-sandbox-of-pod-b", podUID: "pod-b", state: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, created: 3, pid: 4242, netnsPath: visible},
		{id: "sandbox-of-pod-c", podUID: "pod-c", state: runtimeapi.PodSandboxState_SANDBOX_READY, pid: 4242, netnsPath: hidden},
		{id: "host-network-pod-d", podUID: "pod-d", state: runtimeapi.PodSandboxState_SANDBOX_READY, hostNet: true, pid: 4242},
		{id: "no-verbose-info-pod-e", podUID: "pod-e", state: runtimeapi.PodSandboxState_SANDBOX_READY, noInfo: true},
		{id: "sandbox-of-pod-f", podUID: "pod-f", state: runtimeapi.PodSandboxState_SANDBOX_READY, pid: 4242, netnsPath: mountPoint},
	}}
	sock := serve(t, rt)
	hostProc, podProc := procRoot(t, true), procRoot(t, false)
	for _, tc := range []struct {
		name     string
		source   cri.Source
		proc     string
		pod      string
		wantPath string
		wantSrc  cri.Source
		wantErr  error
		errHas   []string
	}{
		{name: "auto: the newest ready sandbox's visible path", source: cri.SourceAuto, proc: podProc, pod: "pod-a",
			wantPath: visible, wantSrc: cri.SourcePath},
		{name: "pid: /proc/<pid>/ns/net in the host's PID namespace", source: cri.SourcePID, proc: hostProc, pod: "pod-a",
			wantPath: filepath.Join(hostProc, "4242", "ns", "net"), wantSrc: cri.SourcePID},
		{name: "auto: path not mounted, falls back to the pid", source: cri.SourceAuto, proc: hostProc, pod: "pod-c",
			wantPath: filepath.Join(hostProc, "4242", "ns", "net"), wantSrc: cri.SourcePID},
		{name: "auto: neither: the error names both", source: cri.SourceAuto, proc: podProc, pod: "pod-c",
			wantErr: cri.ErrNetnsUnavailable, errHas: []string{hidden + " is not visible here", "mount the runtime's netns directory " + filepath.Dir(hidden), "hostPID: true"}},
		{name: "path: only the mount point is here: not taken, says so", source: cri.SourcePath, proc: hostProc, pod: "pod-f",
			wantErr: cri.ErrNetnsUnavailable, errHas: []string{"not a namespace file (nsfs)"}},
		{name: "auto: only the mount point is here: the pid", source: cri.SourceAuto, proc: hostProc, pod: "pod-f",
			wantPath: filepath.Join(hostProc, "4242", "ns", "net"), wantSrc: cri.SourcePID},
		{name: "path: not mounted: says to mount it", source: cri.SourcePath, proc: hostProc, pod: "pod-c",
			wantErr: cri.ErrNetnsUnavailable, errHas: []string{"mount the runtime's netns directory"}},
		{name: "pid: not the host's PID namespace: says hostPID", source: cri.SourcePID, proc: podProc, pod: "pod-a",
			wantErr: cri.ErrNetnsUnavailable, errHas: []string{"hostPID: true", "pid 2 is not kthreadd"}},
		{name: "only a stopped sandbox", source: cri.SourceAuto, proc: hostProc, pod: "pod-b", wantErr: cri.ErrNoSandbox},
		{name: "no sandbox", source: cri.SourceAuto, proc: hostProc, pod: "pod-z", wantErr: cri.ErrNoSandbox},
		{name: "host network", source: cri.SourceAuto, proc: hostProc, pod: "pod-d", wantErr: cri.ErrHostNetwork},
		{name: "a runtime without verbose info", source: cri.SourceAuto, proc: hostProc, pod: "pod-e", wantErr: cri.ErrNetnsUnavailable,
			errHas: []string{"no \"info\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cri.New(sock, cri.Options{Source: tc.source, ProcRoot: tc.proc})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n, err := c.PodNetns(ctx, tc.pod)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Path != tc.wantPath || n.Source != tc.wantSrc {
				t.Errorf("got %+v, want path %s via %s", n, tc.wantPath, tc.wantSrc)
			}
		})
	}
}

func TestRuntimeUnavailable(t *testing.T) {
	c, err := cri.New(filepath.Join(t.TempDir(), "missing.sock"), cri.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.PodNetns(ctx, "pod-a")
	if !errors.Is(err, cri.ErrRuntimeUnavailable) || !strings.Contains(err.Error(), "missing.sock") {
		t.Fatalf("err = %v, want ErrRuntimeUnavailable naming the socket", err)
	}
}

func TestBadSource(t *testing.T) {
	if _, err := cri.New("/x.sock", cri.Options{Source: "proc"}); !errors.Is(err, cri.ErrBadSource) {
		t.Fatalf("err = %v, want ErrBadSource", err)
	}
}

// TestOpen opens what PodNetns found: here the test's own namespace through /proc/self.
func TestOpen(t *testing.T) {
	h, err := cri.Netns{SandboxID: "x", Path: "/proc/" + strconv.Itoa(os.Getpid()) + "/ns/net"}.Open()
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := (cri.Netns{SandboxID: "x", Path: filepath.Join(t.TempDir(), "none")}).Open(); err == nil {
		t.Fatal("opened a missing namespace")
	}
}
