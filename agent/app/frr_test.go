package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/agent/app"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/test/harness/lab"
)

// The agent with real FRR (zebra + bgpd in the node namespace): the rendered config is validated and reloaded,
// FRR knows the VRFs' VNIs and the peerings, the BGP password reaches FRR and nothing else (not the logs, not
// the state file), BGP session states and reload results show in /metrics, and an unchanged config is not
// reloaded again.
func TestStandaloneWithRealFRR(t *testing.T) {
	frrtest.Require(t)
	n := newNode(t)
	fr := frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})

	const password = "s3cret-Pa55"
	pwDir := tempDir(t)
	mustf(t, os.MkdirAll(filepath.Join(pwDir, "default", "bgp-auth"), 0o700), "password dir")
	mustf(t, os.WriteFile(filepath.Join(pwDir, "default", "bgp-auth", "password"), []byte(password+"\n"), 0o600), "password file")

	spec := baseSpec("rev-1")
	spec.Underlay.Neighbors = []v1.UnderlayNeighbor{{Address: "192.0.2.254", RemoteASN: "65099"}}
	spec.VRFs[1].Leaks = []v1.VRFLeak{{Source: "red-leak", Seq: 10,
		Import: []v1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, Action: v1.PrefixActionPermit}}}}
	spec.BGPPeers = []v1.NodeBGPPeer{{Name: "tenant.peer", VRF: "red", RemoteASN: 65100, Addresses: []string{"10.1.1.2"},
		PasswordSecretRef: &v1.SecretKeyReference{Namespace: "default", Name: "bgp-auth", Key: "password"},
		Export:            []v1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, Action: v1.PrefixActionPermit}}}}
	n.writeSpec(t, spec)

	a := startAgent(t, freePort(t), frrAgentArgs(n, fr, "reload", "--password-dir", pwDir)...)
	st := waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-1 applied with FRR", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-1" && isReady(s)
	})
	if st.Status.MapVersion != st.Spec.ExpectedMapVersion {
		t.Errorf("mapVersion %q, want %q", st.Status.MapVersion, st.Spec.ExpectedMapVersion)
	}

	ctx := context.Background()
	running, err := fr.Vtysh(ctx, "show running-config")
	mustf(t, err, "running config")
	for _, want := range []string{"vrf vr.red", " vni 100", "vrf vr.blue", " vni 200", "router bgp 65000",
		" bgp graceful-restart\n", " bgp graceful-restart preserve-fw-state",
		"neighbor 192.0.2.254 remote-as 65099", "router bgp 65000 vrf vr.red", "neighbor tenant_peer password " + password,
		"neighbor 10.1.1.2 peer-group tenant_peer", "advertise-all-vni"} {
		if !strings.Contains(string(running), want) {
			t.Errorf("FRR running config lacks %q:\n%s", want, running)
		}
	}
	if strings.Contains(a.out.String(), password) {
		t.Error("the BGP password shows in the agent's output")
	}
	state, err := os.ReadFile(n.stateFile())
	mustf(t, err, "state file")
	if strings.Contains(string(state), password) {
		t.Error("the BGP password is in the state file")
	}

	// BGP state per peer: the underlay neighbour never answers, but it is reported with exactly one state.
	mustf(t, lab.WaitFor(ctx, 20*time.Second, 200*time.Millisecond, func() (bool, error) {
		fams, err := a.scrape()
		if err != nil {
			return false, err
		}
		states := counter(fams, "network_operator_bgp_session_state", map[string]string{"vrf": "default", "peer": "192.0.2.254"})
		applied := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"})
		return states >= 1 && applied >= 1, nil
	}), "BGP session state and FRR reload in /metrics")

	// rev-2 drops VRF blue: FRR is reloaded without it.
	rev2 := spec
	rev2.Revision = "rev-2"
	rev2.VRFs = rev2.VRFs[1:]
	spliceInterfaces(&rev2, func(i *v1.DataPlaneInterface) bool { return i.VRF != "blue" })
	n.writeSpec(t, rev2)
	waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-2 applied with FRR", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-2" && isReady(s)
	})
	running, err = fr.Vtysh(ctx, "show running-config")
	mustf(t, err, "running config")
	if strings.Contains(string(running), "vrf vr.blue") || !strings.Contains(string(running), "vrf vr.red") {
		t.Errorf("after rev-2 FRR should have vr.red and not vr.blue:\n%s", running)
	}
	// A resync with nothing new does not reload FRR.
	fams, err := a.scrape()
	mustf(t, err, "scrape")
	applied := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"})
	mustf(t, lab.WaitFor(ctx, 10*time.Second, 200*time.Millisecond, func() (bool, error) {
		fams, err := a.scrape()
		if err != nil {
			return false, err
		}
		return counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "skipped"}) >= 1, nil
	}), "a resync skips the identical FRR config")
	fams, err = a.scrape()
	mustf(t, err, "scrape")
	if got := counter(fams, "network_operator_frr_reloads_total", map[string]string{"result": "applied"}); got != applied {
		t.Errorf("FRR reloaded %v times on resync with an unchanged config", got-applied)
	}
}

// frrAgentArgs are the node's agent arguments with FRR handled (--frr mode) for the daemons fr.
func frrAgentArgs(n *node, fr *frrproc.Instance, mode string, extra ...string) []string {
	args := n.agentArgs()
	for i := range args {
		if args[i] == "none" && args[i-1] == "--frr" {
			args[i] = mode
		}
	}
	args = append(args, "--frr-vty-socket", fr.Dir, "--frr-conf-dir", fr.Dir, "--frr-state-dir", filepath.Join(n.dir, "frr-state"),
		"--frr-root", fr.Tools().Root)
	return append(args, extra...)
}

// brownfieldBase is a host's own FRR config in the das-schiff style: it owns the underlay (BGP instance, fabric
// neighbour, EVPN) and has a hint comment where each of the agent's sections goes.
const brownfieldBase = `! provisioned by the host installer; the network-operator fills the hints
frr defaults datacenter
log syslog informational
service integrated-vtysh-config
!
#++{{.VRFs}}
router bgp 65000
 bgp router-id ` + vtep + `
 no bgp default ipv4-unicast
 neighbor 192.0.2.254 remote-as 65099
 neighbor 192.0.2.254 description fabric-from-base
 #++{{.Neighbors}}
 !
 address-family ipv4 unicast
  network ` + vtep + `/32
  neighbor 192.0.2.254 activate
  #++{{.NeighborsV4}}
 exit-address-family
 !
 address-family ipv6 unicast
  #++{{.NeighborsV6}}
 exit-address-family
 !
 address-family l2vpn evpn
  neighbor 192.0.2.254 activate
  advertise-all-vni
  #++{{.L2VNIs}}
 exit-address-family
exit
!
#++{{.BGP}}
#++{{.PrefixLists}}
!
#++{{.RouteMaps}}
!
`

// --frr-base-config: the agent renders the node's FRR config into the host's base config instead of a whole
// frr.conf. The installed frr.conf is the base with every hint replaced by its section, and FRR runs it: the
// base's underlay, the spec's VRFs, their BGP instances and leaking.
func TestStandaloneBrownfieldFRR(t *testing.T) {
	frrtest.Require(t)
	n := newNode(t)
	fr := frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})
	base := filepath.Join(tempDir(t), "frr-base.conf")
	mustf(t, os.WriteFile(base, []byte(brownfieldBase), 0o600), "base config")

	spec := baseSpec("rev-1")
	spec.VRFs[1].Leaks = []v1.VRFLeak{{Source: "red-leak", Seq: 10,
		Import: []v1.NodePrefixItem{{CIDR: "10.1.0.0/16", Seq: 10, Action: v1.PrefixActionPermit}}}}
	n.writeSpec(t, spec)
	a := startAgent(t, "", frrAgentArgs(n, fr, "reload", "--frr-base-config", base, "--frr-scratch-idle", "1s")...)
	st := waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-1 applied or refused", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-1" && isReady(s) || s.Status.FailedRevision == "rev-1"
	})
	if st.Status.FailedRevision != "" {
		t.Fatalf("rev-1 not applied into the base config: %s", st.Status.LastError)
	}

	conf, err := os.ReadFile(filepath.Join(fr.Dir, "frr.conf"))
	mustf(t, err, "installed frr.conf")
	for line := range strings.SplitSeq(brownfieldBase, "\n") {
		if !strings.Contains(line, "#++") && !strings.Contains(string(conf), line+"\n") {
			t.Errorf("frr.conf lacks the base's line %q", line)
		}
	}
	for _, want := range []string{
		"vrf vr.red\n vni 100\nexit-vrf\n",                               // #++{{.VRFs}}
		"  advertise-all-vni\n  vni 3000\n  exit-vni\n",                  // #++{{.L2VNIs}}
		"  import vrf route-map rm_cluster_import\n",                     // #++{{.NeighborsV4}}
		"router bgp 65000 vrf vr.red\n",                                  // #++{{.BGP}}
		"ip prefix-list pl_vr.red_import_10 seq 10 permit 10.1.0.0/16\n", // #++{{.PrefixLists}}
		"route-map rm_vr.red_import permit 10\n",                         // #++{{.RouteMaps}}
	} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("frr.conf lacks the hinted section's %q:\n%s", want, conf)
		}
	}
	if strings.Contains(string(conf), "#++") || strings.Count(string(conf), "router bgp 65000\n") != 1 {
		t.Errorf("frr.conf keeps a hint or has a second underlay instance:\n%s", conf)
	}
	// --frr-scratch-idle: the scratch instance that validated rev-1 is stopped once idle (the next validation
	// starts it again: pkg/frr's TestScratchReleasedWhenIdle).
	const released = "stopped the scratch FRR instance, idle"
	err = lab.WaitFor(context.Background(), 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		return strings.Contains(a.out.String(), released), a.running()
	})
	if err != nil {
		t.Errorf("the idle scratch FRR instance: %v, want the log %q", err, released)
	}
	running, err := fr.Vtysh(context.Background(), "show running-config")
	mustf(t, err, "running config")
	for _, want := range []string{"neighbor 192.0.2.254 description fabric-from-base", "vrf vr.red", " vni 100",
		"router bgp 65000 vrf vr.red", "route-map rm_vr.red_import permit 10"} {
		if !strings.Contains(string(running), want) {
			t.Errorf("FRR running config lacks %q:\n%s", want, running)
		}
	}
}

// --frr systemd: the agent validates and installs frr.conf, then has systemd reload --frr-systemd-unit over
// D-Bus (here a stand-in systemd on a private bus made the system bus, whose reload job runs frr-reload.py as
// frr.service's ExecReload does), and FRR runs the config.
func TestStandaloneSystemdReload(t *testing.T) {
	frrtest.Require(t)
	n := newNode(t)
	fr := frrtest.Router(t, frrproc.Options{Netns: n.ns.Name})
	const unit = "frr-test.service"
	sd := frrtest.NewSystemd(t, map[string]string{unit: "done"})
	sd.SetJob(func(string) error {
		out, err := fr.Tools().Command(context.Background(), "python3", frrproc.DefaultReloadScript, "--reload", "--stdout", "--bindir", "/usr/bin",
			"--confdir", fr.Dir, "--rundir", fr.Dir, "--vty_socket", fr.Dir, filepath.Join(fr.Dir, "frr.conf")).CombinedOutput()
		if err != nil {
			return fmt.Errorf("frr-reload.py: %w: %s", err, out)
		}
		return nil
	})
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", sd.Address) // the agent's system bus

	n.writeSpec(t, baseSpec("rev-1"))
	a := startAgent(t, "", frrAgentArgs(n, fr, "systemd", "--frr-systemd-unit", unit)...)
	waitStatus(t, a, n.statusFile(), 90*time.Second, "rev-1 applied through systemd", func(s *v1.NodeNetworkConfig) bool {
		return s.Status.AppliedRevision == "rev-1" && isReady(s)
	})
	if got := sd.Reloads(); len(got) != 1 || got[0] != unit {
		t.Errorf("systemd reloads %v, want one of %s", got, unit)
	}
	running, err := fr.Vtysh(context.Background(), "show running-config")
	mustf(t, err, "running config")
	if !strings.Contains(string(running), "router bgp 65000 vrf vr.red") {
		t.Errorf("the config did not reach FRR through the systemd reload:\n%s", running)
	}
}

// FRR flags the agent refuses before touching anything.
func TestFRRFlagErrors(t *testing.T) {
	dir := tempDir(t)
	common := []string{"--config-file", filepath.Join(dir, "node.yaml"), "--frr-state-dir", filepath.Join(dir, "frr-state"),
		"--listen", ""}
	for _, c := range []struct {
		name string
		args []string
		env  string // DBUS_SYSTEM_BUS_ADDRESS
		code int
		want string
	}{
		{"unknown mode", []string{"--frr", "restart"}, "", app.ExitUsage, `--frr "restart": want reload, systemd or none`},
		{"base config without FRR", []string{"--frr", "none", "--frr-base-config", "base.conf"}, "", app.ExitUsage,
			"--frr-base-config needs --frr reload or systemd"},
		{"management VRFs without base config", []string{"--frr-management-vrfs", "mgmt_vrf"}, "", app.ExitUsage,
			"--frr-management-vrfs needs --frr-base-config"},
		{"missing base config", []string{"--frr-base-config", filepath.Join(dir, "nosuch.conf")}, "", app.ExitFailed,
			"--frr-base-config: open " + filepath.Join(dir, "nosuch.conf")},
		{"restart time beyond FRR's range", []string{"--bgp-restart-time", "2h"}, "", app.ExitUsage,
			"--bgp-restart-time 2h0m0s: want whole seconds, 1s..1h8m15s (0: FRR's default)"},
		{"restart time not whole seconds", []string{"--bgp-restart-time", "1500ms"}, "", app.ExitUsage,
			"--bgp-restart-time 1.5s: want whole seconds"},
		{"no system bus", []string{"--frr", "systemd"}, "unix:path=" + filepath.Join(dir, "nobus"), app.ExitFailed,
			"--frr systemd: connect to the system bus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", c.env)
			}
			code, out := runAgent(t, 30*time.Second, append(common, c.args...)...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, c.code, c.want, out)
			}
		})
	}
}
