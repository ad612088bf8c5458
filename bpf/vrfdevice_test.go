package bpf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// addVRFDevice adds a VRF device bound to table, up and forwarding (what bpf_fib_lookup checks on the lookup
// device), and returns its ifindex; the test skips where the kernel has no VRF devices.
func (l *lab) addVRFDevice(t *testing.T, name string, table uint32) uint32 {
	t.Helper()
	h, err := netlink.NewHandleAt(l.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	err = h.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: name}, Table: table})
	if errors.Is(err, unix.EOPNOTSUPP) {
		testreq.KernelLacks(t, "VRF devices", err)
	}
	if err != nil {
		t.Fatalf("add vrf %s: %v", name, err)
	}
	dev, err := h.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetUp(dev); err != nil {
		t.Fatal(err)
	}
	l.inNS(t, func() error {
		for _, fam := range []string{"ipv4", "ipv6"} {
			path := fmt.Sprintf("/proc/sys/net/%s/conf/%s/forwarding", fam, name)
			if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	return uint32(dev.Attrs().Index)
}

// TestRouterThroughVRFDevice: the variant for kernels whose bpf_fib_lookup takes no table id (Debian 11's 5.10)
// reaches a VRF's table through the VRF's device (the entry's lookup_ifindex, as the agent sets it where VRFs
// are devices). The same entry without the device looks in the main table, which has no route: proof that the
// variant no longer passes the table id. Runs where the kernel has VRF devices (the kernel lane).
func TestRouterThroughVRFDevice(t *testing.T) {
	requireRoot(t)
	f, err := bpf.ProbeFeatures()
	if err != nil {
		t.Fatal(err)
	}
	f.FIBTableID = false
	l := newLabFor(t, false, &f)
	vrf := l.addVRFDevice(t, "rvrf", tableID)
	for _, tc := range []struct {
		name   string
		lookup uint32
		ret    uint32
		out    expect
		reason maps.Reason
	}{
		{"through the vrf device", vrf, hookTC.redirectCode(), routed, maps.ReasonForwardedFib},
		{"ingress device: the main table", 0, hookTC.passCode(), unchanged, maps.ReasonPassedNotFwded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables := l.tables
			tables.VRFs = append([]maps.VRF(nil), l.tables.VRFs...)
			tables.VRFs[0].LookupIfindex = tc.lookup
			if _, err := l.set.Apply(context.Background(), tables, "vrf-device-"+fmt.Sprint(tc.lookup)); err != nil {
				t.Fatal(err)
			}
			for _, pkt := range []packet{ip4(addrRoute, protoUDP), ip6(route6, protoUDP)} {
				var out []byte
				_, reason, _, err := l.delta(func() (err error) {
					var code uint32
					err = runInNS(l.ns, func() (err error) {
						code, out, err = l.run(hookTC, l.in, pkt.bytes())
						return err
					})
					if err == nil && code != tc.ret {
						err = fmt.Errorf("return code %d, want %d", code, tc.ret)
					}
					return err
				})
				if err != nil {
					t.Fatalf("%s: %v", pkt.Dst, err)
				}
				if reason != tc.reason {
					t.Errorf("%s: counted as %v, want %v", pkt.Dst, reason, tc.reason)
				}
				if want := tc.out.frame(pkt); !bytes.Equal(out, want) {
					t.Errorf("%s: frame\n got %x\nwant %x", pkt.Dst, out, want)
				}
			}
		})
	}
}
