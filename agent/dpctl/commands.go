package dpctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"text/tabwriter"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"

	"github.com/network-operator/network-operator/agent/bpftables"
	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/loader"
	"github.com/network-operator/network-operator/pkg/maps"
)

// ErrNotInstalled is returned when the pin directory holds no data plane.
var ErrNotInstalled = errors.New("no data plane installed")

func (c *cli) attach(ctx context.Context, args []string) error {
	fs := c.flags("attach")
	ifaces := fs.String("iface", "", "comma-separated interface names (required)")
	modeName := fs.String("mode", string(loader.ModeAuto), "hook: auto, tcx, tc, xdp-native or xdp-generic")
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory for maps, programs and links")
	if err := parse(fs, args); err != nil {
		return err
	}
	names := splitList(*ifaces)
	if len(names) == 0 {
		return fmt.Errorf("%w: attach: --iface is required", ErrUsage)
	}
	mode, err := loader.ParseMode(*modeName)
	if err != nil {
		return fmt.Errorf("%w: attach: --mode: %w", ErrUsage, err)
	}
	l, err := load(ctx, *pinDir, carryOverTables(*pinDir))
	if err != nil {
		return err
	}
	defer l.Close()
	var errs []error
	for _, name := range names {
		if _, err := l.Attach(ctx, name, mode); err != nil {
			errs = append(errs, err)
		}
	}
	c.printAttachments(l.Attachments())
	return errors.Join(errs...)
}

func (c *cli) printAttachments(atts []loader.Attachment) {
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INTERFACE\tHOOK\tPROGRAM ID\tWHY")
	for _, a := range atts {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", a.Interface, a.Mode, a.ProgramID, a.Reason)
	}
	if len(atts) == 0 {
		fmt.Fprintln(tw, "(none)")
	}
	_ = tw.Flush()
}

func (c *cli) apply(ctx context.Context, args []string) error {
	fs := c.flags("apply")
	file := fs.String("f", "", "tables file (YAML; required)")
	revision := fs.String("revision", "", "revision to record (default: the file's, else a hash of the tables)")
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory for maps, programs and links")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("%w: apply: -f is required", ErrUsage)
	}
	f, tables, err := readTables(*file)
	if err != nil {
		return err
	}
	rev := f.RevisionFor(tables)
	if *revision != "" {
		rev = *revision
	}
	// Loading first makes apply work before attach, and rebuilds the tables from the file when an upgrade left
	// pinned maps the new program cannot use.
	l, err := load(ctx, *pinDir, func(ctx context.Context, coll *ebpf.Collection) error {
		return applyTo(ctx, coll, tables, rev)
	})
	if err != nil {
		return err
	}
	l.Close()
	set, err := maps.OpenPinned(*pinDir)
	if err != nil {
		return fmt.Errorf("open tables in %s: %w", *pinDir, err)
	}
	defer set.Close()
	rep, err := set.Apply(ctx, tables, rev)
	if err != nil {
		return fmt.Errorf("apply %s: %w", *file, err)
	}
	if rep.NoOp {
		fmt.Fprintf(c.stdout, "unchanged: generation %d, revision %q is already live\n", rep.Generation, rep.Revision)
		return nil
	}
	fmt.Fprintf(c.stdout, "applied generation %d (revision %q) in %v: interfaces %s, vrfs %s, redirects %s, sbr %s (added, removed, changed)\n",
		rep.Generation, rep.Revision, rep.Duration.Round(1000), rep.Changes.Interfaces, rep.Changes.VRFs, rep.Changes.Redirects, rep.Changes.SBR)
	return nil
}

// readTables parses a tables file and resolves its interface names here.
func readTables(path string) (File, maps.Tables, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, maps.Tables{}, fmt.Errorf("read tables file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return File{}, maps.Tables{}, fmt.Errorf("%s: %w", path, err)
	}
	t, err := f.Tables(netResolver{})
	if err != nil {
		return File{}, maps.Tables{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, t, nil
}

func (c *cli) dump(ctx context.Context, args []string) error {
	fs := c.flags("dump")
	output := fs.String("o", "table", "output format: table or json")
	file := fs.String("f", "", "tables file whose VRF names label the output (optional)")
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory for maps, programs and links")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *output != "table" && *output != "json" {
		return fmt.Errorf("%w: dump: -o %q: want table or json", ErrUsage, *output)
	}
	var vrfNames map[uint32]string
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return fmt.Errorf("read tables file: %w", err)
		}
		f, err := Parse(data)
		if err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
		vrfNames = f.VRFNames()
	}
	if err := installed(*pinDir); err != nil {
		return err
	}
	set, err := maps.OpenPinned(*pinDir)
	if err != nil {
		return fmt.Errorf("open tables in %s: %w", *pinDir, err)
	}
	defer set.Close()
	snap, err := set.Dump(ctx)
	if err != nil {
		return fmt.Errorf("dump %s: %w", *pinDir, err)
	}
	d := NewDump(*pinDir, snap, interfaceName, vrfNames)
	if *output == "json" {
		return d.WriteJSON(c.stdout)
	}
	return d.WriteTable(c.stdout)
}

func (c *cli) detach(ctx context.Context, args []string) error {
	fs := c.flags("detach")
	ifaces := fs.String("iface", "", "comma-separated interface names (default: every interface we are attached to)")
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory for maps, programs and links")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := installed(*pinDir); err != nil {
		return err
	}
	l, err := load(ctx, *pinDir, carryOverTables(*pinDir))
	if err != nil {
		return err
	}
	defer l.Close()
	names := splitList(*ifaces)
	if len(names) == 0 {
		if err := l.DetachAll(ctx); err != nil {
			return err
		}
	}
	var errs []error
	for _, n := range names {
		errs = append(errs, l.Detach(ctx, n))
	}
	c.printAttachments(l.Attachments())
	return errors.Join(errs...)
}

func (c *cli) uninstall(ctx context.Context, args []string) error {
	fs := c.flags("uninstall")
	pinDir := fs.String("pin-dir", loader.DefaultPinDir, "bpffs directory for maps, programs and links")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := installed(*pinDir); errors.Is(err, ErrNotInstalled) {
		fmt.Fprintf(c.stdout, "nothing to uninstall: %s does not exist\n", *pinDir)
		return nil
	}
	l, err := load(ctx, *pinDir, carryOverTables(*pinDir))
	if err != nil {
		return err
	}
	defer l.Close()
	if err := l.Remove(ctx); err != nil {
		return fmt.Errorf("uninstall %s: %w", *pinDir, err)
	}
	fmt.Fprintf(c.stdout, "uninstalled: detached everywhere, removed %s\n", *pinDir)
	return nil
}

// load loads the router collection into pinDir, adopting what an earlier run left there.
func load(ctx context.Context, pinDir string, rebuild func(context.Context, *ebpf.Collection) error) (*loader.Loader, error) {
	spec, err := bpf.RouterSpec()
	if err != nil {
		return nil, fmt.Errorf("router program: %w", err)
	}
	l, err := loader.Load(ctx, loader.Options{Spec: spec, PinDir: pinDir, Rebuild: rebuild})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// carryOverTables is the Rebuild of commands without a tables file: when an upgrade makes the pinned maps
// unusable, the live tables are read from the old maps and written into the new ones.
func carryOverTables(pinDir string) func(context.Context, *ebpf.Collection) error {
	return func(ctx context.Context, coll *ebpf.Collection) error {
		old, err := maps.OpenPinned(pinDir)
		if err != nil {
			return fmt.Errorf("read the live tables from the old maps (re-apply them with `dataplane apply -f`): %w", err)
		}
		defer old.Close()
		snap, err := old.Dump(ctx)
		if err != nil {
			return fmt.Errorf("read the live tables from the old maps: %w", err)
		}
		return applyTo(ctx, coll, snap.Tables, snap.Version.Revision)
	}
}

// applyTo applies t to the maps of a collection the loader is about to pin (its Rebuild).
func applyTo(ctx context.Context, coll *ebpf.Collection, t maps.Tables, revision string) error {
	set, err := maps.FromCollection(coll)
	if err != nil {
		return fmt.Errorf("new router maps: %w", err)
	}
	defer set.Close()
	if _, err := set.Apply(ctx, t, revision); err != nil {
		return fmt.Errorf("rebuild tables: %w", err)
	}
	return nil
}

func installed(pinDir string) error {
	if _, err := os.Stat(pinDir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w in %s (run `dataplane attach` or `dataplane apply` first)", ErrNotInstalled, pinDir)
	} else if err != nil {
		return fmt.Errorf("pin dir: %w", err)
	}
	return nil
}

// netResolver resolves names in the process's network namespace.
type netResolver struct{}

func (netResolver) Link(name string) (bpftables.Link, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return bpftables.Link{}, fmt.Errorf("link %s: %w", name, err)
	}
	return bpftables.LinkOf(l, netlink.QdiscList), nil
}

func interfaceName(idx uint32) (string, bool) {
	i, err := net.InterfaceByIndex(int(idx))
	if err != nil {
		return "", false
	}
	return i.Name, true
}
