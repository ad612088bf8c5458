package frr

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/fielderr"
	"github.com/network-operator/network-operator/test/harness/golden"
)

func renderCase(t *testing.T, c goldenCase) []byte {
	t.Helper()
	var out []byte
	var err error
	if c.base != "" {
		base, rerr := os.ReadFile(filepath.Join("testdata", "brownfield", c.base))
		if rerr != nil {
			t.Fatal(rerr)
		}
		out, err = RenderBrownfield(Brownfield{Base: base, ManagementVRFs: c.mgmt}, &c.cfg)
	} else {
		out, err = Render(&c.cfg)
	}
	if err != nil {
		t.Fatalf("render %s: %v", c.name, err)
	}
	return out
}

// TestGolden keeps each case rendered for the FRR that ships as testdata/golden/NAME.conf and, where FRR 8's
// rendering differs, that one as testdata/golden/frr8/NAME.conf (which exists exactly then). A case that names
// its release (cfg.FRR: a feature of a newer FRR) is rendered for that release alone.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			got := renderCase(t, c)
			path := filepath.Join("testdata", "golden", c.name+".conf")
			seen[filepath.Base(path)] = true
			golden.Assert(t, path, got)
			if c.cfg.FRR != (Version{}) {
				return
			}

			c8 := c
			c8.cfg.FRR = Version{Major: 8, Minor: 4}
			got8 := renderCase(t, c8)
			path8 := filepath.Join("testdata", "golden", "frr8", c.name+".conf")
			_, err := os.Stat(path8)
			switch {
			case !bytes.Equal(got8, got):
				golden.Assert(t, path8, got8)
			case golden.Updating():
				_ = os.Remove(path8)
			case err == nil:
				t.Errorf("%s: FRR 8's rendering is the same as FRR 10's: remove it (-update does)", path8)
			}
		})
	}
	// A golden file without a case would escape the FRR acceptance check's
	// meaning; keep the directory exactly in sync.
	entries, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] && !e.IsDir() {
			t.Errorf("testdata/golden/%s has no case in goldenCases", e.Name())
		}
	}
}

// shuffled reverses every list whose order the renderer must not depend on.
func shuffled(c NodeConfig) NodeConfig {
	c.L2VNIs = slices.Clone(c.L2VNIs)
	slices.Reverse(c.L2VNIs)
	c.Peerings = slices.Clone(c.Peerings)
	slices.Reverse(c.Peerings)
	c.VRFs = slices.Clone(c.VRFs)
	slices.Reverse(c.VRFs)
	c.RoutingTables = slices.Clone(c.RoutingTables)
	slices.Reverse(c.RoutingTables)
	for i := range c.VRFs {
		c.VRFs[i].RouteConfigs = slices.Clone(c.VRFs[i].RouteConfigs)
		slices.Reverse(c.VRFs[i].RouteConfigs)
	}
	for i := range c.Peerings {
		c.Peerings[i].Neighbors = slices.Clone(c.Peerings[i].Neighbors)
		slices.Reverse(c.Peerings[i].Neighbors)
	}
	return c
}

func TestRenderDeterministic(t *testing.T) {
	for _, c := range goldenCases() {
		first := renderCase(t, c)
		again := renderCase(t, c)
		c.cfg = shuffled(c.cfg)
		reordered := renderCase(t, c)
		if !bytes.Equal(first, again) {
			t.Errorf("%s: two renders differ", c.name)
		}
		if !bytes.Equal(first, reordered) {
			t.Errorf("%s: render depends on list order:\n%s", c.name, golden.LineDiff(string(first), string(reordered)))
		}
	}
}

func TestBrownfieldKeepsBaseBytes(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "brownfield", "hints.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := brownfieldConfig()
	out, err := RenderBrownfield(Brownfield{Base: base}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := renderSections(buildView(&cfg))
	if err != nil {
		t.Fatal(err)
	}
	// Removing what was inserted must give the base minus its hint lines.
	stripped := string(out)
	for _, s := range sectionOrder {
		if sections[s.name] == "" {
			continue
		}
		if !strings.Contains(stripped, sections[s.name]) {
			t.Fatalf("section %s not inserted verbatim", s.name)
		}
		stripped = strings.Replace(stripped, sections[s.name], "", 1)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(string(base), "\n") {
		if !hintRe.MatchString(strings.TrimSuffix(line, "\n")) {
			want.WriteString(line)
		}
	}
	if stripped != want.String() {
		t.Errorf("base bytes changed:\n%s", golden.LineDiff(want.String(), stripped))
	}
	for _, keep := range []string{"hostname provisioned-node", "route-map rm_mgmt_vrf_export deny 65535", "bgp bestpath as-path multipath-relax"} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("base line %q missing", keep)
		}
	}
}

func TestBrownfieldHintErrors(t *testing.T) {
	cfg := NodeConfig{
		Underlay: Underlay{ASN: 65000, RouterID: addr("10.0.0.1")},
		VRFs:     []VRF{{Name: "tenant1", VNI: 5001}},
	}
	cases := []struct {
		name, base, wantMsg string
	}{
		{"unknown hint", "#++{{.VRFs}}\n#++{{.BGP}}\n#++{{.Routes}}\n", `unknown hint "#++{{.Routes}}"`},
		{"duplicate hint", "#++{{.VRFs}}\n#++{{.BGP}}\n #++{{.VRFs}}\n", "line 3: hint #++{{.VRFs}} repeats line 1"},
		{"missing hint", "router bgp 65000\n#++{{.VRFs}}\n", "missing hint #++{{.BGP}}: the BGP instance of VRF tenant1 would be lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := RenderBrownfield(Brownfield{Base: []byte(c.base)}, &cfg)
			if !errors.Is(err, ErrBaseConfig) {
				t.Fatalf("err = %v, want ErrBaseConfig", err)
			}
			if !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, c.wantMsg)
			}
		})
	}
	// Unused hints of empty sections are fine and vanish.
	out, err := RenderBrownfield(Brownfield{Base: []byte("a\n#++{{.VRFs}}\n#++{{.BGP}}\n#++{{.RouteMaps}}\nb")}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "#++") || !strings.HasPrefix(string(out), "a\nvrf tenant1\n") || !strings.HasSuffix(string(out), "!\nb") {
		t.Errorf("unexpected output:\n%s", out)
	}
	// The brownfield base owns the underlay.
	bad := cfg
	bad.Underlay.Neighbors = []Neighbor{{Address: addr("192.0.2.1"), RemoteAS: "65001"}}
	if _, err := RenderBrownfield(Brownfield{Base: []byte("#++{{.VRFs}}\n#++{{.BGP}}\n")}, &bad); !errors.Is(err, fielderr.ErrInvalid) {
		t.Errorf("underlay neighbours in brownfield mode: err = %v, want fielderr.ErrInvalid", err)
	}
}

// BenchmarkRender renders the largest case (underlay, two L2VNIs, a leaking
// VRF, two peerings): the agent does this on every reconcile.
func BenchmarkRender(b *testing.B) {
	cfg := fullConfig()
	for b.Loop() {
		if _, err := Render(&cfg); err != nil {
			b.Fatal(err)
		}
	}
}
