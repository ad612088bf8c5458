package frrproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// EnvRoot names the environment variable through which the project's harness (make test, make demo, make
// bench) gives the unpacked root file system of the FRR image (make frr-root), whose FRR it runs.
const EnvRoot = "NETOP_FRR_ROOT"

// Tools says whose FRR programs (daemons, vtysh, frr-reload.py and the python3 it runs with) a command runs.
//
// Root "" is this file system: the FRR image the agent container is built on, or a host's own FRR. Any other
// Root is an unpacked root file system holding FRR (the FRR image's, see test/harness/images): its programs run
// chrooted into it, each in a private mount namespace into which this machine's /proc, /sys, /dev, /run, /tmp,
// /var/tmp, /etc/frr, /var/log/frr, /var/lib/frr, the temp dir and Binds are bound at the same paths, so sockets, pid files, configs and
// namespaces keep the paths the caller knows. The machine's /etc/passwd and /etc/group are bound too, so user
// frr is the same user inside and out (the files the caller chowns to it are the daemons'). The mounts end with
// the process: nothing is left on the machine.
type Tools struct {
	Root  string
	Binds []string // more directories the programs read or write (e.g. the agent's state directory)
}

// Host reports whether the programs are this file system's own.
func (t Tools) Host() bool { return t.Root == "" || t.Root == "/" }

// Of /var/log/frr and /var/lib/frr (a config's "log file", mgmtd's commit history) the machine's are bound:
// the root's belong to its own frr user, whose id the machine's passwd does not give.
//
// chrootScript runs as "sh -c chrootScript sh ROOT DIR... -- PROGRAM ARGS...": it binds each DIR (or file) that
// exists at its own path under ROOT, then becomes PROGRAM chrooted into ROOT, in the same working directory
// (exec all the way: the pid stays the program's).
const chrootScript = `set -e
root=$1; shift
while [ "$1" != -- ]; do
  if [ ! -e "$1" ]; then shift; continue; fi
  if [ -d "$1" ]; then mkdir -p "$root$1"; else [ -e "$root$1" ] || : > "$root$1"; fi
  if [ "$1" = /dev ]; then mount --rbind "$1" "$root$1"; else mount --bind "$1" "$root$1"; fi
  shift
done
shift
exec chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' sh "$(pwd)" "$@"`

// systemDir reports whether top is one of the root's own top-level directories: a path below one names a file
// of the root (a program, its data), never one of the caller's.
func systemDir(top string) bool {
	switch top {
	case "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/var", "/boot", "/proc", "/sys", "/dev", "/run", "/tmp":
		return true
	}
	return false
}

// Argv is the command line that runs argv (argv[0] an absolute path inside the FRR root) as Tools says. Besides
// the fixed binds, the temp dir and Binds, the top-level directory of every absolute path among the arguments
// outside the root's own (/work for /work/repo/frr.conf) is bound, so the files a caller names are there.
func (t Tools) Argv(argv ...string) []string {
	if t.Host() {
		return argv
	}
	binds := []string{"/proc", "/sys", "/dev", "/run", "/tmp", "/var/tmp", "/etc/frr", "/var/log/frr", "/var/lib/frr",
		"/etc/passwd", "/etc/group"}
	add := func(d string) {
		if d = filepath.Clean(d); d != "/" && !slices.ContainsFunc(binds, func(b string) bool { return within(d, b) }) {
			binds = append(binds, d)
		}
	}
	for _, d := range append([]string{os.TempDir()}, t.Binds...) {
		add(d)
	}
	paths := argv
	if wd, err := os.Getwd(); err == nil {
		paths = append([]string{wd}, argv...) // relative arguments resolve there
	}
	for _, a := range paths {
		if !filepath.IsAbs(a) {
			continue
		}
		top := "/" + strings.SplitN(strings.TrimPrefix(filepath.Clean(a), "/"), "/", 2)[0]
		if !systemDir(top) {
			add(top)
		}
	}
	out := []string{"unshare", "--mount", "--propagation", "private", "--", "sh", "-c", chrootScript, "sh", t.Root}
	out = append(out, binds...)
	return append(append(out, "--"), argv...)
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// rootOf is the directory FRR's files are found under.
func rootOf(t Tools) string {
	if t.Host() {
		return "/"
	}
	return t.Root
}

// Command is exec.CommandContext for argv run as Tools says.
func (t Tools) Command(ctx context.Context, argv ...string) *exec.Cmd {
	a := t.Argv(argv...)
	return exec.CommandContext(ctx, a[0], a[1:]...)
}

// Check reports why the programs FRR needs are not there (ErrNotAvailable), or nil.
func (t Tools) Check() error {
	root := rootOf(t)
	for _, bin := range []string{DefaultDaemonDir + "/zebra", DefaultDaemonDir + "/bgpd", DefaultReloadScript, DefaultVtysh,
		"/usr/bin/python3"} {
		if _, err := os.Stat(filepath.Join(root, bin)); err != nil {
			return fmt.Errorf("%w: %s missing in %s (the FRR image's root file system: make frr-root)", ErrNotAvailable, bin, root)
		}
	}
	if !t.Host() {
		for _, bin := range []string{"unshare", "chroot", "mount"} {
			if _, err := exec.LookPath(bin); err != nil {
				return fmt.Errorf("%w: %s not in PATH (runs FRR from %s)", ErrNotAvailable, bin, t.Root)
			}
		}
	}
	return nil
}
