package maps

import (
	"encoding/json"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/network-operator/network-operator/bpf"
)

// A newer program sharing the pinned counters (a reason added, no migration) counts in slots this build has no
// name for: they are read, named reason(N), of no known action, and survive a JSON round trip.
func TestCountersUnnamedSlot(t *testing.T) {
	m := newMaps(t, "", nil)
	s := newSet(t, m)
	unnamed := Reason(ReasonSlots - 1)
	vals := make([]VRFStats, s.ncpu)
	vals[0].Reasons[ReasonPassedNoIface] = bpf.RouterCounter{Packets: 1, Bytes: 60}
	vals[0].Reasons[unnamed] = bpf.RouterCounter{Packets: 3, Bytes: 300}
	if err := m.VrfCounters.Update(uint32(0), vals, ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	got, err := s.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ByReason[unnamed] != (Counter{3, 300}) || got[0].Total() != (Counter{4, 360}) {
		t.Fatalf("counters %+v", got)
	}
	if unnamed.String() != "reason(47)" || unnamed.Action() != ActionUnknown {
		t.Errorf("unnamed slot: %s, action %s", unnamed, unnamed.Action())
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	var back VRFCounters
	if err := json.Unmarshal(b, &back); err != nil || back.ByReason[unnamed] != (Counter{3, 300}) {
		t.Fatalf("round trip of %s: %+v, %v", b, back, err)
	}
	for _, bad := range []string{"reason(48)", "reason(07)", "reason(-1)", "reason(1)x"} {
		if r, err := ParseReason(bad); err == nil {
			t.Errorf("ParseReason(%q) = %d", bad, r)
		}
	}
}

// The class of every named reason is the one its C value carries, and each C value has its own slot.
func TestReasonActions(t *testing.T) {
	count := map[Action]int{}
	for _, r := range allReasons() {
		c, ok := r.CValue()
		if !ok || slotOf(c) != r || ActionOf(c) != r.Action() {
			t.Errorf("%s: C value %#x (%v), slot %d, action %s", r, c, ok, slotOf(c), r.Action())
		}
		count[r.Action()]++
	}
	if count[ActionUnknown] != 0 || count[ActionForwarded] == 0 || count[ActionPassed] == 0 || count[ActionDropped] == 0 {
		t.Errorf("reasons per action %v", count)
	}
}

// allReasons returns every reason this build knows, in slot order.
func allReasons() []Reason {
	rs := make([]Reason, NumReasons)
	for i := range rs {
		rs[i] = Reason(i)
	}
	return rs
}
