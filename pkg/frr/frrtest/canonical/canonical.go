// Package canonical tells whether FRR keeps a config as it is written: the tests of rendered configs and of
// das-schiff conformance ask it. (Its own package: frrtest is imported by the tests of the packages it uses.)
package canonical

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// Diff checks file as the agent's Reloader does (vtysh's parser and a load into scratch daemons: a refusal is a
// *frrreload.ValidationError naming FRR's lines), then loads it into fresh daemons of target's FRR (in a namespace
// of their own, without a BGP listener) and returns what a reload would still change between the file and their
// running config, as the Reloader computes it. No Significant lines means FRR took every line and keeps it as the
// file writes it, so reloads of that config converge at once.
func Diff(t testing.TB, ctx context.Context, target frrvty.Target, file string, daemons []string) (frrreload.Diff, error) {
	t.Helper()
	ns := frrtest.Netns(t, "frrcanon-")
	// Forwarding on, as FRR's datacenter defaults want it, so a config that does not mention forwarding matches.
	for _, key := range []string{"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"} {
		if err := ns.Sysctl(ctx, key, "1"); err != nil {
			t.Fatal(err)
		}
	}
	target = target.WithDefaults()
	in := frrtest.Router(t, frrproc.Options{Netns: ns.Name, Daemons: daemons, NoBGPListen: true, Tools: target.Tools,
		DaemonDir: target.DaemonDir, Vtysh: target.VtyshPath})
	cfg, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	loaded := target
	loaded.VtySocket, loaded.ConfDir, loaded.RunDir, loaded.Pathspace = in.Dir, in.ConfDir, in.ConfDir, ""
	r, err := frrreload.NewReloader(frrreload.Options{Target: loaded, StateDir: t.TempDir(), ScratchDaemons: daemons})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := r.Validate(ctx, cfg); err != nil {
		return frrreload.Diff{}, err
	}
	if out, err := in.LoadFile(ctx, file); err != nil || frrproc.Refused(out) {
		return frrreload.Diff{}, fmt.Errorf("load %s into fresh daemons after the check took it: %w: %s", file,
			errors.Join(err, errors.New("refused")), frr.Redact(strings.TrimSpace(string(out))))
	}
	if _, err := loaded.SettledRunningConfig(ctx); err != nil {
		return frrreload.Diff{}, err
	}
	return r.Validate(ctx, cfg)
}
