// Package kernellane boots Debian's own kernels under QEMU and runs the project's kernel-dependent tests inside
// them: the kernel lane of `make test`. This machine's kernel lacks VRF devices, 802.1Q and GRE; Debian's kernels
// have them. The guest's root file system is the host's (virtio-9p, read-only, under a tmpfs overlay), so the
// tests run against the host's FRR, iproute2 and Go test binaries; only an output directory is shared writable.
//
// Steps, each cached by kernel package: Fetch (apt-get download into a private apt configuration, never
// installed; dpkg-deb -x; depmod), BuildInitramfs (busybox-static, the 9p and overlay modules, the guest's init),
// Boot (QEMU under TCG: this host's KVM is unusable for a stock kernel), and RunTests (go test -c on the host,
// the binaries through test2json in the guest).
package kernellane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kernel is a Debian kernel image package extracted for booting.
type Kernel struct {
	// Package is the image package (linux-image-6.12.117+deb13-amd64), Release its kernel release (uname -r).
	Package, Release string
	// Dir holds the extraction: boot/vmlinuz-<release>, usr/lib/modules/<release> (depmod run).
	Dir string
}

// Image is the kernel's bzImage.
func (k *Kernel) Image() string { return filepath.Join(k.Dir, "boot", "vmlinuz-"+k.Release) }

// Modules is the kernel's module directory (modules.dep inside).
func (k *Kernel) Modules() string { return filepath.Join(k.Dir, "usr", "lib", "modules", k.Release) }

// Suite is a Debian release whose generic amd64 kernel the lane boots (the -cloud flavour lacks 9p).
type Suite struct {
	Name string // bookworm, trixie
	// Mirror is the archive (default http://deb.debian.org/debian).
	Mirror string
}

// ErrNoKernel: the suite's metapackage names no image package.
var ErrNoKernel = errors.New("no kernel image package")

// Fetch downloads the suite's current generic kernel image package (never installing it) through a private apt
// configuration under cacheDir, extracts it and runs depmod. An extraction already in the cache is reused.
func Fetch(ctx context.Context, cacheDir string, s Suite, log io.Writer) (*Kernel, error) {
	if s.Mirror == "" {
		s.Mirror = "http://deb.debian.org/debian"
	}
	aptDir := filepath.Join(cacheDir, "apt-"+s.Name)
	apt := newApt(aptDir)
	if err := apt.init(s); err != nil {
		return nil, err
	}
	// The metapackage's dependency is the image package of the suite's current kernel.
	pkg, err := apt.imagePackage(ctx)
	if err != nil {
		if err := apt.run(ctx, log, "apt-get", "update", "-q"); err != nil {
			return nil, fmt.Errorf("%s: apt-get update: %w", s.Name, err)
		}
		if pkg, err = apt.imagePackage(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	k := &Kernel{Package: pkg, Dir: filepath.Join(cacheDir, pkg)}
	if rel, err := os.ReadFile(filepath.Join(k.Dir, "release")); err == nil {
		k.Release = strings.TrimSpace(string(rel))
		return k, nil
	}
	debs := filepath.Join(cacheDir, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "kernel lane: downloading %s (%s)\n", pkg, s.Name)
	dl := apt.cmd(ctx, "apt-get", "download", "-q", pkg)
	dl.Dir, dl.Stdout, dl.Stderr = debs, log, log
	if err := dl.Run(); err != nil {
		return nil, fmt.Errorf("apt-get download %s: %w", pkg, err)
	}
	matches, _ := filepath.Glob(filepath.Join(debs, pkg+"_*.deb"))
	if len(matches) == 0 {
		return nil, fmt.Errorf("apt-get download %s: no .deb in %s", pkg, debs)
	}
	tmp := k.Dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := run(ctx, log, "dpkg-deb", "-x", matches[len(matches)-1], tmp); err != nil {
		return nil, err
	}
	// bookworm's packages keep modules under lib/, trixie's under usr/lib/.
	if _, err := os.Stat(filepath.Join(tmp, "lib", "modules")); err == nil {
		if err := os.MkdirAll(filepath.Join(tmp, "usr", "lib"), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(filepath.Join(tmp, "lib", "modules"), filepath.Join(tmp, "usr", "lib", "modules")); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(filepath.Join(tmp, "usr", "lib", "modules"))
	if err != nil || len(entries) != 1 {
		return nil, fmt.Errorf("%s: want one module directory, got %d (%v)", pkg, len(entries), err)
	}
	k.Release = entries[0].Name()
	if err := run(ctx, log, "depmod", "-b", filepath.Join(tmp, "usr"), k.Release); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "release"), []byte(k.Release+"\n"), 0o644); err != nil {
		return nil, err
	}
	_ = os.RemoveAll(k.Dir)
	if err := os.Rename(tmp, k.Dir); err != nil {
		return nil, err
	}
	return k, nil
}

// aptConfig is apt with its own sources, lists and cache: the host's sources and dpkg database stay untouched.
type aptConfig struct{ dir string }

func newApt(dir string) aptConfig { return aptConfig{dir: dir} }

func (a aptConfig) init(s Suite) error {
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return err
		}
	}
	src := fmt.Sprintf("deb %s %s main\n", s.Mirror, s.Name)
	return os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(src), 0o644)
}

func (a aptConfig) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	opts := []string{
		"-o", "Dir::Etc::SourceList=" + filepath.Join(a.dir, "sources.list"), "-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"), "-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root",
	}
	return exec.CommandContext(ctx, name, append(opts, args...)...)
}

func (a aptConfig) run(ctx context.Context, log io.Writer, name string, args ...string) error {
	c := a.cmd(ctx, name, args...)
	c.Stdout, c.Stderr = log, log
	return c.Run()
}

// imagePackage is what linux-image-amd64 depends on in the configured suite.
func (a aptConfig) imagePackage(ctx context.Context) (string, error) {
	out, err := a.cmd(ctx, "apt-cache", "depends", "linux-image-amd64").Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends linux-image-amd64: %w", err)
	}
	for l := range strings.SplitSeq(string(out), "\n") {
		if dep, ok := strings.CutPrefix(strings.TrimSpace(l), "Depends: "); ok && strings.HasPrefix(dep, "linux-image-") {
			return dep, nil
		}
	}
	return "", ErrNoKernel
}

// run runs a command, its output to log, its error with the command's name.
func run(ctx context.Context, log io.Writer, name string, args ...string) error {
	var stderr bytes.Buffer
	c := exec.CommandContext(ctx, name, args...)
	c.Stdout, c.Stderr = log, io.MultiWriter(log, &stderr)
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
