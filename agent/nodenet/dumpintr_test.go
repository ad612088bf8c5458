package nodenet

import (
	"context"
	"errors"
	"testing"

	"github.com/vishvananda/netlink"
)

// interruptingDumper answers like a node with one link, lo; its first interrupted dumps of links and routes
// return a partial result with ErrDumpInterrupted, as the kernel's do when the table changes under them.
type interruptingDumper struct {
	interrupted int // dumps still to interrupt
	dumps       int
}

func (d *interruptingDumper) interrupt() error {
	d.dumps++
	if d.interrupted > 0 {
		d.interrupted--
		return netlink.ErrDumpInterrupted
	}
	return nil
}

func (d *interruptingDumper) LinkList() ([]netlink.Link, error) {
	return []netlink.Link{&netlink.Device{LinkAttrs: netlink.LinkAttrs{Name: "lo", Index: 1}}}, d.interrupt()
}
func (d *interruptingDumper) AddrList(netlink.Link, int) ([]netlink.Addr, error) { return nil, nil }
func (d *interruptingDumper) LinkGetProtinfo(netlink.Link) (netlink.Protinfo, error) {
	return netlink.Protinfo{}, nil
}
func (d *interruptingDumper) RouteListFiltered(int, *netlink.Route, uint64) ([]netlink.Route, error) {
	return nil, d.interrupt()
}
func (d *interruptingDumper) RuleList(int) ([]netlink.Rule, error)        { return nil, nil }
func (d *interruptingDumper) NeighList(int, int) ([]netlink.Neigh, error) { return nil, nil }

// An interrupted dump is read again; one that stays interrupted is returned as such (the agent retries later and
// records nothing against the spec), never as a partial observation.
func TestObserveInterruptedDump(t *testing.T) {
	noPorts := func() (map[int]PortFlags, error) { return nil, nil }
	for _, tc := range []struct {
		name        string
		interrupted int
		wantErr     bool
	}{
		{"none", 0, false},
		{"links once", 1, false},
		{"links, then routes", 2, false},
		{"every attempt", 2 * dumpAttempts, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &interruptingDumper{interrupted: tc.interrupted}
			o, err := observeRetrying(context.Background(), d, 0, noPorts)
			if tc.wantErr {
				if !errors.Is(err, netlink.ErrDumpInterrupted) || o != nil {
					t.Fatalf("observed %v, err %v; want no observation and ErrDumpInterrupted", o, err)
				}
				if d.dumps != dumpAttempts {
					t.Errorf("%d dumps, want %d attempts", d.dumps, dumpAttempts)
				}
				return
			}
			if err != nil || o == nil || len(o.Links) != 1 {
				t.Fatalf("observed %+v, err %v", o, err)
			}
		})
	}
}
