package perpacket

import (
	"encoding/binary"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Offsets in struct bpf_fib_lookup (64 bytes, linux/bpf.h).
const (
	fibSize    = 64
	fibFamily  = 0
	fibIfindex = 8
	fibSrc     = 16
	fibDst     = 32
	fibTbid    = 48

	fibLookupDirect = 1 << 0 // BPF_FIB_LOOKUP_DIRECT
	fibLookupTbid   = 1 << 3 // BPF_FIB_LOOKUP_TBID
)

// fibOnlyProgram is a tc program that does nothing but the router's bpf_fib_lookup (same flags, same table)
// for one fixed flow and returns its result (0 = success). Its cost minus the empty program's is what the kernel's
// lookup costs, a floor under the router's fib + redirect figure.
func fibOnlyProgram(src, dst netip.Addr, ifindex, table uint32) (*ebpf.Program, error) {
	off := func(field int) int16 { return int16(field - fibSize) } // params live at r10-64
	// Zero the params through a register (cilium/ebpf has no 64-bit store-immediate).
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1), asm.Mov.Imm(asm.R7, 0)}
	for i := 0; i < fibSize; i += 8 {
		insns = append(insns, asm.StoreMem(asm.R10, off(i), asm.R7, asm.DWord))
	}
	family := int64(2) // AF_INET
	if src.Is6() {
		family = 10 // AF_INET6
	}
	insns = append(insns,
		asm.StoreImm(asm.R10, off(fibFamily), family, asm.Byte),
		asm.StoreImm(asm.R10, off(fibIfindex), int64(ifindex), asm.Word),
		asm.StoreImm(asm.R10, off(fibTbid), int64(table), asm.Word),
	)
	for _, a := range []struct {
		field int
		addr  netip.Addr
	}{{fibSrc, src}, {fibDst, dst}} {
		b := a.addr.AsSlice() // network byte order, stored word by word as the bytes lie in memory
		for i := 0; i < len(b); i += 4 {
			insns = append(insns, asm.StoreImm(asm.R10, off(a.field+i), int64(int32(binary.NativeEndian.Uint32(b[i:]))), asm.Word))
		}
	}
	insns = append(insns,
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -fibSize),
		asm.Mov.Imm(asm.R3, fibSize),
		asm.Mov.Imm(asm.R4, fibLookupDirect|fibLookupTbid),
		asm.FnFibLookup.Call(),
		asm.Return(),
	)
	return ebpf.NewProgram(&ebpf.ProgramSpec{Name: "bench_fib_only", Type: ebpf.SchedCLS, License: "GPL", Instructions: insns})
}
