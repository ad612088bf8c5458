// Package cleanup removes from a node everything the agent made, for an uninstall: the eBPF router's
// attachments and pins (pkg/loader), the netlink objects netconf owns (by their alias and route protocol), the
// state files, and, for a host FRR, the configuration the agent rendered. Foreign objects stay: only what carries
// our marks is touched.
//
// It plans first (netconf's removals, the mirror filters and tunnels, the pin directory, the files) and prints
// the plan; Apply then removes exactly that, in the order the kernel needs (detach before deleting the devices).
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/agent/mirror"
	"github.com/network-operator/network-operator/internal/agent/netconf"
)

// Options say what to clean.
type Options struct {
	// Netlink manages the node's namespace.
	Netlink *netconf.Manager
	// Mirror manages the traffic-mirroring filters and tunnels (nil: not cleaned).
	Mirror *mirror.Manager
	// PinDir is the router's bpffs directory; Uninstall detaches and removes it (nil: not cleaned).
	PinDir    string
	Uninstall func(ctx context.Context, pinDir string) error
	// Files are state files and directories of the agent (last good state, FRR state).
	Files []string
	// ResetFRR, when set, gives FRR an empty configuration (a host FRR; a pod's FRR goes with its pod).
	ResetFRR func(ctx context.Context) error
}

// Plan is what Apply removes.
type Plan struct {
	Netlink *netconf.Plan
	Mirror  *mirror.Plan // nil without Options.Mirror
	PinDir  string       // "" when absent
	Files   []string
	FRR     bool
}

// Empty reports whether there is nothing of ours left.
func (p *Plan) Empty() bool {
	return p.Netlink.Empty() && (p.Mirror == nil || p.Mirror.Empty()) && p.PinDir == "" && len(p.Files) == 0 && !p.FRR
}

func (p *Plan) String() string {
	var b strings.Builder
	if p.PinDir != "" {
		fmt.Fprintf(&b, "detach the eBPF router everywhere and remove %s\n", p.PinDir)
	}
	if p.Mirror != nil {
		for _, st := range p.Mirror.Steps() {
			fmt.Fprintf(&b, "mirror: %s\n", st)
		}
	}
	for _, ph := range []netconf.Phase{netconf.PhaseVRFs, netconf.PhaseInterfaces, netconf.PhaseRemovals} {
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
	// The empty spec: netconf plans the removal of every object it owns and of nothing else.
	np, err := o.Netlink.Plan(ctx, &v1.NodeNetworkConfigSpec{})
	if err != nil {
		return nil, fmt.Errorf("plan the netlink removals: %w", err)
	}
	p := &Plan{Netlink: np, FRR: o.ResetFRR != nil}
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

// Apply carries the plan out: FRR first (zebra withdraws what it advertised while the devices still exist), then
// the router is detached and unpinned, then the devices, routes and rules go, then the files.
func Apply(ctx context.Context, o Options, p *Plan, out io.Writer) error {
	if p.FRR {
		if err := o.ResetFRR(ctx); err != nil {
			return fmt.Errorf("reset FRR: %w", err)
		}
		fmt.Fprintln(out, "FRR: empty configuration loaded")
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
	for _, ph := range []netconf.Phase{netconf.PhaseVRFs, netconf.PhaseInterfaces, netconf.PhaseRemovals} {
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
