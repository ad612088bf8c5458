package lab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Netns is one named network namespace of a Lab.
type Netns struct {
	Name    string // full name in /run/netns, e.g. nl1a2b3c-r
	Logical string // name used in the topology, e.g. r
	Path    string // /run/netns/<Name>

	lab    *Lab
	handle netns.NsHandle
	nl     *netlink.Handle

	mu           sync.Mutex
	oracleTables map[int]bool // tables RouteGet has rules for
}

// createNetns makes a named namespace (internal/namedns, which never moves the calling goroutine).
func createNetns(name string) (*Netns, error) {
	h, err := namedns.Create(name)
	if err != nil {
		return nil, err
	}
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		h.Close()
		_ = namedns.Delete(name)
		return nil, fmt.Errorf("netlink handle in %s: %w", name, err)
	}
	return &Netns{Name: name, Path: namedns.Path(name), handle: h, nl: nl}, nil
}

// Do runs fn on the calling goroutine, locked to an OS thread that is inside the namespace, and moves the thread
// back afterwards. Sockets, netlink sockets and BPF links created in fn belong to the namespace; goroutines
// started by fn do not run in it.
func (n *Netns) Do(fn func() error) error {
	return netnsrun.Here(n.handle, fn)
}

// Handle is a netlink handle whose socket lives in the namespace (usable from any goroutine).
func (n *Netns) Handle() *netlink.Handle { return n.nl }

// NsHandle is the open namespace file descriptor.
func (n *Netns) NsHandle() netns.NsHandle { return n.handle }

// Link returns the named link of the namespace.
func (n *Netns) Link(name string) (netlink.Link, error) {
	l, err := n.nl.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("link %s in %s: %w", name, n.Name, err)
	}
	return l, nil
}

// Ifindex returns the interface index of the named link.
func (n *Netns) Ifindex(name string) (int, error) {
	l, err := n.Link(name)
	if err != nil {
		return 0, err
	}
	return l.Attrs().Index, nil
}

// MAC returns the hardware address of the named link.
func (n *Netns) MAC(name string) (net.HardwareAddr, error) {
	l, err := n.Link(name)
	if err != nil {
		return nil, err
	}
	return l.Attrs().HardwareAddr, nil
}

func (n *Netns) setUp(name string) error {
	l, err := n.Link(name)
	if err != nil {
		return err
	}
	if err := n.nl.LinkSetUp(l); err != nil {
		return fmt.Errorf("set %s up in %s: %w", name, n.Name, err)
	}
	return nil
}

// Sysctl writes one sysctl of the namespace, key in dotted form ("net.ipv4.conf.ra.forwarding").
func (n *Netns) Sysctl(key, value string) error {
	p := sysctlPath(key)
	return n.Do(func() error {
		if err := os.WriteFile(p, []byte(value), 0o644); err != nil {
			return fmt.Errorf("sysctl %s=%s in %s: %w", key, value, n.Name, err)
		}
		return nil
	})
}

// ReadSysctl reads one sysctl of the namespace.
func (n *Netns) ReadSysctl(key string) (string, error) {
	var out string
	err := n.Do(func() error {
		b, err := os.ReadFile(sysctlPath(key))
		if err != nil {
			return fmt.Errorf("read sysctl %s in %s: %w", key, n.Name, err)
		}
		out = strings.TrimSpace(string(b))
		return nil
	})
	return out, err
}

// sysctlPath turns net.ipv4.conf.eth0.forwarding into /proc/sys/net/ipv4/conf/eth0/forwarding. Device names
// cannot contain '/', but they may contain '.', so only the known prefix segments are split.
func sysctlPath(key string) string {
	parts := strings.SplitN(key, ".", 5)
	if len(parts) == 5 && parts[0] == "net" && (parts[2] == "conf" || parts[2] == "neigh") {
		// net.ipv4.conf.<dev>.<knob>: the device may contain dots; the knob does not.
		rest := parts[3] + "." + parts[4]
		i := strings.LastIndex(rest, ".")
		return filepath.Join("/proc/sys", parts[0], parts[1], parts[2], rest[:i], rest[i+1:])
	}
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// ReadProcNet reads a file of /proc/net (e.g. "snmp") as seen from inside the namespace. /proc/net follows the
// thread group leader, so the per-thread view is used.
func (n *Netns) ReadProcNet(file string) (string, error) {
	var out string
	err := n.Do(func() error {
		b, err := os.ReadFile(filepath.Join("/proc/thread-self/net", file))
		if err != nil {
			return fmt.Errorf("read /proc/net/%s in %s: %w", file, n.Name, err)
		}
		out = string(b)
		return nil
	})
	return out, err
}

func (n *Netns) destroy() error {
	var errs []error
	if n.nl != nil {
		n.nl.Close()
	}
	if n.handle.IsOpen() {
		if err := n.handle.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close netns %s: %w", n.Name, err))
		}
	}
	if err := namedns.Delete(n.Name); err != nil && !errors.Is(err, namedns.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SNMP returns the counters of one protocol line of /proc/net/snmp (or snmp6 for "Ip6", "Icmp6", "Udp6"), e.g.
// SNMP("Icmp")["InEchos"].
func (n *Netns) SNMP(proto string) (map[string]uint64, error) {
	if strings.HasSuffix(proto, "6") {
		return n.snmp6(proto)
	}
	s, err := n.ReadProcNet("snmp")
	if err != nil {
		return nil, err
	}
	var hdr []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, proto+": ") {
			continue
		}
		fields := strings.Fields(line)[1:]
		if hdr == nil {
			hdr = fields
			continue
		}
		out := make(map[string]uint64, len(hdr))
		for i, name := range hdr {
			if i < len(fields) {
				v, err := strconv.ParseInt(fields[i], 10, 64) // some (MaxConn) are signed
				if err != nil {
					return nil, fmt.Errorf("parse snmp %s %s=%q: %w", proto, name, fields[i], err)
				}
				out[name] = uint64(v)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no %s lines in /proc/net/snmp of %s", proto, n.Logical)
}

func (n *Netns) snmp6(proto string) (map[string]uint64, error) {
	s, err := n.ReadProcNet("snmp6")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[0], proto) {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse snmp6 %s=%q: %w", f[0], f[1], err)
		}
		out[strings.TrimPrefix(f[0], proto)] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s lines in /proc/net/snmp6 of %s", proto, n.Logical)
	}
	return out, nil
}

// LinkStats returns the kernel's packet/byte counters of a link.
func (n *Netns) LinkStats(dev string) (netlink.LinkStatistics, error) {
	l, err := n.Link(dev)
	if err != nil {
		return netlink.LinkStatistics{}, err
	}
	if l.Attrs().Statistics == nil {
		return netlink.LinkStatistics{}, fmt.Errorf("link %s in %s: no statistics", dev, n.Logical)
	}
	return *l.Attrs().Statistics, nil
}
