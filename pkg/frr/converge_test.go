package frr_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/bfd"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrtest/canonical"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// randomConfig draws a node config from the space the renderer takes: VRFs with leaks (prefix items with
// ge/le, communities standard, large and well-known in random order and with repeats, additive or not,
// aggregates), L2VNIs (auto, explicit, isolated), peerings in the cluster VRF or a tenant VRF (v4, v6, listen
// ranges or neighbours, timers, BFD profiles, passwords), routing tables, graceful restart. Every draw is valid.
func randomConfig(rng *rand.Rand) frr.NodeConfig {
	pick := func(n int) int { return rng.IntN(n) }
	cfg := frr.NodeConfig{DisableIPv6Forwarding: pick(2) == 0, Underlay: frr.Underlay{
		ASN: 65000, RouterID: netip.MustParseAddr("10.0.0.1"), VTEPSource: netip.MustParseAddr("10.0.0.1"),
		PeerGroups: []frr.PeerGroup{{Name: "fabric", RemoteAS: frr.RemoteASInternal}},
		Neighbors:  []frr.Neighbor{{Address: netip.MustParseAddr("192.168.0.254"), PeerGroup: "fabric"}},
	}}
	if pick(2) == 0 {
		cfg.Underlay.GracefulRestart = &frr.GracefulRestart{RestartTime: time.Duration(1+pick(4095)) * time.Second}
	}
	if pick(3) == 0 {
		cfg.Underlay.PeerGroups[0].BFD = randomBFD(rng)
	}
	communities := []string{"no-export", "no-advertise", "local-AS", "blackhole", "graceful-shutdown", "65000:1", "0:0",
		"65535:65535", "1:2", "4200000101:3:4", "4200000101:1:2", "1:1:1"}
	prefix := func(fam int) netip.Prefix {
		if fam == 6 {
			return netip.MustParsePrefix(fmt.Sprintf("fd00:%x::/%d", pick(0xffff), 32+pick(33)))
		}
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(pick(256)), byte(pick(256)), 0}), 8+pick(17)).Masked()
	}
	// items are prefix-list entries of both families (onlyV4: a peering's, which follow its addresses).
	items := func(onlyV4 bool) []frr.PrefixItem {
		var out []frr.PrefixItem
		for i := range pick(4) {
			fam := 4
			if !onlyV4 && pick(3) == 0 {
				fam = 6
			}
			p := prefix(fam)
			it := frr.PrefixItem{CIDR: p.Masked(), Action: frr.Permit, Seq: uint32(10 * (i + 1))}
			if pick(3) == 0 {
				it.Action = frr.Deny
			}
			max := 32
			if fam == 6 {
				max = 128
			}
			if pick(2) == 0 && p.Bits() < max {
				it.LE = uint8(p.Bits() + 1 + pick(max-p.Bits()))
				if pick(2) == 0 {
					it.GE = uint8(p.Bits() + 1 + pick(int(it.LE)-p.Bits()))
				}
			}
			out = append(out, it)
		}
		return out
	}
	for v := range pick(4) {
		vrf := frr.VRF{Name: "tenant" + strconv.Itoa(v), VNI: uint32(5000 + v), RedistributeConnected: pick(2) == 0,
			RedistributeStatic: pick(3) == 0}
		if pick(3) == 0 {
			vrf.RouteTargets = []string{fmt.Sprintf("65000:%d", 5000+v)}
		}
		for r := range pick(3) {
			rc := frr.RouteConfig{Seq: uint16(10 * (r + 1)), Import: items(false), Export: items(false), Additive: pick(2) == 0}
			for range pick(5) {
				rc.Communities = append(rc.Communities, communities[pick(len(communities))])
			}
			vrf.RouteConfigs = append(vrf.RouteConfigs, rc)
		}
		if pick(3) == 0 {
			vrf.Aggregates = []netip.Prefix{prefix(4)}
			vrf.SummaryOnly = pick(2) == 0
		}
		cfg.VRFs = append(cfg.VRFs, vrf)
	}
	for l := range pick(3) {
		l2 := frr.L2VNI{VNI: uint32(100 + l), Isolated: pick(4) == 0}
		if !l2.Isolated && pick(2) == 0 {
			l2.RouteTargets = []string{fmt.Sprintf("65000:%d", 100+l)}
		}
		cfg.L2VNIs = append(cfg.L2VNIs, l2)
	}
	for p := range pick(3) {
		pe := frr.Peering{Name: "peer" + strconv.Itoa(p), RemoteASN: uint32(64512 + pick(100)), Import: items(true), Export: items(true)}
		if len(cfg.VRFs) > 0 && pick(2) == 0 {
			pe.VRF = cfg.VRFs[pick(len(cfg.VRFs))].Name
		}
		if pick(2) == 0 {
			pe.ListenRanges = []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.250.%d.0/24", p))}
		} else {
			pe.Neighbors = []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.251.%d.%d", p, 1+pick(250)))}
		}
		if pick(2) == 0 {
			pe.MaximumPrefixes = uint32(1 + pick(10000))
		}
		if pick(2) == 0 {
			pe.KeepaliveTime = time.Duration(1+pick(20)) * time.Second
			pe.HoldTime = pe.KeepaliveTime * 3
		}
		if pick(3) == 0 {
			pe.BFD = randomBFD(rng)
		}
		if pick(4) == 0 {
			pe.Password = frr.Secret("pw" + strconv.Itoa(pick(1000)))
		}
		cfg.Peerings = append(cfg.Peerings, pe)
	}
	for r := range pick(2) {
		id := uint32(200 + r)
		cfg.RoutingTables = append(cfg.RoutingTables, frr.RoutingTable{Name: "taas." + strconv.Itoa(int(id)), TableID: id})
	}
	return cfg
}

func randomBFD(rng *rand.Rand) *bfd.Profile {
	ms := func() time.Duration {
		if rng.IntN(3) == 0 {
			return 0
		}
		return time.Duration(10+rng.IntN(2000)) * time.Millisecond
	}
	p := &bfd.Profile{ReceiveInterval: ms(), TransmitInterval: ms(), Passive: rng.IntN(2) == 0}
	if rng.IntN(2) == 0 {
		p.DetectMultiplier = 2 + rng.IntN(254)
	}
	if rng.IntN(3) == 0 {
		p.EchoInterval = ms()
	}
	return p
}

// TestRandomConfigsConverge is the property behind "FRR runs exactly what was applied": for random valid specs,
// FRR takes every rendered line and keeps it in the form the renderer writes it, so the reload diff (frr-reload.py --test's) finds
// nothing left to change (a reload converges in one pass, and a residual diff is always a real difference).
// NETOP_CONVERGE_SEED replays a draw; NETOP_CONVERGE_N sets how many (default 12).
func TestRandomConfigsConverge(t *testing.T) {
	tools := frrtest.Require(t)
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("NETOP_CONVERGE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("NETOP_CONVERGE_SEED=%q: %v", s, err)
		}
		seed = v
	}
	n := 12
	if s := os.Getenv("NETOP_CONVERGE_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("NETOP_CONVERGE_N=%q: want a positive number", s)
		}
		n = v
	}
	t.Logf("seed %d (NETOP_CONVERGE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cfg := randomConfig(rng)
		conf, err := frr.Render(&cfg)
		if err != nil {
			t.Fatalf("draw %d: the generator made an invalid config: %v", i, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("draw-%d.conf", i))
		if err := os.WriteFile(file, conf, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		diff, err := canonical.Diff(t, ctx, frrvty.Target{Tools: tools}, file, append(frrreload.DefaultScratchDaemons, "staticd"))
		cancel()
		if err != nil {
			t.Fatalf("draw %d (seed %d): FRR refused the rendered config: %v\n%s", i, seed, err, conf)
		}
		if left := diff.Significant(); len(left) > 0 {
			t.Errorf("draw %d (seed %d): FRR keeps the rendered config differently:\n%s\nconfig:\n%s", i, seed, strings.Join(left, "\n"), conf)
		}
	}
}
