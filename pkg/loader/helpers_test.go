package loader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// requireRoot: the tests need root (network namespaces, BPF) and a bpffs at /sys/fs/bpf.
func requireRoot(t testing.TB) {
	t.Helper()
	testreq.BPFFS(t)
}

// skipIfNotSupported turns a missing kernel feature, detected by err, into a skip with the reason.
func skipIfNotSupported(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotSupported) {
		testreq.KernelLacks(t, "a feature the loader needs", err)
	}
}

func uniqueName(prefix string) string { return fmt.Sprintf("%s%08x", prefix, rand.Uint32()) }

// newNS creates a uniquely named network namespace (visible under
// /run/netns for debugging with nsenter) and removes it after the test.
func newNS(t testing.TB) netns.NsHandle {
	t.Helper()
	name := uniqueName("ldr-")
	h, err := namedns.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		if err := namedns.Delete(name); err != nil {
			t.Error(err)
		}
	})
	// No IPv6 DAD/MLD chatter: counters then see only test frames. /proc/sys/net follows the thread's namespace.
	err = netnsrun.Run(h, func() error {
		for _, f := range []string{"all", "default"} {
			if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+f+"/disable_ipv6", []byte("1"), 0o644); err != nil {
				return fmt.Errorf("disable IPv6 in %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// addVeth creates an up veth pair a<->b inside ns.
func addVeth(t testing.TB, ns netns.NsHandle, a, b string) {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle: %v", err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}); err != nil {
		t.Fatalf("add veth %s/%s: %v", a, b, err)
	}
	for _, n := range []string{a, b} {
		l, err := h.LinkByName(n)
		if err != nil {
			t.Fatalf("find %s: %v", n, err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatalf("set %s up: %v", n, err)
		}
	}
}

// newPinDir returns a unique bpffs dir path (not created) removed after the
// test together with its staging sibling.
func newPinDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("/sys/fs/bpf", uniqueName("ldr-test-"))
	t.Cleanup(func() {
		for _, d := range []string{dir, dir + "-staging"} {
			if err := os.RemoveAll(d); err != nil {
				t.Errorf("remove %s: %v", d, err)
			}
		}
	})
	return dir
}

// specParams describe a test collection; changing Step changes the
// programs compatibly, changing a map's size makes the pinned map
// incompatible.
type specParams struct {
	Step            int32  // added to the packet counter per packet
	IfaceMaxEntries uint32 // iface_table max entries
	IfaceValueSize  uint32 // iface_table value size
	NoXDP           bool   // leave xdp_router out
}

func defaultParams() specParams { return specParams{Step: 1, IfaceMaxEntries: 16, IfaceValueSize: 8} }

// testSpec builds a router-shaped collection with asm: tc_router and
// xdp_router count every packet into vrf_counters[0] (per CPU) and pass it
// on (TC_ACT_UNSPEC / XDP_PASS); both reference iface_table.
func testSpec(p specParams) *ebpf.CollectionSpec {
	// Only frames of our test ethertype count: interfaces send their own
	// packets (IPv6 DAD, MLD) when they come up.
	const testEtherTypeBE = 0xb588 // htons(0x88b5)
	match := map[ebpf.ProgramType]asm.Instructions{
		ebpf.SchedCLS: {
			asm.LoadMem(asm.R2, asm.R1, 16, asm.Word), // skb->protocol
			asm.JNE.Imm(asm.R2, testEtherTypeBE, "out"),
		},
		ebpf.XDP: {
			asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
			asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, 14),
			asm.JGT.Reg(asm.R4, asm.R3, "out"),
			asm.LoadMem(asm.R5, asm.R2, 12, asm.Half),
			asm.JNE.Imm(asm.R5, testEtherTypeBE, "out"),
		},
	}
	prog := func(name string, typ ebpf.ProgramType, ret int32) *ebpf.ProgramSpec {
		insns := append(asm.Instructions{}, match[typ]...)
		return &ebpf.ProgramSpec{
			Name:    name,
			Type:    typ,
			License: "GPL",
			Instructions: append(insns,
				asm.LoadMapPtr(asm.R1, 0).WithReference("iface_table"),
				asm.StoreImm(asm.RFP, -4, 0, asm.Word),
				asm.Mov.Reg(asm.R2, asm.RFP),
				asm.Add.Imm(asm.R2, -4),
				asm.LoadMapPtr(asm.R1, 0).WithReference("vrf_counters"),
				asm.FnMapLookupElem.Call(),
				asm.JEq.Imm(asm.R0, 0, "out"),
				asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
				asm.Add.Imm(asm.R1, p.Step),
				asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
				asm.Mov.Imm(asm.R0, ret).WithSymbol("out"),
				asm.Return(),
			),
		}
	}
	spec := &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"iface_table": {
				Name: "iface_table", Type: ebpf.Hash, KeySize: 4,
				ValueSize: p.IfaceValueSize, MaxEntries: p.IfaceMaxEntries,
			},
			"vrf_counters": {
				Name: "vrf_counters", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 4,
			},
		},
		Programs: map[string]*ebpf.ProgramSpec{
			"tc_router": prog("tc_router", ebpf.SchedCLS, -1),
		},
	}
	if !p.NoXDP {
		spec.Programs["xdp_router"] = prog("xdp_router", ebpf.XDP, 2)
	}
	return spec
}

func testOptions(ns netns.NsHandle, dir string, p specParams) Options {
	return Options{Spec: testSpec(p), PinDir: dir, NetNS: ns}
}

func mustLoad(t testing.TB, opts Options) *Loader {
	t.Helper()
	l, err := Load(context.Background(), opts)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// sendFrames writes n broadcast Ethernet frames out of ifname (inside ns);
// they arrive on its veth peer's ingress.
func sendFrames(t testing.TB, ns netns.NsHandle, ifname string, n int) {
	t.Helper()
	err := netnsrun.Run(ns, func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		frame := make([]byte, 60)
		copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		copy(frame[6:], iface.HardwareAddr)
		frame[12], frame[13] = 0x88, 0xb5 // local experimental ethertype
		sa := &unix.SockaddrLinklayer{Ifindex: iface.Index, Halen: 6}
		for range n {
			if err := unix.Sendto(fd, frame, 0, sa); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("send frames on %s: %v", ifname, err)
	}
}

// counter sums vrf_counters[0] over CPUs.
func counter(t testing.TB, m *ebpf.Map) uint64 {
	t.Helper()
	var vals []uint64
	if err := m.Lookup(uint32(0), &vals); err != nil {
		t.Fatalf("read vrf_counters: %v", err)
	}
	var sum uint64
	for _, v := range vals {
		sum += v
	}
	return sum
}

// eventually polls cond until it holds or the deadline passes, and fails the test then.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waittest.Must(t, 2*time.Millisecond, timeout, what, waittest.Check(func() (bool, error) { return cond(), nil }))
}

// expectCounted sends n frames on sender and waits until the counter of m
// grew by exactly n*step: proof that the expected program version runs on
// the peer's hook.
func expectCounted(t testing.TB, ns netns.NsHandle, sender string, m *ebpf.Map, n int, step uint64) {
	t.Helper()
	before := counter(t, m)
	sendFrames(t, ns, sender, n)
	want := before + uint64(n)*step
	var got uint64
	eventually(t, 3*time.Second, fmt.Sprintf("counter %d -> %d", before, want), func() bool {
		got = counter(t, m)
		return got >= want
	})
	if got != want {
		t.Fatalf("counter = %d, want %d (step %d): another program version counted", got, want, step)
	}
}

func programID(t testing.TB, p *ebpf.Program) ebpf.ProgramID {
	t.Helper()
	info, err := p.Info()
	if err != nil {
		t.Fatalf("program info: %v", err)
	}
	id, _ := info.ID()
	return id
}

func mapID(t testing.TB, m *ebpf.Map) ebpf.MapID {
	t.Helper()
	info, err := m.Info()
	if err != nil {
		t.Fatalf("map info: %v", err)
	}
	id, _ := info.ID()
	return id
}

func pinnedMapID(t testing.TB, path string) ebpf.MapID {
	t.Helper()
	m, err := ebpf.LoadPinnedMap(path, nil)
	if err != nil {
		t.Fatalf("open pinned map %s: %v", path, err)
	}
	defer m.Close()
	return mapID(t, m)
}

func attachmentOf(t testing.TB, l *Loader, ifname string) Attachment {
	t.Helper()
	for _, a := range l.Attachments() {
		if a.Interface == ifname {
			return a
		}
	}
	t.Fatalf("no attachment for %s in %+v", ifname, l.Attachments())
	return Attachment{}
}
