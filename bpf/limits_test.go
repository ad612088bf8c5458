package bpf_test

import (
	"testing"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/maps"
)

// TestLimitsMatchObject ties bpf/limits (generated from router.h) to the compiled object: a define that no
// longer sizes its map, or an object not regenerated after router.h changed, fails here.
func TestLimitsMatchObject(t *testing.T) {
	spec, err := bpf.LoadRouter()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		m    string
		want uint32
	}{
		{bpf.RouterMapVrfCounters, limits.MaxVRFs},
		{bpf.RouterMapIfaceTable, limits.IfaceTableSize},
		{bpf.RouterMapVrfTable, limits.VRFTableSize},
		{bpf.RouterMapRedirectTable, limits.RedirectTableSize},
	}
	for _, tc := range tests {
		if got := spec.Maps[tc.m].MaxEntries; got != tc.want {
			t.Errorf("map %s: max_entries %d, bpf/limits says %d", tc.m, got, tc.want)
		}
	}
	var v bpf.RouterVersionInfo
	if len(v.Revision) != limits.RevisionLen || len(v.TablesHash) != limits.TablesHashLen {
		t.Errorf("version_info revision %d / tables_hash %d bytes, bpf/limits says %d / %d",
			len(v.Revision), len(v.TablesHash), limits.RevisionLen, limits.TablesHashLen)
	}
}

// An iface_table entry whose VRF id has no counter (pkg/maps never writes one) must not be counted under
// another VRF, in particular not under 0 ("interface not in the tables"), as the program once did.
func TestRouterVRFWithoutCounter(t *testing.T) {
	l := newLab(t)
	v, err := l.set.Version()
	if err != nil {
		t.Fatal(err)
	}
	key := maps.IfaceKey{Slot: v.Slot, Ifindex: uint32(l.in), Vlan: vlanNoCounter}
	val := maps.IfaceValue{VrfId: limits.MaxVRFs, Mode: bpf.RouterIfaceModeIFACE_MODE_ROUTE}
	if err := l.objs.IfaceTable.Put(key, val); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.objs.IfaceTable.Delete(key); err != nil {
			t.Errorf("remove raw entry: %v", err)
		}
	})
	frame := tagged(ip4(addrRoute, protoTCP), vlanNoCounter).bytes()
	for _, h := range []hook{hookTC, hookXDP} {
		l.inNS(t, func() error {
			before, err := l.counters(countedVRFs...)
			if err != nil {
				return err
			}
			ret, _, err := l.run(h, l.in, frame)
			if err != nil {
				return err
			}
			after, err := l.counters(countedVRFs...)
			if err != nil {
				return err
			}
			for _, vrf := range countedVRFs {
				if after[vrf] != before[vrf] {
					t.Errorf("%s: vrf id %d counted under vrf %d", h, limits.MaxVRFs, vrf)
				}
			}
			// No VRF entry can exist for the id: the packet goes to the kernel like one of a missing VRF.
			if want := h.passCode(); ret != want {
				t.Errorf("%s: verdict %d, want pass %d", h, int32(ret), int32(want))
			}
			return nil
		})
	}
}
