package dpctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/dpctl"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// buildAgent compiles cmd/network-agent, so the test drives the real binary as a user would.
func buildAgent(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	bin := filepath.Join(t.TempDir(), "network-agent")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/network-agent")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/network-agent: %v\n%s", err, out)
	}
	return bin
}

// routerLab: hosts a (10.0.1.2) and b (10.0.2.2) behind router r. Forwarding is OFF on the traffic interfaces
// ra and rb and on only on the stand-in fwd0, the VRF's lookup interface: only the eBPF router can forward.
func routerLab(t *testing.T) *lab.Lab {
	l := lab.New(t)
	l.MustBuild(context.Background(), lab.Topology{
		Namespaces: []lab.Namespace{
			{Name: "a"},
			{Name: "r", Sysctls: []lab.Sysctl{
				{Key: "net.ipv4.conf.all.forwarding", Value: "0"},
				{Key: "net.ipv4.conf.fwd0.forwarding", Value: "1"},
			}},
			{Name: "b"},
		},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "a", Name: "eth0", Addrs: []string{"10.0.1.2/24"}},
				B: lab.Port{NS: "r", Name: "ra", Addrs: []string{"10.0.1.1/24"}, NoPrefixRoute: true}},
			{A: lab.Port{NS: "b", Name: "eth0", Addrs: []string{"10.0.2.2/24"}},
				B: lab.Port{NS: "r", Name: "rb", Addrs: []string{"10.0.2.1/24"}, NoPrefixRoute: true}},
		},
		Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: "fwd0"}}},
		Routes: []lab.Route{
			{NS: "a", Dst: "default", Via: "10.0.1.1", Dev: "eth0"},
			{NS: "b", Dst: "default", Via: "10.0.2.1", Dev: "eth0"},
			{NS: "r", Table: 100, Dst: "10.0.1.0/24", Dev: "ra"},
			{NS: "r", Table: 100, Dst: "10.0.2.0/24", Dev: "rb"},
		},
		Neighbours: []lab.Neighbour{
			{NS: "a", Dev: "eth0", IP: "10.0.1.1", MACOf: "r/ra"},
			{NS: "b", Dev: "eth0", IP: "10.0.2.1", MACOf: "r/rb"},
			{NS: "r", Dev: "ra", IP: "10.0.1.2", MACOf: "a/eth0"},
			{NS: "r", Dev: "rb", IP: "10.0.2.2", MACOf: "b/eth0"},
		},
	})
	return l
}

const goodTables = `
revision: test-1
vrfs:
  - {name: tenant, id: 1, table: 100, vni: 5001, lookupInterface: fwd0}
interfaces:
  - {name: ra, vrf: tenant}
  - {name: rb, vrf: tenant}
sbr:
  - {prefix: 10.99.0.0/24, vrf: tenant}
`

const badTables = `
vrfs:
  - {name: tenant, id: 1, table: 100}
interfaces:
  - {name: ra, vrf: tenant}
  - {name: rb, vrf: blue}
`

type result struct {
	stdout, stderr string
	code           int
}

func agent(t *testing.T, ns *lab.Netns, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := ns.Command(ctx, bin, append([]string{"dataplane"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run network-agent %v: %v", args, err)
	}
	t.Logf("network-agent dataplane %s -> %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	return r
}

func ok(t *testing.T, r result) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return r
}

func dumpJSON(t *testing.T, ns *lab.Netns, bin, pinDir string) dpctl.Dump {
	t.Helper()
	r := ok(t, agent(t, ns, bin, "dump", "-o", "json", "--pin-dir", pinDir))
	var d dpctl.Dump
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("decode dump -o json: %v\n%s", err, r.stdout)
	}
	return d
}

func TestCLIInNetnsLab(t *testing.T) {
	testreq.Root(t) // attaching BPF programs and building namespaces
	l := routerLab(t)
	bin := buildAgent(t)
	r, a := l.NS("r"), l.NS("a")
	pinDir := l.MustPinDir()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	for p, s := range map[string]string{good: goodTables, bad: badTables} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	b := netip.MustParseAddr("10.0.2.2")

	// Before anything is attached the kernel cannot forward (forwarding is off on ra).
	if res, err := a.Ping(ctx, b, lab.PingOptions{Count: 2, Deadline: 2 * time.Second}); err != nil || res.Received != 0 {
		t.Fatalf("ping before attach: %+v, %v; want no replies (kernel forwarding is disabled)", res, err)
	}

	att := ok(t, agent(t, r, bin, "attach", "--iface", "ra,rb", "--pin-dir", pinDir))
	for _, want := range []string{"ra ", "rb ", "tc"} {
		if !strings.Contains(att.stdout, want) {
			t.Errorf("attach output lacks %q", want)
		}
	}
	if res := agent(t, r, bin, "attach", "--iface", "nosuch0", "--pin-dir", pinDir); res.code != 1 || !strings.Contains(res.stderr, "nosuch0") {
		t.Errorf("attach to a missing interface: exit %d, stderr %q; want 1 naming the interface", res.code, res.stderr)
	}

	applied := ok(t, agent(t, r, bin, "apply", "-f", good, "--pin-dir", pinDir))
	if !strings.Contains(applied.stdout, `applied generation 1 (revision "test-1")`) || !strings.Contains(applied.stdout, "sbr +1") {
		t.Errorf("apply output: %q", applied.stdout)
	}
	again := ok(t, agent(t, r, bin, "apply", "-f", good, "--pin-dir", pinDir))
	if !strings.HasPrefix(again.stdout, "unchanged: generation 1") {
		t.Errorf("second apply of the same file: %q, want unchanged", again.stdout)
	}

	const pings = 5
	res, err := a.Ping(ctx, b, lab.PingOptions{Count: pings})
	if err != nil || res.Received != pings {
		t.Fatalf("ping through the eBPF router: %+v, %v", res, err)
	}

	d := dumpJSON(t, r, bin, pinDir)
	if d.Version.Generation != 1 || d.Version.Revision != "test-1" || len(d.Version.TablesHash) != 64 {
		t.Errorf("version = %+v", d.Version)
	}
	if len(d.VRFs) != 1 || d.VRFs[0].ID != 1 || d.VRFs[0].Table != 100 || d.VRFs[0].VNI != 5001 || d.VRFs[0].LookupInterface != "fwd0" {
		t.Errorf("vrfs = %+v", d.VRFs)
	}
	// ra and rb are veths whose peers are in a's and b's namespaces (noqueue): the router hands what it routes
	// out of them to the peer.
	if len(d.Interfaces) != 2 || d.Interfaces[0].Name != "ra" && d.Interfaces[1].Name != "ra" || !d.Interfaces[0].Peer || !d.Interfaces[1].Peer {
		t.Errorf("interfaces = %+v, want ra and rb, both peer", d.Interfaces)
	}
	if len(d.SBR) != 1 || d.SBR[0] != (dpctl.DumpSBR{Prefix: "10.99.0.0/24", VRF: 1, Table: 100}) {
		t.Errorf("sbr = %+v, want 10.99.0.0/24 by VRF 1's table 100", d.SBR)
	}
	var vrf1 *dpctl.DumpCounters
	for i := range d.Counters {
		if d.Counters[i].VRF == 1 {
			vrf1 = &d.Counters[i]
		}
	}
	// Echo requests in ra and replies in rb: at least 2 per ping went through the fib + redirect_peer path.
	if vrf1 == nil || vrf1.ByReason["forwarded-peer"].Packets < 2*pings || vrf1.Forwarded.Packets < 2*pings {
		t.Fatalf("counters of VRF 1 = %+v, want >= %d forwarded-peer", vrf1, 2*pings)
	}

	// A bad file names the field and value, and the live generation stays.
	rejected := agent(t, r, bin, "apply", "-f", bad, "--pin-dir", pinDir)
	if rejected.code != 1 || !strings.Contains(rejected.stderr, `interfaces[1].vrf: Invalid value: "blue": not in vrfs`) {
		t.Errorf("bad apply: exit %d, stderr %q", rejected.code, rejected.stderr)
	}
	if d := dumpJSON(t, r, bin, pinDir); d.Version.Generation != 1 || d.Version.Revision != "test-1" {
		t.Errorf("after a rejected apply the version is %+v, want generation 1 test-1 kept", d.Version)
	}
	if res := agent(t, r, bin, "dump", "-o", "yaml", "--pin-dir", pinDir); res.code != 2 {
		t.Errorf("dump -o yaml: exit %d, want 2 (usage)", res.code)
	}

	table := ok(t, agent(t, r, bin, "dump", "-f", good, "--pin-dir", pinDir))
	for _, want := range []string{"1 tenant", "forwarded-peer", "fwd0", "10.99.0.0/24  1 tenant  100"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("dump table lacks %q", want)
		}
	}

	ok(t, agent(t, r, bin, "detach", "--pin-dir", pinDir))
	if res, err := a.Ping(ctx, b, lab.PingOptions{Count: 2, Deadline: 2 * time.Second}); err != nil || res.Received != 0 {
		t.Errorf("ping after detach: %+v, %v; want no replies", res, err)
	}

	ok(t, agent(t, r, bin, "uninstall", "--pin-dir", pinDir))
	if _, err := os.Stat(pinDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pin dir after uninstall: %v, want it removed", err)
	}
	if res := agent(t, r, bin, "dump", "--pin-dir", pinDir); res.code != 1 || !strings.Contains(res.stderr, "no data plane installed") {
		t.Errorf("dump after uninstall: exit %d, stderr %q", res.code, res.stderr)
	}
}
