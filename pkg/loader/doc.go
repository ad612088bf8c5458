// Package loader loads the router's eBPF collection, pins it, adopts what an
// earlier process left pinned, migrates pinned state across incompatible
// upgrades, and attaches the router to interfaces (tcx, legacy clsact
// cls_bpf, XDP native or generic) without ever touching other owners'
// attachments.
//
// Pin layout under Options.PinDir (default /sys/fs/bpf/network-operator):
//
//	<PinDir>/<map>             every non-internal map of the spec, by name
//	<PinDir>/progs/<program>   the programs the attachments run
//	<PinDir>/links/tcx/<if>    tcx link of interface <if>
//	<PinDir>/links/xdp/<if>    XDP bpf_link of interface <if>
//
// bpffs refuses dots in names, so a dot in an interface name is stored as
// %2e (and % as %25). The loader owns PinDir: a migration replaces the
// whole directory.
//
// Legacy tc attachments are cls_bpf filters on the clsact ingress hook, owned
// by priority + handle + a filter name starting with Options.Owner; they need
// no pin because the filter itself holds the program.
//
// Lifecycle:
//
//	l, err := loader.Load(ctx, opts)       // load, pin, adopt or migrate
//	att, err := l.Attach(ctx, "eth0", loader.ModeAuto)
//	l.Attachments()                          // mode + reason per interface
//	l.Close()                                // release fds, keep everything pinned
//	l.Remove(ctx)                            // detach ours and unpin everything
//
// Upgrades: when the spec is compatible with the pinned maps, the maps are
// reused and existing attachments are kept; only their program is swapped
// (Link.Update, or an in-place cls_bpf replace) when it differs. When a map
// is incompatible (errors.Is(err, ebpf.ErrMapIncompatible)) the whole
// collection is created afresh, Options.Rebuild refills the config tables
// from desired state, every existing attachment is switched atomically to the
// new program, and only then does the new pin directory replace the old one
// in a single renameat2(RENAME_EXCHANGE). Counters start from zero.
//
// All kernel operations run in Options.NetNS when it is set (on a locked OS
// thread), otherwise in the calling thread's network namespace.
package loader
