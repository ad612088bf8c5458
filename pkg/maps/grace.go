package maps

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// membarrier(2) commands (linux/membarrier.h).
const (
	membarrierCmdQuery  = 0
	membarrierCmdGlobal = 1 << 0
)

// graceWaiter waits until every BPF program that may have read the old
// version slot has finished: one RCU grace period, since tc and XDP programs
// run inside RCU read-side sections.
type graceWaiter struct {
	mu    sync.Mutex
	probe bool // membarrier was probed
	useMB bool // membarrier(MEMBARRIER_CMD_GLOBAL) is usable
	outer *ebpf.Map
	inner *ebpf.Map
}

// membarrierGlobal returns nil when MEMBARRIER_CMD_GLOBAL is available, else
// why not. It is synchronize_rcu() in the kernel, but skips the wait when only
// one CPU is online and is refused with nohz_full; a single-CPU process uses
// the map fallback to stay on the safe side (the online count is not cheap to
// know).
func membarrierGlobal() error {
	if n := runtime.NumCPU(); n < 2 {
		return fmt.Errorf("membarrier: this process may use %d CPU, the map fallback is used", n)
	}
	mask, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierCmdQuery, 0, 0)
	if errno != 0 {
		return fmt.Errorf("membarrier(MEMBARRIER_CMD_QUERY): %w", errno)
	}
	if mask&membarrierCmdGlobal == 0 {
		return fmt.Errorf("membarrier: MEMBARRIER_CMD_GLOBAL not in the supported commands %#x", mask)
	}
	return nil
}

func (g *graceWaiter) wait() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.probe {
		g.useMB, g.probe = membarrierGlobal() == nil, true
	}
	if g.useMB {
		_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, membarrierCmdGlobal, 0, 0)
		if errno == 0 {
			return nil
		}
		g.useMB = false
	}
	return g.waitMapOfMaps()
}

// waitMapOfMaps updates a one-entry ARRAY_OF_MAPS: the kernel calls
// synchronize_rcu() before such an update returns (maybe_wait_bpf_programs).
func (g *graceWaiter) waitMapOfMaps() error {
	if g.outer == nil {
		innerSpec := &ebpf.MapSpec{Name: "no_grace_inner", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
		inner, err := ebpf.NewMap(innerSpec)
		if err != nil {
			return fmt.Errorf("create grace-period inner map: %w", err)
		}
		outer, err := ebpf.NewMap(&ebpf.MapSpec{Name: "no_grace", Type: ebpf.ArrayOfMaps, KeySize: 4,
			ValueSize: 4, MaxEntries: 1, InnerMap: innerSpec})
		if err != nil {
			inner.Close()
			return fmt.Errorf("create grace-period map: %w", err)
		}
		g.outer, g.inner = outer, inner
	}
	if err := g.outer.Update(uint32(0), g.inner, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("grace period via map-of-maps update: %w", err)
	}
	return nil
}

func (g *graceWaiter) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	if g.outer != nil {
		errs = append(errs, g.outer.Close(), g.inner.Close())
		g.outer, g.inner = nil, nil
	}
	return errors.Join(errs...)
}
