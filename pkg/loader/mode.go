package loader

import (
	"fmt"
	"strings"
)

// Mode is how the router is attached to an interface.
type Mode string

const (
	// ModeAuto picks a hook from the interface's driver (see DriverMode)
	// or from Options.Overrides, and falls back to tc when the preferred
	// hook is unsupported or taken.
	ModeAuto Mode = "auto"
	// ModeTCX attaches a pinned tcx ingress link.
	ModeTCX Mode = "tcx"
	// ModeTC attaches a cls_bpf direct-action filter on clsact ingress
	// (legacy tc, for kernels without tcx or when forced).
	ModeTC Mode = "tc"
	// ModeXDPNative attaches a pinned XDP bpf_link in driver mode.
	ModeXDPNative Mode = "xdp-native"
	// ModeXDPGeneric attaches a pinned XDP bpf_link in generic (skb) mode.
	ModeXDPGeneric Mode = "xdp-generic"
)

// Modes lists every valid mode, for flags and docs.
func Modes() []Mode {
	return []Mode{ModeAuto, ModeTCX, ModeTC, ModeXDPNative, ModeXDPGeneric}
}

// ParseMode validates s; the empty string means ModeAuto.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeAuto, nil
	}
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if m.valid() {
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want one of %v", s, Modes())
}

func (m Mode) valid() bool {
	switch m {
	case ModeAuto, ModeTCX, ModeTC, ModeXDPNative, ModeXDPGeneric:
		return true
	}
	return false
}

// IsXDP reports whether m is one of the XDP modes.
func (m Mode) IsXDP() bool { return m == ModeXDPNative || m == ModeXDPGeneric }

// DriverMode is the built-in table auto mode uses: it maps a driver name
// (ETHTOOL_GDRVINFO) to the preferred hook and a human readable reason.
// The tc result is ModeTCX; auto mode falls back to legacy tc by itself.
func DriverMode(driver string) (Mode, string) {
	switch driver {
	case "mlx5_core":
		// The tc path keeps the VXLAN and checksum offload behaviour
		// this NIC relies on; its XDP path does not.
		return ModeTCX, "driver mlx5_core -> tc (VXLAN/checksum offload behaviour)"
	case "ixgbe", "i40e", "ice":
		return ModeXDPNative, fmt.Sprintf("driver %s -> xdp-native", driver)
	case "veth", "vxlan", "bridge":
		// Virtual devices gain nothing from XDP and lose GSO with it.
		return ModeTCX, fmt.Sprintf("driver %s -> tc", driver)
	case "":
		return ModeTCX, "driver unknown -> tc"
	default:
		return ModeTCX, fmt.Sprintf("driver %s (not in table) -> tc", driver)
	}
}
