package lab

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ErrNoRoute is returned by RouteGet when the kernel has no route (unreachable, prohibit, blackhole, no match).
var ErrNoRoute = errors.New("no route")

// RouteDecision is the kernel's answer to `ip route get`.
type RouteDecision struct {
	Type    RouteType // Unicast or Local
	Dev     string    // egress device
	Ifindex int
	Via     netip.Addr // next hop, invalid when on-link
	Table   int
}

func (d RouteDecision) String() string {
	s := string(d.Type)
	if s == "" {
		s = "unicast"
	}
	s += " dev " + d.Dev
	if d.Via.IsValid() {
		s += " via " + d.Via.String()
	}
	return s + fmt.Sprintf(" table %d", d.Table)
}

// oracleMarkBase marks the probe lookups of RouteGet; the low 16 bits carry the table number.
const oracleMarkBase = 0x6c6c0000

// oraclePrio is the rule priority of the table-lookup rules (after local at 0, before main at 32766).
const oraclePrio = 1000

// RouteGet asks the kernel for its output route to dst in the given table (0 = normal policy routing), like
// `ip route get DST` would if iproute2 accepted a table. Our iproute2 does not, so for a table it installs (once
// per table) two fwmark rules - "lookup TABLE" and "unreachable" right after it, so a miss does not fall through
// to main - and asks with that mark over netlink. The rules only match the mark, which no real traffic carries.
// The first call also moves the "lookup local" rule from priority 0 to behind those rules (as VRF setups do), so
// the answer comes from the table alone: an address local to the namespace but without a local route in the
// table is not reported as local. Unmarked traffic sees the same rule order as before.
func (n *Netns) RouteGet(dst netip.Addr, table int) (RouteDecision, error) {
	opts := &netlink.RouteGetOptions{}
	if table != 0 {
		if table > 0xffff {
			return RouteDecision{}, fmt.Errorf("route get: table %d above 65535 is not supported", table)
		}
		if err := n.ensureOracleRules(table); err != nil {
			return RouteDecision{}, err
		}
		opts.Mark = oracleMarkBase | uint32(table)
	}
	routes, err := n.nl.RouteGetWithOptions(net.IP(dst.AsSlice()), opts)
	if err != nil {
		if errors.Is(err, unix.ENETUNREACH) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.EACCES) {
			return RouteDecision{}, fmt.Errorf("route get %s table %d in %s: %w (%w)", dst, table, n.Logical, ErrNoRoute, err)
		}
		return RouteDecision{}, fmt.Errorf("route get %s table %d in %s: %w", dst, table, n.Logical, err)
	}
	if len(routes) == 0 {
		return RouteDecision{}, fmt.Errorf("route get %s table %d in %s: %w (empty answer)", dst, table, n.Logical, ErrNoRoute)
	}
	r := routes[0]
	d := RouteDecision{Ifindex: r.LinkIndex, Table: r.Table}
	switch r.Type {
	case unix.RTN_UNICAST:
		d.Type = Unicast
	case unix.RTN_LOCAL:
		d.Type = Local
	default:
		return d, fmt.Errorf("route get %s table %d in %s: %w (route type %d)", dst, table, n.Logical, ErrNoRoute, r.Type)
	}
	if r.Gw != nil {
		gw, _ := netip.AddrFromSlice(r.Gw)
		d.Via = gw.Unmap()
	}
	if l, err := n.nl.LinkByIndex(r.LinkIndex); err == nil {
		d.Dev = l.Attrs().Name
	}
	return d, nil
}

func (n *Netns) ensureOracleRules(table int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.oracleTables == nil {
		n.oracleTables = map[int]bool{}
	}
	if n.oracleTables[table] {
		return nil
	}
	mask := uint32(0xffffffff)
	for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
		if len(n.oracleTables) == 0 {
			if err := n.moveLocalRule(fam); err != nil {
				return err
			}
		}
		lookup := netlink.NewRule()
		lookup.Family = fam
		lookup.Priority = oraclePrio
		lookup.Mark = oracleMarkBase | uint32(table)
		lookup.Mask = &mask
		lookup.Table = table
		if err := n.nl.RuleAdd(lookup); err != nil {
			return fmt.Errorf("add fwmark rule for table %d in %s: %w", table, n.Logical, err)
		}
		unreach := netlink.NewRule()
		unreach.Family = fam
		unreach.Priority = oraclePrio + 1
		unreach.Mark = oracleMarkBase | uint32(table)
		unreach.Mask = &mask
		unreach.Type = unix.FR_ACT_UNREACHABLE
		if err := n.nl.RuleAdd(unreach); err != nil {
			return fmt.Errorf("add unreachable rule for table %d in %s: %w", table, n.Logical, err)
		}
	}
	n.oracleTables[table] = true
	return nil
}

// moveLocalRule re-adds "lookup local" at oraclePrio+2 and removes it from priority 0.
func (n *Netns) moveLocalRule(fam int) error {
	local := netlink.NewRule()
	local.Family = fam
	local.Priority = oraclePrio + 2
	local.Table = unix.RT_TABLE_LOCAL
	if err := n.nl.RuleAdd(local); err != nil {
		return fmt.Errorf("add local rule at %d in %s: %w", local.Priority, n.Logical, err)
	}
	old := netlink.NewRule()
	old.Family = fam
	old.Priority = 0
	old.Table = unix.RT_TABLE_LOCAL
	if err := n.nl.RuleDel(old); err != nil {
		return fmt.Errorf("delete local rule at 0 in %s: %w", n.Logical, err)
	}
	return nil
}
