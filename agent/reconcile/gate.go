package reconcile

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/validation"
	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// StepGate is the health gate after a changed spec is applied.
const StepGate = "gate"

// DefaultGateTimeout bounds the health gate: how long the node's fabric sessions and probes have to answer after
// a changed spec is applied (BGP opens a session within seconds; an unnumbered one waits for router advertisements).
const DefaultGateTimeout = 60 * time.Second

// ErrGate wraps a failed health gate: the applied spec broke something the node needs (a fabric session, the API
// server, a probe), so it is a failure of the spec's content and is rolled back like a refused config.
var ErrGate = fmt.Errorf("%w: the health gate", ErrUnhealthy)

// Probe is something the node must reach after a change, besides its spec's HealthProbes (e.g. the API server).
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// Gate is what must work after a changed spec is applied before the spec counts as applied (the node otherwise
// fails the revision and restores the last good state), decided from the node before the apply.
type Gate struct {
	// Skip says why there is no gate ("" when there is one).
	Skip string
	// Sessions are the fabric sessions that were Established before and that the spec still configures: each
	// must be Established again.
	Sessions []GateSession
	// Families had at least one Established fabric session before: each must have one again (a change that
	// replaces every uplink still has to reach the fabric).
	Families []string
	// Probes are the spec's HealthProbes and the engine's probes that answered before the apply, by name: each
	// must answer after it. One that did not answer before is not the change's fault (a gateway that is down, an
	// API server in maintenance) and is listed in Unrequired with its error instead.
	Probes     []string
	Unrequired []string
	// Timeout bounds the whole gate.
	Timeout time.Duration
}

// GateSession is one BGP session of the default VRF in one address family.
type GateSession struct {
	Peer, Family string
}

func (s GateSession) String() string { return s.Peer + " (" + s.Family + ")" }

// gateFamilies are the fabric's address families the gate watches, by FRR's summary names.
var gateFamilies = []struct {
	name string
	of   func(*frrvty.VRFSummary) *frrvty.AFSummary
}{
	{frrvty.AFIPv4Unicast, func(s *frrvty.VRFSummary) *frrvty.AFSummary { return s.IPv4Unicast }},
	{frrvty.AFIPv6Unicast, func(s *frrvty.VRFSummary) *frrvty.AFSummary { return s.IPv6Unicast }},
	{frrvty.AFL2VPNEVPN, func(s *frrvty.VRFSummary) *frrvty.AFSummary { return s.L2VPNEVPN }},
}

// planGate decides the gate from the default VRF's BGP summary before the apply. configured are the underlay
// neighbours the spec names (addresses and interfaces); expectFabric is false when the spec has no underlay
// neighbours of its own and no base config brings them (a node taken off the fabric on purpose). Dynamic peers
// (workloads in listen ranges) are not the fabric and come and go: they are not required.
func planGate(before *frrvty.VRFSummary, configured map[string]bool, expectFabric bool) Gate {
	var g Gate
	if before == nil {
		return g
	}
	for _, fam := range gateFamilies {
		af := fam.of(before)
		if af == nil {
			continue
		}
		up := false
		for _, peer := range slices.Sorted(maps.Keys(af.Peers)) {
			p := af.Peers[peer]
			if p.DynamicPeer || !p.Established() {
				continue
			}
			up = true
			if configured[peer] {
				g.Sessions = append(g.Sessions, GateSession{Peer: peer, Family: fam.name})
			}
		}
		if up && expectFabric {
			g.Families = append(g.Families, fam.name)
		}
	}
	return g
}

// unmetSessions lists what of the gate's sessions and families the summary after the apply does not have.
func (g *Gate) unmetSessions(after *frrvty.VRFSummary) []string {
	var out []string
	established := map[GateSession]bool{}
	anyUp := map[string]bool{}
	if after != nil {
		for _, fam := range gateFamilies {
			if af := fam.of(after); af != nil {
				for peer, p := range af.Peers {
					if p.Established() {
						established[GateSession{Peer: peer, Family: fam.name}] = true
						anyUp[fam.name] = anyUp[fam.name] || !p.DynamicPeer
					}
				}
			}
		}
	}
	for _, s := range g.Sessions {
		if !established[s] {
			out = append(out, "session "+s.String()+" not Established")
		}
	}
	for _, f := range g.Families {
		if !anyUp[f] {
			out = append(out, "no fabric session Established in "+f)
		}
	}
	return out
}

// underlayPeers are the underlay neighbours a spec configures, by the names FRR's summary gives them.
func underlayPeers(u *v1.UnderlaySpec) map[string]bool {
	out := map[string]bool{}
	for _, n := range u.Neighbors {
		if n.Address != "" {
			if a, err := netip.ParseAddr(n.Address); err == nil {
				out[a.String()] = true
			}
		} else if n.Interface != "" {
			out[n.Interface] = true
		}
	}
	for _, i := range u.Interfaces {
		out[i] = true
	}
	return out
}

// planGateFor is the gate of p: none when the spec is already the node's good state (a resync) or nothing is
// watched; otherwise what works now and must work after the change: the fabric sessions from the node's FRR,
// the spec's probes and the engine's that answer (each tried once).
func (e *Engine) planGateFor(ctx context.Context, p *Plan) error {
	if err := fielderr.Join(validation.ValidateHealthProbes(field.NewPath("healthProbes"), p.Spec.HealthProbes)); err != nil {
		return err
	}
	g := &p.Gate
	switch {
	case e.o.GateTimeout < 0:
		g.Skip = "the health gate is off"
		return nil
	case e.state.Good != nil && e.state.Good.SpecHash == p.SpecHash:
		g.Skip = "the spec is the node's applied state"
		return nil
	}
	if e.o.FRR != nil && e.o.FRRStatus != nil && p.Spec.Underlay.ASN != 0 {
		sum, err := e.o.FRRStatus.Summary(ctx)
		if err != nil {
			// FRR not answering before the change (e.g. first start): no session can be required.
			e.log.Info("health gate without BGP sessions: FRR's summary is unreadable", "err", err)
		} else {
			def := sum[v1.DefaultVRFName]
			configured := underlayPeers(&p.Spec.Underlay)
			*g = planGate(&def, configured, len(configured) > 0 || e.o.RenderFRR != nil)
		}
	}
	for _, pr := range e.probes(p.Spec) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := pr.Check(pctx)
		cancel()
		if err != nil {
			g.Unrequired = append(g.Unrequired, pr.Name+": "+err.Error())
		} else {
			g.Probes = append(g.Probes, pr.Name)
		}
	}
	g.Timeout = e.gateTimeout()
	if len(g.Sessions) == 0 && len(g.Families) == 0 && len(g.Probes) == 0 {
		*g = Gate{Skip: "no fabric session was up and no probe answered before the change", Unrequired: g.Unrequired}
	}
	return nil
}

func (e *Engine) gateTimeout() time.Duration {
	if e.o.GateTimeout > 0 {
		return e.o.GateTimeout
	}
	return DefaultGateTimeout
}

// runGate waits until everything the gate names works, or fails with what did not within its timeout. Errors
// of the wait itself are not returned as context errors: only the caller's cancellation is a transient fault.
func (e *Engine) runGate(ctx context.Context, p *Plan) error {
	g := &p.Gate
	if g.Skip != "" {
		return nil
	}
	return e.timed(StepGate, func() error {
		// The deadline is checked after a whole check, never by cutting one off: the failure then names what
		// was really missing, not a check interrupted mid-way.
		deadline := time.Now().Add(g.Timeout)
		var unmet []string
		errTimeout := fmt.Errorf("%w: not within %s", ErrGate, g.Timeout)
		err := wait.PollUntilContextCancel(ctx, gateInterval, true, func(ctx context.Context) (bool, error) {
			unmet = e.gateUnmet(ctx, p)
			switch {
			case len(unmet) == 0:
				return true, nil
			case time.Now().After(deadline):
				return false, errTimeout
			}
			return false, nil
		})
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("health gate: %w", ctx.Err())
		}
		return fmt.Errorf("%w: %s", errTimeout, strings.Join(unmet, "; "))
	})
}

// gateUnmet runs every check of p's gate once, each bounded by probeTimeout, and lists what failed.
func (e *Engine) gateUnmet(ctx context.Context, p *Plan) []string {
	g := &p.Gate
	var unmet []string
	if len(g.Sessions) > 0 || len(g.Families) > 0 {
		sctx, cancel := context.WithTimeout(ctx, probeTimeout)
		sum, err := e.o.FRRStatus.Summary(sctx)
		cancel()
		if err != nil {
			unmet = append(unmet, "FRR's BGP summary: "+err.Error())
		} else {
			def := sum[v1.DefaultVRFName]
			unmet = append(unmet, g.unmetSessions(&def)...)
		}
	}
	for _, pr := range e.probes(p.Spec) {
		if !slices.Contains(g.Probes, pr.Name) {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := pr.Check(pctx)
		cancel()
		if err != nil {
			unmet = append(unmet, "probe "+pr.Name+": "+err.Error())
		}
	}
	return unmet
}

// Probing: each try is bounded so that one black-holed address cannot hold the gate past its timeout.
const (
	probeTimeout = 2 * time.Second
	gateInterval = 500 * time.Millisecond
)

// probes are the spec's TCP probes (dialled in the node's namespace) and the engine's own.
func (e *Engine) probes(spec *v1.NodeNetworkConfigSpec) []Probe {
	out := make([]Probe, 0, len(spec.HealthProbes)+len(e.o.Probes))
	for _, hp := range spec.HealthProbes {
		out = append(out, Probe{Name: hp.Name + " (" + hp.Address + ")", Check: func(ctx context.Context) error {
			conn, err := e.dial(ctx, "tcp", hp.Address)
			if err != nil {
				return err
			}
			return conn.Close()
		}})
	}
	return append(out, e.o.Probes...)
}

func (e *Engine) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if e.o.Dial != nil {
		return e.o.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
