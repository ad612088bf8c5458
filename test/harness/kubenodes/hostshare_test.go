package kubenodes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/hostsnap"
)

// testShare is a hostShare below a temp directory, with a short path (a unix socket's has at most 107 bytes, a
// shim's name 64 of them), its runtime directory absent as on a fresh host and two settings at "0".
func testShare(t *testing.T) hostShare {
	t.Helper()
	base, err := os.MkdirTemp("", "kn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	h := hostShare{State: filepath.Join(base, "state"), RuntimeDir: filepath.Join(base, "containerd"), Lock: base,
		SysctlDir: filepath.Join(base, "sys"), Sysctls: []string{"vm/overcommit_memory", "kernel/panic"}}
	for _, k := range h.Sysctls {
		setSysctl(t, h, k, "0")
	}
	return h
}

func setSysctl(t *testing.T, h hostShare, k, v string) {
	t.Helper()
	p := filepath.Join(h.SysctlDir, k)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sysctl(t *testing.T, h hostShare, k string) string {
	t.Helper()
	v, err := os.ReadFile(filepath.Join(h.SysctlDir, k))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(v))
}

// deadSocket leaves a unix socket file that nothing listens on (a killed shim's).
func deadSocket(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func mustAcquire(t *testing.T, h hostShare) *hostLease {
	t.Helper()
	l, err := h.acquire()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHostShareOverlap: two clusters' leases overlapping in time, released in either order, each with a killed
// shim's socket of its own and one of a shim killed during the run: nothing shared is restored or removed while
// either holds a lease, and after the last one the host is as it was - the sysctls as before the first kubelet
// (not as the second cluster found them), no runtime directory.
func TestHostShareOverlap(t *testing.T) {
	for _, order := range []string{"first in first out", "first in last out"} {
		t.Run(order, func(t *testing.T) {
			h := testShare(t)
			mountPoint := filepath.Join(h.Lock, "var", "lib", "kubelet") // a node's, missing on this host
			a := mustAcquire(t, h)
			setSysctl(t, h, "kernel/panic", "10") // a's kubelet
			if err := a.makeDirs(mountPoint); err != nil {
				t.Fatal(err)
			}
			b := mustAcquire(t, h)
			setSysctl(t, h, "vm/overcommit_memory", "1") // b's kubelet
			if err := b.makeDirs(mountPoint, filepath.Join(h.Lock, "etc", "cni")); err != nil {
				t.Fatal(err)
			}
			sockA, sockB := h.shimSocket("/a/containerd.sock", "k8s.io", "x"), h.shimSocket("/b/containerd.sock", "k8s.io", "x")
			deadSocket(t, sockA)
			deadSocket(t, sockB)
			orphan := filepath.Join(h.RuntimeDir, "s", "orphan")
			deadSocket(t, orphan)
			first, second, firstOwn, secondOwn := a, b, sockA, sockB
			if order == "first in last out" {
				first, second, firstOwn, secondOwn = b, a, sockB, sockA
			}
			if err := first.release([]string{firstOwn}); err != nil {
				t.Fatal(err)
			}
			if exists(firstOwn) {
				t.Errorf("own socket %s still there", firstOwn)
			}
			if !exists(secondOwn) || !exists(orphan) || !exists(mountPoint) || sysctl(t, h, "kernel/panic") != "10" ||
				sysctl(t, h, "vm/overcommit_memory") != "1" {
				t.Fatalf("the first release restored or removed what the other cluster still uses")
			}
			if err := second.release([]string{secondOwn}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{h.RuntimeDir, h.State, filepath.Join(h.Lock, "var"), filepath.Join(h.Lock, "etc")} {
				if exists(p) {
					t.Errorf("%s left after the last lease", p)
				}
			}
			for _, k := range h.Sysctls {
				if v := sysctl(t, h, k); v != "0" {
					t.Errorf("sysctl %s = %s after the last lease, want the host's 0", k, v)
				}
			}
		})
	}
}

// TestHostShareHostsRuntimeDir: a runtime directory that was there before (the host's containerd's) keeps
// everything but our own shims' sockets.
func TestHostShareHostsRuntimeDir(t *testing.T) {
	h := testShare(t)
	foreign := filepath.Join(h.RuntimeDir, "s", "foreign")
	deadSocket(t, foreign)
	l := mustAcquire(t, h)
	own := h.shimSocket("/a/containerd.sock", "k8s.io", "y")
	deadSocket(t, own)
	if err := l.release([]string{own}); err != nil {
		t.Fatal(err)
	}
	if exists(own) || !exists(foreign) || exists(h.State) {
		t.Errorf("own socket there %v (want false), the host's %v (want true), state %v (want false)",
			exists(own), exists(foreign), exists(h.State))
	}
	l = mustAcquire(t, h)
	if err := l.release([]string{filepath.Join(filepath.Dir(h.RuntimeDir), "elsewhere")}); err == nil {
		t.Error("a socket outside the runtime directory was accepted as own")
	}
}

// TestHostShareStillUsed: a socket something still listens on after the last cluster stopped stays and is named;
// the record stays, so the next cluster's last release removes the directory once it is free.
func TestHostShareStillUsed(t *testing.T) {
	h := testShare(t)
	l := mustAcquire(t, h)
	live := filepath.Join(h.RuntimeDir, "s", "live")
	if err := os.MkdirAll(filepath.Dir(live), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	err = l.release(nil)
	if err == nil || !strings.Contains(err.Error(), "live") {
		t.Fatalf("release with a live socket: %v, want an error naming it", err)
	}
	if !exists(live) || !exists(filepath.Join(h.State, recordFile)) {
		t.Fatal("the live socket or the record was removed")
	}
	ln.Close()
	if err := mustAcquire(t, h).release(nil); err != nil {
		t.Fatal(err)
	}
	if exists(h.RuntimeDir) || exists(h.State) {
		t.Errorf("left after the next cluster's release: runtime dir %v, state %v", exists(h.RuntimeDir), exists(h.State))
	}
}

// TestHostShareLeaseHolders: a lease whose process is gone (a killed test binary, or a reused pid) does not hold
// the host, and its record (the host before that run) is what the next last one out restores; a lease of another
// running process holds it until that process exits.
func TestHostShareLeaseHolders(t *testing.T) {
	h := testShare(t)
	crashed := mustAcquire(t, h)
	setSysctl(t, h, "kernel/panic", "10") // the crashed run's kubelet; its lease now names a process that is gone
	start, err := hostsnap.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(crashed.file, filepath.Join(h.State, fmt.Sprintf("%s%d-%d-00", leasePrefix, os.Getpid(), start+1))); err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, h)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	name, err := leaseName(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.State, leasePrefix+name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Not a lease: a record write a crash interrupted.
	if err := os.WriteFile(filepath.Join(h.State, recordFile+".new"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := h.otherHolders(); err != nil || n != 1 {
		t.Errorf("other holders %d, %v; want 1", n, err)
	}
	if err := l.release(nil); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(h.State, leasePrefix+name)) || sysctl(t, h, "kernel/panic") != "10" {
		t.Fatal("the running process's lease went, or the host was restored while it holds it")
	}
	_ = other.Process.Kill()
	_ = other.Wait()
	if err := mustAcquire(t, h).release(nil); err != nil {
		t.Fatal(err)
	}
	if exists(h.State) || sysctl(t, h, "kernel/panic") != "0" {
		t.Errorf("after its other holder exited: state there %v, kernel/panic %s (want the host's 0 from before the crashed run)",
			exists(h.State), sysctl(t, h, "kernel/panic"))
	}
}

// TestShimSockets finds a shim's socket from its command line as containerd 1.6 names it.
func TestShimSockets(t *testing.T) {
	h := testShare(t)
	address := filepath.Join(t.TempDir(), "containerd.sock")
	// A stand-in with a shim's command line: bash keeps its arguments ($0 and on) while sleep runs.
	shim := exec.Command("bash", "-c", "sleep 60; :", "containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", address)
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shim.Process.Kill(); _ = shim.Wait() })
	sum := sha256.Sum256([]byte(address + "/k8s.io/abc"))
	want := filepath.Join(h.RuntimeDir, "s", hex.EncodeToString(sum[:]))
	var got []string
	err := wait.Poll(t.Context(), 10*time.Millisecond, 10*time.Second, "the stand-in's command line", func(context.Context) (bool, string, error) {
		got = h.shimSockets(address)
		return len(got) > 0, fmt.Sprint(got), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{want}) {
		t.Errorf("shim sockets %v, want [%s]", got, want)
	}
	if other := h.shimSockets(address + "x"); len(other) != 0 {
		t.Errorf("another containerd's shims: %v, want none", other)
	}
}
