package frr_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// TestBrownfieldReloadNoFlap runs the config rendered into das-schiff's README base (golden
// brownfield-dasschiff-readme: "router bgp 65000 vrf default", management-VRF hook) on a node whose fabric
// session to a route reflector is up. Reloading it again finds nothing to change and keeps the session; the same
// config with "vrf default" left in would make frr-reload.py delete and re-create the default instance.
func TestBrownfieldReloadNoFlap(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fab := frrtest.Netns(t, "frrbfr-")
	node := frrtest.Netns(t, "frrbfn-")
	must(t, fab.IP(ctx, "link", "add", "p1", "type", "veth", "peer", "name", "eth0", "netns", node.Name))
	must(t, fab.IP(ctx, "link", "set", "p1", "up"))
	must(t, fab.IP(ctx, "addr", "add", rrAddr+"/24", "dev", "p1"))
	must(t, node.IP(ctx, "link", "set", "eth0", "up"))
	must(t, node.IP(ctx, "addr", "add", "192.168.0.1/24", "dev", "eth0"))
	must(t, node.IP(ctx, "addr", "add", "10.0.0.1/32", "dev", "lo"))
	frrtest.Router(t, frrproc.Options{Netns: fab.Name, Config: []byte(rrConfig)})
	router := frrtest.Router(t, frrproc.Options{Netns: node.Name})
	target := frrvty.Target{VtySocket: router.Dir, ConfDir: router.ConfDir, Tools: router.Tools()}

	cfg := goldenFile(t, "brownfield-dasschiff-readme")
	res, err := reloaderFor(t, router).Apply(ctx, cfg)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	t.Logf("first apply: +%d -%d lines, residual %q", len(res.Diff.Add), len(res.Diff.Delete), res.Residual)
	if len(res.Residual) > 0 {
		t.Errorf("FRR still differs after the first reload: %q", res.Residual)
	}
	frrtest.Eventually(t, 60*time.Second, "fabric session up", func(ctx context.Context) (bool, string) {
		ns, err := target.Neighbors(ctx, "")
		if err != nil {
			return false, err.Error()
		}
		n, ok := ns[rrAddr]
		return ok && n.State == frrvty.StateEstablished, fmt.Sprintf("%+v", ns)
	})
	before := map[string]map[string]session{"node": sessions(t, ctx, target)}
	time.Sleep(1100 * time.Millisecond) // a reset would restart the uptime below this

	// A fresh reloader (a restarted agent) does not skip: it validates and reloads the unchanged config.
	res, err = reloaderFor(t, router).Apply(ctx, cfg)
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	t.Logf("second apply: significant diff %d lines, residual %d", len(res.Diff.Significant()), len(res.Residual))
	if left := res.Diff.Significant(); len(left) > 0 || len(res.Residual) > 0 {
		t.Errorf("the unchanged config still differs: diff %q, residual %q", left, res.Residual)
	}
	assertNoReset(t, ctx, "reloading the unchanged brownfield config", before, map[string]frrvty.Target{"node": target})

	// Unnormalised, the default instance is another context for frr-reload.py: it would be deleted and re-added.
	raw := strings.Replace(string(cfg), "\nrouter bgp 65000\n", "\nrouter bgp 65000 vrf default\n", 1)
	diff, err := reloaderFor(t, router).Validate(ctx, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("with \"vrf default\": +%d -%d lines", len(diff.Add), len(diff.Delete))
	deletes := slices.ContainsFunc(diff.Delete, func(l string) bool { return strings.TrimSpace(l) == "no router bgp 65000" })
	readds := slices.ContainsFunc(diff.Add, func(l string) bool { return strings.HasPrefix(l, "router bgp 65000 vrf default") })
	if !deletes || !readds {
		t.Errorf("expected frr-reload.py to replace the default instance for \"vrf default\": %+v", diff)
	}
}
