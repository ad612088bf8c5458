package kernellane

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed guest/init guest/stage2
var guest embed.FS

// Busybox is the statically linked busybox the initramfs runs (Debian's busybox-static).
const Busybox = "/bin/busybox"

// initModules are what stage 1 needs before the host's root is there: the virtio PCI transport (a module in
// Debian 12's 6.1, built in from 6.12 on), 9p over virtio, overlayfs, and an entropy source; modprobe adds their
// dependencies in load order and skips what is built in.
var initModules = []string{"virtio_pci", "9p", "9pnet_virtio", "overlay", "virtio_rng"}

// BuildInitramfs writes k's initramfs (a gzipped newc cpio: busybox, the modules of initModules decompressed, the
// guest's init and stage2) to path, unless it is there already.
func BuildInitramfs(ctx context.Context, k *Kernel, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), "initramfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{"bin", "dev", "proc", "sys", "modules"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(Busybox, filepath.Join(dir, "bin", "busybox"), 0o755); err != nil {
		return fmt.Errorf("initramfs: %w (make deps installs busybox-static)", err)
	}
	var order []string
	for _, want := range initModules {
		out, err := exec.CommandContext(ctx, "modprobe", "-d", filepath.Join(k.Dir, "usr"), "-S", k.Release, "--show-depends", want).Output()
		if err != nil {
			return fmt.Errorf("initramfs: modprobe --show-depends %s: %w", want, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "insmod" {
				continue
			}
			name := strings.SplitN(filepath.Base(f[1]), ".ko", 2)[0]
			if slices.Contains(order, name) {
				continue
			}
			if err := decompressModule(ctx, f[1], filepath.Join(dir, "modules", name+".ko")); err != nil {
				return err
			}
			order = append(order, name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "modules", "order"), []byte(strings.Join(order, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"init", "stage2"} {
		data, err := guest.ReadFile("guest/" + f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o755); err != nil {
			return err
		}
	}
	// busybox's cpio writes the archive from the file list find gives.
	tmp := path + ".tmp"
	script := fmt.Sprintf("cd %q && %s find . | %s cpio -o -H newc 2>/dev/null | gzip -1 > %q", dir, Busybox, Busybox, tmp)
	if err := run(ctx, io.Discard, "sh", "-c", script); err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	return os.Rename(tmp, path)
}

// decompressModule writes a kernel module uncompressed (busybox's insmod takes plain .ko files).
func decompressModule(ctx context.Context, src, dst string) error {
	var cmd *exec.Cmd
	switch {
	case strings.HasSuffix(src, ".xz"):
		cmd = exec.CommandContext(ctx, "xz", "-dc", src)
	case strings.HasSuffix(src, ".zst"):
		cmd = exec.CommandContext(ctx, "zstd", "-dcq", src)
	default:
		return copyFile(src, dst, 0o644)
	}
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("decompress %s: %w", src, err)
	}
	return os.WriteFile(dst, out, 0o644)
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}
