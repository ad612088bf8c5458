package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/pkg/netnsrun"

	"github.com/network-operator/network-operator/bpf"
)

const (
	// DefaultPinDir is where maps, programs and links are pinned.
	DefaultPinDir = "/sys/fs/bpf/network-operator"
	// DefaultTCProgram and DefaultXDPProgram are the program names of the
	// router collection (bpf/).
	DefaultTCProgram  = "tc_router"
	DefaultXDPProgram = "xdp_router"
	// DefaultOwner prefixes the name of every cls_bpf filter we add.
	DefaultOwner = "network-operator"
	// DefaultTCPriority and DefaultTCHandle place our cls_bpf filter on
	// clsact ingress; chosen to be unlikely to collide with hand-made
	// filters (which mostly use prio 1..49152 with handle 1).
	DefaultTCPriority uint16 = 0xc0de
	DefaultTCHandle   uint32 = 0x4e4f
)

// Options configure Load. The zero value is usable except for Spec (see
// there).
type Options struct {
	// Spec is the collection to load; nil means the embedded router
	// (bpf.LoadRouter). It is copied, never modified. Tests inject their
	// own to simulate upgrades.
	Spec *ebpf.CollectionSpec

	// PinDir is the bpffs directory owned by this loader. Default
	// DefaultPinDir. Its sibling PinDir+"-staging" is used during
	// migrations.
	PinDir string

	// TCProgram and XDPProgram name the programs attached at the tc and XDP
	// hooks. Defaults DefaultTCProgram and DefaultXDPProgram. The XDP
	// program may be absent from the spec (then XDP modes are unavailable).
	TCProgram  string
	XDPProgram string

	// Owner prefixes the name of our cls_bpf filters ("<Owner>:<program>"),
	// which is how legacy tc attachments are recognised as ours.
	Owner string
	// TCPriority and TCHandle place our cls_bpf filter on clsact ingress.
	TCPriority uint16
	TCHandle   uint32

	// NetNS, when set (> 0), is the network namespace every interface
	// operation runs in. Zero means the calling thread's namespace.
	NetNS netns.NsHandle

	// Overrides replace the driver table for ModeAuto, per interface name.
	// An override is honoured strictly (no silent fallback).
	Overrides map[string]Mode

	// DriverTable maps a driver name to the hook ModeAuto prefers and the
	// reason shown in Attachment.Reason. Default DriverMode.
	DriverTable func(driver string) (Mode, string)

	// XDPFallbackToTC makes an XDP attach (explicit or chosen by auto) fall
	// back to tc when another owner's XDP program occupies the interface.
	// Without it such an attach fails with a *ForeignXDPError.
	XDPFallbackToTC bool

	// LegacyTC attaches at the tc hook with legacy tc (clsact + cls_bpf)
	// where tcx would be used: a tcx attach or detach waits an RCU grace
	// period under the rtnl lock (~12 ms a device here), a cls_bpf filter
	// does not (~0.5 ms), which counts on a node that attaches to thousands
	// of devices at once. Existing tcx attachments are kept.
	LegacyTC bool

	// Rebuild refills the config tables of a freshly created collection
	// from desired state. It is called only when pinned maps are
	// incompatible with Spec (an upgrade changed a map definition), after
	// the new collection is loaded and before any attachment switches to
	// it. Without it such a Load fails with ErrRebuildRequired and changes
	// nothing.
	Rebuild func(ctx context.Context, coll *ebpf.Collection) error

	// Logger receives one line per state change. Default: discard.
	Logger *slog.Logger

	hooks testHooks
}

// testHooks let tests observe and fail the migration between its steps.
type testHooks struct {
	// beforePinSwap runs after every attachment has switched to the new
	// program and before the new pins replace the old ones.
	beforePinSwap func() error
}

func (o Options) withDefaults() (Options, error) {
	if o.Spec == nil {
		spec, err := bpf.RouterSpec()
		if err != nil {
			return o, fmt.Errorf("Options.Spec: load embedded router: %w", err)
		}
		o.Spec = spec
	}
	o, err := o.withLayoutDefaults()
	if err != nil {
		return o, err
	}
	for ifname, m := range o.Overrides {
		if !m.valid() {
			return o, fmt.Errorf("Options.Overrides[%q] = %q: want one of %v", ifname, m, Modes())
		}
	}
	if o.DriverTable == nil {
		o.DriverTable = DriverMode
	}

	tcProg, ok := o.Spec.Programs[o.TCProgram]
	if !ok {
		return o, fmt.Errorf("Options.TCProgram %q: %w", o.TCProgram, ErrNoProgram)
	}
	if tcProg.Type != ebpf.SchedCLS {
		return o, fmt.Errorf("Options.TCProgram %q: type %s, want %s", o.TCProgram, tcProg.Type, ebpf.SchedCLS)
	}
	if xdp, ok := o.Spec.Programs[o.XDPProgram]; ok && xdp.Type != ebpf.XDP {
		return o, fmt.Errorf("Options.XDPProgram %q: type %s, want %s", o.XDPProgram, xdp.Type, ebpf.XDP)
	}
	return o, nil
}

// withLayoutDefaults fills in what names our objects (pin layout, program names, filter owner and place) and
// the logger: all Observe needs, which loads no spec.
func (o Options) withLayoutDefaults() (Options, error) {
	if o.PinDir == "" {
		o.PinDir = DefaultPinDir
	}
	o.PinDir = filepath.Clean(o.PinDir)
	if !filepath.IsAbs(o.PinDir) || o.PinDir == "/" {
		return o, fmt.Errorf("Options.PinDir %q: want an absolute directory below a bpffs mount", o.PinDir)
	}
	if o.TCProgram == "" {
		o.TCProgram = DefaultTCProgram
	}
	if o.XDPProgram == "" {
		o.XDPProgram = DefaultXDPProgram
	}
	if o.Owner == "" {
		o.Owner = DefaultOwner
	}
	if strings.Contains(o.Owner, ":") {
		return o, fmt.Errorf("Options.Owner %q: must not contain ':'", o.Owner)
	}
	if o.TCPriority == 0 {
		o.TCPriority = DefaultTCPriority
	}
	if o.TCHandle == 0 {
		o.TCHandle = DefaultTCHandle
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// LoadReport says what Load found and did.
type LoadReport struct {
	PinDir string
	// Created maps were not pinned before; Reused maps were adopted.
	Created []string
	Reused  []string
	// Migrated lists the incompatible pinned maps that forced a migration
	// (every map was then created afresh and the tables rebuilt).
	Migrated []string
	// ProgramsReplaced lists programs whose pin now holds a new version.
	ProgramsReplaced []string
	// Adopted counts attachments found from an earlier process; Updated
	// counts attachments switched to a new program in place.
	Adopted int
	Updated int
}

// Loader owns one loaded collection, its pins and its attachments.
// Its methods are safe for concurrent use. Attach and Detach of different
// interfaces run in parallel: a tcx attach or detach holds the kernel's rtnl
// lock across an RCU grace period (~12 ms here), so a caller doing many can
// overlap its own work with another's wait (dataplane.Ensure does).
//
// Locks, taken in this order: ops (shared by Attach and Detach, exclusive
// for Close, Remove and DetachAll, which touch every attachment), the
// interface's lock in ifaces (one operation per interface at a time), mu
// (the attachment registry, report and collection; never held across a
// kernel call by Attach and Detach). Fields of an attachment registered in
// atts are written under mu; its link handle only by the holder of its
// interface's lock or of ops exclusively.
type Loader struct {
	ops    sync.RWMutex
	ifaces ifaceLocks
	mu     sync.Mutex
	opts   Options
	spec   *ebpf.CollectionSpec // copy with the pinning we apply
	coll   *ebpf.Collection
	atts   map[string]*attachment // by interface name
	report LoadReport
	closed bool
}

// Load loads the collection and pins it under opts.PinDir. Maps pinned by
// an earlier process are reused when compatible; attachments it left
// pinned (tcx / XDP links) or installed (our cls_bpf filters) are adopted,
// never re-created, and switched in place to the new program when it
// differs. Incompatible pinned maps trigger a migration (see the package
// documentation and Options.Rebuild).
func Load(ctx context.Context, opts Options) (*Loader, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	l := &Loader{
		ifaces: ifaceLocks{held: map[string]*ifaceLock{}},
		opts:   opts,
		spec:   pinnedSpec(opts.Spec),
		atts:   map[string]*attachment{},
		report: LoadReport{PinDir: opts.PinDir},
	}
	err = netnsrun.Run(opts.NetNS, func() error { return l.load(ctx) })
	if err != nil {
		l.closeHandles()
		return nil, fmt.Errorf("load into %s: %w", opts.PinDir, err)
	}
	return l, nil
}

// pinnedSpec copies spec and marks every map except the internal ones
// (.rodata, .data, .bss, ...: per program instance) as pinned by name.
func pinnedSpec(spec *ebpf.CollectionSpec) *ebpf.CollectionSpec {
	cp := spec.Copy()
	for _, m := range cp.Maps {
		if pinnable(m) {
			m.Pinning = ebpf.PinByName
		} else {
			m.Pinning = ebpf.PinNone
		}
	}
	return cp
}

func pinnable(m *ebpf.MapSpec) bool {
	return m.Name != "" && !strings.HasPrefix(m.Name, ".")
}

func (l *Loader) load(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// A staging directory is only left behind by a migration that died;
	// whichever side of the exchange it holds, the live dir is consistent.
	if err := os.RemoveAll(l.stagingDir()); err != nil {
		return fmt.Errorf("remove stale staging dir: %w", err)
	}
	for _, dir := range l.pinDirs() {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create pin dir: %w", err)
		}
	}

	existing, incompatible, err := l.checkPinnedMaps()
	if err != nil {
		return err
	}
	if err := l.discover(); err != nil {
		return fmt.Errorf("discover attachments: %w", err)
	}
	if len(incompatible) == 0 {
		coll, err := ebpf.NewCollectionWithOptions(l.spec, ebpf.CollectionOptions{
			Maps: ebpf.MapOptions{PinPath: l.opts.PinDir},
		})
		switch {
		case errors.Is(err, ebpf.ErrMapIncompatible):
			// Pins changed under us since the check: migrate.
			if _, incompatible, err = l.checkPinnedMaps(); err != nil {
				return err
			}
			if len(incompatible) == 0 {
				incompatible = []string{"(changed during load)"}
			}
		case err != nil:
			return asNotSupported(fmt.Errorf("load collection: %w", err))
		default:
			for name, m := range l.spec.Maps {
				if !pinnable(m) {
					continue
				}
				if existing[m.Name] {
					l.report.Reused = append(l.report.Reused, name)
				} else {
					l.report.Created = append(l.report.Created, name)
				}
			}
			sort.Strings(l.report.Reused)
			sort.Strings(l.report.Created)
			return l.adopt(ctx, coll)
		}
	}
	return l.migrate(ctx, incompatible)
}

// checkPinnedMaps reports which of the spec's maps are pinned already and
// which of those are incompatible with the spec.
func (l *Loader) checkPinnedMaps() (existing map[string]bool, incompatible []string, err error) {
	existing = map[string]bool{}
	for _, ms := range l.spec.Maps {
		if !pinnable(ms) {
			continue
		}
		m, err := ebpf.LoadPinnedMap(l.mapPin(ms.Name), nil)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("open pinned map %s: %w", ms.Name, err)
		}
		existing[ms.Name] = true
		cerr := ms.Compatible(m)
		m.Close()
		switch {
		case errors.Is(cerr, ebpf.ErrMapIncompatible):
			l.opts.Logger.Info("pinned map incompatible", "map", ms.Name, "diff", cerr.Error())
			incompatible = append(incompatible, ms.Name)
		case cerr != nil:
			return nil, nil, fmt.Errorf("check pinned map %s: %w", ms.Name, cerr)
		}
	}
	sort.Strings(incompatible)
	return existing, incompatible, nil
}

// adopt finishes a compatible load: programs identical to the pinned ones
// are replaced by the pinned ones (so attachments keep running them), the
// attachments are switched to the chosen programs, then program pins are
// replaced.
func (l *Loader) adopt(ctx context.Context, coll *ebpf.Collection) error {
	var replace []string
	for name, fresh := range coll.Programs {
		old, err := ebpf.LoadPinnedProgram(l.progPin(name), nil)
		if errors.Is(err, os.ErrNotExist) {
			replace = append(replace, name)
			continue
		}
		if err != nil {
			coll.Close()
			return fmt.Errorf("open pinned program %s: %w", name, err)
		}
		same, err := sameProgram(old, fresh)
		if err != nil {
			old.Close()
			coll.Close()
			return fmt.Errorf("compare program %s with its pin: %w", name, err)
		}
		if same {
			coll.Programs[name] = old
			fresh.Close()
		} else {
			old.Close()
			replace = append(replace, name)
		}
	}
	if err := ctx.Err(); err != nil {
		coll.Close()
		return err
	}
	undo, err := l.retargetAll(coll)
	if err != nil {
		coll.Close()
		return err
	}
	sort.Strings(replace)
	for _, name := range replace {
		np, err := repinProgram(coll.Programs[name], l.progPin(name))
		if err != nil {
			undo()
			coll.Close()
			return fmt.Errorf("pin program %s: %w", name, err)
		}
		coll.Programs[name] = np
	}
	l.report.ProgramsReplaced = replace
	l.coll = coll
	l.opts.Logger.Info("loaded", "pinDir", l.opts.PinDir, "created", l.report.Created,
		"reused", l.report.Reused, "programsReplaced", replace, "adopted", l.report.Adopted, "updated", l.report.Updated)
	return nil
}

// migrate replaces an incompatible pinned collection: fresh maps, tables
// rebuilt by the caller, every attachment switched atomically to the new
// program, and only then the new pins swapped in with one rename.
func (l *Loader) migrate(ctx context.Context, incompatible []string) error {
	if l.opts.Rebuild == nil {
		return &IncompatibleMapsError{Maps: incompatible, Err: ErrRebuildRequired}
	}
	fresh := l.spec.Copy()
	for _, m := range fresh.Maps {
		m.Pinning = ebpf.PinNone
	}
	coll, err := ebpf.NewCollectionWithOptions(fresh, ebpf.CollectionOptions{})
	if err != nil {
		return asNotSupported(fmt.Errorf("load new collection for migration: %w", err))
	}
	if err := l.opts.Rebuild(ctx, coll); err != nil {
		coll.Close()
		return fmt.Errorf("rebuild tables of new collection: %w", err)
	}
	if err := ctx.Err(); err != nil {
		coll.Close()
		return err
	}
	undo, err := l.retargetAll(coll)
	if err != nil {
		coll.Close()
		return err
	}
	if hook := l.opts.hooks.beforePinSwap; hook != nil {
		if err := hook(); err != nil {
			undo()
			coll.Close()
			return fmt.Errorf("before pin swap: %w", err)
		}
	}
	if err := l.swapPins(coll); err != nil {
		undo()
		coll.Close()
		return err
	}
	l.coll = coll
	l.report.Migrated = incompatible
	for name, m := range l.spec.Maps {
		if pinnable(m) {
			l.report.Created = append(l.report.Created, name)
		}
	}
	sort.Strings(l.report.Created)
	for name := range coll.Programs {
		l.report.ProgramsReplaced = append(l.report.ProgramsReplaced, name)
	}
	sort.Strings(l.report.ProgramsReplaced)
	l.opts.Logger.Info("migrated", "pinDir", l.opts.PinDir, "incompatible", incompatible,
		"attachments", len(l.atts), "updated", l.report.Updated)
	return nil
}

// Report returns what Load found and did.
func (l *Loader) Report() LoadReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.report
	r.Created = slices.Clone(r.Created)
	r.Reused = slices.Clone(r.Reused)
	r.Migrated = slices.Clone(r.Migrated)
	r.ProgramsReplaced = slices.Clone(r.ProgramsReplaced)
	return r
}

// Collection returns the loaded collection (maps and programs). It stays
// owned by the Loader: do not close it; it is invalid after Close.
func (l *Loader) Collection() *ebpf.Collection {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.coll
}

// Map returns the named map, or nil.
func (l *Loader) Map(name string) *ebpf.Map {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.coll == nil {
		return nil
	}
	return l.coll.Maps[name]
}

// Program returns the named program, or nil.
func (l *Loader) Program(name string) *ebpf.Program {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.coll == nil {
		return nil
	}
	return l.coll.Programs[name]
}

// PinDir returns the directory this loader pins into.
func (l *Loader) PinDir() string { return l.opts.PinDir }

// MapPinPath returns where the named map is pinned.
func (l *Loader) MapPinPath(name string) string { return l.mapPin(name) }

// Close releases every file descriptor and leaves all pinned state and
// attachments in place, so that the next Load adopts them.
func (l *Loader) Close() error {
	l.ops.Lock()
	defer l.ops.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.closeHandles()
	return nil
}

func (l *Loader) closeHandles() {
	for _, a := range l.atts {
		if a.lnk != nil {
			a.lnk.Close()
			a.lnk = nil
		}
	}
	if l.coll != nil {
		l.coll.Close()
		l.coll = nil
	}
}

// Remove detaches everything we own, unpins maps, programs and links and
// removes the pin directories (unless something foreign was put in them),
// then closes the Loader.
func (l *Loader) Remove(ctx context.Context) error {
	l.ops.Lock()
	defer l.ops.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	var errs []error
	if err := netnsrun.Run(l.opts.NetNS, func() error { return l.detachAll(ctx) }); err != nil {
		errs = append(errs, err)
	}
	l.closed = true
	l.closeHandles()
	for _, ms := range l.spec.Maps {
		if pinnable(ms) {
			errs = append(errs, removePin(l.mapPin(ms.Name)))
		}
	}
	for name := range l.spec.Programs {
		errs = append(errs, removePin(l.progPin(name)))
	}
	dirs := l.pinDirs()
	slices.Reverse(dirs)
	for _, dir := range dirs {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.opts.Logger.Warn("pin dir left in place", "dir", dir, "err", err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove %s: %w", l.opts.PinDir, err)
	}
	return nil
}

func removePin(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unpin %s: %w", path, err)
	}
	return nil
}

func (l *Loader) mapPin(name string) string  { return filepath.Join(l.opts.PinDir, name) }
func (l *Loader) progsDir() string           { return filepath.Join(l.opts.PinDir, "progs") }
func (l *Loader) linksDir() string           { return filepath.Join(l.opts.PinDir, "links") }
func (l *Loader) progPin(name string) string { return filepath.Join(l.progsDir(), name) }
func (l *Loader) stagingDir() string         { return l.opts.PinDir + "-staging" }

// Link kinds name the subdirectories of links/.
const (
	kindTCX = "tcx"
	kindXDP = "xdp"
)

func linkKind(m Mode) string {
	if m.IsXDP() {
		return kindXDP
	}
	return kindTCX
}

func (l *Loader) linkKindDir(kind string) string { return filepath.Join(l.linksDir(), kind) }

func (l *Loader) linkPin(ifname string, m Mode) string {
	return filepath.Join(l.linkKindDir(linkKind(m)), escapePinName(ifname))
}

// pinDirs lists the directories Load creates, parents first.
func (l *Loader) pinDirs() []string {
	return []string{l.opts.PinDir, l.progsDir(), l.linksDir(), l.linkKindDir(kindTCX), l.linkKindDir(kindXDP)}
}

// escapePinName makes an interface name usable as a bpffs file name: bpffs
// refuses names with a dot (reserved), which interface names may contain
// ("eth0.100").
func escapePinName(ifname string) string {
	return strings.NewReplacer("%", "%25", ".", "%2e").Replace(ifname)
}

func unescapePinName(name string) string {
	return strings.NewReplacer("%2e", ".", "%25", "%").Replace(name)
}
