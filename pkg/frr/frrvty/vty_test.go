package frrvty

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

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
	target := Target{VtySocket: router.Dir, ConfDir: router.ConfDir, Tools: router.Tools()}
	ctx := t.Context()
	for _, cmd := range []string{"show bgp summary json", "show bgp neighbors json", "show bgp vrf all summary json"} {
		// The two answers are taken apart in time: fields that follow the clock (a timer's last read, an uptime)
		// may have moved on between them, and so may the unreachable neighbour's FSM (Connect, Active) - taken
		// back to back, they must agree at some point.
		frrtest.Eventually(t, 10*time.Second, cmd+" over the socket and through vtysh", func(ctx context.Context) (bool, string) {
			direct, err := target.Show(ctx, cmd)
			if err != nil {
				return false, err.Error()
			}
			viaVtysh, err := target.Vtysh(ctx, cmd)
			if err != nil {
				return false, "vtysh: " + err.Error()
			}
			same := bytes.Contains(direct, []byte("192.0.2.1")) && reflect.DeepEqual(withoutClock(t, direct), withoutClock(t, viaVtysh))
			return same, fmt.Sprintf("over the socket\n%s\nvtysh\n%s", direct, viaVtysh)
		})
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
	if _, err := (Target{VtySocket: t.TempDir(), Tools: target.Tools}).Show(ctx, "show bgp summary json"); err == nil {
		t.Error("no bgpd socket: no error")
	}
}

// clockKey names the fields of bgpd's JSON whose values follow the clock.
var clockKey = regexp.MustCompile(`(?i)timer|msecs|uptime|elapsed`)

// withoutClock decodes a JSON answer and drops every field named by clockKey, at any depth.
func withoutClock(t *testing.T, answer []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(answer, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, answer)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if clockKey.MatchString(k) {
					delete(v, k)
					continue
				}
				v[k] = strip(e)
			}
		case []any:
			for i, e := range v {
				v[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

// Alive tells running daemons apart from missing ones whatever their config: with an empty config (no BGP
// instance yet, as a fresh FRR DaemonSet starts) Answering fails but Alive does not; without bgpd Alive fails.
func TestAlive(t *testing.T) {
	frrtest.Require(t)
	ns := frrtest.Netns(t, "frralive-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name, NoBGPListen: true})
	target := Target{VtySocket: router.Dir, ConfDir: router.ConfDir, Tools: router.Tools()}
	ctx := t.Context()
	if err := target.Alive(ctx); err != nil {
		t.Fatalf("Alive with an empty config: %v", err)
	}
	if err := target.Answering(ctx); err == nil {
		t.Error("Answering without a BGP instance: want the error that makes Alive necessary")
	}
	if err := router.Kill(ctx, "bgpd"); err != nil {
		t.Fatal(err)
	}
	if err := target.Alive(ctx); err == nil {
		t.Error("Alive without bgpd: want an error")
	}
}
