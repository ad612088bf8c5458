package app_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// forwardedPackets is the eBPF router's forwarded-packet counter of a VRF as scraped from /metrics.
func forwardedPackets(t *testing.T, a *agent, vrf string) (packets, bytes float64) {
	t.Helper()
	fams, err := a.scrape()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	m := map[string]string{"vrf": vrf, "action": "forwarded"}
	return counter(fams, "network_operator_vrf_packets_total", m), counter(fams, "network_operator_vrf_bytes_total", m)
}

// The agent binary applies two VRFs and an L2 network from a file to a namespace node; traffic in both VRFs and
// from the L2 network crosses the eBPF path (the kernel forwards nothing), and the per-VRF counters scraped
// from /metrics match the traffic exactly: with the router attached through tcx and, with --tc-hook legacy,
// through cls_bpf filters.
func TestStandaloneAppliesAndCounts(t *testing.T) {
	for _, hook := range []struct {
		flag string
		mode v1.AttachMode
	}{{"tcx", v1.AttachTCX}, {"legacy", v1.AttachTCLegacy}} {
		t.Run(hook.flag, func(t *testing.T) { standaloneAppliesAndCounts(t, hook.flag, hook.mode) })
	}
}

func standaloneAppliesAndCounts(t *testing.T, tcHook string, mode v1.AttachMode) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), append(n.agentArgs(), "--memory-limit", "48Mi", "--tc-hook", tcHook)...)
	st := n.appliedRev(t, a, "rev-1")
	fams, err := a.scrape()
	mustf(t, err, "scrape /metrics")
	if got := counter(fams, "go_gc_gomemlimit_bytes", nil); got != 48<<20 {
		t.Errorf("the Go runtime's memory limit is %v bytes, want --memory-limit 48Mi (%d)", got, 48<<20)
	}
	if st.Status.MapVersion != st.Spec.ExpectedMapVersion {
		t.Fatalf("status.mapVersion %q, want expectedMapVersion %q", st.Status.MapVersion, st.Spec.ExpectedMapVersion)
	}
	for _, i := range st.Status.Interfaces {
		if i.Mode != mode {
			t.Errorf("interface %s: attach mode %q (%s), want %s", i.Name, i.Mode, i.Error, mode)
		}
	}
	if len(st.Status.Interfaces) != len(st.Spec.DataPlane.Interfaces) {
		t.Errorf("status lists %d interfaces, spec %d", len(st.Status.Interfaces), len(st.Spec.DataPlane.Interfaces))
	}
	n.attachL2Host(t)

	const count = 40
	kernelBefore := n.kernelForwarded(t)
	redPk0, redBy0 := forwardedPackets(t, a, "red")
	bluePk0, _ := forwardedPackets(t, a, "blue")

	pingOK(t, n.host("ha"), addrB, count) // red: nA -> nB and back
	pingOK(t, n.host("hc"), addrD, count) // blue: nC -> nD and back
	pingOK(t, n.host("hl"), addrA, count) // L2 network (l2br.300, red) -> nA and back

	redPk, redBy := forwardedPackets(t, a, "red")
	bluePk, _ := forwardedPackets(t, a, "blue")
	// Every echo request and reply crosses the router once: 2 per ping in each VRF; the L2 pings are in red.
	if got, want := redPk-redPk0, float64(4*count); got != want {
		t.Errorf("red forwarded packets grew by %v, want %v", got, want)
	}
	if got, want := bluePk-bluePk0, float64(2*count); got != want {
		t.Errorf("blue forwarded packets grew by %v, want %v", got, want)
	}
	// ping's 56-byte payload: 98-byte frames (Ethernet 14 + IPv4 20 + ICMP 8 + 56) counted at tc ingress.
	if got, want := redBy-redBy0, float64(4*count*98); got != want {
		t.Errorf("red forwarded bytes grew by %v, want %v", got, want)
	}
	if d := n.kernelForwarded(t) - kernelBefore; d != 0 {
		t.Errorf("the kernel forwarded %d packets: traffic bypassed the eBPF router", d)
	}
	// Traffic does not leak between VRFs: blue has no route to red's hosts.
	pingFails(t, n.host("hc"), addrA)

	if body, err := a.get("/readyz"); err != nil {
		t.Errorf("/readyz: %v", err)
	} else if !strings.Contains(body, "rev-1") {
		t.Errorf("/readyz says %q", body)
	}
	if _, err := a.get("/healthz"); err != nil {
		t.Errorf("/healthz: %v", err)
	}
	fams, err = a.scrape()
	mustf(t, err, "scrape")
	if got := counter(fams, "network_operator_interface_attach_info", map[string]string{"interface": "nA", "mode": string(mode)}); got != 1 {
		t.Errorf("attach info of nA in mode %s = %v, want 1", mode, got)
	}
	if got := counter(fams, "network_operator_ready", nil); got != 1 {
		t.Errorf("network_operator_ready = %v, want 1", got)
	}
	for _, l := range strings.Split(a.out.String(), "\n") {
		if strings.HasPrefix(l, "reconcile ") || strings.Contains(l, "table generation applied") {
			t.Log(l)
		}
	}
}

// --dry-run prints the plan in apply order and changes nothing; --once applies and exits 0, and exits 1 (with
// the reason) for a configuration that cannot be applied.
func TestDryRunAndOnce(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	code, out := runAgent(t, time.Minute, append(n.agentArgs(), "--dry-run")...)
	if code != 0 {
		t.Fatalf("--dry-run exited %d:\n%s", code, out)
	}
	t.Logf("dry run:\n%s", out)
	// The steps come in the order FRR and the kernel need.
	order := []string{"vrfs ", "frr ", "create bridge br.red", "create vxlan vx.red", "attach router to nA",
		"maps ", "status "}
	pos := 0
	for _, s := range order {
		i := strings.Index(out[pos:], s)
		if i < 0 {
			t.Fatalf("dry-run output lacks %q after position %d:\n%s", s, pos, out)
		}
		pos += i
	}
	if n.linkExists("br.red") || n.linkExists(l2Bridge) {
		t.Fatalf("--dry-run created links")
	}
	if entries, _ := os.ReadDir(n.pinDir); len(entries) != 0 {
		t.Fatalf("--dry-run pinned %d objects", len(entries))
	}

	code, out = runAgent(t, time.Minute, append(n.agentArgs(), "--once")...)
	if code != 0 {
		t.Fatalf("--once exited %d:\n%s", code, out)
	}
	if !n.linkExists("br.red") || !n.linkExists(l2Bridge) {
		t.Fatalf("--once did not create the bridges:\n%s", out)
	}
	pingOK(t, n.host("ha"), addrB, 5) // the router keeps forwarding after the agent exited

	// A data-plane interface that does not exist: refused before any change, exit status 1 with the field named.
	bad := baseSpec("rev-bad")
	bad.DataPlane.Interfaces = append(bad.DataPlane.Interfaces, v1.DataPlaneInterface{Name: "nosuch0", VRF: "red"})
	n.writeSpec(t, bad)
	code, out = runAgent(t, time.Minute, append(n.agentArgs(), "--once")...)
	if code != 1 || !strings.Contains(out, `.name: Invalid value: "nosuch0": does not exist`) {
		t.Fatalf("--once with a missing interface: exit %d, want 1 naming the interface:\n%s", code, out)
	}
	pingOK(t, n.host("ha"), addrB, 5)
}

// kill -9 under traffic loses nothing (pinned links and maps keep forwarding); the restarted agent adopts
// everything: same link IDs, same generation (no-op apply).
func TestKill9UnderTraffic(t *testing.T) {
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	listen := freePort(t)
	a := startAgent(t, listen, n.agentArgs()...)
	n.appliedRev(t, a, "rev-1")
	ids := n.linkIDs(t)
	gen := liveGeneration(t, a)

	ctx := context.Background()
	flow, err := lab.StartFlow(ctx, lab.FlowOptions{From: n.host("ha"), To: n.host("hb"), Dst: addrB, Rate: 2000})
	mustf(t, err, "start flow")
	mustf(t, flow.WaitReceived(ctx, 200, 5*time.Second), "flow before the kill")
	a.kill(syscall.SIGKILL)
	mustf(t, flow.WaitReceived(ctx, flow.Received()+200, 5*time.Second), "flow while no agent runs")

	a2 := startAgent(t, listen, n.agentArgs()...)
	// The restarted agent reconciles with nothing to do.
	mustf(t, lab.WaitFor(ctx, 30*time.Second, 50*time.Millisecond, func() (bool, error) {
		if err := a2.running(); err != nil {
			return false, err
		}
		return strings.Contains(a2.out.String(), "reconcile unchanged"), nil
	}), "restarted agent reconciles as unchanged:\n%s", a2.out.String())
	mustf(t, flow.WaitReceived(ctx, flow.Received()+200, 5*time.Second), "flow after the restart")
	res, err := flow.Stop(ctx)
	mustf(t, err, "stop flow")
	if !res.Clean() {
		t.Errorf("traffic disturbed by kill -9 and restart: %s", res)
	}
	t.Logf("flow across kill -9 and restart: %s", res)
	if after := n.linkIDs(t); !equalIDs(ids, after) {
		t.Errorf("link IDs changed across the restart: %v -> %v", ids, after)
	}
	if g := liveGeneration(t, a2); g != gen {
		t.Errorf("generation %v after the restart, want %v (adopt = no new generation)", g, gen)
	}
	if strings.Contains(a2.out.String(), "reconcile applied") {
		t.Errorf("restarted agent changed something:\n%s", a2.out.String())
	}
}

func liveGeneration(t *testing.T, a *agent) float64 {
	t.Helper()
	fams, err := a.scrape()
	mustf(t, err, "scrape")
	return counter(fams, "network_operator_map_generation", nil)
}

func equalIDs[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// promtool check metrics accepts a scrape of the agent.
func TestMetricsPassPromtool(t *testing.T) {
	promtool := testreq.Commands(t, "promtool")[0] // Debian package prometheus; the node needs root
	n := newNode(t)
	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, freePort(t), n.agentArgs()...)
	n.appliedRev(t, a, "rev-1")
	pingOK(t, n.host("ha"), addrB, 3) // some VRF counters
	text, err := a.get("/metrics")
	mustf(t, err, "scrape")
	if !strings.Contains(text, "network_operator_vrf_packets_total{") {
		t.Fatalf("scrape has no VRF counters:\n%s", text)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out.String())
	}
}
