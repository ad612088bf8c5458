package cluster

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Samples are the demo's resources (config/samples/demo/*.yaml) and what the topology derives from them.
type Samples struct {
	Dir string
	// Files are the resources applied first, in name order.
	Files []string
	// Networks are the L2 networks, sorted by name; each gets workloads on the nodes.
	Networks []Network
	// VRFs are the tenant VRFs (names), sorted.
	VRFs []string
}

// Network is one Layer2NetworkConfiguration of the samples.
type Network struct {
	Name    string
	VRF     string
	VLAN    int32
	Gateway netip.Prefix // first anycast gateway, e.g. 10.100.0.1/24
}

// Bridge is the node-side bridge the agent creates for the network.
func (n Network) Bridge() string { return fmt.Sprintf("%s%d", v1.L2BridgePrefix, n.VLAN) }

// VXLAN is the network's VXLAN device on a node.
func (n Network) VXLAN() string { return fmt.Sprintf("%s%d", v1.L2VXLANPrefix, n.VLAN) }

// LoadSamples reads the top-level YAML files of dir (sub-directories hold the later changes).
func LoadSamples(dir string) (*Samples, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("demo samples: %w", err)
	}
	s := &Samples{Dir: dir}
	vrfs := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == "kustomization.yaml" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s.Files = append(s.Files, path)
		objs, err := decodeFile(path)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			switch o := o.(type) {
			case *v1.VRFRouteConfiguration:
				vrfs[o.Spec.VRF] = true
			case *v1.Layer2NetworkConfiguration:
				if len(o.Spec.AnycastGateways) == 0 {
					return nil, fmt.Errorf("%s: layer2 %s has no anycastGateways (workloads need a gateway)", path, o.Name)
				}
				gw, err := netip.ParsePrefix(o.Spec.AnycastGateways[0])
				if err != nil || !gw.Addr().Is4() {
					return nil, fmt.Errorf("%s: layer2 %s: anycastGateways[0] %q is not an IPv4 address/prefix", path, o.Name, o.Spec.AnycastGateways[0])
				}
				s.Networks = append(s.Networks, Network{Name: o.Name, VRF: o.Spec.VRF, VLAN: o.Spec.ID, Gateway: gw})
			}
		}
	}
	slices.Sort(s.Files)
	slices.SortFunc(s.Networks, func(a, b Network) int { return cmp.Compare(a.Name, b.Name) })
	for v := range vrfs {
		s.VRFs = append(s.VRFs, v)
	}
	slices.Sort(s.VRFs)
	if len(s.VRFs) < 2 {
		return nil, fmt.Errorf("demo samples in %s: want at least two tenant VRFs, found %v", dir, s.VRFs)
	}
	for _, v := range s.VRFs {
		if len(s.networksOf(v)) == 0 {
			return nil, fmt.Errorf("demo samples in %s: VRF %s has no L2 network (its workloads need one)", dir, v)
		}
	}
	return s, nil
}

// networksOf lists the networks routed in vrf.
func (s *Samples) networksOf(vrf string) []Network {
	var out []Network
	for _, n := range s.Networks {
		if n.VRF == vrf {
			out = append(out, n)
		}
	}
	return out
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err) // static registration of client-go's types cannot fail
	}
	if err := v1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// decodeFile decodes every YAML document of a file into typed objects.
func decodeFile(path string) ([]client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	var out []client.Object
	for i, doc := range docSeparator.Split(string(data), -1) {
		if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
			continue
		}
		obj, _, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		co, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%s: document %d: %T is not an object", path, i+1, obj)
		}
		out = append(out, co)
	}
	return out, nil
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// Apply creates or updates every object of a YAML file, as `kubectl apply` would for these objects (the spec
// in the file replaces the stored spec). It returns one line per object, e.g.
// "vrfrouteconfiguration/tenant-a configured".
func (c *Cluster) Apply(ctx context.Context, path string) ([]string, error) {
	_, lines, err := c.apply(ctx, path)
	return lines, err
}

// apply is Apply that also returns the objects as stored (defaults filled in by the API server).
func (c *Cluster) apply(ctx context.Context, path string) ([]client.Object, []string, error) {
	objs, err := decodeFile(path)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for _, obj := range objs {
		gvk, err := c.client.GroupVersionKindFor(obj)
		if err != nil {
			return objs, out, err
		}
		name := strings.ToLower(gvk.Kind) + "/" + obj.GetName()
		existing := obj.DeepCopyObject().(client.Object)
		err = c.client.Get(ctx, client.ObjectKeyFromObject(obj), existing)
		switch {
		case apierrors.IsNotFound(err):
			if err := c.client.Create(ctx, obj); err != nil {
				return objs, out, fmt.Errorf("create %s: %w", name, err)
			}
			out = append(out, name+" created")
		case err != nil:
			return objs, out, fmt.Errorf("get %s: %w", name, err)
		default:
			obj.SetResourceVersion(existing.GetResourceVersion())
			if err := c.client.Update(ctx, obj); err != nil {
				return objs, out, fmt.Errorf("update %s: %w", name, err)
			}
			if specEqual(existing, obj) {
				out = append(out, name+" unchanged")
			} else {
				out = append(out, name+" configured")
			}
		}
	}
	return objs, out, nil
}

// revisionIncludes reports whether the revision holds every object with the same spec.
func (c *Cluster) revisionIncludes(ctx context.Context, name string, objs []client.Object) (bool, error) {
	var rev v1.NetworkConfigRevision
	if err := c.client.Get(ctx, client.ObjectKey{Name: name}, &rev); err != nil {
		return false, fmt.Errorf("get revision %s: %w", name, err)
	}
	for _, o := range objs {
		found := false
		switch o := o.(type) {
		case *v1.VRFRouteConfiguration:
			for _, r := range rev.Spec.VRF {
				found = found || (r.Name == o.Name && equality.Semantic.DeepEqual(r.VRFRouteConfigurationSpec, o.Spec))
			}
		case *v1.Layer2NetworkConfiguration:
			for _, r := range rev.Spec.Layer2 {
				found = found || (r.Name == o.Name && equality.Semantic.DeepEqual(r.Layer2NetworkConfigurationSpec, o.Spec))
			}
		case *v1.BGPPeering:
			for _, r := range rev.Spec.BGP {
				found = found || (r.Name == o.Name && equality.Semantic.DeepEqual(r.BGPPeeringSpec, o.Spec))
			}
		default:
			found = true // not part of revisions
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// specEqual compares the user-facing specs of two objects of the same kind.
func specEqual(a, b client.Object) bool {
	switch a := a.(type) {
	case *v1.VRFRouteConfiguration:
		return equality.Semantic.DeepEqual(a.Spec, b.(*v1.VRFRouteConfiguration).Spec)
	case *v1.Layer2NetworkConfiguration:
		return equality.Semantic.DeepEqual(a.Spec, b.(*v1.Layer2NetworkConfiguration).Spec)
	case *v1.BGPPeering:
		return equality.Semantic.DeepEqual(a.Spec, b.(*v1.BGPPeering).Spec)
	}
	return false
}
