package kubenodes

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestLayoutFromMagic(t *testing.T) {
	for _, tc := range []struct {
		name            string
		mount, unified  int64
		want            cgroupLayout
		wantErrContains string
	}{
		{name: "cgroup2 mount", mount: unix.CGROUP2_SUPER_MAGIC, want: cgroupUnified},
		// A unified/ below a cgroup2 mount would be an ordinary child cgroup: the mount decides.
		{name: "cgroup2 mount, unified child", mount: unix.CGROUP2_SUPER_MAGIC, unified: unix.CGROUP2_SUPER_MAGIC, want: cgroupUnified},
		{name: "tmpfs with cgroup2 at unified", mount: unix.TMPFS_MAGIC, unified: unix.CGROUP2_SUPER_MAGIC, want: cgroupHybrid},
		{name: "tmpfs of v1 hierarchies only", mount: unix.TMPFS_MAGIC, want: cgroupLegacy},
		{name: "tmpfs with a v1 hierarchy at unified", mount: unix.TMPFS_MAGIC, unified: unix.CGROUP_SUPER_MAGIC, want: cgroupLegacy},
		{name: "not mounted (sysfs)", mount: unix.SYSFS_MAGIC, wantErrContains: "neither cgroup2 nor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := layoutFromMagic(tc.mount, tc.unified)
			if tc.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContains) {
					t.Fatalf("layoutFromMagic = %v, %v; want an error containing %q", got, err, tc.wantErrContains)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("layoutFromMagic = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPlanNodeCgroup(t *testing.T) {
	v1 := []string{"/sys/fs/cgroup/blkio", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"}
	for _, tc := range []struct {
		name        string
		layout      cgroupLayout
		hierarchies []string
		available   []string
		want        cgroupPlan
	}{
		{
			name: "v2, every controller", layout: cgroupUnified,
			available: []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"},
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/x1"}, Delegate: []string{"/sys/fs/cgroup", "/sys/fs/cgroup/x1"},
				Controllers: []string{"cpu", "cpuset", "io", "memory", "hugetlb", "pids"}},
		},
		{
			// A kernel without CONFIG_CGROUP_HUGETLB: kubelet asks only for what the root has.
			name: "v2 without hugetlb", layout: cgroupUnified,
			available: []string{"cpuset", "cpu", "io", "memory", "pids"},
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/x1"}, Delegate: []string{"/sys/fs/cgroup", "/sys/fs/cgroup/x1"},
				Controllers: []string{"cpu", "cpuset", "io", "memory", "pids"}},
		},
		{
			// A container's cgroup namespace whose manager delegated only some controllers.
			name: "v2, partly delegated", layout: cgroupUnified,
			available: []string{"memory", "pids"},
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/x1"}, Delegate: []string{"/sys/fs/cgroup", "/sys/fs/cgroup/x1"},
				Controllers: []string{"memory", "pids"}},
		},
		{
			name: "v2, no controllers", layout: cgroupUnified,
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/x1"}, Delegate: []string{"/sys/fs/cgroup", "/sys/fs/cgroup/x1"}},
		},
		{
			// The v1 hierarchies and the unified one each get the node's cgroup; nothing is delegated there.
			name: "hybrid", layout: cgroupHybrid, hierarchies: append(slices.Clone(v1), "/sys/fs/cgroup/unified"),
			available: []string{"hugetlb"},
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/blkio/x1", "/sys/fs/cgroup/cpu/x1", "/sys/fs/cgroup/cpuset/x1",
				"/sys/fs/cgroup/memory/x1", "/sys/fs/cgroup/pids/x1", "/sys/fs/cgroup/unified/x1"},
				CopyCpuset: []string{"/sys/fs/cgroup/cpuset/x1"}},
		},
		{
			name: "v1 only", layout: cgroupLegacy, hierarchies: v1,
			want: cgroupPlan{Dirs: []string{"/sys/fs/cgroup/blkio/x1", "/sys/fs/cgroup/cpu/x1", "/sys/fs/cgroup/cpuset/x1",
				"/sys/fs/cgroup/memory/x1", "/sys/fs/cgroup/pids/x1"},
				CopyCpuset: []string{"/sys/fs/cgroup/cpuset/x1"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planNodeCgroup(tc.layout, "/sys/fs/cgroup", "x1", tc.hierarchies, tc.available)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("planNodeCgroup:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestDelegateMovesProcessesToLeaf: a cgroup2 cgroup with a process (as a container's cgroup namespace root is)
// delegates a controller once its processes moved to a leaf, and removeCgroups kills the process and removes
// both cgroups. It runs wherever a cgroup2 hierarchy is mounted (unified/ on a hybrid host).
func TestDelegateMovesProcessesToLeaf(t *testing.T) {
	testreq.Root(t)
	layout, err := detectCgroupLayout(cgroupMount)
	if err != nil {
		t.Fatal(err)
	}
	mount := cgroupMount
	switch layout {
	case cgroupHybrid:
		mount = filepath.Join(cgroupMount, "unified")
	case cgroupLegacy:
		testreq.KernelLacks(t, "a cgroup2 hierarchy", fmt.Errorf("%s is %s", cgroupMount, layout))
	}
	available, err := readControllers(mount, "cgroup.controllers")
	if err != nil {
		t.Fatal(err)
	}
	enabled, err := readControllers(mount, "cgroup.subtree_control")
	if err != nil {
		t.Fatal(err)
	}
	// A controller the test cgroup has (its parent delegates it): one already delegated, else one enabled for the
	// test and disabled after.
	var ctrl string
	switch {
	case len(enabled) > 0:
		ctrl = enabled[0]
	case len(available) > 0:
		ctrl = available[0]
		if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte("+"+ctrl), 0o644); err != nil {
			t.Fatalf("enable %s in %s: %v", ctrl, mount, err)
		}
		t.Cleanup(func() {
			if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte("-"+ctrl), 0o644); err != nil {
				t.Errorf("disable %s in %s again: %v", ctrl, mount, err)
			}
		})
	default:
		testreq.KernelLacks(t, "a cgroup2 controller", fmt.Errorf("%s has none", mount))
	}
	dir := filepath.Join(mount, fmt.Sprintf("kn-delegate-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			if err := removeCgroups([]string{dir}); err != nil {
				t.Error(err)
			}
		}
	})
	sleep := exec.Command("sleep", "infinity")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleep.Wait() }()
	t.Cleanup(func() {
		_ = sleep.Process.Kill()
		<-waited
	})
	pid := strconv.Itoa(sleep.Process.Pid)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0o644); err != nil {
		t.Fatal(err)
	}
	// The kernel refuses it at first: the precondition the leaf exists for.
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+ctrl), 0o644); !errors.Is(err, unix.EBUSY) {
		t.Fatalf("enabling %s in a cgroup with a process: %v, want EBUSY", ctrl, err)
	}

	if err := delegate(t.Context(), dir, []string{ctrl}); err != nil {
		t.Fatal(err)
	}
	if got, err := readControllers(dir, "cgroup.subtree_control"); err != nil || !slices.Contains(got, ctrl) {
		t.Errorf("subtree_control of %s: %v, %v; want %s in it", dir, got, err, ctrl)
	}
	procs, err := os.ReadFile(filepath.Join(dir, leafCgroup, "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(procs)), pid) {
		t.Errorf("processes of the leaf: %q, %v; want the sleep (%s)", procs, err, pid)
	}

	removed = true
	if err := removeCgroups([]string{dir}); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err == nil {
		t.Error("the sleep in the cgroup exited cleanly, want killed")
	}
	waited <- nil // for the cleanup
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after removeCgroups: %v, want it gone", dir, err)
	}
}
