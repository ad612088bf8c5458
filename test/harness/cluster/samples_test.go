package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
)

func TestLoadDemoSamples(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSamples(filepath.Join(root, "config", "samples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.VRFs, []string{"tenant-a", "tenant-b"}) {
		t.Errorf("VRFs %v", s.VRFs)
	}
	var bridges []string
	for _, n := range s.Networks {
		bridges = append(bridges, n.Bridge()+"="+n.VRF+"@"+n.Gateway.String())
	}
	want := []string{"l2br.101=tenant-a@10.101.0.1/24", "l2br.100=tenant-a@10.100.0.1/24",
		"l2br.201=tenant-b@10.201.0.1/24", "l2br.200=tenant-b@10.200.0.1/24"}
	if !slices.Equal(bridges, want) {
		t.Errorf("networks %v, want %v", bridges, want)
	}
	// The change files decode and touch what the scenario expects.
	objs, err := decodeFile(filepath.Join(s.Dir, ChangeBrokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if l2, ok := objs[0].(*v1.Layer2NetworkConfiguration); !ok || l2.Name != brokenNetwork || l2.Spec.MTU != 9000 {
		t.Errorf("%s: %#v, want %s with MTU 9000", ChangeBrokenFile, objs[0], brokenNetwork)
	}
	objs, err = decodeFile(filepath.Join(s.Dir, ChangeExportFile))
	if err != nil {
		t.Fatal(err)
	}
	vrf, ok := objs[0].(*v1.VRFRouteConfiguration)
	if !ok || !slices.ContainsFunc(vrf.Spec.Export, func(p v1.PrefixItem) bool { return p.CIDR == changePrefix }) {
		t.Errorf("%s does not export %s", ChangeExportFile, changePrefix)
	}
}

func TestLoadSamplesRejects(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"one tenant": {"a.yaml": `apiVersion: network.network-operator.io/v1alpha1
kind: VRFRouteConfiguration
metadata: {name: a}
spec: {vrf: a, vni: 1, seq: 10}
`},
		"network without gateway": {"a.yaml": `apiVersion: network.network-operator.io/v1alpha1
kind: Layer2NetworkConfiguration
metadata: {name: n}
spec: {id: 10, vni: 10, vrf: a}
`},
		"not a resource": {"a.yaml": "kind: Nope\napiVersion: v9\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := LoadSamples(dir); err == nil {
				t.Error("LoadSamples accepted it")
			}
		})
	}
}

func TestForEach(t *testing.T) {
	var ran atomic.Int32
	items := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if err := forEach(context.Background(), items, func(context.Context, int) error { ran.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != int32(len(items)) {
		t.Errorf("ran %d of %d", ran.Load(), len(items))
	}
	boom := errors.New("boom")
	err := forEach(context.Background(), items, func(_ context.Context, i int) error {
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("forEach = %v, want the item's error", err)
	}
}

// TestPodNetworkSamplesDecode: the pod network samples (config/samples/podnetwork-*.yaml, applied against the API
// server with admission in operator/webhook) decode into typed objects, as Cluster.Apply reads them.
func TestPodNetworkSamplesDecode(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "podnetwork-*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("pod network samples %v (%v)", files, err)
	}
	for _, f := range files {
		objs, err := decodeFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var configs int
		for _, o := range objs {
			if c, ok := o.(*v1.PodNetworkConfig); ok {
				configs++
				if c.Namespace == "" {
					t.Errorf("%s: PodNetworkConfig %s has no namespace", f, c.Name)
				}
			}
		}
		if configs == 0 {
			t.Errorf("%s: no PodNetworkConfig", f)
		}
	}
}
