package frrdiff_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/pkg/frr/frrdiff"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// goldenDir holds pkg/frr's rendered configs: FRR accepts each of them (TestGoldenAcceptedByFRR).
const goldenDir = "../testdata/golden"

// router is a zebra + bgpd + staticd + bfdd instance of one FRR with the helpers the tests need.
type router struct {
	t       *testing.T
	in      *frrproc.Instance
	dialect frrdiff.Dialect
}

func newRouter(t *testing.T, f frrtest.FRR) *router {
	ns := frrtest.Netns(t, "frrdiff-")
	in := frrtest.Router(t, frrproc.Options{Tools: f.Tools, Netns: ns.Name, Daemons: []string{"zebra", "bgpd", "staticd", "bfdd"}})
	return &router{t: t, in: in, dialect: dialectOf(f)}
}

// dialectOf is the frrdiff dialect of an FRR the tests run.
func dialectOf(f frrtest.FRR) frrdiff.Dialect {
	if f.Major >= 10 {
		return frrdiff.FRR10
	}
	return frrdiff.FRR8
}

// frrs are the FRRs the live tests run against: the one that ships and the host's 8.4.
func frrs(t *testing.T) []frrtest.FRR { return []frrtest.FRR{frrtest.Shipped(t), frrtest.Host(t)} }

func (r *router) running(ctx context.Context) []byte {
	r.t.Helper()
	out, err := r.in.Vtysh(ctx, "show running-config")
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// reloadTest runs "frr-reload.py --test file" against the router and returns its two listings.
func (r *router) reloadTest(ctx context.Context, file string) (del, add []string) {
	r.t.Helper()
	cmd := r.in.Tools().Command(ctx, "python3", frrproc.DefaultReloadScript, "--test", "--stdout", "--bindir", "/usr/bin",
		"--confdir", r.in.ConfDir, "--rundir", r.in.Dir, "--vty_socket", r.in.Dir, file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("frr-reload.py --test %s: %v: %s", file, err, stderr.String())
	}
	var cur *[]string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case l == "Lines To Delete":
			cur = &del
		case l == "Lines To Add":
			cur = &add
		case strings.TrimSpace(l) == "" || strings.Trim(l, "=") == "":
		case cur != nil && !closer(l):
			*cur = append(*cur, strings.TrimRight(l, " "))
		}
	}
	return del, add
}

// closer reports whether l only ends a block ("exit", "exit-vrf", ...): FRR 10's frr-reload.py lists one after
// every context, FRR 8.4's does not, and a closer carries no configuration. Listings are compared without them.
func closer(l string) bool {
	switch strings.TrimSpace(l) {
	case "exit", "exit-vrf", "exit-address-family", "exit-vni", "end":
		return true
	}
	return false
}

// withoutClosers is lines without the closers (see closer).
func withoutClosers(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), closer)
}

// reload applies file with "frr-reload.py --reload", as pkg/frr does for configs frrdiff cannot decide.
func (r *router) reload(ctx context.Context, file string) error {
	r.t.Helper()
	out, err := r.in.Tools().Command(ctx, "python3", frrproc.DefaultReloadScript, "--reload", "--stdout", "--bindir", "/usr/bin",
		"--confdir", r.in.ConfDir, "--rundir", r.in.Dir, "--vty_socket", r.in.Dir, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("frr-reload.py --reload %s: %w: %s", file, err, out)
	}
	return nil
}

// apply runs a script through vtysh -f and returns what vtysh reports as refused.
func (r *router) apply(ctx context.Context, script []byte) error {
	r.t.Helper()
	file := filepath.Join(r.in.Dir, "delta.conf")
	if err := os.WriteFile(file, script, 0o600); err != nil {
		r.t.Fatal(err)
	}
	args := []string{"--vty_socket", r.in.Dir, "--config_dir", r.in.ConfDir, "-f", file}
	out, err := r.in.Tools().Command(ctx, append([]string{frrproc.DefaultVtysh}, args...)...).CombinedOutput()
	if err != nil || frrproc.Refused(out) || strings.Contains(string(out), "line ") {
		return fmt.Errorf("vtysh -f of the script: %v: %s\nscript:\n%s", err, out, script)
	}
	return nil
}

// converge runs the Go delta to file, again while something significant is left (at most 3 runs, as pkg/frr
// does), and returns the number of runs; a refusal ends it.
func (r *router) converge(ctx context.Context, file string) (int, error) {
	r.t.Helper()
	runs := 0
	var prev []string
	for runs < 3 {
		d, err := delta(r.t, file, r.running(ctx), r.dialect)
		if err != nil {
			r.t.Fatal(err)
		}
		del, add := d.Listing()
		left := append(significant(del), significant(add)...)
		if len(left) == 0 || slices.Equal(left, prev) {
			break
		}
		prev = left
		runs++
		if err := r.apply(ctx, d.Script()); err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// delta is the Go diff from the router's running config to the file.
func delta(t *testing.T, file string, running []byte, dialect frrdiff.Dialect) (frrdiff.Delta, error) {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cand, err := frrdiff.Parse(text, frrdiff.File, dialect)
	if err != nil {
		return frrdiff.Delta{}, err
	}
	run, err := frrdiff.Parse(running, frrdiff.Running, dialect)
	if err != nil {
		t.Fatalf("FRR's own running config undecidable: %v\n%s", err, running)
	}
	return frrdiff.Compare(cand, run)
}

// noise is what frr-reload.py always lists for pkg/frr's configs and FRR never changes (pkg/frr's
// Diff.Significant leaves the same out).
func significant(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		l = strings.TrimSpace(l)
		for _, p := range []string{"frr version", "hostname ", "no hostname ", "service integrated-vtysh-config"} {
			if strings.HasPrefix(l, p) {
				return true
			}
		}
		return l == "line vty"
	})
}

// residue are lines of das-schiff's own base that FRR 8.4 never shows (see pkg/frr's baseResidue): they stay in
// any diff against a config that has them.
var residue = []string{"router bgp 64510", " address-family ipv4 unicast", "  neighbor def_mgmt activate",
	"router bgp 64510 vrf Vrf_mgmt", "  neighbor mgmt_def activate"}

// wantUndecidable are the golden configs frrdiff leaves to frr-reload.py, and why.
var wantUndecidable = map[string]string{
	"brownfield-dasschiff-testdata": "das-schiff's base indents its address-family lines deeper than the rendered ones",
}

// TestAgainstFRRReload walks real daemons through chains of pkg/frr's golden configs. At every step the Go diff
// must list exactly what "frr-reload.py --test" lists, and after its script has run through one "vtysh -f"
// (again while something is left, as frr-reload.py does in a second pass) frr-reload.py must find nothing left
// to change: the correctness oracle.
func TestAgainstFRRReload(t *testing.T) {
	t.Parallel()
	for _, f := range frrs(t) {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			againstFRRReload(t, f)
		})
	}
}

// refusedBy10 are golden configs FRR 10 refuses (see pkg/frr's TestGoldenAcceptedByFRR): das-schiff's own base
// sets the next hop 0.0.0.2.
var refusedBy10 = []string{"brownfield-dasschiff-testdata.conf"}

func againstFRRReload(t *testing.T, f frrtest.FRR) {
	all, err := filepath.Glob(filepath.Join(goldenDir, "*.conf"))
	var files []string
	for _, file := range all {
		if f.Major < 10 || !slices.Contains(refusedBy10, filepath.Base(file)) {
			files = append(files, f.Golden(file))
		}
	}
	if err != nil || len(files) < 20 {
		t.Fatalf("want the golden configs, got %d (%v)", len(files), err)
	}
	slices.Sort(files)
	full := f.Golden(filepath.Join(goldenDir, "full.conf"))
	var hub []string
	for _, file := range files {
		hub = append(hub, file, full)
	}
	chains := []struct {
		name  string
		files []string
	}{
		{"sorted", append(slices.Clone(files), files[0])},
		{"from and back to full", append([]string{full}, hub...)},
	}
	for _, c := range chains {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			r := newRouter(t, f)
			for i, file := range c.files {
				name := strings.TrimSuffix(filepath.Base(file), ".conf")
				wantDel, wantAdd := r.reloadTest(ctx, file)
				d, err := delta(t, file, r.running(ctx), r.dialect)
				if why, ok := wantUndecidable[name]; ok {
					if !errors.Is(err, frrdiff.ErrUndecidable) {
						t.Errorf("step %d %s: %v; want ErrUndecidable (%s)", i, name, err, why)
					}
					if err := r.reload(ctx, file); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d %s: %v", i, name, err)
				}
				gotDel, gotAdd := d.Listing()
				gotDel, gotAdd = withoutClosers(gotDel), withoutClosers(gotAdd)
				if !slices.Equal(gotDel, wantDel) || !slices.Equal(gotAdd, wantAdd) {
					t.Errorf("step %d %s: Go diff differs from frr-reload.py --test\nGo delete:\n%s\nfrr-reload.py delete:\n%s\nGo add:\n%s\nfrr-reload.py add:\n%s",
						i, name, strings.Join(gotDel, "\n"), strings.Join(wantDel, "\n"), strings.Join(gotAdd, "\n"), strings.Join(wantAdd, "\n"))
				}
				passes, err := r.converge(ctx, file)
				if err != nil {
					t.Errorf("step %d %s: %v", i, name, err)
				}
				del, add := r.reloadTest(ctx, file)
				add = slices.DeleteFunc(add, func(l string) bool { return slices.Contains(residue, l) })
				if left := append(significant(del), significant(add)...); len(left) > 0 {
					t.Errorf("step %d %s: after %d passes frr-reload.py --test still finds:\n%s", i, name, passes, strings.Join(left, "\n"))
				}
				t.Logf("step %d %s: -%d +%d lines, %d passes", i, name, len(wantDel), len(wantAdd), passes)
			}
		})
	}
}

func TestUndecidable(t *testing.T) {
	_, err := frrdiff.Parse([]byte("router bgp 1\n neighbor a peer-group\nip prefix-list x seq 5 permit any\n"), frrdiff.File, frrdiff.FRR10)
	var u *frrdiff.UndecidableError
	if !errors.Is(err, frrdiff.ErrUndecidable) || !errors.As(err, &u) || u.Line != 3 {
		t.Errorf("a top-level line inside an open block: %v", err)
	}
}

// TestCasesAgainstFRRReload loads each case's running config into two sets of fresh daemons. On one the Go
// diff to the candidate must list what frr-reload.py --test lists, and its script (run again while something
// is left, as pkg/frr does) must leave the daemons where frr-reload.py --reload leaves the other set: the same
// lines still differing (those FRR shows in another form). TestCompareCases keeps the listings and scripts as
// golden files.
func TestCasesAgainstFRRReload(t *testing.T) {
	t.Parallel()
	for _, f := range frrs(t) {
		for _, c := range compareCases {
			t.Run(f.Name+"/"+c.name, func(t *testing.T) {
				t.Parallel() // fresh daemons of its own
				caseAgainstFRRReload(t, f, c)
			})
		}
	}
}

// caseAgainstFRRReload is one case of TestCasesAgainstFRRReload against one FRR.
func caseAgainstFRRReload(t *testing.T, f frrtest.FRR, c compareCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	goR, pyR := newRouter(t, f), newRouter(t, f)
	dir := t.TempDir()
	running, cand := filepath.Join(dir, "running.conf"), filepath.Join(dir, "cand.conf")
	for f, text := range map[string]string{running: c.running, cand: c.cand} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []*router{goR, pyR} {
		if err := r.reload(ctx, running); err != nil {
			t.Fatal(err)
		}
	}
	wantDel, wantAdd := goR.reloadTest(ctx, cand)
	d, err := delta(t, cand, goR.running(ctx), goR.dialect)
	if err != nil {
		t.Fatal(err)
	}
	gotDel, gotAdd := d.Listing()
	gotDel, gotAdd = withoutClosers(gotDel), withoutClosers(gotAdd)
	if !slices.Equal(gotDel, wantDel) || !slices.Equal(gotAdd, wantAdd) {
		t.Errorf("Go diff differs from frr-reload.py --test\nGo delete:\n%s\nfrr-reload.py delete:\n%s\nGo add:\n%s\nfrr-reload.py add:\n%s",
			strings.Join(gotDel, "\n"), strings.Join(wantDel, "\n"), strings.Join(gotAdd, "\n"), strings.Join(wantAdd, "\n"))
	}
	refused := c.refused8
	if f.Major >= 10 {
		refused = ""
	}
	if _, err := goR.converge(ctx, cand); err != nil {
		if refused == "" || !strings.Contains(err.Error(), refused) {
			t.Errorf("%v; want no refusal or one of %q", err, refused)
		}
		if err := goR.reload(ctx, cand); err != nil { // pkg/frr's fallback
			t.Fatal(err)
		}
	} else if refused != "" {
		t.Errorf("the script ran without the refusal of %q", refused)
	}
	// frr-reload.py alone, again while it makes progress (pkg/frr's converge). Without pkg/frr's VRF blocks
	// added first it may fail: the script must then leave nothing at all.
	pyErr := pyR.reload(ctx, cand)
	pd, pa := pyR.reloadTest(ctx, cand)
	for range 2 {
		left := append(significant(pd), significant(pa)...)
		if pyErr != nil || len(left) == 0 {
			break
		}
		pyErr = pyR.reload(ctx, cand)
		if pd, pa = pyR.reloadTest(ctx, cand); slices.Equal(append(significant(pd), significant(pa)...), left) {
			break
		}
	}
	gd, ga := goR.reloadTest(ctx, cand)
	want := append(significant(pd), significant(pa)...)
	if pyErr != nil {
		t.Logf("frr-reload.py alone fails here: %v", pyErr)
		want = nil
	}
	if got := append(significant(gd), significant(ga)...); !slices.Equal(got, want) {
		t.Errorf("after the script frr-reload.py --test finds\n%s\nafter frr-reload.py --reload it finds\n%s\nscript:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"), d.Script())
	}
}
