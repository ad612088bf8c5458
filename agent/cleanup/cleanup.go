// Package cleanup removes from a node everything the agent made, for an uninstall: the eBPF router's
// attachments and pins (pkg/loader), the netlink objects nodenet owns (by their alias and route protocol), what
// pod networking made for pods (podnet: interfaces, restored tuning, host veth ends and neighbour/FDB entries,
// records), the state files, and, for a host FRR, the configuration the agent rendered. Foreign objects stay: only
// what carries our marks is touched.
//
// It plans first (nodenet's removals, the mirror filters and tunnels, the pin directory, the files) and prints
// the plan; Apply then removes exactly that, in the order the kernel needs (detach before deleting the devices).
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/agent/mirror"
	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podnet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// FRRDaemonDir is the directory, next to the agent's state file, where FRR's own DaemonSet (the chart's
// frr.mode=daemonset) keeps its config and vty sockets on the host; an uninstall removes it with the state.
const FRRDaemonDir = "frr-daemon"

// Options say what to clean.
type Options struct {
	// Netlink manages the node's namespace.
	Netlink *nodenet.Manager
	// Mirror manages the traffic-mirroring filters and tunnels (nil: not cleaned).
	Mirror *mirror.Manager
	// PinDir is the router's bpffs directory; Uninstall detaches and removes it (nil: not cleaned).
	PinDir    string
	Uninstall func(ctx context.Context, pinDir string) error
	// Files are state files and directories of the agent (last good state, FRR state).
	Files []string
	// ResetFRR, when set, gives FRR an empty configuration (a host FRR; a pod's FRR goes with its pod).
	ResetFRR func(ctx context.Context) error
	// Pods removes what pod networking made (nil: it was off).
	Pods *podnet.Applier
	// PodNetns opens a pod's network namespace by UID; an error leaves the pod's own namespace as it is and
	// cleans the host side (nil: host side only).
	PodNetns func(ctx context.Context, uid string) (netns.NsHandle, error)
}

// PodPlan is the removal of one pod's networking, planned in its namespace (NS > 0) or on the host alone.
type PodPlan struct {
	Plan *podnet.Plan
	NS   netns.NsHandle
	// Note says why the pod's namespace was not reached ("" when it was).
	Note string
}

// Plan is what Apply removes.
type Plan struct {
	Netlink *nodenet.Plan
	Mirror  *mirror.Plan // nil without Options.Mirror
	PinDir  string       // "" when absent
	Files   []string
	FRR     bool
	Pods    []PodPlan
}

// Empty reports whether there is nothing of ours left.
func (p *Plan) Empty() bool {
	for _, pp := range p.Pods {
		if !pp.Plan.Empty() {
			return false
		}
	}
	return p.Netlink.Empty() && (p.Mirror == nil || p.Mirror.Empty()) && p.PinDir == "" && len(p.Files) == 0 && !p.FRR
}

// Close closes the pods' namespaces the plan holds.
func (p *Plan) Close() {
	for _, pp := range p.Pods {
		if pp.NS > 0 {
			pp.NS.Close()
		}
	}
}

func (p *Plan) String() string {
	var b strings.Builder
	if p.PinDir != "" {
		fmt.Fprintf(&b, "detach the eBPF router everywhere and remove %s\n", p.PinDir)
	}
	for _, pp := range p.Pods {
		if pp.Note != "" {
			fmt.Fprintf(&b, "pod %s: %s\n", pp.Plan.Desired.Pod, pp.Note)
		}
		if !pp.Plan.Empty() {
			b.WriteString(pp.Plan.String())
		}
	}
	if p.Mirror != nil {
		for _, st := range p.Mirror.Steps() {
			fmt.Fprintf(&b, "mirror: %s\n", st)
		}
	}
	for _, ph := range []nodenet.Phase{nodenet.PhaseVRFs, nodenet.PhaseInterfaces, nodenet.PhaseRemovals} {
		for _, a := range p.Netlink.PhaseActions(ph) {
			fmt.Fprintf(&b, "netlink: %s\n", a)
		}
	}
	for _, f := range p.Files {
		fmt.Fprintf(&b, "remove %s\n", f)
	}
	if p.FRR {
		b.WriteString("FRR: reload an empty configuration\n")
	}
	if b.Len() == 0 {
		b.WriteString("nothing of ours on this node\n")
	}
	return b.String()
}

// PlanCleanup observes the node and plans the removal of everything of ours.
func PlanCleanup(ctx context.Context, o Options) (*Plan, error) {
	// The empty spec: nodenet plans the removal of every object it owns and of nothing else.
	np, err := o.Netlink.Plan(ctx, &v1.NodeNetworkConfigSpec{})
	if err != nil {
		return nil, fmt.Errorf("plan the netlink removals: %w", err)
	}
	p := &Plan{Netlink: np, FRR: o.ResetFRR != nil}
	if o.Pods != nil {
		if p.Pods, err = planPods(ctx, o); err != nil {
			return nil, err
		}
	}
	if o.Mirror != nil {
		// No tunnels and no rules wanted: the removal of every filter and tunnel the agent marked as its own.
		if p.Mirror, err = o.Mirror.PlanFor(ctx, nil, nil); err != nil {
			return nil, fmt.Errorf("plan the mirror removals: %w", err)
		}
	}
	if o.PinDir != "" {
		if _, err := os.Stat(o.PinDir); err == nil {
			p.PinDir = o.PinDir
		}
	}
	for _, f := range o.Files {
		if _, err := os.Lstat(f); err == nil {
			p.Files = append(p.Files, f)
		}
	}
	return p, nil
}

// planPods plans, for every pod the agent has something of, the removal of all of it: in the pod's namespace
// while its sandbox exists, else on the host.
func planPods(ctx context.Context, o Options) ([]PodPlan, error) {
	uids, err := o.Pods.Pods(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the pod networking removals: %w", err)
	}
	var out []PodPlan
	for _, uid := range uids {
		pp := PodPlan{}
		if o.PodNetns != nil {
			if pp.NS, err = o.PodNetns(ctx, uid); err != nil {
				pp.NS, pp.Note = 0, fmt.Sprintf("the pod's namespace is not reached (%v): its host side only", err)
			}
		}
		if pp.Plan, err = o.Pods.Plan(ctx, podnet.Input{Pod: podnet.Pod{UID: uid}}, pp.NS); err != nil {
			(&Plan{Pods: append(out, pp)}).Close()
			return nil, fmt.Errorf("plan the pod networking removals: %w", err)
		}
		out = append(out, pp)
	}
	return out, nil
}

// Apply carries the plan out: FRR first (zebra withdraws what it advertised while the devices still exist), then
// pods' networking (while the bridges they are on exist), then the router is detached and unpinned, then the
// devices, routes and rules go, then the files.
func Apply(ctx context.Context, o Options, p *Plan, out io.Writer) error {
	if p.FRR {
		if err := o.ResetFRR(ctx); err != nil {
			return fmt.Errorf("reset FRR: %w", err)
		}
		fmt.Fprintln(out, "FRR: empty configuration loaded")
	}
	for _, pp := range p.Pods {
		if pp.Plan.Empty() {
			continue
		}
		if _, err := o.Pods.Apply(ctx, pp.Plan, pp.NS); err != nil {
			return fmt.Errorf("pod networking removals: %w", err)
		}
		fmt.Fprintf(out, "pod %s: %d actions of pod networking done\n", pp.Plan.Desired.Pod, len(pp.Plan.Actions))
	}
	if p.PinDir != "" {
		if err := o.Uninstall(ctx, p.PinDir); err != nil {
			return err
		}
		fmt.Fprintf(out, "eBPF router: detached, %s removed\n", p.PinDir)
	}
	var errs []error
	// Mirror filters before the devices they sit on and mirror into.
	if p.Mirror != nil && !p.Mirror.Empty() {
		if _, err := o.Mirror.Apply(ctx, p.Mirror); err != nil {
			errs = append(errs, fmt.Errorf("mirror removals: %w", err))
		} else {
			fmt.Fprintf(out, "mirror: %d filters and %d tunnels of ours removed\n", len(p.Mirror.DelRules), len(p.Mirror.DelTunnels))
		}
	}
	for _, ph := range []nodenet.Phase{nodenet.PhaseVRFs, nodenet.PhaseInterfaces, nodenet.PhaseRemovals} {
		if len(p.Netlink.PhaseActions(ph)) == 0 {
			continue
		}
		if _, err := o.Netlink.Apply(ctx, p.Netlink, ph); err != nil {
			errs = append(errs, fmt.Errorf("netlink removals: %w", err))
		}
	}
	if n := len(p.Netlink.Actions); n > 0 && len(errs) == 0 {
		fmt.Fprintf(out, "netlink: %d objects of ours removed\n", n)
	}
	for _, f := range p.Files {
		if err := os.RemoveAll(f); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", f, err))
		}
	}
	if len(p.Files) > 0 {
		fmt.Fprintf(out, "state: %s removed\n", strings.Join(p.Files, ", "))
	}
	return errors.Join(errs...)
}
