package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// RenderEvent is one line of the live rollout view: time since the change, revision, node, state.
func RenderEvent(ev RolloutEvent, since time.Time) string {
	s := fmt.Sprintf("%s  %-6s %-7s %s", sinceStart(ev.At, since), ShortName(ev.Revision), ev.Node, ev.State)
	if ev.Detail != "" {
		s += ": " + oneLine(ev.Detail)
	}
	return strings.TrimRight(s, " ")
}

// RenderRollout is the table of a settled rollout: per node when it was assigned the revision, when it applied
// (or failed) it and, after a failure, when it ran the revision rolled back to again.
func RenderRollout(r *Rollout, nodes []string) string {
	var b strings.Builder
	order := strings.Join(r.Order, " -> ")
	what := r.SinceWhat
	if what == "" {
		what = "the change"
	}
	switch {
	case r.RolledBackTo != "":
		fmt.Fprintf(&b, "  %s (sequence %d) %s on %s; rolled back to %s, settled %.1fs after %s; order %s\n",
			ShortName(r.Revision), r.Sequence, r.Phase, r.FailedNode, ShortName(r.RolledBackTo), r.Duration().Seconds(), what, order)
	default:
		fmt.Fprintf(&b, "  %s (sequence %d) %s, %.1fs after %s; order %s\n", ShortName(r.Revision), r.Sequence, r.Phase,
			r.Duration().Seconds(), what, order)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	header := "    node\tassigned\tapplied\tfailed"
	if r.RolledBackTo != "" {
		header += "\tback on " + ShortName(r.RolledBackTo)
	}
	fmt.Fprintln(tw, header)
	for _, n := range nodes {
		assigned := firstEvent(r.Events, r.Hash, n, StateApplying)
		applied := firstEvent(r.Events, r.Hash, n, StateApplied)
		failed := firstEvent(r.Events, r.Hash, n, StateFailed)
		row := fmt.Sprintf("    %s\t%s\t%s\t%s", n, at(assigned, r.Since), at(applied, r.Since), at(failed, r.Since))
		if r.RolledBackTo != "" {
			back := time.Time{}
			for _, ev := range r.Events {
				if ev.Node == n && ev.Hash == r.RolledBackHash && ev.State == StateApplied && ev.At.After(firstTime(assigned, failed)) {
					back = ev.At
				}
			}
			row += "\t" + at(back, r.Since)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	return b.String()
}

func firstEvent(events []RolloutEvent, hash, node, state string) time.Time {
	for _, ev := range events {
		if ev.Hash == hash && ev.Node == node && ev.State == state {
			return ev.At
		}
	}
	return time.Time{}
}

func firstTime(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

func at(t, since time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return strings.TrimSpace(sinceStart(t, since))
}

// RenderMatrix is the connectivity matrix: rows are sources, columns destinations.
func RenderMatrix(m *Matrix) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	header := "  from \\ to"
	for _, w := range m.Workloads {
		header += "\t" + w.Name
	}
	fmt.Fprintln(tw, header)
	for i, from := range m.Workloads {
		row := fmt.Sprintf("  %s %s %s", from.Name, from.Node.Name, from.Addr)
		for j := range m.Workloads {
			row += "\t" + cellText(i, j, m)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	bridged, bok := m.Count(PathBridged)
	routed, rok := m.Count(PathRouted)
	blocked, xok := m.Count(PathBlocked)
	fmt.Fprintf(&b, "  bridged = same L2 network (VXLAN between nodes), routed = other network of the tenant (eBPF router,\n")
	fmt.Fprintf(&b, "  tenant's table), -- = other tenant: no route in the tenant's table, no echo reply. 3 echo requests per pair.\n")
	fmt.Fprintf(&b, "  %d/%d bridged and %d/%d routed pairs reach each other, %d/%d cross-tenant pairs are blocked;\n",
		bok, bridged, rok, routed, xok, blocked)
	fmt.Fprintf(&b, "  every path worked %.1fs after the workloads were plugged in (measurement %.1fs)\n",
		m.Converged.Seconds(), m.Measured.Seconds())
	return b.String()
}

func cellText(i, j int, m *Matrix) string {
	if i == j {
		return "."
	}
	c := m.Cells[i][j]
	switch {
	case c.AsExpected() && c.Path == PathBlocked:
		return "--"
	case c.AsExpected():
		return c.Path
	case c.Path == PathBlocked:
		return fmt.Sprintf("LEAK %d/%d", c.Received, c.Sent)
	default:
		return fmt.Sprintf("FAIL %d/%d", c.Received, c.Sent)
	}
}

// RenderCounters is the table of CounterQuery's result.
func RenderCounters(c *Counters) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    vrf\taction\tpackets")
	for _, s := range c.ByVRFAction {
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", s.Labels["vrf"], s.Labels["action"], strconv.FormatFloat(s.Value, 'f', -1, 64))
	}
	tw.Flush()
	return b.String()
}

// RenderForwarded is ForwardedQuery's result as a node x VRF table.
func RenderForwarded(c *Counters) string {
	var nodes, vrfs []string
	val := map[[2]string]float64{}
	for _, s := range c.ForwardedByNode {
		n, v := s.Labels["node"], s.Labels["vrf"]
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
		if !slices.Contains(vrfs, v) {
			vrfs = append(vrfs, v)
		}
		val[[2]string{n, v}] = s.Value
	}
	slices.Sort(nodes)
	slices.Sort(vrfs)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "    node\t%s\n", strings.Join(vrfs, "\t"))
	for _, n := range nodes {
		row := "    " + n
		for _, v := range vrfs {
			row += "\t" + strconv.FormatFloat(val[[2]string{n, v}], 'f', -1, 64)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	return b.String()
}
