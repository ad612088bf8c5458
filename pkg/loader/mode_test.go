package loader

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

func TestDriverMode(t *testing.T) {
	tests := []struct {
		driver     string
		want       Mode
		wantReason string
	}{
		{"mlx5_core", ModeTCX, "driver mlx5_core -> tc (VXLAN/checksum offload behaviour)"},
		{"ixgbe", ModeXDPNative, "driver ixgbe -> xdp-native"},
		{"i40e", ModeXDPNative, "driver i40e -> xdp-native"},
		{"ice", ModeXDPNative, "driver ice -> xdp-native"},
		{"veth", ModeTCX, "driver veth -> tc"},
		{"vxlan", ModeTCX, "driver vxlan -> tc"},
		{"bridge", ModeTCX, "driver bridge -> tc"},
		{"", ModeTCX, "driver unknown -> tc"},
		{"e1000e", ModeTCX, "driver e1000e (not in table) -> tc"},
	}
	for _, tt := range tests {
		t.Run(tt.driver, func(t *testing.T) {
			got, reason := DriverMode(tt.driver)
			if got != tt.want || reason != tt.wantReason {
				t.Fatalf("DriverMode(%q) = %q, %q; want %q, %q", tt.driver, got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"", ModeAuto, false},
		{"auto", ModeAuto, false},
		{"tcx", ModeTCX, false},
		{"tc", ModeTC, false},
		{"XDP-Native", ModeXDPNative, false},
		{" xdp-generic ", ModeXDPGeneric, false},
		{"xdp", "", true},
		{"offload", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMode(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseMode(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
				t.Fatalf("error %q does not name the value %q", err, tt.in)
			}
		})
	}
}

func TestAsNotSupported(t *testing.T) {
	tests := []struct {
		name string
		in   error
		want bool
	}{
		{"nil", nil, false},
		{"ebpf sentinel", fmt.Errorf("attach tcx link: %w", ebpf.ErrNotSupported), true},
		{"link sentinel", fmt.Errorf("detach: %w", link.ErrNotSupported), true},
		{"EOPNOTSUPP", fmt.Errorf("netlink: %w", unix.EOPNOTSUPP), true},
		{"ENOTSUPP 524", fmt.Errorf("bpf: %w", syscall.Errno(524)), true},
		{"EPERM", fmt.Errorf("bpf: %w", unix.EPERM), false},
		{"EBUSY", unix.EBUSY, false},
		{"plain", errors.New("boom"), false},
		{"marked already", fmt.Errorf("x: %w", ErrNotSupported), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asNotSupported(tt.in)
			if errors.Is(got, ErrNotSupported) != tt.want {
				t.Fatalf("asNotSupported(%v) = %v; errors.Is(ErrNotSupported) want %v", tt.in, got, tt.want)
			}
			if tt.in != nil && !errors.Is(got, tt.in) {
				t.Fatalf("original error %v lost from chain: %v", tt.in, got)
			}
			if tt.in == nil && got != nil {
				t.Fatalf("nil became %v", got)
			}
			if tt.want && strings.Count(got.Error(), ErrNotSupported.Error()) != 1 {
				t.Fatalf("marked more than once: %v", got)
			}
		})
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{"relative pin dir", func(o *Options) { o.PinDir = "bpf/x" }, `Options.PinDir "bpf/x"`},
		{"root pin dir", func(o *Options) { o.PinDir = "/" }, `Options.PinDir "/"`},
		{"owner with colon", func(o *Options) { o.Owner = "a:b" }, `Options.Owner "a:b"`},
		{"bad override", func(o *Options) { o.Overrides = map[string]Mode{"eth0": "fast"} }, `Options.Overrides["eth0"] = "fast"`},
		{"missing tc program", func(o *Options) { o.TCProgram = "nope" }, `Options.TCProgram "nope"`},
		{"xdp program of wrong type", func(o *Options) { o.XDPProgram = "tc_router" }, `Options.XDPProgram "tc_router": type SchedCLS`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Spec: testSpec(defaultParams()), PinDir: "/sys/fs/bpf/never-created"}
			tt.mutate(&o)
			_, err := o.withDefaults()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("withDefaults() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if o.Spec == nil || o.Spec.Programs[DefaultTCProgram] == nil || o.Spec.Programs[DefaultXDPProgram] == nil {
		t.Fatalf("default spec is not the embedded router: %+v", o.Spec)
	}
	if o.PinDir != DefaultPinDir || o.TCProgram != DefaultTCProgram || o.XDPProgram != DefaultXDPProgram ||
		o.Owner != DefaultOwner || o.TCPriority != DefaultTCPriority || o.TCHandle != DefaultTCHandle {
		t.Fatalf("defaults not applied: %+v", o)
	}
}
