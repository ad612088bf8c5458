package kubenodes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/internal/wait"
)

// cgroupMount is where the host mounts its cgroups: cgroup2 itself (unified), or a tmpfs of v1 hierarchies.
const cgroupMount = "/sys/fs/cgroup"

// cgroupLayout is how the host mounts cgroups. kubelet's cgroupfs driver (and runc's) follows it: cgroup v2 when
// /sys/fs/cgroup is itself a cgroup2 mount, else the v1 hierarchies.
type cgroupLayout int

const (
	// cgroupLegacy: v1 hierarchies only.
	cgroupLegacy cgroupLayout = iota + 1
	// cgroupHybrid: v1 hierarchies, and cgroup2 at unified/ with no controllers kubelet uses.
	cgroupHybrid
	// cgroupUnified: cgroup2 only (any current systemd distribution).
	cgroupUnified
)

func (l cgroupLayout) String() string {
	switch l {
	case cgroupLegacy:
		return "cgroup v1"
	case cgroupHybrid:
		return "cgroup v1 hybrid (v1 controllers, cgroup2 at unified/)"
	case cgroupUnified:
		return "cgroup v2 unified"
	}
	return fmt.Sprintf("cgroup layout %d", int(l))
}

// layoutFromMagic tells the layout from the file system types (statfs magic) of the cgroup mount and of its
// unified/ directory (0 when there is none).
func layoutFromMagic(mount, unified int64) (cgroupLayout, error) {
	switch mount {
	case unix.CGROUP2_SUPER_MAGIC:
		return cgroupUnified, nil
	case unix.TMPFS_MAGIC:
		if unified == unix.CGROUP2_SUPER_MAGIC {
			return cgroupHybrid, nil
		}
		return cgroupLegacy, nil
	}
	return 0, fmt.Errorf("%s is neither cgroup2 nor a tmpfs of v1 hierarchies (file system magic %#x)", cgroupMount, mount)
}

// detectCgroupLayout reads the layout of the cgroups mounted at mount.
func detectCgroupLayout(mount string) (cgroupLayout, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(mount, &st); err != nil {
		return 0, fmt.Errorf("cgroup layout: statfs %s: %w", mount, err)
	}
	var unified int64
	if int64(st.Type) == unix.TMPFS_MAGIC {
		var u unix.Statfs_t
		if err := unix.Statfs(filepath.Join(mount, "unified"), &u); err == nil {
			unified = int64(u.Type)
		}
	}
	return layoutFromMagic(int64(st.Type), unified)
}

// nodeControllers are the cgroup v2 controllers a node's cgroup gets where the kernel has them: kubelet's (it
// refuses a cgroupRoot that lacks one of cpu, cpuset, memory, hugetlb, pids that the root has) and io, which
// runc sets for containers.
func nodeControllers() []string { return []string{"cpu", "cpuset", "io", "memory", "hugetlb", "pids"} }

// cgroupPlan is what makes a node's cgroup (kubelet's cgroupRoot).
type cgroupPlan struct {
	// Dirs are the node's cgroup in each hierarchy, made in order; teardown kills what runs below them and
	// removes them, deepest first.
	Dirs []string
	// Delegate are cgroup2 directories, parents first, whose cgroup.subtree_control gets Controllers: a
	// cgroup2 child has only the controllers its parent enabled for its children.
	Delegate    []string
	Controllers []string
	// CopyCpuset are v1 cpuset cgroups that get their parent's cpuset.cpus and cpuset.mems (an empty one
	// admits no process).
	CopyCpuset []string
}

// planNodeCgroup plans the cgroup name of a node: on cgroup v2 below the mount with the controllers kubelet
// needs from available (the root's cgroup.controllers); on v1 (and hybrid) in every hierarchy.
func planNodeCgroup(layout cgroupLayout, mount, name string, hierarchies, available []string) cgroupPlan {
	if layout == cgroupUnified {
		dir := filepath.Join(mount, name)
		var ctrls []string
		for _, c := range nodeControllers() {
			if slices.Contains(available, c) {
				ctrls = append(ctrls, c)
			}
		}
		// The node's cgroup delegates too: kubelet's kubepods and the pods go below it.
		return cgroupPlan{Dirs: []string{dir}, Delegate: []string{mount, dir}, Controllers: ctrls}
	}
	var p cgroupPlan
	for _, h := range hierarchies {
		dir := filepath.Join(h, name)
		p.Dirs = append(p.Dirs, dir)
		if filepath.Base(h) == "cpuset" {
			p.CopyCpuset = append(p.CopyCpuset, dir)
		}
	}
	return p
}

// nodeCgroup makes the node's cgroup root (kubelet's cgroupRoot) for the host's layout and removes it, with what
// the kubelet made below, at the end.
func (c *Cluster) nodeCgroup(ctx context.Context, n *Node) error {
	n.cgroup = fmt.Sprintf("%sk%d", c.opts.Prefix, n.index)
	layout, err := detectCgroupLayout(cgroupMount)
	if err != nil {
		return err
	}
	var hierarchies, available []string
	if layout == cgroupUnified {
		available, err = readControllers(cgroupMount, "cgroup.controllers")
	} else {
		hierarchies, err = cgroupHierarchies(cgroupMount)
	}
	if err != nil {
		return err
	}
	plan := planNodeCgroup(layout, cgroupMount, n.cgroup, hierarchies, available)
	n.cgroupDirs = plan.Dirs
	c.onClose(func() error { return removeCgroups(plan.Dirs) })
	for _, dir := range plan.Dirs {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	for _, dir := range plan.CopyCpuset {
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
			if err != nil {
				return fmt.Errorf("cgroup %s: %w", dir, err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: %w", dir, err)
			}
		}
	}
	// What the root delegates stays delegated at the end: other clusters' nodes may use it, and a systemd host
	// delegates these controllers anyway.
	for _, dir := range plan.Delegate {
		if err := delegate(ctx, dir, plan.Controllers); err != nil {
			return err
		}
	}
	if layout == cgroupUnified {
		c.logf("node %s: cgroup %s on %s, controllers %v", n.Name, n.cgroup, layout, plan.Controllers)
	} else {
		c.logf("node %s: cgroup %s in %d hierarchies (%s)", n.Name, n.cgroup, len(plan.Dirs), layout)
	}
	return nil
}

// readControllers reads a cgroup2 controller list (cgroup.controllers, cgroup.subtree_control) of dir.
func readControllers(dir, file string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, fmt.Errorf("cgroup controllers: %w", err)
	}
	return strings.Fields(string(data)), nil
}

// cgroupHierarchies are the mounted v1 hierarchies below mount (and, on a hybrid host, the unified one).
func cgroupHierarchies(mount string) ([]string, error) {
	entries, err := os.ReadDir(mount)
	if err != nil {
		return nil, fmt.Errorf("cgroup hierarchies: %w", err)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(mount, e.Name())
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			continue // cpu -> cpu,cpuacct links
		}
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// leafCgroup is the child of a cgroup2 cgroup that its processes move to when it must delegate controllers.
const leafCgroup = "kubenodes-leaf"

// delegate enables ctrls in dir's cgroup.subtree_control. A cgroup2 cgroup other than the root that has
// processes delegates none ("no internal processes": EBUSY), as in a container's cgroup namespace, where the
// namespace's root is such a cgroup. Its processes (this one among them) then move to a leaf below it, as
// container runtimes do for their init; the leaf stays, since nothing can move back into a cgroup that
// delegates.
func delegate(ctx context.Context, dir string, ctrls []string) error {
	have, err := readControllers(dir, "cgroup.subtree_control")
	if err != nil {
		return err
	}
	var missing []string
	for _, c := range ctrls {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	file := filepath.Join(dir, "cgroup.subtree_control")
	// A poll, not one try: processes may start in dir between the move and the write.
	return wait.Poll(ctx, pollInterval, 10*time.Second, fmt.Sprintf("controllers %v for the children of %s", missing, dir),
		func(context.Context) (bool, string, error) {
			for len(missing) > 0 {
				err := os.WriteFile(file, []byte("+"+missing[0]), 0o644)
				switch {
				case err == nil:
					missing = missing[1:]
				case errors.Is(err, unix.EBUSY):
					moved, err := moveProcesses(dir, filepath.Join(dir, leafCgroup))
					if err != nil {
						return false, "", err
					}
					return false, fmt.Sprintf("%s has processes: %d moved to %s", dir, moved, leafCgroup), nil
				default:
					return false, "", fmt.Errorf("enable %s: %w", missing[0], err)
				}
			}
			return true, "", nil
		})
}

// moveProcesses moves the processes of cgroup from to cgroup to (made if missing); it returns how many moved.
func moveProcesses(from, to string) (int, error) {
	if err := os.Mkdir(to, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return 0, fmt.Errorf("leaf cgroup: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(from, "cgroup.procs"))
	if err != nil {
		return 0, fmt.Errorf("processes of %s: %w", from, err)
	}
	moved := 0
	for _, pid := range strings.Fields(string(data)) {
		err := os.WriteFile(filepath.Join(to, "cgroup.procs"), []byte(pid), 0o644)
		switch {
		case err == nil:
			moved++
		case errors.Is(err, unix.ESRCH): // exited meanwhile
		default:
			return moved, fmt.Errorf("move process %s to %s: %w", pid, to, err)
		}
	}
	return moved, nil
}

// removeCgroups kills what still runs below each of dirs and removes the cgroups, deepest first.
func removeCgroups(dirs []string) error {
	var errs []error
	for _, root := range dirs {
		// Teardown runs also after the caller's context ended: its own deadlines bound it.
		if err := killTree(context.Background(), root); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range slices.Backward(cgroupTree(root)) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupTree lists root and the cgroups below it, parents first (none when root does not exist).
func cgroupTree(root string) []string {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	return dirs
}

// killTree kills every process in cgroup root and below it and waits until none is left. Where the kernel has
// cgroup.kill (cgroup2, Linux 5.14) one write kills the whole tree and nothing escapes by forking; elsewhere each
// cgroup's processes get SIGKILL until it is empty.
func killTree(ctx context.Context, root string) error {
	kill := filepath.Join(root, "cgroup.kill")
	if _, err := os.Stat(kill); err == nil {
		if err := os.WriteFile(kill, []byte("1"), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("kill cgroup %s: %w", root, err)
		}
		return wait.Poll(ctx, pollInterval, 10*time.Second, "processes of "+root+" gone", func(context.Context) (bool, string, error) {
			data, err := os.ReadFile(filepath.Join(root, "cgroup.events"))
			if errors.Is(err, os.ErrNotExist) {
				return true, "", nil
			}
			if err != nil {
				return false, "", err
			}
			return strings.Contains(string(data), "populated 0"), "still populated", nil
		})
	}
	var errs []error
	for _, d := range slices.Backward(cgroupTree(root)) {
		errs = append(errs, killCgroup(ctx, d))
	}
	return errors.Join(errs...)
}

// killCgroup SIGKILLs every process of one cgroup until it is empty.
func killCgroup(ctx context.Context, dir string) error {
	return wait.Poll(ctx, pollInterval, 10*time.Second, "processes of "+dir+" gone", func(context.Context) (bool, string, error) {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return true, "", nil
		}
		pids := strings.Fields(string(data))
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return len(pids) == 0, fmt.Sprintf("%d processes", len(pids)), nil
	})
}
