package frrreload

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// The outputs are real FRR 8.4 answers for the config files next to them.
func TestParseLoadOutput(t *testing.T) {
	cases := []struct {
		name, output, config string
		wantLines            []int
		wantMsgs             []string
	}{
		{
			name: "vtysh -C syntax errors", output: "vtysh-C-bad-syntax.txt", config: "bad-syntax.conf",
			wantLines: []int{4, 5, 6, 8},
			wantMsgs:  []string{"% Command incomplete", "% Unknown command"},
		},
		{
			name: "scratch load semantic errors", output: "vtysh-f-bad-semantic.txt", config: "bad-semantic.conf",
			// FRR names no line for refused northbound transactions; the
			// commands it lists are found back in the file (pl_bad is line 11).
			wantLines: []int{10, 11, 12, 14, 15, 16},
			wantMsgs: []string{
				"Invalid prefix range for 10.0.0.0/16: Make sure that mask length <= ge <= le",
				"VNI 5001 is already configured as L3-VNI",
				"Failure to communicate to zebra",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join("testdata", "frr-output", c.config)
			verr := parseLoadOutput("check", frrtest.Output(t, c.output), file)
			if verr == nil {
				t.Fatal("no error parsed")
			}
			var got []int
			for _, l := range verr.Lines {
				got = append(got, l.Number)
				lines := strings.Split(frrtest.Output(t, c.config), "\n")
				if want := frr.Redact(lines[l.Number-1]); l.Text != want {
					t.Errorf("line %d text %q, want %q", l.Number, l.Text, want)
				}
			}
			if !slices.Equal(got, c.wantLines) {
				t.Errorf("lines %v, want %v", got, c.wantLines)
			}
			for _, m := range c.wantMsgs {
				if !slices.Contains(verr.Messages, m) {
					t.Errorf("messages %q lack %q", verr.Messages, m)
				}
			}
			if msg := verr.Error(); strings.Contains(msg, "hunter2") {
				t.Errorf("error leaks the password: %s", msg)
			}
		})
	}
	for _, clean := range []string{
		"",
		"The route-map 'rm_cluster_import' does not exist.\n", // forward reference, fine
		"% Can't open configuration file /x/vtysh.conf due to 'No such file or directory'.\n",
	} {
		if verr := parseLoadOutput("check", clean, "/nonexistent"); verr != nil {
			t.Errorf("output %q parsed as refusal: %v", clean, verr)
		}
	}
}

func TestParseDiff(t *testing.T) {
	d := parseDiff(frr.Redact(frrtest.Output(t, "frr-reload-test-add-vni.txt")))
	if want := []string{"no hostname vm", "ip forwarding", "ipv6 forwarding"}; !slices.Equal(d.Delete, want) {
		t.Errorf("delete = %q, want %q", d.Delete, want)
	}
	if len(d.Add) != 17 || d.Add[2] != "  vni 200" || d.Add[16] != " neighbor calico password <redacted>" {
		t.Errorf("add = %q", d.Add)
	}
	sig := d.Significant()
	if slices.Contains(sig, "- no hostname vm") || !slices.Contains(sig, "- ip forwarding") || !slices.Contains(sig, "+   vni 200") {
		t.Errorf("significant = %q", sig)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		" neighbor calico password s3cret":         " neighbor calico password <redacted>",
		"line 6: neighbor x password hunter2 more": "line 6: neighbor x password <redacted> more",
		"router bgp 65000":                         "router bgp 65000",
	} {
		if got := frr.Redact(in); got != want {
			t.Errorf("frr.Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVRFBlocks(t *testing.T) {
	names, blocks := vrfBlocks([]byte("frr defaults datacenter\nvrf mgmt\n vni 4000\nexit-vrf\n!\nvrf red\n vni 5001\n ip route 0.0.0.0/0 blackhole\n!\nrouter bgp 65000 vrf red\n vni 1\nexit\n"))
	if !slices.Equal(names, []string{"mgmt", "red"}) {
		t.Fatalf("names = %q", names)
	}
	if !slices.Equal(blocks["mgmt"], []string{"vni 4000"}) || !slices.Equal(blocks["red"], []string{"vni 5001", "ip route 0.0.0.0/0 blackhole"}) {
		t.Errorf("blocks = %q", blocks)
	}
}

func TestTargetArgs(t *testing.T) {
	sock := frrvty.Target{VtySocket: "/run/x", ConfDir: "/etc/x"}
	if got := reloadArgs(sock, "--reload", "/etc/x/frr.conf"); !slices.Equal(got, []string{
		"/usr/lib/frr/frr-reload.py", "--reload", "--stdout", "--bindir", "/usr/bin", "--confdir", "/etc/x",
		"--rundir", "/etc/x", "--vty_socket", "/run/x", "/etc/x/frr.conf"}) {
		t.Errorf("socket reload args = %q", got)
	}
	if got := sock.VtyshArgs(); !slices.Equal(got, []string{"--config_dir", "/etc/x", "--vty_socket", "/run/x"}) {
		t.Errorf("socket vtysh args = %q", got)
	}
	ps := frrvty.Target{Pathspace: "node1"}
	if ps.ConfigPath() != "/etc/frr/node1/frr.conf" {
		t.Errorf("pathspace config path = %s", ps.ConfigPath())
	}
	// frr.conf's own directory as --confdir: frr-reload.py must not rewrite it.
	if got := reloadArgs(ps, "--test", "/tmp/c"); !slices.Equal(got, []string{
		"/usr/lib/frr/frr-reload.py", "--test", "--stdout", "--bindir", "/usr/bin", "--confdir", "/etc/frr/node1",
		"--rundir", "/etc/frr/node1", "--pathspace", "node1", "/tmp/c"}) {
		t.Errorf("pathspace reload args = %q", got)
	}
	if got := ps.VtyshArgs(); !slices.Equal(got, []string{"-N", "node1"}) {
		t.Errorf("pathspace vtysh args = %q", got)
	}
}
