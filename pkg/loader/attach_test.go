package loader

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	tc "github.com/florianl/go-tc"
	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// hooks is what the kernel says runs on an interface's ingress hooks.
type hooks struct {
	tcx     []ebpf.ProgramID // tcx ingress programs, in order
	xdp     ebpf.ProgramID   // XDP program (any owner), 0 if none
	xdpMode uint32           // nl.XDP_ATTACHED_*
	filters []tc.Object      // cls_bpf filters on clsact ingress
}

func kernelHooks(t *testing.T, ns netns.NsHandle, ifname string) hooks {
	t.Helper()
	var h hooks
	err := netnsrun.Run(ns, func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		res, err := link.QueryPrograms(link.QueryOptions{Target: iface.Index, Attach: ebpf.AttachTCXIngress})
		// A kernel before tcx (6.6) answers EINVAL for the attach type it does not know: no tcx programs.
		if err != nil && !errors.Is(err, link.ErrNotSupported) && !errors.Is(err, unix.EINVAL) {
			return err
		}
		if res != nil {
			for _, p := range res.Programs {
				h.tcx = append(h.tcx, p.ID)
			}
		}
		dev, err := netlink.LinkByIndex(iface.Index)
		if err != nil {
			return err
		}
		if x := dev.Attrs().Xdp; x != nil {
			h.xdp, h.xdpMode = ebpf.ProgramID(x.ProgId), x.AttachMode
		}
		tcnl, err := tc.Open(&tc.Config{})
		if err != nil {
			return err
		}
		defer tcnl.Close()
		fs, err := tcnl.Filter().Get(&tc.Msg{Family: unix.AF_UNSPEC, Ifindex: uint32(iface.Index), Parent: ingressParent()})
		if err == nil {
			for _, f := range fs {
				if f.Kind == "bpf" && f.BPF != nil && f.BPF.ID != nil {
					h.filters = append(h.filters, f)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("query hooks of %s: %v", ifname, err)
	}
	return h
}

// tcMode is what the loader's tc fallbacks end in on this kernel: tcx, else legacy tc (before 6.6), and the
// reason's suffix that says so.
func tcMode(t *testing.T, ns netns.NsHandle) (Mode, string) {
	if kernelHasTCX(t, ns) {
		return ModeTCX, "tcx"
	}
	return ModeTC, "tcx not supported -> legacy tc"
}

// kernelHasTCX asks the kernel, apart from the loader, whether it knows tcx (6.6): a query for the attach type on
// the loopback device fails with EINVAL before.
func kernelHasTCX(t *testing.T, ns netns.NsHandle) bool {
	t.Helper()
	var has bool
	err := netnsrun.Run(ns, func() error {
		_, err := link.QueryPrograms(link.QueryOptions{Target: 1, Attach: ebpf.AttachTCXIngress})
		switch {
		case err == nil:
			has = true
		case errors.Is(err, unix.EINVAL), errors.Is(err, link.ErrNotSupported):
		default:
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("query tcx on lo: %v", err)
	}
	return has
}

func (h hooks) filterProgs() []ebpf.ProgramID {
	var ids []ebpf.ProgramID
	for _, f := range h.filters {
		ids = append(ids, ebpf.ProgramID(*f.BPF.ID))
	}
	return ids
}

// assertRunning checks that the kernel runs exactly our attachment a (and
// nothing of ours elsewhere on the interface).
func assertRunning(t *testing.T, ns netns.NsHandle, a Attachment) {
	t.Helper()
	h := kernelHooks(t, ns, a.Interface)
	switch a.Mode {
	case ModeTCX:
		if !slices.Contains(h.tcx, a.ProgramID) {
			t.Fatalf("%s: tcx programs %v lack ours %d", a.Interface, h.tcx, a.ProgramID)
		}
	case ModeTC:
		if !slices.Contains(h.filterProgs(), a.ProgramID) {
			t.Fatalf("%s: cls_bpf programs %v lack ours %d", a.Interface, h.filterProgs(), a.ProgramID)
		}
	case ModeXDPNative, ModeXDPGeneric:
		wantMode := uint32(nl.XDP_ATTACHED_DRV)
		if a.Mode == ModeXDPGeneric {
			wantMode = nl.XDP_ATTACHED_SKB
		}
		if h.xdp != a.ProgramID || h.xdpMode != wantMode {
			t.Fatalf("%s: XDP program %d mode %d, want %d mode %d", a.Interface, h.xdp, h.xdpMode, a.ProgramID, wantMode)
		}
	default:
		t.Fatalf("unexpected mode %q", a.Mode)
	}
	if a.Mode != ModeTC && a.Pin != "" {
		lnk, err := link.LoadPinnedLink(a.Pin, nil)
		if err != nil {
			t.Fatalf("pinned link %s: %v", a.Pin, err)
		}
		defer lnk.Close()
		info, err := lnk.Info()
		if err != nil || info.ID != a.LinkID || info.Program != a.ProgramID {
			t.Fatalf("pinned link %s: info %+v (%v), want link %d program %d", a.Pin, info, err, a.LinkID, a.ProgramID)
		}
	}
}

func TestAttachDetachModes(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		mode    Mode
		wantPin bool
	}{
		{ModeTCX, true},
		{ModeTC, false},
		{ModeXDPNative, true},
		{ModeXDPGeneric, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			ns := newNS(t)
			addVeth(t, ns, "rx0", "tx0")
			l := mustLoad(t, testOptions(ns, newPinDir(t), defaultParams()))
			ctx := context.Background()

			a, err := l.Attach(ctx, "rx0", tt.mode)
			skipIfNotSupported(t, err)
			if err != nil {
				t.Fatalf("Attach(%s): %v", tt.mode, err)
			}
			if a.Mode != tt.mode || a.Requested != tt.mode || a.Interface != "rx0" || a.Driver != "veth" {
				t.Fatalf("attachment = %+v", a)
			}
			if (a.Pin != "") != tt.wantPin || (a.LinkID != 0) != tt.wantPin {
				t.Fatalf("pin %q link %d, want pinned=%v", a.Pin, a.LinkID, tt.wantPin)
			}
			assertRunning(t, ns, a)
			expectCounted(t, ns, "tx0", l.Map("vrf_counters"), 5, 1)
			if got := l.Attachments(); len(got) != 1 || got[0] != a {
				t.Fatalf("Attachments() = %+v, want [%+v]", got, a)
			}

			// Attaching again keeps the very same link / filter.
			again, err := l.Attach(ctx, "rx0", tt.mode)
			if err != nil {
				t.Fatalf("second Attach: %v", err)
			}
			if again.LinkID != a.LinkID || again.ProgramID != a.ProgramID {
				t.Fatalf("re-attach changed link/program: %+v -> %+v", a, again)
			}

			if err := l.Detach(ctx, "rx0"); err != nil {
				t.Fatalf("Detach: %v", err)
			}
			h := kernelHooks(t, ns, "rx0")
			if len(h.tcx) != 0 || h.xdp != 0 || len(h.filters) != 0 {
				t.Fatalf("hooks after detach: %+v", h)
			}
			if tt.wantPin {
				if _, err := os.Stat(a.Pin); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("link pin %s still there: %v", a.Pin, err)
				}
			}
			if got := l.Attachments(); len(got) != 0 {
				t.Fatalf("Attachments() after detach = %+v", got)
			}
			if err := l.Detach(ctx, "rx0"); err != nil {
				t.Fatalf("Detach of a detached interface: %v", err)
			}
		})
	}
}

func TestAttachAutoAndOverrides(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	addVeth(t, ns, "a1", "b1")
	opts := testOptions(ns, newPinDir(t), defaultParams())
	opts.Overrides = map[string]Mode{"a1": ModeXDPGeneric}
	l := mustLoad(t, opts)
	ctx := context.Background()

	a, err := l.Attach(ctx, "a0", ModeAuto)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Attach(auto): %v", err)
	}
	wantMode, suffix := tcMode(t, ns)
	wantReason := "driver veth -> tc; " + suffix
	if a.Mode != wantMode || a.Requested != ModeAuto || a.Reason != wantReason {
		t.Fatalf("auto on veth: mode %q reason %q, want %q %q", a.Mode, a.Reason, wantMode, wantReason)
	}
	assertRunning(t, ns, a)

	b, err := l.Attach(ctx, "a1", ModeAuto)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Attach(auto) with override: %v", err)
	}
	if b.Mode != ModeXDPGeneric || b.Reason != "override a1=xdp-generic" {
		t.Fatalf("override: mode %q reason %q", b.Mode, b.Reason)
	}
	assertRunning(t, ns, b)

	// Switching the hook is make-before-break and leaves one attachment.
	c, err := l.Attach(ctx, "a0", ModeTC)
	if err != nil {
		t.Fatalf("switch a0 to tc: %v", err)
	}
	assertRunning(t, ns, c)
	if h := kernelHooks(t, ns, "a0"); len(h.tcx) != 0 {
		t.Fatalf("old tcx program left after switching to tc: %+v", h)
	}
	if _, err := os.Stat(a.Pin); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old tcx pin left: %v", err)
	}
	// Between XDP modes the old link goes first (kernel forbids both).
	d, err := l.Attach(ctx, "a1", ModeXDPNative)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("switch a1 to xdp-native: %v", err)
	}
	assertRunning(t, ns, d)
	if d.LinkID == b.LinkID {
		t.Fatalf("xdp mode switch kept link %d", d.LinkID)
	}

	if _, err := l.Attach(ctx, "nosuch0", ModeAuto); err == nil || !strings.Contains(err.Error(), "nosuch0") {
		t.Fatalf("attach to missing interface: %v", err)
	}
	if _, err := l.Attach(ctx, "a0", Mode("fast")); err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Fatalf("attach with bad mode: %v", err)
	}

	if err := l.DetachAll(ctx); err != nil {
		t.Fatalf("DetachAll: %v", err)
	}
	for _, ifname := range []string{"a0", "a1"} {
		if h := kernelHooks(t, ns, ifname); len(h.tcx) != 0 || h.xdp != 0 || len(h.filters) != 0 {
			t.Fatalf("%s hooks after DetachAll: %+v", ifname, h)
		}
	}
	for _, kind := range []string{kindTCX, kindXDP} {
		entries, err := os.ReadDir(l.linkKindDir(kind))
		if err != nil || len(entries) != 0 {
			t.Fatalf("links/%s after DetachAll: %v %v", kind, entries, err)
		}
	}
}

// With LegacyTC the tc hook is a cls_bpf filter, for auto and an explicit tcx request alike; an interface already
// attached with tcx keeps its link when asked for the tc hook again.
func TestLegacyTC(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	addVeth(t, ns, "a1", "b1")
	addVeth(t, ns, "a2", "b2")
	pins := newPinDir(t)
	ctx := context.Background()
	tcx := mustLoad(t, testOptions(ns, pins, defaultParams()))
	kept, err := tcx.Attach(ctx, "a2", ModeTCX)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Attach(tcx) without LegacyTC: %v", err)
	}
	tcx.Close()

	opts := testOptions(ns, pins, defaultParams())
	opts.LegacyTC = true
	l := mustLoad(t, opts)
	for _, tc := range []struct {
		ifname string
		mode   Mode
	}{{"a0", ModeAuto}, {"a1", ModeTCX}} {
		a, err := l.Attach(ctx, tc.ifname, tc.mode)
		if err != nil {
			t.Fatalf("Attach(%s, %s): %v", tc.ifname, tc.mode, err)
		}
		if a.Mode != ModeTC || !strings.Contains(a.Reason, "legacy tc (LegacyTC)") {
			t.Fatalf("Attach(%s, %s) with LegacyTC: mode %q reason %q, want tc", tc.ifname, tc.mode, a.Mode, a.Reason)
		}
		assertRunning(t, ns, a)
		if h := kernelHooks(t, ns, tc.ifname); len(h.tcx) != 0 {
			t.Fatalf("%s: a tcx program besides the filter: %+v", tc.ifname, h)
		}
		expectCounted(t, ns, "b"+tc.ifname[1:], l.Map("vrf_counters"), 5, 1)
	}
	var adopted Attachment
	for _, a := range l.Attachments() {
		if a.Interface == "a2" {
			adopted = a
		}
	}
	if adopted.Mode != ModeTCX || adopted.LinkID != kept.LinkID {
		t.Fatalf("the tcx attachment of a2 after a load with LegacyTC: %+v, want link %d kept", adopted, kept.LinkID)
	}
	if err := l.DetachAll(ctx); err != nil {
		t.Fatalf("DetachAll: %v", err)
	}
}

func TestAutoWithoutXDPProgramFallsBack(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	p := defaultParams()
	p.NoXDP = true
	opts := testOptions(ns, newPinDir(t), p)
	opts.Overrides = map[string]Mode{"b0": ModeXDPNative}
	l := mustLoad(t, opts)

	if _, err := l.Attach(context.Background(), "a0", ModeXDPGeneric); !errors.Is(err, ErrNoProgram) {
		t.Fatalf("explicit xdp without program: err = %v, want ErrNoProgram", err)
	}
	// An override is strict as well.
	if _, err := l.Attach(context.Background(), "b0", ModeAuto); !errors.Is(err, ErrNoProgram) {
		t.Fatalf("override xdp without program: err = %v, want ErrNoProgram", err)
	}
}

func TestRemoveUnpinsEverything(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	dir := newPinDir(t)
	l, err := Load(context.Background(), testOptions(ns, dir, defaultParams()))
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, p := range []string{dir + "/iface_table", dir + "/vrf_counters", dir + "/progs/tc_router", dir + "/progs/xdp_router"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("expected pin %s: %v", p, err)
		}
	}
	if _, err := l.Attach(context.Background(), "a0", ModeTC); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if _, err := l.Attach(context.Background(), "b0", ModeXDPGeneric); err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if err := l.Remove(context.Background()); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pin dir still there after Remove: %v", err)
	}
	for _, ifname := range []string{"a0", "b0"} {
		if h := kernelHooks(t, ns, ifname); len(h.tcx) != 0 || h.xdp != 0 || len(h.filters) != 0 {
			t.Fatalf("%s hooks after Remove: %+v", ifname, h)
		}
	}
	if _, err := l.Attach(context.Background(), "a0", ModeTC); !errors.Is(err, ErrClosed) {
		t.Fatalf("Attach after Remove: %v, want ErrClosed", err)
	}
}

// TestDriverName: auto mode asks the kernel for the driver (ETHTOOL_GDRVINFO) in the interface's namespace.
func TestDriverName(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "a0", "b0")
	tests := []struct {
		ifname, want string
		err          bool
	}{{"a0", "veth", false}, {"nosuch0", "", true}}
	for _, tt := range tests {
		var got string
		err := netnsrun.Run(ns, func() error {
			var err error
			got, err = driverName(tt.ifname)
			return err
		})
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("driverName(%s) = %q, %v; want %q, error %t", tt.ifname, got, err, tt.want, tt.err)
		}
	}
}
