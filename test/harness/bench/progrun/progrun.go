// Package progrun measures a BPF program's cost per run with BPF_PROG_TEST_RUN, using the duration the kernel
// measures around its own repeat loop, so syscall overhead is not part of the figure. cilium/ebpf's
// Program.Benchmark returns that duration but cannot pass a context (a tc program needs __sk_buff.ifindex to see
// a real ingress device); Program.Run takes a context but drops the duration. Hence this small syscall wrapper.
package progrun

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// enotsupp is the kernel-internal ENOTSUPP (524) returned for program types without a test runner.
const enotsupp = unix.Errno(524)

// testRunAttr mirrors the BPF_PROG_TEST_RUN member of union bpf_attr.
type testRunAttr struct {
	progFD      uint32
	retval      uint32
	dataSizeIn  uint32
	dataSizeOut uint32
	dataIn      uint64
	dataOut     uint64
	repeat      uint32
	duration    uint32
	ctxSizeIn   uint32
	ctxSizeOut  uint32
	ctxIn       uint64
	ctxOut      uint64
	flags       uint32
	cpu         uint32
	batchSize   uint32
	_           uint32
}

// SkbContext is the prefix of struct __sk_buff a tc test run may set, up to ifindex: the kernel sets skb->dev
// from ifindex (in the calling thread's network namespace) and runs eth_type_trans against that device, so the
// frame's destination MAC decides pkt_type as on a real receive.
func SkbContext(ifindex uint32) []byte {
	ctx := make([]byte, 44) // __sk_buff.ifindex is at offset 40
	binary.NativeEndian.PutUint32(ctx[40:], ifindex)
	return ctx
}

// XDPContext is struct xdp_md for an XDP test run of a frame of dataLen bytes arriving on ifindex.
func XDPContext(dataLen, ifindex uint32) []byte {
	ctx := make([]byte, 24) // data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex
	binary.NativeEndian.PutUint32(ctx[4:], dataLen)
	binary.NativeEndian.PutUint32(ctx[12:], ifindex)
	return ctx
}

// Result is one measurement.
type Result struct {
	Ret    uint32        // return value of the last run
	PerRun time.Duration // kernel-measured mean time per run (ns resolution)
	Runs   int           // total runs measured
}

// Run executes prog on a fresh copy of data in batches of `repeat` runs until `total` runs are done, and returns
// the run-weighted mean time per run. Batches exist because every repeat of one syscall reuses the same buffer:
// a router that decrements the TTL forwards a TTL-255 packet at most ~250 times in a row.
func Run(prog *ebpf.Program, data, ctx []byte, repeat, total int) (Result, error) {
	if repeat < 1 || total < repeat {
		return Result{}, fmt.Errorf("repeat %d, total %d: want 1 <= repeat <= total", repeat, total)
	}
	var (
		sum  time.Duration
		runs int
		ret  uint32
	)
	for runs < total {
		r, d, err := runOnce(prog, data, ctx, uint32(repeat))
		if err != nil {
			return Result{}, err
		}
		ret = r
		sum += d * time.Duration(repeat)
		runs += repeat
	}
	return Result{Ret: ret, PerRun: sum / time.Duration(runs), Runs: runs}, nil
}

func runOnce(prog *ebpf.Program, data, ctx []byte, repeat uint32) (uint32, time.Duration, error) {
	in := append([]byte(nil), data...)
	out := make([]byte, len(data)+256) // room for headers a program may push
	attr := testRunAttr{
		progFD:      uint32(prog.FD()),
		dataSizeIn:  uint32(len(in)),
		dataSizeOut: uint32(len(out)),
		dataIn:      uint64(uintptr(unsafe.Pointer(&in[0]))),
		dataOut:     uint64(uintptr(unsafe.Pointer(&out[0]))),
		repeat:      repeat,
	}
	if len(ctx) > 0 {
		attr.ctxSizeIn = uint32(len(ctx))
		attr.ctxIn = uint64(uintptr(unsafe.Pointer(&ctx[0])))
	}
	for {
		_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		runtime.KeepAlive(in)
		runtime.KeepAlive(out)
		runtime.KeepAlive(ctx)
		switch {
		case errno == 0:
			return attr.retval, time.Duration(attr.duration), nil
		case errors.Is(errno, unix.EINTR):
			continue // a signal interrupted the loop; the kernel restarts the measurement
		case errno == enotsupp, errors.Is(errno, unix.EOPNOTSUPP):
			return 0, 0, fmt.Errorf("BPF_PROG_TEST_RUN of %s: %w", prog.Type(), ebpf.ErrNotSupported)
		default:
			return 0, 0, fmt.Errorf("BPF_PROG_TEST_RUN of %s: %w", prog.Type(), errno)
		}
	}
}
