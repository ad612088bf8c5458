package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bfd"
)

// TestRunUsage: bad command lines end before anything connects to an API server, with the usage status and a
// message naming the problem; -h is not an error.
func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    int
		wantErr string // in stderr
	}{
		{name: "help", args: []string{"-h"}, want: ExitOK, wantErr: "-underlay-asn"},
		{name: "unknown flag", args: []string{"--no-such-flag"}, want: ExitUsage, wantErr: "flag provided but not defined"},
		{name: "argument", args: []string{"extra"}, want: ExitUsage, wantErr: `unexpected argument "extra"`},
		{name: "cert mode", args: []string{"--webhook-cert-mode", "vault"}, want: ExitUsage, wantErr: `--webhook-cert-mode "vault": want files or self`},
		{name: "underlay ASN", args: []string{"--underlay-asn", "0"}, want: ExitUsage, wantErr: "--underlay-asn"},
		{name: "remote ASN", args: []string{"--underlay-remote-asn", "somewhere"}, want: ExitUsage, wantErr: "--underlay-remote-asn"},
		{name: "data-plane interface", args: []string{"--dataplane-interface", "eth1"}, want: ExitUsage, wantErr: "-dataplane-interface"},
		{name: "BFD interval out of bfdd's range", args: []string{"--underlay-bfd", "--underlay-bfd-interval", "5ms"}, want: ExitUsage,
			wantErr: `--underlay-bfd-interval: Invalid value: "5ms": must be whole milliseconds within 10ms..1m0s`},
		{name: "BFD multiplier", args: []string{"--underlay-bfd", "--underlay-bfd-detect-multiplier", "1"}, want: ExitUsage,
			wantErr: `--underlay-bfd-detect-multiplier: Invalid value: 1: must be within 2..255`},
		{name: "health probe without a port", args: []string{"--health-probe", "dns=192.0.2.53"}, want: ExitUsage,
			wantErr: `--health-probe[0].address: Invalid value: "192.0.2.53"`},
		{name: "health probe without a name", args: []string{"--health-probe", "192.0.2.53:53"}, want: ExitUsage,
			wantErr: `"192.0.2.53:53": want NAME=ADDRESS:PORT`},
		{name: "BFD settings without BFD", args: []string{"--underlay-bfd-echo-interval", "50ms"}, want: ExitUsage,
			wantErr: `--underlay-bfd: Required value: the --underlay-bfd-* settings need --underlay-bfd`},
		{name: "unknown underlay family", args: []string{"--underlay-address-families", "IPv4,IPX"}, want: ExitUsage,
			wantErr: `--underlay-address-families: Unsupported value: "IPX": supported values: "IPv4", "IPv6"`},
		{name: "underlay family twice", args: []string{"--underlay-address-families", "IPv6,ipv6"}, want: ExitUsage,
			wantErr: `--underlay-address-families: Duplicate value: "ipv6"`},
		{name: "VTEP family the underlay does not carry", args: []string{"--underlay-address-families", "IPv4", "--underlay-vtep-family", "IPv6"},
			want: ExitUsage, wantErr: `--underlay-vtep-family: Invalid value: "IPv6": the underlay does not carry it`},
		{name: "unknown VTEP family", args: []string{"--underlay-vtep-family", "v5"}, want: ExitUsage,
			wantErr: `--underlay-vtep-family: Unsupported value: "v5"`},
		{name: "IPv6 neighbour in an IPv4 underlay", args: []string{"--underlay-address-families", "IPv4", "--underlay-neighbors", "2001:db8::1"},
			want: ExitUsage, wantErr: `--underlay-neighbors[2001:db8::1].address: Invalid value: "2001:db8::1": an IPv6 session, but the underlay carries IPv4 only`},
		{name: "link-local neighbour without interface", args: []string{"--underlay-neighbors", "fe80::1"}, want: ExitUsage,
			wantErr: `--underlay-neighbors[fe80::1].interface: Required value: IPv6 link-local address fe80::1`},
		{name: "uninstall help", args: []string{"uninstall", "-h"}, want: ExitOK, wantErr: "-cleanup-image"},
		{name: "uninstall unknown flag", args: []string{"uninstall", "--replicas", "1"}, want: ExitUsage, wantErr: "flag provided but not defined"},
		{name: "uninstall argument", args: []string{"uninstall", "--namespace", "x", "now"}, want: ExitUsage, wantErr: `unexpected argument "now"`},
		{name: "uninstall without image", args: []string{"uninstall", "--namespace", "x"}, want: ExitUsage, wantErr: `cleanup-image "" are all required`},
		{name: "uninstall without namespace", args: []string{"uninstall", "--namespace", "", "--cleanup-image", "agent:1"}, want: ExitUsage,
			wantErr: `namespace ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := Run(context.Background(), tc.args, &stdout, &stderr); got != tc.want {
				t.Errorf("Run(%q) = %d, want %d\n%s", tc.args, got, tc.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("Run(%q) printed %q, want it to contain %q", tc.args, stderr.String(), tc.wantErr)
			}
			if stdout.Len() != 0 {
				t.Errorf("Run(%q) printed to stdout: %q", tc.args, stdout.String())
			}
		})
	}
}

// TestParseFlags: the values that are derived from flags, not copied.
func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, f *flags)
	}{
		{name: "defaults", check: func(t *testing.T, f *flags) {
			if f.controllers.NodeConfig.Underlay.BFD != nil {
				t.Errorf("underlay BFD on by default: %+v", f.controllers.NodeConfig.Underlay.BFD)
			}
			if f.certMode != certModeFiles || f.webhookCertDir != "" || f.cert.CertDir != "" || !f.webhooks {
				t.Errorf("cert mode %q dir %q (certificate manager: %q), webhooks %v", f.certMode, f.webhookCertDir, f.cert.CertDir, f.webhooks)
			}
			if f.controllers.MaxUnavailable != intstr.FromInt32(1) || len(f.controllers.NodeConfig.Underlay.Interfaces) != 0 {
				t.Errorf("max unavailable %v, underlay %q", f.controllers.MaxUnavailable, f.controllers.NodeConfig.Underlay.Interfaces)
			}
		}},
		{name: "underlay interfaces and a percentage", args: []string{"--underlay-interfaces", " eth1, ,eth2 ", "--max-unavailable", "25%"},
			check: func(t *testing.T, f *flags) {
				if got := f.controllers.NodeConfig.Underlay.Interfaces; !slices.Equal(got, []string{"eth1", "eth2"}) {
					t.Errorf("underlay interfaces %q", got)
				}
				if f.controllers.MaxUnavailable != intstr.FromString("25%") {
					t.Errorf("max unavailable %v", f.controllers.MaxUnavailable)
				}
			}},
		{name: "self-managed certificate: controller-runtime's directory for server and manager",
			args: []string{"--webhook-cert-mode", "self"}, check: func(t *testing.T, f *flags) {
				if filepath.Base(f.webhookCertDir) != "serving-certs" || f.cert.CertDir != f.webhookCertDir {
					t.Errorf("server reads %q, certificate manager writes %q", f.webhookCertDir, f.cert.CertDir)
				}
			}},
		{name: "certificate directory named", args: []string{"--webhook-cert-mode", "self", "--webhook-cert-dir", "/certs"},
			check: func(t *testing.T, f *flags) {
				if f.webhookCertDir != "/certs" || f.cert.CertDir != "/certs" {
					t.Errorf("server reads %q, certificate manager writes %q", f.webhookCertDir, f.cert.CertDir)
				}
			}},
		{name: "underlay BFD", args: []string{"--underlay-bfd", "--underlay-bfd-interval", "100ms", "--underlay-bfd-detect-multiplier", "4"},
			check: func(t *testing.T, f *flags) {
				got := f.controllers.NodeConfig.Underlay.BFD.Profile()
				if f.controllers.NodeConfig.Underlay.BFD == nil || got != (bfd.Profile{ReceiveInterval: 100 * time.Millisecond,
					TransmitInterval: 100 * time.Millisecond, DetectMultiplier: 4}) {
					t.Errorf("underlay BFD %+v", got)
				}
			}},
		{name: "health probes", args: []string{"--health-probe", "gw=192.0.2.1:179", "--health-probe", "dns=[2001:db8::53]:53"},
			check: func(t *testing.T, f *flags) {
				if got := f.controllers.NodeConfig.HealthProbes; len(got) != 2 || got[0].Name != "gw" || got[1].Address != "[2001:db8::53]:53" {
					t.Errorf("health probes %+v", got)
				}
			}},
		{name: "underlay BFD with bfdd's defaults", args: []string{"--underlay-bfd"},
			check: func(t *testing.T, f *flags) {
				if b := f.controllers.NodeConfig.Underlay.BFD; b == nil || !b.Profile().IsDefault() {
					t.Errorf("underlay BFD %+v", b)
				}
			}},
		{name: "IPv6-only underlay: the VTEP family follows, numbered neighbours of it",
			args: []string{"--underlay-address-families", "IPv6", "--underlay-neighbors", "2001:db8:255::1, fe80::1%eth1"},
			check: func(t *testing.T, f *flags) {
				u := f.controllers.NodeConfig.Underlay
				if !slices.Equal(u.Families, []v1.IPFamily{v1.IPv6}) || u.VTEPFamily != v1.IPv6 ||
					!slices.Equal(u.Neighbors, []string{"2001:db8:255::1", "fe80::1%eth1"}) {
					t.Errorf("underlay families %v, VTEP family %q, neighbours %q", u.Families, u.VTEPFamily, u.Neighbors)
				}
			}},
		{name: "dual-stack underlay with IPv4 VTEPs", args: []string{"--underlay-address-families", "ipv4,ipv6", "--underlay-vtep-family", "4"},
			check: func(t *testing.T, f *flags) {
				u := f.controllers.NodeConfig.Underlay
				if !slices.Equal(u.Families, []v1.IPFamily{v1.IPv4, v1.IPv6}) || u.VTEPFamily != v1.IPv4 {
					t.Errorf("underlay families %v, VTEP family %q", u.Families, u.VTEPFamily)
				}
			}},
		{name: "no family flags: nothing enforced", check: func(t *testing.T, f *flags) {
			if u := f.controllers.NodeConfig.Underlay; u.Families != nil || u.VTEPFamily != "" || u.Neighbors != nil {
				t.Errorf("underlay families %v, VTEP family %q, neighbours %q", u.Families, u.VTEPFamily, u.Neighbors)
			}
		}},
		{name: "repeated data-plane interfaces", args: []string{"--dataplane-interface", "eth1@100=blue", "--dataplane-interface", "l2br.100=blue:pass"},
			check: func(t *testing.T, f *flags) {
				if got := f.controllers.NodeConfig.Interfaces; len(got) != 2 || got[0].VRF != "blue" || got[1].Name != "l2br.100" {
					t.Errorf("interfaces %+v", got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			f, err := parseFlags(tc.args, &stderr)
			if err != nil {
				t.Fatalf("parseFlags(%q): %v\n%s", tc.args, err, stderr.String())
			}
			tc.check(t, f)
		})
	}
}

// TestRestConfigRateLimit: with --kubeconfig the operator's clients are not paced by client-go's default 5
// requests per second (a rollout writes one configuration per node), the same as in-cluster.
func TestRestConfigRateLimit(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	data := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Errorf("QPS %v, rate limiter %v: want no client-side limit", cfg.QPS, cfg.RateLimiter)
	}
	if cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("host %q", cfg.Host)
	}
}
