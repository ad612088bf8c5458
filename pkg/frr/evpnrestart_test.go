package frr_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// TestGracefulRestartKeepsEVPN: a node's whole FRR restarts as the chart's FRR pod does on an upgrade (zebra and
// bgpd die as in a crash; they come back empty, zebra with -K, and frr.conf is loaded through vtysh -b).
//   - The restarted node's kernel keeps every route, MAC and flood entry zebra had installed: its traffic out
//     keeps flowing.
//   - The route reflector keeps the node's unicast routes (its VTEP) as stale: the other node never loses its
//     route to that VTEP.
//   - The node's EVPN routes (its MACs, its flood entry) are back at the other node once it re-announces them.
//     FRR's helper keeps no EVPN routes (FRRouting/frr#9749, graceful restart for EVPN came with FRR 10.5), so
//     behind an FRR route reflector they are withdrawn meanwhile; the time is logged.
func TestGracefulRestartKeepsEVPN(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	fab, nodes := newFabric(t, ctx, "frrgr", func(n *fabricNode) {
		n.cfg.Underlay.GracefulRestart = &frr.GracefulRestart{}
		must(t, n.ns.IP(ctx, "link", "set", "lo", "up"))
	})
	frrtest.Router(t, frrproc.Options{Netns: fab.Name, Config: []byte(rrConfig)})
	for _, n := range nodes {
		n.frr = frrtest.Router(t, frrproc.Options{Netns: n.ns.Name, KeepRoutes: 120 * time.Second})
		n.target = frrvty.Target{VtySocket: n.frr.Dir, ConfDir: n.frr.ConfDir, Tools: n.frr.Tools()}
		n.stateDir = t.TempDir()
		n.rel = newReloader(t, frrreload.Options{Target: n.target, StateDir: n.stateDir})
		n.apply(t, ctx)
	}
	n1, n2 := nodes[0], nodes[1]
	frrtest.Eventually(t, 60*time.Second, "ping over VNI 100", func(ctx context.Context) (bool, string) {
		return ping(ctx, n2.hosts[100], hostIP(1, 100))
	})
	mac1, mac2 := hostMAC(t, ctx, n1.hosts[100]), hostMAC(t, ctx, n2.hosts[100])
	fdbHas := func(n *fabricNode, mac, vtep string) func(context.Context) (bool, string) {
		return func(ctx context.Context) (bool, string) {
			fdb, err := n.ns.Exec(ctx, "bridge", "fdb", "show", "dev", "vx100")
			s := string(fdb)
			return err == nil && strings.Contains(s, mac+" dst "+vtep) && strings.Contains(s, "00:00:00:00:00:00 dst "+vtep), s
		}
	}
	frrtest.Eventually(t, 20*time.Second, "node 2's MAC and flood entries for node 1", fdbHas(n2, mac1, n1.vtep()))
	frrtest.Eventually(t, 20*time.Second, "node 1's MAC and flood entries for node 2", fdbHas(n1, mac2, n2.vtep()))

	// What the nodes' kernels do while node 1's FRR restarts; the monitors stamp every change.
	var events []kernelEvent
	for _, n := range nodes {
		events = append(events, watchKernel(t, ctx, n))
	}
	pinger := exec.CommandContext(ctx, "ip", "netns", "exec", n2.hosts[100].Name, "ping", "-q", "-i", "0.01", "-w", "6", hostIP(1, 100))
	var pingOut strings.Builder
	pinger.Stdout = &pingOut
	must(t, pinger.Start())
	frrtest.Eventually(t, 5*time.Second, "the monitors running", func(ctx context.Context) (bool, string) {
		// A change every monitor sees: a static FDB entry on each node's VXLAN device, added and removed.
		for _, n := range nodes {
			_, _ = n.ns.Exec(ctx, "bridge", "fdb", "replace", "02:00:00:00:00:99", "dev", "vx100", "dst", "192.0.2.1", "self", "permanent")
			_, _ = n.ns.Exec(ctx, "bridge", "fdb", "del", "02:00:00:00:00:99", "dev", "vx100", "dst", "192.0.2.1", "self")
		}
		for _, e := range events {
			if !e.saw("02:00:00:00:00:99") {
				return false, "node " + fmt.Sprint(e.node) + " saw nothing yet"
			}
		}
		return true, ""
	})
	start := time.Now()
	must(t, n1.frr.CrashRestart(ctx))
	t.Logf("node 1's FRR back with its config after %v", time.Since(start).Round(time.Millisecond))
	frrtest.Eventually(t, 30*time.Second, "node 1's EVPN session back at the route reflector", func(ctx context.Context) (bool, string) {
		sum, err := n1.target.EVPNSummary(ctx)
		if err != nil {
			return false, err.Error()
		}
		p, ok := sum.Peers[rrAddr]
		return ok && p.Established(), fmt.Sprintf("%+v", sum.Peers)
	})
	frrtest.Eventually(t, 30*time.Second, "node 2's MAC and flood entries for node 1 after the restart", fdbHas(n2, mac1, n1.vtep()))
	_ = pinger.Wait()
	for _, e := range events {
		e.stop()
	}

	// Node 1 kept everything: no route, MAC or neighbour of its kernel went while its FRR restarted.
	for _, l := range events[0].deleted(start, "") {
		t.Errorf("node 1's kernel lost an entry while its FRR restarted: %s", l)
	}
	// Node 2 kept its route to node 1's VTEP (the reflector's helper kept it as stale).
	for _, l := range events[1].deleted(start, n1.vtep()+" ") {
		if !strings.Contains(l, "dev vx100") {
			t.Errorf("node 2 lost its route to node 1's VTEP while node 1's FRR restarted: %s", l)
		}
	}
	gone, back := events[1].gap(start, mac1)
	switch {
	case gone.IsZero():
		t.Logf("node 2 kept node 1's MAC %s the whole time (the reflector kept node 1's EVPN routes)", mac1)
	case back.IsZero():
		t.Errorf("node 2 lost node 1's MAC %s %v after the restart began and never got it back", mac1, gone.Sub(start))
	default:
		t.Logf("node 2 lost node 1's MAC and flood entry %v after the restart began, back %v later (the reflector's FRR keeps "+
			"no EVPN routes of a restarting peer; node 1 re-announced them)", gone.Sub(start).Round(time.Millisecond),
			back.Sub(gone).Round(time.Millisecond))
	}
	t.Logf("ping node 2 -> node 1 every 10 ms: %s", lineWith(pingOut.String(), "packet loss"))
}

// kernelEvent follows one node's routes, nexthops (a nexthop deleted takes its routes without a message of its
// own), neighbours and FDB entries (ip monitor shows those of a VXLAN device as neighbours) with ip's stamps.
type kernelEvent struct {
	node  int
	mu    *sync.Mutex
	lines *[]stamped
	cmds  []*exec.Cmd
	wg    *sync.WaitGroup
}

type stamped struct {
	at   time.Time
	line string
}

// monitorStamp is the time stamp ip -ts puts before every line.
var monitorStamp = regexp.MustCompile(`^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)\]\s*(.*)$`)

func watchKernel(t *testing.T, ctx context.Context, n *fabricNode) kernelEvent {
	t.Helper()
	e := kernelEvent{node: n.id, mu: &sync.Mutex{}, lines: &[]stamped{}, wg: &sync.WaitGroup{}}
	for _, args := range [][]string{{"ip", "-ts", "monitor", "route", "neigh", "nexthop"}} {
		cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.ns.Name}, args...)...)
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		e.cmds = append(e.cmds, cmd)
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				m := monitorStamp.FindStringSubmatch(sc.Text())
				if m == nil {
					continue
				}
				at, err := time.ParseInLocation("2006-01-02T15:04:05.999999", m[1], time.Local)
				if err != nil {
					continue
				}
				e.mu.Lock()
				*e.lines = append(*e.lines, stamped{at, m[2]})
				e.mu.Unlock()
			}
		}()
	}
	t.Cleanup(e.stop)
	return e
}

func (e kernelEvent) stop() {
	for _, c := range e.cmds {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	}
	e.wg.Wait()
}

func (e kernelEvent) snapshot() []stamped {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]stamped(nil), *e.lines...)
}

func (e kernelEvent) saw(s string) bool {
	for _, l := range e.snapshot() {
		if strings.Contains(l.line, s) {
			return true
		}
	}
	return false
}

// deleted lists the deletions since start whose line contains s.
func (e kernelEvent) deleted(start time.Time, s string) []string {
	var out []string
	for _, l := range e.snapshot() {
		if !l.at.Before(start) && strings.HasPrefix(l.line, "Deleted") && strings.Contains(l.line, s) {
			out = append(out, l.at.Format("15:04:05.000000 ")+l.line)
		}
	}
	return out
}

// gap is when an entry naming s was first deleted since start and when it was next added (zero: never).
func (e kernelEvent) gap(start time.Time, s string) (gone, back time.Time) {
	for _, l := range e.snapshot() {
		if l.at.Before(start) || !strings.Contains(l.line, s) {
			continue
		}
		switch {
		case gone.IsZero() && strings.HasPrefix(l.line, "Deleted"):
			gone = l.at
		case !gone.IsZero() && !strings.HasPrefix(l.line, "Deleted"):
			return gone, l.at
		}
	}
	return gone, time.Time{}
}

func lineWith(s, sub string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
