// Smoke tests of the operator's bpftrace scripts: each one must compile, attach on this kernel, print its
// per-second report, see the traffic of a lab made for the test, and stop cleanly on Ctrl-C (SIGINT).
package bpftrace_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/syncbuf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// report matches the header every script prints once per second.
var report = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d .* per second`)

func requireBpftrace(t *testing.T) string {
	t.Helper()
	path := testreq.Commands(t, "bpftrace")[0] // make deps installs it; it needs root
	testreq.Tracefs(t)                         // make deps mounts it
	_, err := os.Stat("/sys/kernel/tracing/events/net")
	testreq.Need(t, "the net trace events in /sys/kernel/tracing/events/net", err)
	return path
}

// routed is a client a, the eBPF router r and a server b, with device names unique to this run so the assertions
// see this test's packets only. Forwarding is off on the router's traffic devices: only the eBPF router forwards.
type routed struct {
	l               *lab.Lab
	in, out, server string // router ingress, router egress, server device
}

func routedLab(t *testing.T) routed {
	l := lab.New(t)
	id := l.ID()
	n := routed{l: l, in: "i" + id, out: "o" + id, server: "b" + id}
	ctx := context.Background()
	l.MustBuild(ctx, lab.Topology{
		Namespaces: []lab.Namespace{{Name: "a"}, {Name: "b"}, {Name: "r", Sysctls: []lab.Sysctl{
			{Key: "net.ipv4.conf.all.forwarding", Value: "0"},
			{Key: "net.ipv4.conf.fwd0.forwarding", Value: "1"},
		}}},
		Veths: []lab.Veth{
			{A: lab.Port{NS: "a", Name: "a" + id, Addrs: []string{"10.77.1.2/24"}},
				B: lab.Port{NS: "r", Name: n.in, Addrs: []string{"10.77.1.1/24"}, NoPrefixRoute: true}},
			{A: lab.Port{NS: "b", Name: n.server, Addrs: []string{"10.77.2.2/24"}},
				B: lab.Port{NS: "r", Name: n.out, Addrs: []string{"10.77.2.1/24"}, NoPrefixRoute: true}},
		},
		Devices: []lab.Device{{Port: lab.Port{NS: "r", Name: "fwd0"}}},
		Routes: []lab.Route{
			{NS: "a", Dst: "default", Via: "10.77.1.1", Dev: "a" + id},
			{NS: "b", Dst: "default", Via: "10.77.2.1", Dev: n.server},
			{NS: "r", Table: 100, Dst: "10.77.1.0/24", Dev: n.in},
			{NS: "r", Table: 100, Dst: "10.77.2.0/24", Dev: n.out},
		},
		Neighbours: []lab.Neighbour{
			{NS: "a", Dev: "a" + id, IP: "10.77.1.1", MACOf: "r/" + n.in},
			{NS: "b", Dev: n.server, IP: "10.77.2.1", MACOf: "r/" + n.out},
			{NS: "r", Dev: n.in, IP: "10.77.1.2", MACOf: "a/a" + id},
			{NS: "r", Dev: n.out, IP: "10.77.2.2", MACOf: "b/" + n.server},
		},
	})
	r := l.NS("r")
	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatal(err)
	}
	pinDir := l.MustPinDir()
	ld, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir, NetNS: r.NsHandle()})
	if err != nil {
		t.Fatal(err)
	}
	defer ld.Close()
	idx := map[string]uint32{}
	for _, dev := range []string{n.in, n.out, "fwd0"} {
		i, err := r.Ifindex(dev)
		if err != nil {
			t.Fatal(err)
		}
		idx[dev] = uint32(i)
		if dev != "fwd0" {
			if _, err := ld.Attach(ctx, dev, loader.ModeTC); err != nil {
				t.Fatal(err)
			}
		}
	}
	set, err := maps.OpenPinned(pinDir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	_, err = set.Apply(ctx, maps.Tables{
		VRFs: []maps.VRF{{ID: 1, TableID: 100, LookupIfindex: idx["fwd0"]}},
		Interfaces: []maps.Interface{
			{Ifindex: idx[n.in], VRF: 1, Mode: maps.ModeRoute},
			{Ifindex: idx[n.out], VRF: 1, Mode: maps.ModeRoute},
		},
	}, "bpftrace-test")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// traffic sends pings through the router, and UDP datagrams to a closed port of the server (dropped there as
// NO_SOCKET), until ctx ends.
func traffic(ctx context.Context, t *testing.T, l *lab.Lab) {
	a := l.NS("a")
	dst := netip.MustParseAddr("10.77.2.2")
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = a.Ping(ctx, dst, lab.PingOptions{Count: 1, Deadline: time.Second})
		err := a.Do(func() error {
			c, err := net.Dial("udp4", "10.77.2.2:9")
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Write([]byte("drop me"))
			return err
		})
		if err != nil && ctx.Err() == nil {
			t.Errorf("send udp: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func TestScripts(t *testing.T) {
	bin := requireBpftrace(t)
	n := routedLab(t)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); traffic(ctx, t, n.l) }()
	t.Cleanup(func() { stop(); <-done })

	tests := []struct {
		script string
		args   []string
		// want must all match the output while traffic runs (beyond the per-second header).
		want []*regexp.Regexp
		// check, when set, vets the whole output afterwards.
		check func(out string) error
	}{
		// Pings from a: redirected by the router from its ingress to its egress device, after a lookup in table 100.
		{"vrf-paths.bt", nil, []*regexp.Regexp{
			regexp.MustCompile(`@path\[` + n.in + `, 100, ebpf, ` + n.out + `\]: \d+`),
			regexp.MustCompile(`@received\[` + n.in + `\]: \d+`)}, nil},
		{"drops.bt", nil, []*regexp.Regexp{regexp.MustCompile(`@drops\[` + n.server + `, \d+, `)}, nil},
		// Table 100 alone: the whole machine's lookups (other tests' namespaces) would crowd its row out of the
		// busiest 25 the script prints; the filter is the script's own.
		{"fib-lookups.bt", []string{"100"}, []*regexp.Regexp{regexp.MustCompile(`(?m)^@ipv4\[100, \d+, 0, ` + n.out + `\]: \d+`)}, onlyTable("100")},
		{"xdp.bt", nil, nil, nil}, // tc traffic only: XDP tracepoints stay silent, the script must still attach and report
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			out, err := runScript(t, bin, tt.script, tt.args, tt.want)
			if err != nil {
				t.Fatalf("%s: %v\noutput:\n%s", tt.script, err, out)
			}
			if tt.check != nil {
				if err := tt.check(out); err != nil {
					t.Errorf("%s %v: %v\noutput:\n%s", tt.script, tt.args, err, out)
				}
			}
		})
	}
}

var lookupRow = regexp.MustCompile(`(?m)^@ipv[46]\[(\d+),`)

// onlyTable checks that fib-lookups.bt, given a table, reported lookups of that table alone.
func onlyTable(table string) func(string) error {
	return func(out string) error {
		rows := lookupRow.FindAllStringSubmatch(out, -1)
		if len(rows) == 0 {
			return errors.New("no lookup rows")
		}
		for _, m := range rows {
			if m[1] != table {
				return fmt.Errorf("a lookup of table %s, asked for table %s alone: %s", m[1], table, m[0])
			}
		}
		return nil
	}
}

// runScript starts the script, waits for its per-second report and every wanted string, then stops it with
// SIGINT as a user would, and checks it exits 0 without errors.
func runScript(t *testing.T, bin, script string, args []string, want []*regexp.Regexp) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{script}, args...)...)
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	err := lab.WaitFor(ctx, 45*time.Second, 50*time.Millisecond, func() (bool, error) {
		select {
		case err := <-exited:
			return false, lab.Permanent(fmt.Errorf("exited early (%v): %s", err, stderr.String()))
		default:
		}
		out := stdout.String()
		if !report.MatchString(out) {
			return false, errors.New("no per-second report yet")
		}
		for _, w := range want {
			if !w.MatchString(out) {
				return false, fmt.Errorf("%q not seen yet", w)
			}
		}
		return true, nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return stdout.String() + stderr.String(), err
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return "", fmt.Errorf("interrupt: %w", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			return stdout.String() + stderr.String(), fmt.Errorf("exit after SIGINT: %w", err)
		}
	case <-ctx.Done():
		return stdout.String(), errors.New("did not exit within the deadline after SIGINT")
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		// bpftrace 0.17 always warns that it cannot raise RLIMIT_MEMLOCK; with memcg accounting that is harmless.
		if strings.Contains(line, "ERROR") && !strings.Contains(line, "RLIMIT_MEMLOCK") {
			return stdout.String() + stderr.String(), fmt.Errorf("error on stderr: %s", line)
		}
	}
	return stdout.String(), nil
}

func TestDecodeDropReasons(t *testing.T) {
	requireBpftrace(t)
	in := "Attaching 4 probes...\n@drops[eth0, 2, kfree_skb_list_reason+70]: 3\n@drops[, 999999, x]: 1\n"
	cmd := exec.Command("./decode-drop-reasons.sh")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("decode-drop-reasons.sh: %v: %s", err, out)
	}
	want := "Attaching 4 probes...\n@drops[eth0, NOT_SPECIFIED, kfree_skb_list_reason+70]: 3\n@drops[, 999999, x]: 1\n"
	if string(out) != want {
		t.Fatalf("decoded output:\n%s\nwant:\n%s", out, want)
	}
}
