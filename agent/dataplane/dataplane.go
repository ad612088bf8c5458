// Package dataplane is the node agent's handle on the eBPF router in one network namespace: it loads (or adopts)
// the pinned programs and maps through pkg/loader, keeps the router attached to the configured interfaces with
// the hook each one asks for - attaching once and never again while the hook stays the same, so link IDs are
// stable across config changes and restarts - applies table generations through pkg/maps and verifies against
// the kernel that every attachment is really there.
//
// Attachments follow the house pattern of pure planners with thin I/O shells: the caller observes (Attachments
// or a View's, Ifindexes), PlanAttach decides, and Ensure and Detach execute exactly the plan's steps, so a dry
// run prints what the apply does.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sync/errgroup"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Options configure Open.
type Options struct {
	// PinDir is the loader's bpffs directory (default loader.DefaultPinDir).
	PinDir string
	// NetNS is the node's namespace (0: the caller's); Links must be a netlink handle of the same namespace.
	NetNS netns.NsHandle
	Links *netlink.Handle
	// Rebuild returns the tables and revision to fill new maps with when an upgrade changed a map definition
	// (the loader then migrates); nil refuses such an upgrade.
	Rebuild func(ctx context.Context) (maps.Tables, string, error)
	// LegacyTC: the router's tc attachments are cls_bpf filters, not tcx links (loader.Options.LegacyTC).
	LegacyTC bool
	Logger   *slog.Logger
}

// Dataplane owns the loader and the map set of one router.
type Dataplane struct {
	ldr   *loader.Loader
	set   *maps.Set
	ns    netns.NsHandle
	links *netlink.Handle
	log   *slog.Logger
}

// Open loads the router, adopting pinned maps, programs and attachments left by an earlier agent (nothing is
// detached, no table is reset: traffic keeps flowing).
func Open(ctx context.Context, o Options) (*Dataplane, error) {
	if o.Links == nil {
		return nil, errors.New("dataplane: Options.Links is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lo := loader.Options{PinDir: o.PinDir, NetNS: o.NetNS, LegacyTC: o.LegacyTC, Logger: o.Logger}
	if o.Rebuild != nil {
		lo.Rebuild = loader.RebuildTables(o.Rebuild)
	}
	ldr, err := loader.Load(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("load eBPF router: %w", err)
	}
	rm, err := ldr.RouterMaps()
	if err != nil {
		ldr.Close()
		return nil, fmt.Errorf("router maps: %w", err)
	}
	set, err := maps.New(rm)
	if err != nil {
		ldr.Close()
		return nil, fmt.Errorf("open router maps: %w", err)
	}
	return &Dataplane{ldr: ldr, set: set, ns: o.NetNS, links: o.Links, log: o.Logger}, nil
}

// Close releases file descriptors; pins and attachments stay for the next agent.
func (d *Dataplane) Close() error {
	return errors.Join(d.set.Close(), d.ldr.Close())
}

// LoadReport says what Open adopted or created.
func (d *Dataplane) LoadReport() loader.LoadReport { return d.ldr.Report() }

// Maps is the router's table set.
func (d *Dataplane) Maps() *maps.Set { return d.set }

// Live reads the live tables and version (not the counters: see Counters).
func (d *Dataplane) Live(ctx context.Context) (maps.Snapshot, error) { return d.set.DumpTables(ctx) }

// Counters reads the per-VRF counters summed over CPUs.
func (d *Dataplane) Counters() ([]maps.VRFCounters, error) { return d.set.Counters() }

// Apply writes one table generation (a no-op when tables and revision are live already).
func (d *Dataplane) Apply(ctx context.Context, t maps.Tables, revision string) (maps.Report, error) {
	return d.set.Apply(ctx, t, revision)
}

// Version reads the live generation back from the version map.
func (d *Dataplane) Version() (maps.Version, error) { return d.set.Version() }

// Attachments lists the router's attachments.
func (d *Dataplane) Attachments() []loader.Attachment { return d.ldr.Attachments() }

// attachWorkers bounds the attach (and detach) steps Ensure (and Detach) run at once. A tcx attach or detach
// holds the kernel's rtnl lock across an RCU grace period (~12 ms here), so parallel steps cannot share grace
// periods: they only let one step's own work (lookups, pinning) run while another waits in the kernel (300
// bridges: loader.Attach ~13.5 -> ~12.5 ms a step with 4 workers, no better with 16 or 64; legacy tc, which
// does not wait, 0.7 -> 0.4 ms). More workers only add OS threads blocked on rtnl, each counted in the load
// average.
const attachWorkers = 4

// Ensure executes the attach steps of a plan (AttachPlan.Attach, from PlanAttach) and nothing else: attach,
// move and reattach try the step's modes in order (the loader replaces the attachment of a re-created device
// and moves hooks make-before-break), keep calls nothing. Steps run in parallel (attachWorkers; the loader
// serialises steps of one interface). It returns the status of every interface in the order of steps, and an
// error joining the failures in that order; every step is tried.
func (d *Dataplane) Ensure(ctx context.Context, steps []AttachStep) ([]v1.InterfaceStatus, error) {
	out := make([]v1.InterfaceStatus, len(steps))
	errs := forEachStep(steps, func(i int, s AttachStep) error {
		out[i] = v1.InterfaceStatus{Name: s.Interface, Mode: v1.AttachNone}
		mode, err := d.attach(ctx, s)
		if err != nil {
			out[i].Error = err.Error()
			return err
		}
		out[i].Mode = AttachMode(mode)
		return nil
	})
	return out, errors.Join(errs...)
}

// forEachStep calls fn for every step, attachWorkers at a time, and returns fn's errors in step order. fn
// sees the context through its closure: a cancelled one fails the steps not yet done (the loader checks it).
func forEachStep(steps []AttachStep, fn func(i int, s AttachStep) error) []error {
	errs := make([]error, len(steps))
	var g errgroup.Group
	g.SetLimit(attachWorkers)
	for i, s := range steps {
		g.Go(func() error {
			errs[i] = fn(i, s)
			return nil
		})
	}
	_ = g.Wait() // the goroutines return nil: their errors are in errs
	return errs
}

func (d *Dataplane) attach(ctx context.Context, s AttachStep) (loader.Mode, error) {
	switch s.Action {
	case ActionKeep:
		return s.From, nil
	case ActionAttach, ActionMove, ActionReattach:
	default:
		return "", fmt.Errorf("%s %s: not an attach step", s.Action, s.Interface)
	}
	if len(s.Modes) == 0 {
		return "", fmt.Errorf("%s %s: the step names no mode to try", s.Action, s.Interface)
	}
	d.log.Info("attaching router", "interface", s.Interface, "action", s.Action, "hook", s.Hook, "from", s.From, "reason", s.Reason)
	var last error
	for _, m := range s.Modes {
		a, err := d.ldr.Attach(ctx, s.Interface, m)
		if err == nil {
			return a.Mode, nil
		}
		last = err
		if !errors.Is(err, loader.ErrNotSupported) {
			break
		}
	}
	return "", fmt.Errorf("%s step of %s (hook %s): %w", s.Action, s.Interface, s.Hook, last)
}

// AttachMode names a loader mode in the API's terms.
func AttachMode(m loader.Mode) v1.AttachMode {
	switch m {
	case loader.ModeTCX:
		return v1.AttachTCX
	case loader.ModeTC:
		return v1.AttachTCLegacy
	case loader.ModeXDPNative:
		return v1.AttachXDPNative
	case loader.ModeXDPGeneric:
		return v1.AttachXDPGeneric
	}
	return v1.AttachNone
}

// Detach executes the detach steps of a plan (AttachPlan.Detach) and nothing else, in parallel like Ensure,
// and returns an error joining the failures in step order.
func (d *Dataplane) Detach(ctx context.Context, steps []AttachStep) error {
	errs := forEachStep(steps, func(_ int, s AttachStep) error {
		if s.Action != ActionDetach {
			return fmt.Errorf("%s %s: not a detach step", s.Action, s.Interface)
		}
		if err := d.ldr.Detach(ctx, s.Interface); err != nil {
			return fmt.Errorf("detach from %s: %w", s.Interface, err)
		}
		return nil
	})
	return errors.Join(errs...)
}

// ErrNotAttached marks an interface the router should run on but does not.
var ErrNotAttached = errors.New("router not attached")

// LinkLookup finds a device of the node's namespace by name (*netlink.Handle, or an observation of the node).
type LinkLookup interface {
	LinkByName(name string) (netlink.Link, error)
}

// Verify checks that the router runs on every interface of want: the device exists and is up (as links, nil:
// the kernel, tells: the agent passes its current observation of the node, which a change notification would
// have renewed), and our program is attached at its hook, asked from the kernel (tcx: in the ingress program
// list; XDP: the device's XDP program, read from the kernel; legacy tc: the loader's record of its filter). The
// tcx lists are read in one visit of the node's namespace.
func (d *Dataplane) Verify(want []v1.DataPlaneInterface, links LinkLookup) error {
	observed := links != nil
	if !observed {
		links = d.links
	}
	atts := map[string]loader.Attachment{}
	for _, a := range d.ldr.Attachments() {
		atts[a.Interface] = a
	}
	seen := map[string]bool{}
	var errs []error
	var tcx []loader.Attachment
	for _, i := range want {
		if seen[i.Name] {
			continue
		}
		seen[i.Name] = true
		l, err := links.LinkByName(i.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("interface %s: %w", i.Name, err))
			continue
		}
		attrs := l.Attrs()
		if attrs.Flags&net.FlagUp == 0 {
			errs = append(errs, fmt.Errorf("interface %s is down", i.Name))
		}
		a, ok := atts[i.Name]
		if !ok || a.Defunct(attrs.Index) {
			errs = append(errs, fmt.Errorf("interface %s: %w", i.Name, ErrNotAttached))
			continue
		}
		switch {
		case a.Mode == loader.ModeTCX:
			tcx = append(tcx, a)
		case a.Mode.IsXDP():
			if observed {
				if l, err = d.links.LinkByName(i.Name); err != nil { // an observation has no XDP state
					errs = append(errs, fmt.Errorf("interface %s: %w", i.Name, err))
					continue
				}
				attrs = l.Attrs()
			}
			if x := attrs.Xdp; x == nil || !x.Attached || ebpf.ProgramID(x.ProgId) != a.ProgramID {
				errs = append(errs, fmt.Errorf("interface %s: XDP program is not ours (%d): %w", a.Interface, a.ProgramID, ErrNotAttached))
			}
		}
	}
	return errors.Join(append(errs, d.verifyTCX(tcx)...)...)
}

// verifyTCX checks that each attachment's program is in its interface's tcx ingress list; ifindexes are per
// namespace, so the queries run in the node's, all in one visit.
func (d *Dataplane) verifyTCX(atts []loader.Attachment) []error {
	var errs []error
	err := netnsrun.Run(d.ns, func() error {
		for _, a := range atts {
			res, err := link.QueryPrograms(link.QueryOptions{Target: a.Ifindex, Attach: ebpf.AttachTCXIngress})
			if err != nil {
				errs = append(errs, fmt.Errorf("interface %s: query tcx programs: %w", a.Interface, err))
				continue
			}
			if !slices.ContainsFunc(res.Programs, func(p link.AttachedProgram) bool { return p.ID == a.ProgramID }) {
				ids := make([]ebpf.ProgramID, 0, len(res.Programs))
				for _, p := range res.Programs {
					ids = append(ids, p.ID)
				}
				errs = append(errs, fmt.Errorf("interface %s: program %d not in its tcx ingress list %v: %w", a.Interface, a.ProgramID, ids, ErrNotAttached))
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("query tcx programs in the node's namespace: %w", err))
	}
	return errs
}
