package kernellane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Boot describes one guest run.
type Boot struct {
	Kernel    *Kernel
	Initramfs string
	// Out is the directory shared writable with the guest (same path inside): the job, its log, its status.
	Out string
	// Job is the bash script the guest runs as root; Env is exported to it first.
	Job string
	Env map[string]string
	// Append is added to the kernel command line (e.g. modprobe.blacklist=vrf: the kernel without VRF devices).
	Append string
	// MemMiB and CPUs size the guest (defaults 4096, 2).
	MemMiB, CPUs int
	// Console receives the serial console, each line stamped with the seconds since QEMU started.
	Console io.Writer
}

// Result is how a guest run ended.
type Result struct {
	// RC is the job's exit status (-1: the job did not finish).
	RC       int
	Duration time.Duration
}

// ErrNoStatus: the guest powered off or died before its job wrote an exit status (a kernel panic, the guest's
// OOM killer taking the job, QEMU killed).
var ErrNoStatus = errors.New("the guest ended without the job's status")

// Run boots the guest under QEMU (TCG) and waits for it to power off. The job's output is in Out/job.log.
func (b Boot) Run(ctx context.Context) (Result, error) {
	if b.MemMiB == 0 {
		b.MemMiB = 4096
	}
	if b.CPUs == 0 {
		b.CPUs = 2
	}
	if b.Console == nil {
		b.Console = io.Discard
	}
	if err := os.MkdirAll(b.Out, 0o755); err != nil {
		return Result{RC: -1}, err
	}
	_ = os.Remove(filepath.Join(b.Out, "rc"))
	var job strings.Builder
	job.WriteString("set -uo pipefail\n")
	for k, v := range b.Env {
		fmt.Fprintf(&job, "export %s=%s\n", k, strconv.Quote(v))
	}
	job.WriteString(b.Job)
	if err := os.WriteFile(filepath.Join(b.Out, "job"), []byte(job.String()), 0o755); err != nil {
		return Result{RC: -1}, err
	}
	cmdline := "console=ttyS0 panic=-1 loglevel=4 mitigations=off random.trust_cpu=on i8042.noaux i8042.nokbd i8042.nopnp" +
		" lane.modules=" + b.Kernel.Modules() + " lane.out=" + b.Out
	if b.Append != "" {
		cmdline += " " + b.Append
	}
	args := []string{"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-machine", "q35", "-accel", "tcg,thread=multi", "-cpu", "max",
		"-smp", strconv.Itoa(b.CPUs), "-m", strconv.Itoa(b.MemMiB),
		"-kernel", b.Kernel.Image(), "-initrd", b.Initramfs, "-append", cmdline, "-serial", "stdio",
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path=" + b.Out + ",mount_tag=out,security_model=none,multidevs=remap",
		"-device", "virtio-rng-pci"}
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", args...)
	cmd.Stdin = nil
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{RC: -1}, err
	}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{RC: -1}, fmt.Errorf("qemu-system-x86_64 (make deps installs qemu-system-x86): %w", err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		fmt.Fprintf(b.Console, "[%7.2f] %s\n", time.Since(start).Seconds(), strings.TrimRight(sc.Text(), "\r"))
	}
	werr := cmd.Wait()
	res := Result{RC: -1, Duration: time.Since(start)}
	if data, err := os.ReadFile(filepath.Join(b.Out, "rc")); err == nil {
		if rc, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			res.RC = rc
		}
	}
	if res.RC < 0 {
		return res, fmt.Errorf("%w (qemu: %v)", ErrNoStatus, werr)
	}
	return res, nil
}
