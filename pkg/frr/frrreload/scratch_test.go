package frrreload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
)

// testReloader is a Reloader for daemons started for the test, closed with it.
func testReloader(t *testing.T, opts Options) *Reloader {
	t.Helper()
	ns := frrtest.Netns(t, "frrscr-")
	router := frrtest.Router(t, frrproc.Options{Netns: ns.Name})
	opts.Target = frrvty.Target{VtySocket: router.Dir, ConfDir: router.ConfDir, VtyshPath: opts.VtyshPath, Tools: router.Tools()}
	opts.StateDir = t.TempDir()
	r, err := NewReloader(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// validateSteps validates cfg as Apply does and returns the verdict and the steps it took.
func (r *Reloader) validateSteps(ctx context.Context, cfg []byte) ([]string, error) {
	cand, err := r.writeCandidate(cfg)
	if err != nil {
		return nil, err
	}
	defer os.Remove(cand)
	tl := &timeline{}
	_, err = r.prepare(ctx, cand, cfg, tl)
	var names []string
	for _, s := range tl.list() {
		names = append(names, s.Name)
	}
	return names, err
}

func goldenConf(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// insert puts text into cfg before the first line starting with marker.
func insert(t *testing.T, cfg []byte, marker, text string) []byte {
	t.Helper()
	i := strings.Index(string(cfg), "\n"+marker)
	if i < 0 {
		t.Fatalf("marker %q not in the config", marker)
	}
	return []byte(string(cfg[:i+1]) + text + string(cfg[i+1:]))
}

// TestScratchRefusesAsAFreshLoad validates invalid configs with a scratch instance that holds a valid one, so
// each is first tried as a change from it: every verdict must be the one a load into fresh daemons gives
// (Check, the validation before the scratch instance was kept), with the same check, lines and messages.
func TestScratchRefusesAsAFreshLoad(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	r := testReloader(t, Options{})
	good := goldenConf(t, "full")
	cases := []struct {
		name, marker, text string
		check              string // the check that refuses it
	}{
		{"prefix-list range", "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_bad seq 5 permit 10.0.0.0/16 ge 8\n", "scratch load"},
		{"an L3VNI twice", "router bgp 65000\n", "vrf tenant2\n vni 5001\nexit-vrf\n", "scratch load"},
		{"an unknown neighbor activated", "  neighbor fabric activate\n", "  neighbor 10.8.8.8 activate\n", "scratch load"},
		{"a neighbor of no peer group", " neighbor calico peer-group\n", " neighbor 10.9.9.9 peer-group nosuch\n", "scratch load"},
		{"a second AS", "ip prefix-list pl_peer_calico_in ", "router bgp 65001\nexit\n", "scratch load"},
		{"syntax", " neighbor calico peer-group\n", " neighbor calico remote-as sixty-five\n", "vtysh -C"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A deadline per case: on a loaded machine six cases of scratch loads outlast one shared deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := r.Validate(ctx, good); err != nil {
				t.Fatalf("the valid config: %v", err)
			}
			bad := insert(t, good, c.marker, c.text)
			_, got := r.Validate(ctx, bad)
			file := filepath.Join(t.TempDir(), "bad.conf")
			if err := os.WriteFile(file, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			want := check(ctx, r.opts.Target, file, DefaultScratchDaemons, nil)
			var gv, wv *ValidationError
			if !errors.As(got, &gv) || !errors.As(want, &wv) {
				t.Fatalf("Validate: %v; fresh load: %v; want both refusals", got, want)
			}
			if gv.Check != c.check || !reflect.DeepEqual(gv.Lines, wv.Lines) || !slices.Equal(gv.Messages, wv.Messages) || gv.Check != wv.Check {
				t.Errorf("Validate refused with\n  %v\na fresh load with\n  %v\nwant both by %q", gv, wv, c.check)
			}
		})
	}
}

// TestScratchKeepsItsConfig follows the scratch instance through valid and invalid configs: a fresh load at the
// start, the delta from the config it holds for valid changes, a fresh load deciding a refusal, and a restart
// before the next validation after it.
func TestScratchKeepsItsConfig(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testReloader(t, Options{})
	a, b := goldenConf(t, "l3vni-auto"), goldenConf(t, "full")
	bad := insert(t, b, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_bad seq 5 permit 10.0.0.0/16 ge 8\n")
	steps := []struct {
		name    string
		cfg     []byte
		refused bool
		want    []string // scratch steps in order
	}{
		{"first: fresh load", a, false, []string{StepScratchStart, StepScratchLoad}},
		{"a change: the delta", b, false, []string{StepScratchDelta}},
		{"refused: the delta does not decide, a fresh load does", bad, true, []string{StepScratchDelta, StepScratchStop, StepScratchStart, StepScratchLoad}},
		{"after a refusal: restarted", b, false, []string{StepScratchStop, StepScratchStart, StepScratchLoad}},
		{"back: the delta", a, false, []string{StepScratchDelta}},
		{"unchanged: the delta, empty", a, false, []string{StepScratchDelta}},
	}
	for _, s := range steps {
		names, err := r.validateSteps(ctx, s.cfg)
		if (err != nil) != s.refused || err != nil && !errors.Is(err, ErrRejected) {
			t.Fatalf("%s: %v, want refused=%v", s.name, err, s.refused)
		}
		got := slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, "scratch ") })
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: scratch steps %q, want %q", s.name, got, s.want)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Validate(ctx, a); !errors.Is(err, ErrClosed) {
		t.Errorf("Validate after Close: %v, want ErrClosed", err)
	}
}

func TestScratchReleasedWhenIdle(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := testReloader(t, Options{})
	a, b := goldenConf(t, "l3vni-auto"), goldenConf(t, "full")
	const idle = time.Minute
	if released, err := r.ReleaseIdleScratch(ctx, idle, time.Now().Add(2*idle)); released || err != nil {
		t.Fatalf("before any validation: released %v (%v), want nothing to release", released, err)
	}
	if _, err := r.validateSteps(ctx, a); err != nil {
		t.Fatal(err)
	}
	dir := r.scratch.in.Dir
	if _, err := os.Stat(dir); dir == "" || err != nil {
		t.Fatalf("the running instance's directory %q: %v", dir, err)
	}
	used := r.scratch.used
	for _, c := range []struct {
		name    string
		idle    time.Duration
		now     time.Time
		release bool
	}{
		{"used just now", idle, used.Add(idle - time.Second), false},
		{"no idle limit", 0, used.Add(24 * time.Hour), false},
		{"idle long enough", idle, used.Add(idle), true},
		{"already released", idle, used.Add(2 * idle), false},
	} {
		released, err := r.ReleaseIdleScratch(ctx, c.idle, c.now)
		if err != nil || released != c.release {
			t.Fatalf("%s: released %v (%v), want %v", c.name, released, err, c.release)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the released instance's directory %s: %v, want it removed", dir, err)
	}
	// The next validation starts it again, with a fresh load (the delta needs the config it held).
	names, err := r.validateSteps(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, "scratch ") })
	if want := []string{StepScratchStart, StepScratchLoad}; !slices.Equal(got, want) {
		t.Errorf("after the release: scratch steps %q, want %q", got, want)
	}
}

// TestScriptRestoresRouteMapDelay: one "vtysh -f" of a script that makes route-maps and BGP instances (prepared
// by vtyshFile: the route-map update run at once before the instances, then the delay restored) leaves the
// daemons with the desired config's delay timer, or bgpd's default where it sets none; and bgpd runs the
// route-maps.
func TestScriptRestoresRouteMapDelay(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const policyAndBGP = "route-map rm_a permit 10\n set community 65000:1\nexit\n!\n" +
		"router bgp 65000\n bgp router-id 192.0.2.1\nexit\n!\nroute-map rm_b permit 10\n match ip address prefix-list pl_b\nexit\n!\n"
	for _, tc := range []struct {
		name, desired, want string
	}{
		{"the config's own delay", "bgp route-map delay-timer 2\n!\n" + policyAndBGP, "bgp route-map delay-timer 2"},
		{"the default delay", policyAndBGP, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := frrtest.Netns(t, "frrdly-")
			router := frrtest.Router(t, frrproc.Options{Netns: ns.Name})
			target := frrvty.Target{VtySocket: router.Dir, ConfDir: router.ConfDir, Tools: router.Tools()}
			cand, err := parseCandidate(target, []byte(tc.desired))
			if err != nil {
				t.Fatal(err)
			}
			// The script as a delta has the timer line first when the config sets one, as frrdiff orders it.
			if err := runScript(ctx, target, []byte(tc.desired), cand); err != nil {
				t.Fatal(err)
			}
			running, err := router.Vtysh(ctx, "show running-config")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for l := range strings.Lines(string(running)) {
				if strings.HasPrefix(l, "bgp route-map delay-timer") {
					got = append(got, strings.TrimSpace(l))
				}
			}
			if tc.want == "" && len(got) != 0 || tc.want != "" && !slices.Equal(got, []string{tc.want}) {
				t.Errorf("running config's delay timer %q after one pass, want %q", got, tc.want)
			}
			for _, rm := range []string{"route-map rm_a permit 10", "route-map rm_b permit 10", "router bgp 65000"} {
				if !strings.Contains(string(running), rm) {
					t.Errorf("running config lacks %q:\n%s", rm, running)
				}
			}
		})
	}
}

// TestPrepareCommit: Prepare validates and changes nothing of FRR; its Commit installs and reloads the config;
// a refused config gives no Commit; a Commit after another apply is stale and changes nothing; the last applied
// config's Commit is skipped.
func TestPrepareCommit(t *testing.T) {
	frrtest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := testReloader(t, Options{})
	running := func() string {
		t.Helper()
		out, err := r.opts.Target.RunningConfig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	full, underlay := goldenConf(t, "full"), goldenConf(t, "underlay-only")
	initial := running()
	conf, _ := os.ReadFile(r.opts.ConfigPath())
	commit, err := r.Prepare(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if now := running(); now != initial {
		t.Fatalf("Prepare changed FRR's running config:\n%s", now)
	}
	if now, _ := os.ReadFile(r.opts.ConfigPath()); !bytes.Equal(now, conf) {
		t.Errorf("Prepare changed %s", r.opts.ConfigPath())
	}
	res, err := commit(ctx)
	if err != nil || res.Skipped || len(res.Residual) > 0 || res.Validate == 0 || res.Reload == 0 {
		t.Fatalf("Commit = %+v, %v; want applied, validated and reloaded", res, err)
	}
	if !strings.Contains(running(), "vrf tenant") {
		t.Errorf("after Commit FRR does not run the config's tenant VRFs:\n%s", running())
	}
	if installed, err := os.ReadFile(r.opts.ConfigPath()); err != nil || !bytes.Equal(installed, full) {
		t.Errorf("frr.conf after Commit: %v (equal: %v)", err, bytes.Equal(installed, full))
	}

	bad := insert(t, full, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_bad seq 5 permit 10.0.0.0/16 ge 8\n")
	if c, err := r.Prepare(ctx, bad); c != nil || !errors.Is(err, ErrRejected) {
		t.Errorf("Prepare(invalid) = commit %v, %v; want no commit and ErrRejected", c != nil, err)
	}

	stale, err := r.Prepare(ctx, underlay)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(ctx, insert(t, full, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_x seq 5 permit 10.0.0.0/16\n")); err != nil {
		t.Fatal(err)
	}
	applied := running()
	if _, err := stale(ctx); !errors.Is(err, ErrStale) {
		t.Errorf("Commit after another Apply: %v, want ErrStale", err)
	}
	if now := running(); now != applied {
		t.Errorf("a stale Commit changed FRR")
	}

	same, err := r.Prepare(ctx, insert(t, full, "ip prefix-list pl_peer_calico_in ", "ip prefix-list pl_x seq 5 permit 10.0.0.0/16\n"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := same(ctx); err != nil || !res.Skipped {
		t.Errorf("Commit of the last applied config = %+v, %v; want skipped", res, err)
	}

	// FRR lost the applied config (as when its daemons restart): Resync forgets it, and a Commit prepared before
	// is stale - its diff was against the config FRR ran then.
	prepared, err := r.Prepare(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := r.opts.Target.Vtysh(ctx, "configure", "no router bgp 65000 vrf tenant1"); err != nil {
		t.Fatalf("remove a BGP instance behind the reloader: %v: %s", err, out)
	}
	if forgot, err := r.Resync(ctx); err != nil || !forgot {
		t.Fatalf("Resync = %v, %v; want it to forget the applied config", forgot, err)
	}
	if _, err := prepared(ctx); !errors.Is(err, ErrStale) {
		t.Errorf("Commit after Resync forgot the applied config: %v, want ErrStale", err)
	}
}
