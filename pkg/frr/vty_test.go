package frr

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// TestShowOverVtySocket: bgpd's show commands straight over its vty socket answer what vtysh answers; a refused
// command is ErrCommand with bgpd's message; a cancelled context ends the call.
func TestShowOverVtySocket(t *testing.T) {
	frrtest.Require(t)
	ns := frrtest.Netns(t, "frrvty-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name, NoBGPListen: true,
		Config: []byte("router bgp 65000\n bgp router-id 10.0.0.1\n neighbor 192.0.2.1 remote-as 65001\nexit\n")})
	target := Target{VtySocket: router.Dir, ConfDir: router.ConfDir}
	ctx := t.Context()
	for _, cmd := range []string{"show bgp summary json", "show bgp neighbors json", "show bgp vrf all summary json"} {
		direct, err := target.Show(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		viaVtysh, err := target.Vtysh(ctx, cmd)
		if err != nil {
			t.Fatalf("vtysh %s: %v", cmd, err)
		}
		if !bytes.Contains(direct, []byte("192.0.2.1")) || !bytes.Equal(bytes.TrimSpace(direct), bytes.TrimSpace(viaVtysh)) {
			t.Errorf("%s: over the socket\n%s\nvtysh\n%s", cmd, direct, viaVtysh)
		}
	}
	if _, err := target.Show(ctx, "show bgp no-such-thing"); !errors.Is(err, ErrCommand) {
		t.Errorf("unknown command: %v, want ErrCommand", err)
	}
	twice, err := target.daemonCommand(ctx, "bgpd", "show bgp summary json", "show bgp summary json")
	if err != nil || bytes.Count(twice, []byte(`"routerId":"10.0.0.1"`)) != 2 {
		t.Errorf("two commands on one connection: %v\n%s", err, twice)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := target.Show(cancelled, "show bgp summary json"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if _, err := (Target{VtySocket: t.TempDir()}).Show(ctx, "show bgp summary json"); err == nil {
		t.Error("no bgpd socket: no error")
	}
}
