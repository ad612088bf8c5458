package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// Path kinds of a pair of workloads.
const (
	PathBridged = "bridged" // same L2 network: bridged, over VXLAN between nodes
	PathRouted  = "routed"  // same tenant, other network: routed by the eBPF router in the tenant's table
	PathBlocked = "blocked" // other tenant: no route in the tenant's table
)

// Cell is one source/destination pair of the connectivity matrix.
type Cell struct {
	From, To *Workload
	// Path is what the pair should get (PathBridged, PathRouted or PathBlocked).
	Path string
	// Sent and Received count the echo requests and replies of the measurement.
	Sent, Received int
}

// Reachable reports whether any reply came back.
func (c Cell) Reachable() bool { return c.Received > 0 }

// AsExpected reports whether the pair got what its Path says: every reply for a reachable path, none for a
// blocked one.
func (c Cell) AsExpected() bool {
	if c.Path == PathBlocked {
		return c.Received == 0
	}
	return c.Sent > 0 && c.Received == c.Sent
}

// Matrix is the connectivity of every pair of workloads.
type Matrix struct {
	Workloads []*Workload
	// Cells[i][j] is from Workloads[i] to Workloads[j] (the diagonal is left empty).
	Cells [][]Cell
	// Converged is how long the expected paths took to work (learning included), Measured how long the
	// measurement took.
	Converged, Measured time.Duration
}

// Unexpected lists the cells that did not get what their path says.
func (m *Matrix) Unexpected() []Cell {
	var out []Cell
	for i := range m.Cells {
		for j, c := range m.Cells[i] {
			if i != j && !c.AsExpected() {
				out = append(out, c)
			}
		}
	}
	return out
}

// Count returns how many cells have path p, and how many of them are as expected.
func (m *Matrix) Count(p string) (total, ok int) {
	for i := range m.Cells {
		for j, c := range m.Cells[i] {
			if i == j || c.Path != p {
				continue
			}
			total++
			if c.AsExpected() {
				ok++
			}
		}
	}
	return total, ok
}

func pathOf(from, to *Workload) string {
	switch {
	case from.VRF != to.VRF:
		return PathBlocked
	case from.Network.Name == to.Network.Name:
		return PathBridged
	default:
		return PathRouted
	}
}

const (
	// pingers bounds the pings run at once.
	pingers = 6
	// convergeTimeout bounds the wait for every expected path (BGP sessions, EVPN routes, learning).
	convergeTimeout = 90 * time.Second
)

// Connectivity makes every workload known to its node (ARP for its gateway, as any host's first packet
// does), waits until every pair of the same tenant reaches each other (EVPN has spread the MAC/IP routes),
// and then measures the whole matrix: 3 echo requests per pair.
func (c *Cluster) Connectivity(ctx context.Context) (*Matrix, error) {
	start := time.Now()
	for _, w := range c.loads {
		if err := c.learn(ctx, w); err != nil {
			return nil, err
		}
	}
	var pairs []Cell
	for _, from := range c.loads {
		for _, to := range c.loads {
			if from != to && pathOf(from, to) != PathBlocked {
				pairs = append(pairs, Cell{From: from, To: to, Path: pathOf(from, to)})
			}
		}
	}
	err := forEach(ctx, pairs, func(ctx context.Context, p Cell) error {
		return wait.Poll(ctx, 250*time.Millisecond, convergeTimeout, fmt.Sprintf("%s -> %s (%s)", p.From.Label(), p.To.Label(), p.Path),
			func(ctx context.Context) (bool, string, error) {
				r, err := p.From.NS.Ping(ctx, p.To.Addr, lab.PingOptions{Count: 1, Wait: 500 * time.Millisecond})
				if err != nil {
					return false, err.Error(), nil
				}
				return r.Received == 1, "no reply", nil
			})
	})
	if err != nil {
		return nil, err
	}
	m, err := c.measure(ctx)
	if err != nil {
		return nil, err
	}
	m.Converged = time.Since(start) - m.Measured
	return m, nil
}

// learn makes the workload's node learn it: the workload sends an echo request to its gateway, whose ARP
// exchange gives the node a neighbour entry on the bridge - what zebra advertises as an EVPN MAC/IP route, and
// so what the other nodes need to route to the workload. That entry is waited for, not the reply.
func (c *Cluster) learn(ctx context.Context, w *Workload) error {
	gw := w.Network.Gateway.Addr()
	h := w.Node.NS.Handle()
	return wait.Poll(ctx, 200*time.Millisecond, 30*time.Second, fmt.Sprintf("%s learns %s (%s) on %s", w.Node.Name, w.Name, w.Addr, w.Network.Bridge()),
		func(ctx context.Context) (bool, string, error) {
			br, err := h.LinkByName(w.Network.Bridge())
			if err != nil {
				return false, err.Error(), nil
			}
			neighs, err := h.NeighList(br.Attrs().Index, netlink.FAMILY_V4)
			if err != nil {
				return false, err.Error(), nil
			}
			for _, n := range neighs {
				if a, ok := netip.AddrFromSlice(n.IP); ok && a.Unmap() == w.Addr &&
					n.State&(netlink.NUD_REACHABLE|netlink.NUD_STALE|netlink.NUD_DELAY|netlink.NUD_PROBE) != 0 {
					return true, "", nil
				}
			}
			if _, err := w.NS.Ping(ctx, gw, lab.PingOptions{Count: 1, Wait: 200 * time.Millisecond}); err != nil {
				return false, err.Error(), nil
			}
			return false, "no neighbour entry yet", nil
		})
}

// measure pings every pair (3 requests, 200 ms apart, 1 s wait for the last).
func (c *Cluster) measure(ctx context.Context) (*Matrix, error) {
	start := time.Now()
	m := &Matrix{Workloads: c.loads, Cells: make([][]Cell, len(c.loads))}
	var cells []*Cell
	for i, from := range c.loads {
		m.Cells[i] = make([]Cell, len(c.loads))
		for j, to := range c.loads {
			if i == j {
				continue
			}
			m.Cells[i][j] = Cell{From: from, To: to, Path: pathOf(from, to)}
			cells = append(cells, &m.Cells[i][j])
		}
	}
	err := forEach(ctx, cells, func(ctx context.Context, cell *Cell) error {
		r, err := cell.From.NS.Ping(ctx, cell.To.Addr, lab.PingOptions{Count: 3, Interval: 200 * time.Millisecond, Wait: time.Second})
		if err != nil {
			return err
		}
		cell.Sent, cell.Received = r.Transmitted, r.Received
		return nil
	})
	m.Measured = time.Since(start)
	return m, err
}

// forEach runs fn for every item, at most pingers at once, and returns the first error.
func forEach[T any](ctx context.Context, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, pingers)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, it); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// PingOnce sends one echo request from a workload to an address and reports whether the reply came.
func PingOnce(ctx context.Context, from *Workload, to netip.Addr) (bool, error) {
	r, err := from.NS.Ping(ctx, to, lab.PingOptions{Count: 1, Wait: time.Second})
	if err != nil {
		return false, err
	}
	return r.Received == 1, nil
}
