package progrun

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// loadIfindexEcho loads a tc program that returns __sk_buff.ifindex, so the test sees the context arrive.
func loadIfindexEcho(t *testing.T) *ebpf.Program {
	t.Helper()
	testreq.Root(t) // loading BPF programs
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SchedCLS,
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R0, asm.R1, 40, asm.Word), // r0 = skb->ifindex
			asm.Return(),
		},
		License: "GPL",
	})
	if errors.Is(err, ebpf.ErrNotSupported) {
		testreq.KernelLacks(t, "tc (SchedCLS) programs", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	return prog
}

func frame() []byte {
	f := make([]byte, 64)
	copy(f[12:], []byte{0x08, 0x00}) // IPv4 ethertype; content is irrelevant to the echo program
	return f
}

func TestRunPassesContextAndMeasures(t *testing.T) {
	prog := loadIfindexEcho(t)
	// ifindex 1 is loopback in every namespace.
	res, err := Run(prog, frame(), SkbContext(1), 100, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ret != 1 {
		t.Fatalf("program saw ifindex %d, want 1 (context not passed)", res.Ret)
	}
	if res.Runs != 1000 {
		t.Fatalf("Runs = %d, want 1000", res.Runs)
	}
	if res.PerRun <= 0 {
		t.Fatalf("PerRun = %v, want > 0", res.PerRun)
	}
}

func TestRunUnknownIfindexFails(t *testing.T) {
	prog := loadIfindexEcho(t)
	if _, err := Run(prog, frame(), SkbContext(1<<30), 1, 1); err == nil {
		t.Fatal("Run with a nonexistent ifindex succeeded; the kernel should refuse it (ENODEV)")
	}
}

func TestRunRejectsBadBatch(t *testing.T) {
	tests := []struct{ repeat, total int }{{0, 10}, {10, 5}, {-1, -1}}
	for _, tt := range tests {
		if _, err := Run(nil, nil, nil, tt.repeat, tt.total); err == nil {
			t.Errorf("Run(repeat=%d, total=%d) succeeded, want an error", tt.repeat, tt.total)
		}
	}
}
