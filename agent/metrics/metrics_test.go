package metrics

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	routermaps "github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

type fakeCounters struct {
	c   []routermaps.VRFCounters
	err error
}

func (f *fakeCounters) Counters() ([]routermaps.VRFCounters, error) { return f.c, f.err }

type fakeBGP struct {
	s   frrvty.Summary
	err error
}

func (f *fakeBGP) Summary(context.Context) (frrvty.Summary, error) { return f.s, f.err }

func sample() *fakeCounters {
	return &fakeCounters{c: []routermaps.VRFCounters{
		{VRF: 0, ByReason: map[routermaps.Reason]routermaps.Counter{routermaps.ReasonPassedNoIface: {Packets: 3, Bytes: 300}}},
		{VRF: 1, ByReason: map[routermaps.Reason]routermaps.Counter{
			routermaps.ReasonForwardedFib: {Packets: 10, Bytes: 980}, routermaps.ReasonDroppedFib: {Packets: 2, Bytes: 120}}},
		// A slot this agent has no reason for: a newer program added one, the pinned counters map stayed.
		{VRF: 9, ByReason: map[routermaps.Reason]routermaps.Counter{routermaps.ReasonRedirected: {Packets: 1, Bytes: 60},
			routermaps.Reason(routermaps.ReasonSlots - 1): {Packets: 4, Bytes: 400}}},
	}}
}

// series gathers one metric family as "label=value,..." -> value, labels sorted by name.
func series(t *testing.T, m *Metrics, name string) map[string]float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.Metric {
			var ls []string
			for _, l := range s.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			v := s.GetCounter().GetValue() + s.GetGauge().GetValue()
			out[strings.Join(ls, ",")] = v
		}
	}
	return out
}

// value reads a counter without a gather (a gather would read the failing source again).
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestVRFCounters(t *testing.T) {
	m := New()
	src := sample()
	m.SetCounterSource(src, func() map[uint32]string { return map[uint32]string{1: "red"} })
	wantPackets := map[string]float64{
		"action=dropped,reason=dropped-fib,vrf=red":           2,
		"action=forwarded,reason=forwarded-fib,vrf=red":       10,
		"action=forwarded,reason=redirected,vrf=id-9":         1,
		"action=unknown,reason=reason(47),vrf=id-9":           4,
		"action=passed,reason=passed-no-iface,vrf=unassigned": 3,
	}
	wantBytes := map[string]float64{
		"action=dropped,reason=dropped-fib,vrf=red":           120,
		"action=forwarded,reason=forwarded-fib,vrf=red":       980,
		"action=forwarded,reason=redirected,vrf=id-9":         60,
		"action=unknown,reason=reason(47),vrf=id-9":           400,
		"action=passed,reason=passed-no-iface,vrf=unassigned": 300,
	}
	if got := series(t, m, "network_operator_vrf_packets_total"); !maps.Equal(got, wantPackets) {
		t.Errorf("packets %v, want %v", got, wantPackets)
	}
	if got := series(t, m, "network_operator_vrf_bytes_total"); !maps.Equal(got, wantBytes) {
		t.Errorf("bytes %v, want %v", got, wantBytes)
	}

	// A failed read emits no VRF series at all (not a partial set) and counts the failure.
	src.err = errors.New("map read failed")
	if got := series(t, m, "network_operator_vrf_packets_total"); len(got) != 0 {
		t.Fatalf("after a failed read: %v, want no series", got)
	}
	if got := series(t, m, "network_operator_vrf_bytes_total"); len(got) != 0 {
		t.Fatalf("after a failed read: %v, want no series", got)
	}
	if got := value(t, m.vrf.errors); got != 2 {
		t.Fatalf("read errors %v, want 2 (one per failed gather)", got)
	}
	src.err = nil
	if got := series(t, m, "network_operator_vrf_packets_total"); len(got) != 5 {
		t.Fatalf("after recovery: %d packet series, want 5", len(got))
	}
}

func TestBGPStates(t *testing.T) {
	m := New()
	src := &fakeBGP{s: frrvty.Summary{"default": {IPv4Unicast: &frrvty.AFSummary{Peers: map[string]frrvty.PeerSummary{
		"192.0.2.1": {State: "Established", PrefixesReceived: 7},
		"192.0.2.2": {State: "Clearing"},
	}}}}}
	m.SetBGPSource(src)
	key := func(peer, state string) string {
		return "address_family=" + frrvty.AFIPv4Unicast + ",peer=" + peer + ",state=" + state + ",vrf=default"
	}
	got := series(t, m, "network_operator_bgp_session_state")
	if got[key("192.0.2.1", "Established")] != 1 || got[key("192.0.2.1", "Idle")] != 0 || got[key("192.0.2.2", "Clearing")] != 1 ||
		len(got) != 2*len(BGPStates)+1 {
		t.Fatalf("states %v", got)
	}
	if p := series(t, m, "network_operator_bgp_session_prefixes_received"); p["address_family=ipv4-unicast,peer=192.0.2.1,vrf=default"] != 7 {
		t.Fatalf("prefixes %v", p)
	}
	src.err = errors.New("vtysh: no bgpd")
	if got := series(t, m, "network_operator_bgp_session_state"); len(got) != 0 {
		t.Fatalf("%d BGP series after a failed read, want none", len(got))
	}
	if got := value(t, m.bgp.errors); got != 1 {
		t.Fatalf("BGP read errors %v, want 1", got)
	}
}

// Every metric the agent exposes passes promtool's lint (names, units, help, types).
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testreq.Tools(t, "promtool")[0] // Debian package prometheus
	m := New()
	m.SetCounterSource(sample(), func() map[uint32]string { return map[uint32]string{1: "red"} })
	m.SetBGPSource(&fakeBGP{s: frrvty.Summary{"vr.red": {L2VPNEVPN: &frrvty.AFSummary{Peers: map[string]frrvty.PeerSummary{"10.0.0.2": {State: "Active"}}}}}})
	m.ObserveSwap(3*time.Millisecond, 4)
	m.ObserveReconcile(ResultApplied, 40*time.Millisecond)
	m.SetAttachments(map[string]string{"eth0": "tcx"})
	m.FRRReload(FRRSkipped)
	m.SetReady(true)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, name := range []string{"network_operator_vrf_packets_total", "network_operator_map_generation_swap_duration_seconds_bucket",
		"network_operator_reconcile_duration_seconds_count", "network_operator_interface_attach_info", "network_operator_frr_reloads_total",
		"network_operator_bgp_session_state", "network_operator_ready"} {
		if !strings.Contains(body, name) {
			t.Errorf("scrape lacks %s", name)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}
