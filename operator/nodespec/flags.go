package nodespec

import (
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// ParseInterface parses an operator-level data-plane interface, "name[.vlan]=vrf[:mode]", e.g.
// "eth1.100=blue" or "eth2=default:pass". The mode is route, redirect, fib or pass (default route); redirect
// needs a target: "eth3=blue:redirect>veth0"; fib takes no VRF: "eth4=:fib".
func ParseInterface(s string) (v1.DataPlaneInterface, error) {
	var out v1.DataPlaneInterface
	dev, rest, ok := strings.Cut(s, "=")
	if !ok || dev == "" || rest == "" {
		return out, fmt.Errorf("data-plane interface %q: want name[@vlan]=vrf[:mode]", s)
	}
	if name, vlan, ok := strings.Cut(dev, "@"); ok {
		n, err := strconv.ParseInt(vlan, 10, 32)
		if err != nil || n < v1.MinVLAN || n > v1.MaxVLAN {
			return out, fmt.Errorf("data-plane interface %q: vlan %q is not %d..%d", s, vlan, v1.MinVLAN, v1.MaxVLAN)
		}
		dev, out.VLAN = name, int32(n)
	}
	if len(dev) > v1.MaxInterfaceNameLen {
		return out, fmt.Errorf("data-plane interface %q: name %q is longer than %d bytes", s, dev, v1.MaxInterfaceNameLen)
	}
	out.Name, out.Mode, out.Hook = dev, v1.ModeRoute, v1.HookAuto
	vrf, mode, hasMode := strings.Cut(rest, ":")
	out.VRF = vrf
	if hasMode {
		mode, target, _ := strings.Cut(mode, ">")
		switch m := v1.InterfaceMode(mode); m {
		case v1.ModeRoute, v1.ModePass:
			out.Mode = m
		case v1.ModeFIB:
			if vrf != "" {
				return out, fmt.Errorf("data-plane interface %q: mode fib routes by the interface's own VRF device and takes no vrf (%q)", s, vrf)
			}
			out.Mode = m
		case v1.ModeRedirect:
			if target == "" {
				return out, fmt.Errorf("data-plane interface %q: redirect needs a target (redirect>ifname)", s)
			}
			out.Mode, out.RedirectTarget = m, target
		default:
			return out, fmt.Errorf("data-plane interface %q: mode %q is not route, redirect, fib or pass", s, mode)
		}
	}
	return out, nil
}
