package loader

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	tc "github.com/florianl/go-tc"
	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// foreignProgram loads a pass-through program that belongs to "someone
// else" (not in our collection, not pinned by us).
func foreignProgram(t *testing.T, typ ebpf.ProgramType) *ebpf.Program {
	t.Helper()
	ret := int32(-1) // TC_ACT_UNSPEC: let later filters run
	if typ == ebpf.XDP {
		ret = 2 // XDP_PASS
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "foreign", Type: typ, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, ret), asm.Return()},
	})
	if err != nil {
		t.Fatalf("load foreign %s program: %v", typ, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// addForeignFilter installs a cls_bpf filter through go-tc, as another
// tool would.
func addForeignFilter(t *testing.T, ns netns.NsHandle, ifname string, prio uint16, handle uint32, name string, p *ebpf.Program) {
	t.Helper()
	err := netnsrun.Run(ns, func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		tcnl, err := tc.Open(&tc.Config{})
		if err != nil {
			return err
		}
		defer tcnl.Close()
		if err := ensureClsact(tcnl, iface.Index); err != nil {
			return err
		}
		fd, flags := uint32(p.FD()), uint32(tc.BpfActDirect)
		return tcnl.Filter().Add(&tc.Object{
			Msg: tc.Msg{
				Family: unix.AF_UNSPEC, Ifindex: uint32(iface.Index), Handle: handle,
				Parent: ingressParent(), Info: uint32(prio)<<16 | ethPAllBE,
			},
			Attribute: tc.Attribute{Kind: "bpf", BPF: &tc.Bpf{FD: &fd, Name: &name, Flags: &flags}},
		})
	})
	if err != nil {
		t.Fatalf("add foreign filter on %s: %v", ifname, err)
	}
}

func TestForeignTCAttachmentsSurvive(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	addVeth(t, ns, "a1", "b1")
	ctx := context.Background()
	foreignCLS := foreignProgram(t, ebpf.SchedCLS)
	foreignID := programID(t, foreignCLS)

	// a0: a foreign cls_bpf filter at another priority and a foreign tcx
	// program; both must outlive our attach and detach in every tc mode.
	addForeignFilter(t, ns, "a0", 1, 1, "someone-else:filter", foreignCLS)
	var foreignLink link.Link
	if err := netnsrun.Run(ns, func() error {
		iface, err := net.InterfaceByName("a0")
		if err != nil {
			return err
		}
		foreignLink, err = link.AttachTCX(link.TCXOptions{Interface: iface.Index, Program: foreignCLS, Attach: ebpf.AttachTCXIngress})
		return err
	}); err != nil {
		skipIfNotSupported(t, asNotSupported(err))
		t.Fatalf("attach foreign tcx program: %v", err)
	}
	t.Cleanup(func() { foreignLink.Close() })

	// b0..: a foreign filter squatting on our priority and handle.
	addForeignFilter(t, ns, "a1", DefaultTCPriority, DefaultTCHandle, "other-operator:router", foreignCLS)

	l := mustLoad(t, testOptions(ns, newPinDir(t), defaultParams()))
	assertForeignIntact := func(t *testing.T) {
		t.Helper()
		h := kernelHooks(t, ns, "a0")
		if !slices.Contains(h.filterProgs(), foreignID) {
			t.Fatalf("foreign cls_bpf filter gone from a0: %v", h.filterProgs())
		}
		if !slices.Contains(h.tcx, foreignID) {
			t.Fatalf("foreign tcx program gone from a0: %v", h.tcx)
		}
		h = kernelHooks(t, ns, "a1")
		if len(h.filters) != 1 || filterName(&h.filters[0]) != "other-operator:router" || h.filterProgs()[0] != foreignID {
			t.Fatalf("squatting foreign filter on a1 changed: %v", h.filterProgs())
		}
	}

	for _, mode := range []Mode{ModeTC, ModeTCX} {
		t.Run(string(mode), func(t *testing.T) {
			a, err := l.Attach(ctx, "a0", mode)
			skipIfNotSupported(t, err)
			if err != nil {
				t.Fatalf("Attach(a0, %s): %v", mode, err)
			}
			assertRunning(t, ns, a)
			assertForeignIntact(t)
			// The foreign programs pass packets on (TC_ACT_UNSPEC / TCX_NEXT),
			// so ours still sees every frame.
			expectCounted(t, ns, "b0", l.Map("vrf_counters"), 4, 1)
			if err := l.Detach(ctx, "a0"); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			h := kernelHooks(t, ns, "a0")
			if slices.Contains(h.tcx, a.ProgramID) || slices.Contains(h.filterProgs(), a.ProgramID) {
				t.Fatalf("our program %d still attached: %+v", a.ProgramID, h)
			}
			assertForeignIntact(t)
		})
	}

	t.Run("foreign filter at our priority and handle", func(t *testing.T) {
		_, err := l.Attach(ctx, "a1", ModeTC)
		if !errors.Is(err, ErrForeignFilter) || !strings.Contains(err.Error(), "a1") {
			t.Fatalf("Attach(a1, tc) = %v, want ErrForeignFilter naming a1", err)
		}
		assertForeignIntact(t)
	})

	if _, err := l.Attach(ctx, "a0", ModeTC); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if err := l.DetachAll(ctx); err != nil {
		t.Fatalf("DetachAll: %v", err)
	}
	assertForeignIntact(t)
	l.Close()

	// A new process does not mistake the foreign filters for ours.
	l2 := mustLoad(t, testOptions(ns, l.PinDir(), defaultParams()))
	if got := l2.Attachments(); len(got) != 0 {
		t.Fatalf("adopted foreign attachments: %+v", got)
	}
	if err := l2.Remove(ctx); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	assertForeignIntact(t)
}

func TestForeignXDPProgram(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	ctx := context.Background()
	foreign := foreignProgram(t, ebpf.XDP)
	foreignID := programID(t, foreign)

	// Attached the pre-bpf_link way, through netlink, in generic mode.
	if err := netnsrun.Run(ns, func() error {
		dev, err := netlink.LinkByName("a0")
		if err != nil {
			return err
		}
		return netlink.LinkSetXdpFdWithFlags(dev, foreign.FD(), nl.XDP_FLAGS_SKB_MODE)
	}); err != nil {
		t.Fatalf("attach foreign XDP program: %v", err)
	}
	assertForeignXDP := func(t *testing.T) {
		t.Helper()
		if got := kernelHooks(t, ns, "a0"); got.xdp != foreignID || got.xdpMode != nl.XDP_ATTACHED_SKB {
			t.Fatalf("foreign XDP program replaced: now %d mode %d, want %d", got.xdp, got.xdpMode, foreignID)
		}
	}

	opts := testOptions(ns, newPinDir(t), defaultParams())
	opts.Overrides = map[string]Mode{"a0": ModeXDPNative}
	strict := mustLoad(t, opts)
	for _, mode := range []Mode{ModeXDPGeneric, ModeXDPNative, ModeAuto} {
		t.Run("fails/"+string(mode), func(t *testing.T) {
			_, err := strict.Attach(ctx, "a0", mode)
			var fe *ForeignXDPError
			if !errors.Is(err, ErrForeignXDP) || !errors.As(err, &fe) {
				t.Fatalf("Attach(a0, %s) = %v, want *ForeignXDPError", mode, err)
			}
			if fe.Interface != "a0" || fe.ProgramID != foreignID || fe.AttachMode != "generic" {
				t.Fatalf("ForeignXDPError = %+v, want a0 / %d / generic", fe, foreignID)
			}
			assertForeignXDP(t)
		})
	}
	if got := strict.Attachments(); len(got) != 0 {
		t.Fatalf("failed attaches left attachments: %+v", got)
	}
	if err := strict.DetachAll(ctx); err != nil {
		t.Fatalf("DetachAll: %v", err)
	}
	assertForeignXDP(t)
	strict.Close()

	t.Run("falls back to tc when asked", func(t *testing.T) {
		opts := testOptions(ns, newPinDir(t), defaultParams())
		opts.XDPFallbackToTC = true
		l := mustLoad(t, opts)
		a, err := l.Attach(ctx, "a0", ModeXDPGeneric)
		skipIfNotSupported(t, err)
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		if wantMode, _ := tcMode(t, ns); a.Mode != wantMode || !strings.Contains(a.Reason, "foreign XDP program") {
			t.Fatalf("fallback: mode %q reason %q", a.Mode, a.Reason)
		}
		assertRunning(t, ns, a)
		expectCounted(t, ns, "b0", l.Map("vrf_counters"), 3, 1)
		if err := l.Remove(ctx); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		assertForeignXDP(t)
	})
}
