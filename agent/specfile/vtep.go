package specfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/network-operator/network-operator/pkg/fielderr"
)

// completeUnderlay fills what the file cannot say: the VTEP address (when a VNI needs one or FRR needs a router
// id) and the router id (when FRR is configured without one), from env. --vtep-address wins over the file.
func completeUnderlay(d *Document, env Env) error {
	u := &d.Spec.Underlay
	needVTEP := len(d.Spec.Layer2s) > 0
	for _, v := range d.Spec.VRFs {
		needVTEP = needVTEP || v.VNI != 0
	}
	needRouterID := u.ASN != 0 && u.RouterID == ""

	var errs field.ErrorList
	switch {
	case env.VTEPAddress.IsValid():
		a := env.VTEPAddress.Unmap().String()
		if u.VTEPAddress != "" && u.VTEPAddress != a {
			d.Notes = append(d.Notes, fmt.Sprintf("underlay.vtepAddress %s (--vtep-address) replaces the file's %s", a, u.VTEPAddress))
		}
		u.VTEPAddress = a
	case u.VTEPAddress == "" && (needVTEP || needRouterID):
		a, how, tried := discoverVTEP(env, u.RouterID)
		switch {
		case a.IsValid():
			u.VTEPAddress = a.String()
			d.Notes = append(d.Notes, fmt.Sprintf("underlay.vtepAddress %s: %s", u.VTEPAddress, how))
		case needVTEP:
			errs = append(errs, field.Required(field.NewPath("underlay", "vtepAddress"),
				"the VXLAN devices of the VNIs need the VTEP address; tried "+strings.Join(tried, ", ")))
		}
	}
	if needRouterID {
		if a, err := netip.ParseAddr(u.VTEPAddress); err == nil && a.Is4() {
			u.RouterID = a.String()
			d.Notes = append(d.Notes, fmt.Sprintf("underlay.routerID %s: the VTEP address (as das-schiff's underlay address)", u.RouterID))
		} else {
			errs = append(errs, field.Required(field.NewPath("underlay", "routerID"),
				fmt.Sprintf("FRR (underlay.asn %d) needs a router id; the VTEP address %q is no IPv4 address", u.ASN, u.VTEPAddress)))
		}
	}
	return fielderr.Join(errs)
}

// discoverVTEP tries --vtep-interface, das-schiff's underlay loopback and the router id, in this order. It
// returns the address and where it came from, or every source tried and why it gave nothing.
func discoverVTEP(env Env, routerID string) (netip.Addr, string, []string) {
	tried := []string{"--vtep-address (not given)", "the file's underlay.vtepAddress (not set)"}
	fromInterface := func(what, name string) (netip.Addr, bool) {
		if env.Addrs == nil {
			tried = append(tried, fmt.Sprintf("%s %s (interfaces not looked up)", what, name))
			return netip.Addr{}, false
		}
		addrs, err := env.Addrs(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			tried = append(tried, fmt.Sprintf("%s %s (no such interface)", what, name))
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s %s (%v)", what, name, err))
		default:
			if a := pickAddr(addrs); a.IsValid() {
				return a, true
			}
			tried = append(tried, fmt.Sprintf("%s %s (no global address)", what, name))
		}
		return netip.Addr{}, false
	}
	if env.VTEPInterface == "" {
		tried = append(tried, "--vtep-interface (not given)")
	} else if a, ok := fromInterface("--vtep-interface", env.VTEPInterface); ok {
		return a, "the address of --vtep-interface " + env.VTEPInterface, nil
	}
	if env.VTEPInterface != UnderlayLoopback {
		if a, ok := fromInterface("interface", UnderlayLoopback); ok {
			return a, "the address of das-schiff's underlay loopback " + UnderlayLoopback, nil
		}
	}
	if a, err := netip.ParseAddr(routerID); err == nil {
		return a.Unmap(), "the router id", nil
	}
	tried = append(tried, "the router id (not set)")
	return netip.Addr{}, "", tried
}

// pickAddr prefers a global IPv4 address, then a global IPv6 one.
func pickAddr(addrs []netip.Addr) netip.Addr {
	var v6 netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case !a.IsGlobalUnicast():
		case a.Is4():
			return a
		case !v6.IsValid():
			v6 = a
		}
	}
	return v6
}
