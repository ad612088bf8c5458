package loader

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

// addBridge adds an up bridge: a device without native XDP (no ndo_bpf).
func addBridge(t *testing.T, ns netns.NsHandle, name string) {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle: %v", err)
	}
	defer h.Close()
	d := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := h.LinkAdd(d); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			testreq.KernelLacks(t, "bridge devices", err)
		}
		t.Fatalf("add bridge %s: %v", name, err)
	}
	if err := h.LinkSetUp(d); err != nil {
		t.Fatalf("set %s up: %v", name, err)
	}
}

func delLink(t *testing.T, ns netns.NsHandle, name string) {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle: %v", err)
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	if err := h.LinkDel(l); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// A device without native XDP (a bridge) gives the kernel's EOPNOTSUPP, which
// the loader marks ErrNotSupported; auto mode falls back to tc on it.
func TestNativeXDPUnsupported(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addBridge(t, ns, "d0")
	opts := testOptions(ns, newPinDir(t), defaultParams())
	opts.DriverTable = func(driver string) (Mode, string) {
		if driver == "bridge" {
			return ModeXDPNative, "driver bridge -> xdp-native (test table)"
		}
		return DriverMode(driver)
	}
	l := mustLoad(t, opts)
	ctx := context.Background()

	_, err := l.Attach(ctx, "d0", ModeXDPNative)
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) || !strings.Contains(err.Error(), "attach xdp-native to d0") {
		t.Fatalf("Attach(d0, xdp-native) = %v, want ErrNotSupported wrapping EOPNOTSUPP with context", err)
	}
	if got := l.Attachments(); len(got) != 0 {
		t.Fatalf("failed attach left %+v", got)
	}
	if h := kernelHooks(t, ns, "d0"); h.xdp != 0 {
		t.Fatalf("XDP program on d0 after failed attach: %d", h.xdp)
	}

	a, err := l.Attach(ctx, "d0", ModeAuto)
	if err != nil {
		t.Fatalf("Attach(d0, auto): %v", err)
	}
	wantMode, suffix := tcMode(t, ns)
	want := "driver bridge -> xdp-native (test table); xdp-native not supported -> tc; " + suffix
	if a.Mode != wantMode || a.Reason != want || a.Driver != "bridge" {
		t.Fatalf("auto fallback: mode %q reason %q driver %q; want %s, %q", a.Mode, a.Reason, a.Driver, wantMode, want)
	}
	assertRunning(t, ns, a)

	// A failed switch between XDP modes (break-before-make) restores the
	// old mode instead of leaving the interface without the router.
	g, err := l.Attach(ctx, "d0", ModeXDPGeneric)
	if err != nil {
		t.Fatalf("Attach(d0, xdp-generic): %v", err)
	}
	assertRunning(t, ns, g)
	if h := kernelHooks(t, ns, "d0"); len(h.tcx) != 0 {
		t.Fatalf("tcx left after switching to xdp-generic: %v", h.tcx)
	}
	if _, err := l.Attach(ctx, "d0", ModeXDPNative); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("switch to xdp-native = %v, want ErrNotSupported", err)
	}
	restored := attachmentOf(t, l, "d0")
	if restored.Mode != ModeXDPGeneric || restored.Reason != g.Reason {
		t.Fatalf("after failed switch: %+v, want xdp-generic like %+v", restored, g)
	}
	assertRunning(t, ns, restored)
}

// Interfaces that disappear leave defunct links: Detach and the next Load
// clean up after them without errors.
func TestInterfaceGone(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	dir := newPinDir(t)
	ctx := context.Background()
	modes := map[string]Mode{"a0": ModeTCX, "a1": ModeXDPGeneric, "a2": ModeTC}
	peers := map[string]string{"a0": "b0", "a1": "b1", "a2": "b2"}
	if !kernelHasTCX(t, ns) {
		t.Log("no tcx in this kernel (before 6.6): the legacy tc and XDP attachments only")
		delete(modes, "a0")
		delete(peers, "a0")
	}
	for a, b := range peers {
		addVeth(t, ns, a, b)
	}

	t.Run("detach after the device went away", func(t *testing.T) {
		l := mustLoad(t, testOptions(ns, dir, defaultParams()))
		pins := map[string]string{}
		for ifname, mode := range modes {
			a, err := l.Attach(ctx, ifname, mode)
			skipIfNotSupported(t, err)
			if err != nil {
				t.Fatalf("Attach(%s): %v", ifname, err)
			}
			pins[ifname] = a.Pin
		}
		for ifname := range modes {
			delLink(t, ns, ifname)
			if err := l.Detach(ctx, ifname); err != nil {
				t.Fatalf("Detach(%s) of a deleted device: %v", ifname, err)
			}
			if p := pins[ifname]; p != "" {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("pin %s left: %v", p, err)
				}
			}
		}
		if got := l.Attachments(); len(got) != 0 {
			t.Fatalf("attachments left: %+v", got)
		}
	})

	t.Run("attach after the device was re-created", func(t *testing.T) {
		for a, b := range peers {
			addVeth(t, ns, a, b)
		}
		l := mustLoad(t, testOptions(ns, dir, defaultParams()))
		before := map[string]Attachment{}
		for ifname, mode := range modes {
			a, err := l.Attach(ctx, ifname, mode)
			if err != nil {
				t.Fatalf("Attach(%s): %v", ifname, err)
			}
			before[ifname] = a
		}
		for ifname := range modes {
			delLink(t, ns, ifname)
			addVeth(t, ns, ifname, peers[ifname])
		}
		for ifname, mode := range modes {
			a, err := l.Attach(ctx, ifname, mode)
			if err != nil {
				t.Fatalf("re-Attach(%s): %v", ifname, err)
			}
			if a.Ifindex == before[ifname].Ifindex {
				t.Fatalf("%s: attachment still on the old ifindex %d", ifname, a.Ifindex)
			}
			assertRunning(t, ns, a)
		}
		if err := l.DetachAll(ctx); err != nil {
			t.Fatal(err)
		}
		for ifname := range modes {
			delLink(t, ns, ifname)
		}
	})

	t.Run("load drops pins of defunct links", func(t *testing.T) {
		for a, b := range peers {
			addVeth(t, ns, a, b)
		}
		l := mustLoad(t, testOptions(ns, dir, defaultParams()))
		var pins []string
		for ifname, mode := range modes {
			a, err := l.Attach(ctx, ifname, mode)
			if err != nil {
				t.Fatalf("Attach(%s): %v", ifname, err)
			}
			if a.Pin != "" {
				pins = append(pins, a.Pin)
			}
		}
		l.Close()
		for ifname := range modes {
			delLink(t, ns, ifname)
		}
		l2 := mustLoad(t, testOptions(ns, dir, defaultParams()))
		if got := l2.Attachments(); len(got) != 0 {
			t.Fatalf("adopted attachments of deleted devices: %+v", got)
		}
		for _, p := range pins {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("defunct link pin %s left: %v", p, err)
			}
		}
	})
}

func TestEscapePinName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"eth0", "eth0"},
		{"eth0.100", "eth0%2e100"},
		{"a%2e", "a%252e"},
		{"x.%.y", "x%2e%25%2ey"},
	} {
		if got := escapePinName(tt.in); got != tt.want || strings.Contains(got, ".") {
			t.Fatalf("escapePinName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back := unescapePinName(tt.want); back != tt.in {
			t.Fatalf("unescapePinName(%q) = %q, want %q", tt.want, back, tt.in)
		}
	}
}

// Interface names may contain dots, which bpffs refuses in pin names.
func TestDottedInterfaceName(t *testing.T) {
	requireRoot(t)
	ns := newNS(t)
	addVeth(t, ns, "v.10", "w.10")
	dir := newPinDir(t)
	l := mustLoad(t, testOptions(ns, dir, defaultParams()))
	a, err := l.Attach(context.Background(), "v.10", ModeTCX)
	skipIfNotSupported(t, err)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if a.Pin != dir+"/links/tcx/v%2e10" {
		t.Fatalf("pin %q", a.Pin)
	}
	l.Close()
	l2 := mustLoad(t, testOptions(ns, dir, defaultParams()))
	if got := attachmentOf(t, l2, "v.10"); got.LinkID != a.LinkID || !got.Adopted {
		t.Fatalf("adopted %+v, want link %d", got, a.LinkID)
	}
}
