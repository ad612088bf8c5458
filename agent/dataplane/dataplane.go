// Package dataplane is the node agent's handle on the eBPF router in one network namespace: it loads (or adopts)
// the pinned programs and maps through pkg/loader, keeps the router attached to the configured interfaces with
// the hook each one asks for - attaching once and never again while the hook stays the same, so link IDs are
// stable across config changes and restarts - applies table generations through pkg/maps and verifies against
// the kernel that every attachment is really there.
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
	"github.com/network-operator/network-operator/pkg/netnsrun"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
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
	Logger  *slog.Logger
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
	lo := loader.Options{PinDir: o.PinDir, NetNS: o.NetNS, Logger: o.Logger}
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

// Live reads the live tables, version and counters.
func (d *Dataplane) Live(ctx context.Context) (maps.Snapshot, error) { return d.set.Dump(ctx) }

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

// Ensure attaches the router to every interface of want with its hook. An interface attached already with a mode
// its hook allows keeps its attachment (same link); a link that was re-created since (new ifindex) is attached
// anew. It returns the status of every interface, and an error joining the failures.
func (d *Dataplane) Ensure(ctx context.Context, want []v1.DataPlaneInterface) ([]v1.InterfaceStatus, error) {
	current := map[string]loader.Attachment{}
	for _, a := range d.ldr.Attachments() {
		current[a.Interface] = a
	}
	hooks := map[string]v1.AttachHook{}
	var names []string
	for _, i := range want {
		if _, dup := hooks[i.Name]; !dup {
			names = append(names, i.Name) // several VLANs of one interface share the attachment
		}
		if hooks[i.Name] == "" || hooks[i.Name] == v1.HookAuto {
			hooks[i.Name] = cmpHook(i.Hook)
		}
	}
	slices.Sort(names)
	var errs []error
	out := make([]v1.InterfaceStatus, 0, len(names))
	for _, name := range names {
		st := v1.InterfaceStatus{Name: name, Mode: v1.AttachNone}
		a, err := d.ensure(ctx, name, hooks[name], current)
		if err != nil {
			st.Error = err.Error()
			errs = append(errs, err)
		} else {
			st.Mode = AttachMode(a.Mode)
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

func cmpHook(h v1.AttachHook) v1.AttachHook {
	if h == "" {
		return v1.HookAuto
	}
	return h
}

func (d *Dataplane) ensure(ctx context.Context, name string, hook v1.AttachHook, current map[string]loader.Attachment) (loader.Attachment, error) {
	link, err := d.links.LinkByName(name)
	if err != nil {
		return loader.Attachment{}, fmt.Errorf("attach to %s: %w", name, err)
	}
	if cur, ok := current[name]; ok {
		if cur.Ifindex != link.Attrs().Index {
			// The device was re-created under the same name: the old attachment went with the old device.
			d.log.Info("interface re-created, attaching anew", "interface", name, "old ifindex", cur.Ifindex, "ifindex", link.Attrs().Index)
			if err := d.ldr.Detach(ctx, name); err != nil {
				return loader.Attachment{}, fmt.Errorf("drop stale attachment of %s: %w", name, err)
			}
		} else if allows(hook, cur.Mode) {
			return d.ldr.Attach(ctx, name, cur.Mode) // keeps the link, swaps the program only if it differs
		}
	}
	modes := preferred(hook)
	var last error
	for _, m := range modes {
		a, err := d.ldr.Attach(ctx, name, m)
		if err == nil {
			return a, nil
		}
		last = err
		if !errors.Is(err, loader.ErrNotSupported) {
			break
		}
	}
	return loader.Attachment{}, last
}

// allows reports whether an attachment in mode satisfies hook.
func allows(hook v1.AttachHook, mode loader.Mode) bool {
	switch hook {
	case v1.HookTC:
		return mode == loader.ModeTCX || mode == loader.ModeTC
	case v1.HookXDP:
		return mode.IsXDP()
	default:
		return true
	}
}

// preferred lists the loader modes tried for a hook, best first.
func preferred(hook v1.AttachHook) []loader.Mode {
	switch hook {
	case v1.HookTC:
		return []loader.Mode{loader.ModeTCX, loader.ModeTC}
	case v1.HookXDP:
		return []loader.Mode{loader.ModeXDPNative, loader.ModeXDPGeneric}
	default:
		return []loader.Mode{loader.ModeAuto}
	}
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

// DetachExcept removes the router from every interface not in keep.
func (d *Dataplane) DetachExcept(ctx context.Context, keep []v1.DataPlaneInterface) error {
	want := map[string]bool{}
	for _, i := range keep {
		want[i.Name] = true
	}
	var errs []error
	for _, a := range d.ldr.Attachments() {
		if want[a.Interface] {
			continue
		}
		if err := d.ldr.Detach(ctx, a.Interface); err != nil {
			errs = append(errs, fmt.Errorf("detach from %s: %w", a.Interface, err))
		}
	}
	return errors.Join(errs...)
}

// ErrNotAttached marks an interface the router should run on but does not.
var ErrNotAttached = errors.New("router not attached")

// Verify checks with the kernel that the router runs on every interface of want: the device exists and is up,
// and our program is attached at its hook (tcx: in the ingress program list; XDP: the device's XDP program;
// legacy tc: the loader's record of its filter).
func (d *Dataplane) Verify(want []v1.DataPlaneInterface) error {
	atts := map[string]loader.Attachment{}
	for _, a := range d.ldr.Attachments() {
		atts[a.Interface] = a
	}
	seen := map[string]bool{}
	var errs []error
	for _, i := range want {
		if seen[i.Name] {
			continue
		}
		seen[i.Name] = true
		l, err := d.links.LinkByName(i.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("interface %s: %w", i.Name, err))
			continue
		}
		attrs := l.Attrs()
		if attrs.Flags&net.FlagUp == 0 {
			errs = append(errs, fmt.Errorf("interface %s is down", i.Name))
		}
		a, ok := atts[i.Name]
		if !ok || a.Ifindex != attrs.Index {
			errs = append(errs, fmt.Errorf("interface %s: %w", i.Name, ErrNotAttached))
			continue
		}
		if err := d.verifyHook(a, l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *Dataplane) verifyHook(a loader.Attachment, l netlink.Link) error {
	switch {
	case a.Mode == loader.ModeTCX:
		res, err := d.queryTCX(a.Ifindex)
		if err != nil {
			return fmt.Errorf("interface %s: query tcx programs: %w", a.Interface, err)
		}
		if !slices.Contains(res, a.ProgramID) {
			return fmt.Errorf("interface %s: program %d not in its tcx ingress list %v: %w", a.Interface, a.ProgramID, res, ErrNotAttached)
		}
	case a.Mode.IsXDP():
		x := l.Attrs().Xdp
		if x == nil || !x.Attached || ebpf.ProgramID(x.ProgId) != a.ProgramID {
			return fmt.Errorf("interface %s: XDP program is not ours (%d): %w", a.Interface, a.ProgramID, ErrNotAttached)
		}
	}
	return nil
}

// queryTCX lists the programs on an interface's tcx ingress; ifindexes are per namespace, so the query runs in
// the node's.
func (d *Dataplane) queryTCX(ifindex int) ([]ebpf.ProgramID, error) {
	var res *link.QueryResult
	err := netnsrun.Run(d.ns, func() error {
		var err error
		res, err = link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: ebpf.AttachTCXIngress})
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]ebpf.ProgramID, 0, len(res.Programs))
	for _, p := range res.Programs {
		ids = append(ids, p.ID)
	}
	return ids, nil
}
