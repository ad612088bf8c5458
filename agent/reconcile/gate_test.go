package reconcile

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/metrics"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

func peers(state map[string]string) *frrvty.AFSummary {
	af := &frrvty.AFSummary{Peers: map[string]frrvty.PeerSummary{}}
	for name, st := range state {
		p := frrvty.PeerSummary{State: strings.TrimPrefix(st, "dynamic ")}
		p.DynamicPeer = strings.HasPrefix(st, "dynamic ")
		af.Peers[name] = p
	}
	return af
}

const est = frrvty.StateEstablished

func TestPlanGate(t *testing.T) {
	before := &frrvty.VRFSummary{
		IPv4Unicast: peers(map[string]string{"eth0": est, "eth1": est, "192.0.2.1": frrvty.StateActive, "10.250.0.7": "dynamic " + est}),
		L2VPNEVPN:   peers(map[string]string{"eth0": est, "eth1": est}),
	}
	for _, tc := range []struct {
		name         string
		configured   []string
		expectFabric bool
		sessions     []string
		families     []string
	}{
		{"every up session still configured", []string{"eth0", "eth1", "192.0.2.1"}, true,
			[]string{"eth0 (ipv4-unicast)", "eth1 (ipv4-unicast)", "eth0 (l2vpn-evpn)", "eth1 (l2vpn-evpn)"}, []string{"ipv4-unicast", "l2vpn-evpn"}},
		{"an uplink removed on purpose is not required, but the fabric still is", []string{"eth0"}, true,
			[]string{"eth0 (ipv4-unicast)", "eth0 (l2vpn-evpn)"}, []string{"ipv4-unicast", "l2vpn-evpn"}},
		{"every uplink replaced: one session per family", []string{"eth9"}, true, nil, []string{"ipv4-unicast", "l2vpn-evpn"}},
		{"taken off the fabric on purpose", nil, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			configured := map[string]bool{}
			for _, c := range tc.configured {
				configured[c] = true
			}
			g := planGate(before, configured, tc.expectFabric)
			var got []string
			for _, s := range g.Sessions {
				got = append(got, s.String())
			}
			if !slices.Equal(got, tc.sessions) || !slices.Equal(g.Families, tc.families) {
				t.Errorf("sessions %q families %q, want %q %q", got, g.Families, tc.sessions, tc.families)
			}
		})
	}
	if g := planGate(&frrvty.VRFSummary{}, map[string]bool{"eth0": true}, true); len(g.Sessions)+len(g.Families) != 0 {
		t.Errorf("no session up before: gate %+v, want nothing required", g)
	}
}

func TestUnmetSessions(t *testing.T) {
	g := Gate{Sessions: []GateSession{{"eth0", frrvty.AFIPv4Unicast}, {"eth0", frrvty.AFL2VPNEVPN}}, Families: []string{frrvty.AFIPv4Unicast, frrvty.AFL2VPNEVPN}}
	for _, tc := range []struct {
		name  string
		after *frrvty.VRFSummary
		want  []string
	}{
		{"all back", &frrvty.VRFSummary{IPv4Unicast: peers(map[string]string{"eth0": est}), L2VPNEVPN: peers(map[string]string{"eth0": est})}, nil},
		{"EVPN down", &frrvty.VRFSummary{IPv4Unicast: peers(map[string]string{"eth0": est}), L2VPNEVPN: peers(map[string]string{"eth0": frrvty.StateIdle})},
			[]string{"session eth0 (l2vpn-evpn) not Established", "no fabric session Established in l2vpn-evpn"}},
		{"only a workload up", &frrvty.VRFSummary{IPv4Unicast: peers(map[string]string{"10.250.0.7": "dynamic " + est})},
			[]string{"session eth0 (ipv4-unicast) not Established", "session eth0 (l2vpn-evpn) not Established",
				"no fabric session Established in ipv4-unicast", "no fabric session Established in l2vpn-evpn"}},
		{"no BGP instance", nil, []string{"session eth0 (ipv4-unicast) not Established", "session eth0 (l2vpn-evpn) not Established",
			"no fabric session Established in ipv4-unicast", "no fabric session Established in l2vpn-evpn"}},
	} {
		if got := g.unmetSessions(tc.after); !slices.Equal(got, tc.want) {
			t.Errorf("%s: unmet %q, want %q", tc.name, got, tc.want)
		}
	}
}

// fabricStatus is FRR as the fabric sees the node: the uplink session is Established while the applied config
// runs the fabric's AS (65000); another AS (a wrong underlay ASN) never gets it up.
type fabricStatus struct{ f *fakeFRR }

func (s fabricStatus) Summary(context.Context) (frrvty.Summary, error) {
	state := frrvty.StateActive
	if bytes.Contains(s.f.last, []byte("router bgp 65000\n")) {
		state = est
	}
	return frrvty.Summary{v1.DefaultVRFName: {IPv4Unicast: peers(map[string]string{"eth0": state}), L2VPNEVPN: peers(map[string]string{"eth0": state})}}, nil
}

func fabricSpec(rev string, asn int64) *v1.NodeNetworkConfigSpec {
	s := spec(rev, "red")
	s.Underlay.ASN = asn
	s.Underlay.Interfaces = []string{"eth0"}
	return s
}

// A change that breaks the node's fabric session fails the health gate: the revision is recorded as failed (not
// retried), the last good state comes back, and with it the session; a change that keeps the fabric passes.
func TestGateRollsBackABrokenFabric(t *testing.T) {
	r := newRig(t, t.TempDir())
	r.e.o.FRRStatus = fabricStatus{r.frr}
	r.e.o.GateTimeout = 2 * time.Second
	if out, _ := r.reconcile(fabricSpec("r1", 65000)); !out.Applied() {
		t.Fatal(out.Err)
	}

	out, _ := r.reconcile(fabricSpec("r2", 65001))
	if !strings.Contains(out.Plan.String(), "health gate within 2s: session eth0 (ipv4-unicast), session eth0 (l2vpn-evpn)") {
		t.Errorf("the printed plan does not show the gate:\n%s", out.Plan)
	}
	if !errors.Is(out.Err, ErrGate) || !errors.Is(out.Err, ErrUnhealthy) || out.Retrying() || out.Result != metrics.ResultRolledBack {
		t.Fatalf("outcome %s err %v, want the gate failed and rolled back", out.Result, out.Err)
	}
	if !strings.Contains(out.Err.Error(), "session eth0 (ipv4-unicast) not Established") {
		t.Errorf("the error does not say what broke: %v", out.Err)
	}
	if st := r.e.State(); st.Failure == nil || st.Failure.Revision != "r2" || st.Good.Revision != "r1" {
		t.Fatalf("state good %+v failure %+v, want r1 good and r2 failed", st.Good, st.Failure)
	}
	if !bytes.Contains(r.frr.last, []byte("router bgp 65000\n")) {
		t.Errorf("FRR runs after the rollback:\n%s", r.frr.last)
	}

	// A change that keeps the fabric (another VRF) passes the gate.
	good := fabricSpec("r3", 65000)
	good.VRFs = append(good.VRFs, v1.NodeVRF{Name: "blue", ID: 2, TableID: 1_000_000_200, VNI: 200})
	if out, _ := r.reconcile(good); !out.Applied() || out.Plan.Gate.Skip != "" {
		t.Fatalf("r3: %s %v, gate %+v", out.Result, out.Err, out.Plan.Gate)
	}
	// A resync of the applied spec has no gate.
	if out, _ := r.reconcile(good); out.Plan.Gate.Skip == "" {
		t.Errorf("resync planned a gate: %+v", out.Plan.Gate)
	}
}

// The spec's TCP probes (a gateway, a DNS server) and the engine's own (the API server) that answer before a change
// must answer after it; one that the change breaks fails the revision, naming the probe. One that did not answer
// before is not the change's fault (the API server down for a while): not required, the change applies. A bad
// probe address is refused before anything changes.
func TestGateProbes(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return ln
	}
	dns, gateway := listen(), listen()

	r := newRig(t, t.TempDir())
	r.e.o.GateTimeout = 1500 * time.Millisecond
	apiUp := true
	r.e.o.Probes = []Probe{{Name: "api-server", Check: func(context.Context) error {
		if !apiUp {
			return errors.New("unreachable")
		}
		return nil
	}}}
	// breakAt runs fn as the apply reaches the maps step: what the change does to the node.
	breakAt := func(fn func()) {
		r.e.beforeStep = func(step string, s *v1.NodeNetworkConfigSpec) error {
			r.w.setCurrent(s.Revision)
			if step == StepMaps && s.Revision != "r1" && fn != nil {
				fn()
				fn = nil
			}
			return nil
		}
	}
	withProbes := func(rev string, probes ...v1.HealthProbe) *v1.NodeNetworkConfigSpec {
		s := spec(rev, "red")
		s.HealthProbes = probes
		return s
	}
	probeDNS := v1.HealthProbe{Name: "dns", Address: dns.Addr().String()}
	probeGW := v1.HealthProbe{Name: "gateway", Address: gateway.Addr().String()}
	if out, _ := r.reconcile(withProbes("r1", probeDNS)); !out.Applied() {
		t.Fatalf("r1: %v", out.Err)
	}

	// The change takes the gateway away.
	breakAt(func() { gateway.Close() })
	out, _ := r.reconcile(withProbes("r2", probeDNS, probeGW))
	if !strings.Contains(out.Plan.String(), "probe dns ("+dns.Addr().String()+"), probe gateway ("+gateway.Addr().String()+"), probe api-server") {
		t.Errorf("the printed plan does not name the probes:\n%s", out.Plan)
	}
	if !errors.Is(out.Err, ErrGate) || !strings.Contains(out.Err.Error(), "probe gateway ("+gateway.Addr().String()+")") || out.Retrying() {
		t.Fatalf("r2: %s %v, want the gateway probe failing the gate", out.Result, out.Err)
	}
	if st := r.e.State(); st.Good.Revision != "r1" || st.Failure == nil || st.Failure.Revision != "r2" {
		t.Fatalf("good %+v failure %+v", st.Good, st.Failure)
	}

	// The change cuts the node off the API server.
	breakAt(func() { apiUp = false })
	out, _ = r.reconcile(withProbes("r3", probeDNS))
	if !errors.Is(out.Err, ErrGate) || !strings.Contains(out.Err.Error(), "probe api-server: unreachable") {
		t.Fatalf("r3: %s %v, want the API server probe failing the gate", out.Result, out.Err)
	}

	// The API server is down before the change (and the gateway still gone): neither is required.
	breakAt(nil)
	out, _ = r.reconcile(withProbes("r4", probeDNS, probeGW))
	if !out.Applied() {
		t.Fatalf("r4: %s %v, want applied: what did not answer before is not the change's fault", out.Result, out.Err)
	}
	if g := out.Plan.Gate; !slices.Equal(g.Probes, []string{"dns (" + dns.Addr().String() + ")"}) || len(g.Unrequired) != 2 {
		t.Errorf("r4 gate: required %q, not required %q", g.Probes, g.Unrequired)
	}

	apiUp = true
	out, log := r.reconcile(withProbes("r5", v1.HealthProbe{Name: "dns", Address: "192.0.2.53"}))
	if !errors.Is(out.Err, ErrPlan) || !strings.Contains(out.Err.Error(), `healthProbes[0].address: Invalid value: "192.0.2.53"`) || len(log) > 0 && log[0] != "frr skipped" {
		t.Fatalf("r5: %v, steps %q: want refused before any change", out.Err, log)
	}
}
