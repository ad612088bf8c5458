// Package namedns creates and deletes named network namespaces (/run/netns/<name>) for the whole project, the way
// iproute2's `ip netns add|del` does, so that the two can be used side by side.
//
// The detail that matters: a namespace is kept alive by bind-mounting its nsfs file on /run/netns/<name>. If
// /run/netns is a plain directory at that moment, the first `ip netns add` anyone runs later bind-mounts
// /run/netns over itself (to make it shared) and hides every mount made before; those can then be neither
// unmounted nor removed ("device or resource busy"). So, like iproute2, Create first makes /run/netns a shared
// mount point of its own, once; a concurrent `ip netns add` that raced us stacks a second shared bind mount,
// which is harmless because the two are peers and unmounts propagate between them.
package namedns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Dir is where named namespaces live, as for iproute2.
const Dir = "/run/netns"

// ErrExists says a namespace of that name exists already.
var ErrExists = errors.New("network namespace exists already")

// ErrNotExist says there is no namespace of that name.
var ErrNotExist = os.ErrNotExist

// ErrHidden says the namespace's mount is hidden under a later mount of /run/netns and cannot be removed from
// this mount namespace (the failure this package exists to prevent, left by an older tool).
var ErrHidden = errors.New("namespace mount is hidden under a later mount of " + Dir)

// Path is the file of the named namespace.
func Path(name string) string { return filepath.Join(Dir, name) }

// ValidateName refuses names iproute2 would refuse (empty, ".", "..", with '/', longer than NAME_MAX).
func ValidateName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || len(name) > unix.NAME_MAX {
		return fmt.Errorf("network namespace name %q: want 1-%d bytes, no '/', not . or ..", name, unix.NAME_MAX)
	}
	return nil
}

// EnsureDir makes Dir a shared mount point of its own, as `ip netns add` does before its first bind mount. It is
// idempotent and serialised between this project's processes by a lock on Dir itself.
func EnsureDir() error {
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", Dir, err)
	}
	lock, err := os.Open(Dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", Dir, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", Dir, err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN) //nolint:errcheck // closing the file drops the lock anyway
	made := false
	for {
		// MS_SHARED succeeds only on a mount point; EINVAL means Dir is still a plain directory.
		err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) || made {
			return fmt.Errorf("make %s a shared mount: %w", Dir, err)
		}
		if err := unix.Mount(Dir, Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s on itself: %w", Dir, err)
		}
		made = true
	}
}

// Create makes a new network namespace named name and returns an open handle to it (the caller closes it). The
// calling goroutine's thread is never moved: the namespace is made on another, switched back afterwards.
func Create(name string) (netns.NsHandle, error) {
	if err := ValidateName(name); err != nil {
		return netns.None(), err
	}
	if err := EnsureDir(); err != nil {
		return netns.None(), err
	}
	path := Path(name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0)
	if errors.Is(err, os.ErrExist) {
		return netns.None(), fmt.Errorf("create %s: %w", path, ErrExists)
	}
	if err != nil {
		return netns.None(), fmt.Errorf("create %s: %w", path, err)
	}
	f.Close()

	h := netns.None() // -1: a zero handle would be stdin
	err = netnsrun.OnThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare network namespace: %w", err)
		}
		self := "/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/ns/net"
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mount %s on %s: %w", self, path, err)
		}
		var err error
		h, err = netns.Get() // the thread's own handle (net:[inode]), as netns.NewNamed gives
		return err
	})
	if err != nil {
		if h.IsOpen() {
			h.Close()
		}
		if derr := Delete(name); derr != nil && !errors.Is(derr, ErrNotExist) {
			err = errors.Join(err, derr)
		}
		return netns.None(), fmt.Errorf("create network namespace %s: %w", name, err)
	}
	return h, nil
}

// maxStacked bounds the unmounts Delete makes on one file: more stacked mounts than this is not a race any more.
const maxStacked = 64

// Delete removes the named namespace: it unmounts every mount stacked on its file, then removes the file. The
// namespace itself goes when no process, socket or handle holds it any more. A missing namespace gives an error
// wrapping ErrNotExist.
func Delete(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	path := Path(name)
	for stacked := 0; ; stacked++ {
		if stacked == maxStacked {
			return fmt.Errorf("unmount %s: still mounted after %d unmounts", path, maxStacked)
		}
		err := unix.Unmount(path, unix.MNT_DETACH)
		if err == nil {
			continue // a concurrent `ip netns add` may have stacked a copy: unmount until none is left
		}
		if errors.Is(err, unix.EINVAL) {
			break // not (or no longer) a mount point
		}
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("delete network namespace %s: %w", name, ErrNotExist)
		}
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete network namespace %s: %w", name, ErrNotExist)
		}
		if errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("delete network namespace %s: %w (remove %s: %v)", name, ErrHidden, path, err)
		}
		return fmt.Errorf("delete network namespace %s: %w", name, err)
	}
	return nil
}

// List returns the names of the namespaces in Dir that start with prefix, sorted.
func List(prefix string) ([]string, error) {
	entries, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", Dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Processes lists the processes (pids) whose network namespace is the named one.
func Processes(name string) ([]int, error) {
	var want syscall.Stat_t
	if err := syscall.Stat(Path(name), &want); err != nil {
		return nil, fmt.Errorf("stat %s: %w", Path(name), err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) != nil {
			continue // gone meanwhile, or a kernel thread
		}
		if st.Ino == want.Ino && st.Dev == want.Dev {
			out = append(out, pid)
		}
	}
	return out, nil
}
