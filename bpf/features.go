package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Features are the kernel capabilities the router's variants depend on. The router is one object for every
// kernel: RouterSpec sets its kernel_features constant from them, and the verifier prunes the paths a kernel
// cannot run.
type Features struct {
	// KernCtx: the bpf_cast_to_kern_ctx kfunc (Linux 6.2). With it the IPv6 path reads skb->ip_summed and calls
	// bpf_csum_update only for CHECKSUM_COMPLETE packets; without it, it calls it for every forwarded packet
	// (a no-op for the other checksum states).
	KernCtx bool
	// FIBTableID: bpf_fib_lookup takes a routing table id (BPF_FIB_LOOKUP_TBID, Linux 6.5). Without it the
	// router looks up a VRF's table through its VRF device, so the agent refuses table-only VRFs and
	// source-based routing (agent/nodenet Settings.NoTableLookup).
	FIBTableID bool
}

// Bits of the router's kernel_features constant (router.c KF_*).
const (
	kfKernCtx    = 1 << 0
	kfFIBTableID = 1 << 1
)

// Feature names and the first Linux release that has each, for errors and docs.
const (
	FeatureKernCtx    = "kfunc bpf_cast_to_kern_ctx (Linux 6.2)"
	FeatureFIBTableID = "bpf_fib_lookup with BPF_FIB_LOOKUP_TBID (Linux 6.5)"
)

// String lists the features, as in logs and the agent's status.
func (f Features) String() string {
	return fmt.Sprintf("kern-ctx=%t fib-table-id=%t", f.KernCtx, f.FIBTableID)
}

// ProbeFeatures asks the running kernel: its BTF for the kfunc (as the loader resolves it), and a test run of a
// three-instruction tc program for the lookup flag (a kernel that does not know it answers -EINVAL).
//
// It first lifts the process's RLIMIT_MEMLOCK where the kernel charges BPF memory to it (before 5.11, e.g.
// Debian 11's 5.10; a no-op after): every load of the router goes through here (RouterSpec, the agent's start).
func ProbeFeatures() (Features, error) {
	var f Features
	if err := rlimit.RemoveMemlock(); err != nil {
		return f, fmt.Errorf("lift RLIMIT_MEMLOCK for BPF maps: %w", err)
	}
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		return f, fmt.Errorf("kernel BTF: %w", err)
	}
	var fn *btf.Func
	switch err := kernel.TypeByName("bpf_cast_to_kern_ctx", &fn); {
	case err == nil:
		f.KernCtx = true
	case !errors.Is(err, btf.ErrNotFound):
		return f, fmt.Errorf("kernel BTF: bpf_cast_to_kern_ctx: %w", err)
	}
	if f.FIBTableID, err = probeFIBTableID(); err != nil {
		return f, fmt.Errorf("probe %s: %w", FeatureFIBTableID, err)
	}
	return f, nil
}

// Offsets in struct bpf_fib_lookup (64 bytes, include/linux/bpf.h).
const (
	fibParamsSize   = 64
	fibFamilyOff    = 0
	fibIfindexOff   = 8
	fibTableIDOff   = 48
	fibLookupTBID   = 1 << 3 // BPF_FIB_LOOKUP_TBID
	fibLookupDirect = 1 << 0
)

// probeFIBTableID looks up the main table by id for the loopback device (ifindex 1 in every namespace): any
// answer but -EINVAL means the kernel took the flag.
func probeFIBTableID() (bool, error) {
	insns := asm.Instructions{asm.Mov.Imm(asm.R2, 0)}
	for off := -fibParamsSize; off < 0; off += 8 {
		insns = append(insns, asm.StoreMem(asm.RFP, int16(off), asm.R2, asm.DWord))
	}
	insns = append(insns,
		asm.StoreImm(asm.RFP, -fibParamsSize+fibFamilyOff, unix.AF_INET, asm.Byte),
		asm.StoreImm(asm.RFP, -fibParamsSize+fibIfindexOff, 1, asm.Word),
		asm.StoreImm(asm.RFP, -fibParamsSize+fibTableIDOff, unix.RT_TABLE_MAIN, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -fibParamsSize),
		asm.Mov.Imm(asm.R3, fibParamsSize),
		asm.Mov.Imm(asm.R4, fibLookupDirect|fibLookupTBID),
		asm.FnFibLookup.Call(),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SchedCLS, License: "GPL", Instructions: insns})
	if err != nil {
		return false, fmt.Errorf("load: %w", err)
	}
	defer prog.Close()
	ret, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 64)})
	if err != nil {
		return false, fmt.Errorf("test run: %w", err)
	}
	return int32(ret) != -int32(unix.EINVAL), nil
}

// RouterSpec is the router's collection spec for the running kernel: its features probed and set.
func RouterSpec() (*ebpf.CollectionSpec, error) {
	f, err := ProbeFeatures()
	if err != nil {
		return nil, err
	}
	return RouterSpecFor(f)
}

// RouterSpecFor is the router's collection spec for a kernel with features f (a test forces the variant of an
// older kernel this way).
func RouterSpecFor(f Features) (*ebpf.CollectionSpec, error) {
	spec, err := LoadRouter()
	if err != nil {
		return nil, err
	}
	var bits uint32
	if f.KernCtx {
		bits |= kfKernCtx
	}
	if f.FIBTableID {
		bits |= kfFIBTableID
	}
	v, ok := spec.Variables["kernel_features"]
	if !ok {
		return nil, errors.New("router: no kernel_features constant")
	}
	if err := v.Set(bits); err != nil {
		return nil, fmt.Errorf("router: set kernel_features: %w", err)
	}
	return spec, nil
}
