// Package conformance_test holds the das-schiff conformance suite: das-schiff network-operator's published
// examples and configuration files (the manifest in manifest_test.go; origin, commit and licence of each in
// testdata/dasschiff/NOTICE and the files' headers), taken through every stage they reach here:
//
//   - resources: applied to a real API server with strict field validation through the operator's webhooks,
//     stored as written, held back or built into a node's NodeNetworkConfig by operator/nodespec;
//   - node config files: read by the agent (agent/specfile) and translated for FRR
//     (agent/frrmodel);
//   - FRR: every config rendered from them - greenfield, and brownfield into each das-schiff base config - loaded
//     into a scratch FRR (zebra + bgpd, FRR 8.4) and the reload diff (what frr-reload.py --test computes) against its running config finding
//     nothing to change (beyond what pkg/frr counts as noise, and the documented residue of a base).
//
// What das-schiff accepts and this project refuses on purpose (docs/migrating-from-das-schiff.md) is asserted
// with its message. The test log ends with a table: input, stage, result.
package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/specfile"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/operator/nodespec"
	"github.com/network-operator/network-operator/operator/webhook"
	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
	"github.com/network-operator/network-operator/pkg/frr/frrtest/canonical"
	"github.com/network-operator/network-operator/pkg/frr/frrvty"
	"github.com/network-operator/network-operator/test/harness/testenv"
)

// One control plane for the package: the API server with the CRDs, the webhooks served from this process.
var shared = testenv.Shared{Options: testenv.Options{Webhooks: webhook.Options{}.Setup}}

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// report is the table printed at the end: input, stage, result.
type report struct {
	mu   sync.Mutex
	rows [][3]string
}

func (r *report) add(input, stage, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, [3]string{input, stage, fmt.Sprintf(format, args...)})
}

func (r *report) log(t *testing.T) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "INPUT\tSTAGE\tRESULT")
	r.mu.Lock()
	for _, row := range r.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\n", row[0], row[1], row[2])
	}
	r.mu.Unlock()
	_ = w.Flush()
	t.Logf("das-schiff conformance:\n%s", b.String())
}

// node is the node the resources are built for: a worker (das-schiff's examples select workers).
func node() *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	return n
}

var buildOptions = nodespec.Options{Underlay: nodespec.Underlay{ASN: 65000, Interfaces: []string{"eth0"}, RemoteASN: "external"}}

// agentEnv is a node whose das-schiff underlay loopback carries 10.0.0.1.
var agentEnv = specfile.Env{Addrs: func(name string) ([]netip.Addr, error) {
	if name == specfile.UnderlayLoopback {
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}
	return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
}}

// noSecrets: none of das-schiff's examples has a password.
func noSecrets(context.Context, v1.SecretKeyReference) (string, error) {
	return "", errors.New("no Secrets in the conformance suite")
}

// rendered is one FRR config to load.
type rendered struct {
	input   string
	stage   string
	config  []byte
	residue []string
}

func TestConformance(t *testing.T) {
	rep := &report{}
	t.Cleanup(func() { rep.log(t) })

	specs := map[string]*v1.NodeNetworkConfigSpec{} // resource set -> the node's spec
	t.Run("resources", func(t *testing.T) {
		env := shared.Get(t)
		for _, set := range resourceSets {
			t.Run(set.Name, func(t *testing.T) {
				if spec := applySet(t, env.Client, set, rep); spec != nil {
					specs[set.Name] = spec
				}
			})
		}
	})

	var configs []rendered
	t.Run("nodefiles", func(t *testing.T) {
		for _, f := range nodeFileInputs {
			t.Run(f.Name, func(t *testing.T) {
				configs = append(configs, readNodeFile(t, f, rep)...)
			})
		}
	})

	t.Run("render", func(t *testing.T) {
		for _, set := range resourceSets {
			spec := specs[set.Name]
			if spec == nil {
				continue // refused before it reached a node
			}
			t.Run(set.Name, func(t *testing.T) {
				cfg, err := frrmodel.NodeConfig(context.Background(), spec, noSecrets)
				if err != nil {
					rep.add(set.Name, "frr translate", "FAIL")
					t.Fatalf("translate the node's spec for FRR: %v", err)
				}
				green, err := frr.Render(cfg)
				if err != nil {
					rep.add(set.Name, "frr render greenfield", "FAIL")
					t.Fatalf("render: %v", err)
				}
				rep.add(set.Name, "frr render greenfield", "ok (%s)", frrmodel.Describe(cfg))
				configs = append(configs, rendered{input: set.Name, stage: "greenfield", config: green})
				for _, base := range frrBaseInputs {
					if out := renderBrownfield(t, set.Name, base, *cfg, rep); out != nil {
						configs = append(configs, rendered{input: set.Name, stage: "brownfield " + base.Name, config: out, residue: base.Residue})
					}
				}
			})
		}
	})

	// The FRR that ships and the host's FRR 8.4 (frr.mode=host, das-schiff's own).
	for _, fl := range []func(testing.TB) frrtest.FRR{frrtest.Shipped, frrtest.Host} {
		t.Run("frr", func(t *testing.T) {
			f := fl(t)
			for _, c := range configs {
				t.Run(f.Name+"/"+c.input+"/"+strings.ReplaceAll(c.stage, " ", "-"), func(t *testing.T) {
					loadIntoFRR(t, f, c, rep)
				})
			}
		})
	}
}

// applySet applies every object of set with strict field validation, checks the refusals the manifest
// expects and that the others are stored as written, then builds the node's config from what is stored. The
// objects are deleted when the subtest ends. It returns the spec (nil when no object was admitted).
func applySet(t *testing.T, c client.Client, set resourceSet, rep *report) *v1.NodeNetworkConfigSpec {
	data, err := os.ReadFile(set.Path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", set.Path, err)
	}
	admitted := 0
	for _, u := range objs {
		what := u.GetKind() + "/" + u.GetName()
		want, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec")
		err := c.Create(ctxT(t), u, client.FieldValidation("Strict"))
		if msg, refused := set.Refused[u.GetName()]; refused {
			if err == nil {
				deleteAfter(t, c, u)
				rep.add(set.Name, "apply "+what, "FAIL: admitted")
				t.Errorf("%s admitted, want refused with %q", what, msg)
				continue
			}
			if !strings.Contains(err.Error(), msg) {
				rep.add(set.Name, "apply "+what, "FAIL: other refusal")
				t.Errorf("%s refused with\n  %v\nwant a message containing\n  %s", what, err, msg)
				continue
			}
			rep.add(set.Name, "apply "+what, "refused as documented")
			continue
		}
		if err != nil {
			rep.add(set.Name, "apply "+what, "FAIL: refused")
			t.Errorf("%s refused: %v", what, err)
			continue
		}
		deleteAfter(t, c, u)
		admitted++
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := c.Get(ctxT(t), client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		stored, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec")
		if w, g := mustJSON(t, want), mustJSON(t, stored); w != g {
			rep.add(set.Name, "apply "+what, "FAIL: stored differently")
			t.Errorf("%s stored as\n  %s\nwant as written\n  %s", what, g, w)
			continue
		}
		rep.add(set.Name, "apply "+what, "ok, stored as written")
	}
	if t.Failed() || admitted == 0 {
		return nil
	}

	rev := snapshot(t, c)
	held := nodespec.HoldBack(rev)
	var heldText []string
	for _, h := range held {
		heldText = append(heldText, h.Kind+"/"+h.Name+": "+h.Reason)
	}
	if !slices.Equal(heldText, set.Held) {
		t.Errorf("held back:\n  %s\nwant\n  %s", strings.Join(heldText, "\n  "), strings.Join(set.Held, "\n  "))
	}
	for _, h := range heldText {
		rep.add(set.Name, "operator revision", "held back (MissingReference) as documented: %s", h)
	}
	hash, err := rev.ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	rev.Revision, rev.Sequence = hash, 1
	spec, err := nodespec.Build(rev, node(), nil, buildOptions)
	if err != nil {
		rep.add(set.Name, "operator node build", "FAIL")
		t.Fatalf("build the node's config: %v", err)
	}
	rep.add(set.Name, "operator node build", "ok (%d VRFs, %d layer2s, %d peers, %d tables, %d mirrors)",
		len(spec.VRFs), len(spec.Layer2s), len(spec.BGPPeers), len(spec.RoutingTables), len(spec.Mirrors))
	return &spec
}

// snapshot copies the stored objects into a revision as the operator's config controller does.
func snapshot(t *testing.T, c client.Client) *v1.NetworkConfigRevisionSpec {
	t.Helper()
	var rev v1.NetworkConfigRevisionSpec
	var vrfs v1.VRFRouteConfigurationList
	var l2s v1.Layer2NetworkConfigurationList
	var bgps v1.BGPPeeringList
	var tables v1.RoutingTableList
	var targets v1.MirrorTargetList
	var sels v1.MirrorSelectorList
	for _, l := range []client.ObjectList{&vrfs, &l2s, &bgps, &tables, &targets, &sels} {
		if err := c.List(ctxT(t), l); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range vrfs.Items {
		rev.VRF = append(rev.VRF, v1.VRFRevision{Name: o.Name, VRFRouteConfigurationSpec: o.Spec})
	}
	for _, o := range l2s.Items {
		rev.Layer2 = append(rev.Layer2, v1.Layer2Revision{Name: o.Name, Layer2NetworkConfigurationSpec: o.Spec})
	}
	for _, o := range bgps.Items {
		rev.BGP = append(rev.BGP, v1.BGPRevision{Name: o.Name, BGPPeeringSpec: o.Spec})
	}
	for _, o := range tables.Items {
		rev.RoutingTables = append(rev.RoutingTables, v1.RoutingTableRevision{Name: o.Name, RoutingTableSpec: o.Spec})
	}
	for _, o := range targets.Items {
		rev.MirrorTargets = append(rev.MirrorTargets, v1.MirrorTargetRevision{Name: o.Name, MirrorTargetSpec: o.Spec})
	}
	for _, o := range sels.Items {
		rev.MirrorSelectors = append(rev.MirrorSelectors, v1.MirrorSelectorRevision{Name: o.Name, MirrorSelectorSpec: o.Spec})
	}
	rev.Sort()
	return &rev
}

// readNodeFile reads a das-schiff node file as the agent does: alone (no serverASN: no FRR) and with a
// NodeNetworkConfig document naming its VRFs, whose FRR config it returns.
func readNodeFile(t *testing.T, f nodeFile, rep *report) []rendered {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := specfile.Parse(data, agentEnv)
	if f.ParseErr != "" {
		if err == nil || !strings.Contains(err.Error(), f.ParseErr) {
			rep.add(f.Name, "agent read", "FAIL")
			t.Fatalf("error %v, want one containing %q", err, f.ParseErr)
		}
		rep.add(f.Name, "agent read", "refused as in das-schiff: %v", err)
		return nil
	}
	if err != nil {
		rep.add(f.Name, "agent read", "FAIL")
		t.Fatalf("read: %v", err)
	}
	rep.add(f.Name, "agent read", "ok (%s, %d VRFs, %d data-plane interfaces)", d.Format, len(d.Spec.VRFs), len(d.Spec.DataPlane.Interfaces))
	if _, err := frrmodel.NodeConfig(context.Background(), &d.Spec, noSecrets); !errors.Is(err, frrmodel.ErrNoUnderlay) {
		rep.add(f.Name, "agent frr", "FAIL")
		t.Fatalf("without serverASN: error %v, want ErrNoUnderlay (FRR is configured only with an AS number)", err)
	}
	rep.add(f.Name, "agent frr", "no FRR config, as documented (no serverASN)")

	combined := f.Name + "+NodeNetworkConfig"
	d, err = specfile.Parse(append(append(slices.Clone(data), "\n---\n"...), f.WithNodeNetworkConfig...), agentEnv)
	if err != nil {
		rep.add(combined, "agent read", "FAIL")
		t.Fatalf("read with a NodeNetworkConfig document: %v", err)
	}
	rep.add(combined, "agent read", "ok (%s, %d VRFs: %s)", d.Format, len(d.Spec.VRFs), strings.Join(vrfNames(d.Spec.VRFs), " "))
	cfg, err := frrmodel.NodeConfig(context.Background(), &d.Spec, noSecrets)
	if err != nil {
		rep.add(combined, "agent frr", "FAIL")
		t.Fatalf("translate for FRR: %v", err)
	}
	out, err := frr.Render(cfg)
	if err != nil {
		rep.add(combined, "agent frr", "FAIL")
		t.Fatalf("render: %v", err)
	}
	out = d.Replacements.Apply(out)
	rep.add(combined, "agent frr", "ok (%s)", frrmodel.Describe(cfg))
	return []rendered{{input: combined, stage: "greenfield", config: out}}
}

func vrfNames(vrfs []v1.NodeVRF) []string {
	var out []string
	for _, v := range vrfs {
		out = append(out, fmt.Sprintf("%s/vni %d", v.Name, v.VNI))
	}
	return out
}

// renderBrownfield renders cfg into base as the agent does with --frr-base-config; the base owns the underlay.
func renderBrownfield(t *testing.T, set string, base frrBase, cfg frr.NodeConfig, rep *report) []byte {
	t.Helper()
	stage := "frr render brownfield " + base.Name
	data, err := os.ReadFile(base.Path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Underlay = frr.Underlay{ASN: base.ASN, RouterID: base.RouterID}
	out, err := frr.RenderBrownfield(frr.Brownfield{Base: data, ManagementVRFs: base.Mgmt}, &cfg)
	if msg, refused := base.Refused[set]; refused {
		if err == nil || !strings.Contains(err.Error(), msg) {
			rep.add(set, stage, "FAIL")
			t.Errorf("%s: error %v, want one containing %q", stage, err, msg)
			return nil
		}
		rep.add(set, stage, "refused as documented: %v", err)
		return nil
	}
	if err != nil {
		rep.add(set, stage, "FAIL")
		t.Errorf("%s: %v", stage, err)
		return nil
	}
	rep.add(set, stage, "ok")
	return out
}

// loadIntoFRR loads c into a scratch FRR (vtysh -C, then zebra + bgpd, with staticd for a base's static
// routes, in a namespace of their own) and computes the reload diff (frr-reload.py --test's) of the same file against its running
// config: nothing may be left to change but the base's documented residue.
//
// FRR 10 refuses das-schiff's base as it is: its route-map local_peering_hack sets the next hop 0.0.0.2, which
// FRR 10's route-map validation refuses, taking the whole policy transaction around it; FRR 8 (the release the
// base was written for) takes it.
func loadIntoFRR(t *testing.T, f frrtest.FRR, c rendered, rep *report) {
	stage := f.Name + " load+reload " + c.stage
	file := filepath.Join(t.TempDir(), "frr.conf")
	if err := os.WriteFile(file, c.config, 0o600); err != nil {
		t.Fatal(err)
	}
	daemons := frrreload.DefaultScratchDaemons
	if strings.Contains(string(c.config), "\nip route ") {
		daemons = append(slices.Clone(daemons), "staticd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	diff, err := canonical.Diff(t, ctx, frrvty.Target{Tools: f.Tools, Version: frr.Version{Major: f.Major}}, file, daemons)
	if f.Major >= 10 && strings.Contains(string(c.config), " set ip next-hop 0.0.0.2\n") {
		const why = "set ip next-hop 0.0.0.2"
		if err == nil || !strings.Contains(err.Error(), why) {
			rep.add(c.input, stage, "FAIL: not refused")
			t.Fatalf("FRR 10 took the base with %q: %v", why, err)
		}
		rep.add(c.input, stage, "refused by FRR 10 as documented (the base's %q)", why)
		return
	}
	if err != nil {
		rep.add(c.input, stage, "FAIL: refused by FRR")
		t.Fatalf("FRR refused the config: %v\n%s", err, c.config)
	}
	left := diff.Significant()
	if !slices.Equal(left, c.residue) {
		rep.add(c.input, stage, "FAIL: diff")
		t.Fatalf("the reload diff still differs:\n%s\nwant exactly:\n%s\nconfig:\n%s",
			strings.Join(left, "\n"), strings.Join(c.residue, "\n"), c.config)
	}
	if len(left) > 0 {
		rep.add(c.input, stage, "ok, loaded; reload diff is the base's documented residue (%d lines)", len(left))
		return
	}
	rep.add(c.input, stage, "ok, loaded; reload diff empty")
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func deleteAfter(t *testing.T, c client.Client, u *unstructured.Unstructured) {
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), u); err != nil {
			t.Errorf("delete %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	})
}

// mustJSON encodes v canonically (sorted keys, numbers alike whatever type the decoder picked).
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
