package dpctl

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	"github.com/network-operator/network-operator/test/harness/golden"

	"github.com/network-operator/network-operator/pkg/maps"
)

func snapshot() maps.Snapshot {
	return maps.Snapshot{
		Version: maps.Version{Generation: 3, Slot: 1, Revision: "demo-1", TablesHash: [32]byte{0xab, 0xcd, 0xef, 1, 2, 3, 4, 5}},
		Tables: maps.Tables{
			VRFs: []maps.VRF{{ID: 2, TableID: 102}, {ID: 1, TableID: 101, VNI: 10101, LookupIfindex: 20}},
			Interfaces: []maps.Interface{
				{Ifindex: 11, VRF: 2, Mode: maps.ModeRoute, Strict: true},
				{Ifindex: 10, VRF: 1, Mode: maps.ModeRoute, Peer: true},
				{Ifindex: 12, Mode: maps.ModeRedirect},
			},
			Redirects: []maps.Redirect{{Ifindex: 12, EgressIfindex: 99, SrcMAC: maps.MAC{2, 0, 0, 0, 0, 2}, DstMAC: maps.MAC{2, 0, 0, 0, 0, 1}}},
			SBR: []maps.SBR{{Prefix: netip.MustParsePrefix("fd00:50::/64"), VRF: 2}, {Prefix: netip.MustParsePrefix("10.60.0.0/16"), VRF: 1},
				{Prefix: netip.MustParsePrefix("10.50.0.0/24"), VRF: 1}},
		},
		Counters: []maps.VRFCounters{
			{VRF: 1, ByReason: map[maps.Reason]maps.Counter{
				maps.ReasonForwardedFib: {Packets: 100, Bytes: 9800}, maps.ReasonPassedNotIP: {Packets: 2, Bytes: 84}}},
			{VRF: 0, ByReason: map[maps.Reason]maps.Counter{maps.ReasonPassedNoIface: {Packets: 5, Bytes: 500}}},
			{VRF: 2, ByReason: map[maps.Reason]maps.Counter{maps.ReasonDroppedFib: {Packets: 1, Bytes: 60}}},
		},
	}
}

func names(idx uint32) (string, bool) {
	n, ok := map[uint32]string{10: "ra", 11: "rb", 12: "rx", 20: "fwd-a"}[idx]
	return n, ok
}

func TestDumpTableGolden(t *testing.T) {
	d := NewDump("/sys/fs/bpf/test", snapshot(), names, map[uint32]string{1: "tenant-a", 2: "tenant-b"})
	var buf bytes.Buffer
	if err := d.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "dump.txt", buf.Bytes())
}

func TestDumpEmptyTableGolden(t *testing.T) {
	d := NewDump("/sys/fs/bpf/test", maps.Snapshot{}, names, nil)
	var buf bytes.Buffer
	if err := d.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "dump-empty.txt", buf.Bytes())
}

func TestDumpJSON(t *testing.T) {
	d := NewDump("/sys/fs/bpf/test", snapshot(), names, nil)
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Dump
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Version.Generation != 3 || back.Version.Revision != "demo-1" || back.Version.TablesHash[:6] != "abcdef" {
		t.Errorf("version = %+v", back.Version)
	}
	if len(back.Interfaces) != 3 || back.Interfaces[0].Name != "ra" || back.Interfaces[0].Ifindex != 10 {
		t.Errorf("interfaces not sorted by ifindex with names: %+v", back.Interfaces)
	}
	if r := back.Redirects[0]; !r.EgressMissing || r.To != "#99" || r.DstMAC != "02:00:00:00:00:01" {
		t.Errorf("redirect = %+v, want missing egress #99 and MACs", r)
	}
	wantSBR := []DumpSBR{{Prefix: "10.50.0.0/24", VRF: 1, Table: 101}, {Prefix: "10.60.0.0/16", VRF: 1, Table: 101},
		{Prefix: "fd00:50::/64", VRF: 2, Table: 102}}
	if !slices.Equal(back.SBR, wantSBR) {
		t.Errorf("sbr = %+v, want sorted by prefix with the VRFs' tables %+v", back.SBR, wantSBR)
	}
	if len(back.Counters) != 3 || back.Counters[0].VRF != 0 {
		t.Fatalf("counters not sorted by VRF: %+v", back.Counters)
	}
	c1 := back.Counters[1]
	if c1.ByReason["forwarded-fib"].Packets != 100 || c1.Total.Packets != 102 || c1.Forwarded.Packets != 100 || c1.Passed.Packets != 2 {
		t.Errorf("vrf 1 counters = %+v", c1)
	}
	if back.Counters[2].Dropped.Packets != 1 {
		t.Errorf("vrf 2 dropped = %+v", back.Counters[2])
	}
}

func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), got)
}
