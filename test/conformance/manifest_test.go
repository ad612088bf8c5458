package conformance_test

import (
	"net/netip"
)

// dasSchiffRepo is where das-schiff network-operator publishes the inputs below.
const dasSchiffRepo = "https://github.com/telekom/das-schiff-network-operator"

// licence of every input: das-schiff network-operator is Apache-2.0 (testdata/dasschiff/NOTICE).
const licence = "Apache-2.0"

// origin is where an input comes from in das-schiff's repository.
type origin struct {
	Path   string // in das-schiff's repository
	Commit string // the commit the file was taken from (its last change there)
}

// resourceSet is a YAML file of das-schiff's kinds (apiVersion adapted), applied together: its objects refer
// to each other. Sets are applied one after the other, each removed before the next (their names overlap).
type resourceSet struct {
	Name   string
	Path   string // relative to this package
	Origin origin
	// Refused maps an object name to the message the API server refuses it with, on purpose.
	Refused map[string]string
	// Held lists "Kind/name: reason" of the objects the operator holds back (MissingReference), in HoldBack
	// order; the rest must build into the node's config.
	Held []string
}

// nodeFile is one of das-schiff's node configuration files, read by the agent (agent/specfile).
type nodeFile struct {
	Name   string
	Path   string
	Origin origin
	// ParseErr, when set, is the message the agent refuses the file with, on purpose.
	ParseErr string
	// WithNodeNetworkConfig is a NodeNetworkConfig document (ours, not das-schiff's) appended to the file as its
	// second document: it names the VRFs the file looks up and gives the AS number das-schiff's file leaves to
	// its serverASN, so the file's meaning reaches FRR. Alone, a das-schiff file without serverASN configures
	// no FRR (docs/migrating-from-das-schiff.md, "Node configuration files").
	WithNodeNetworkConfig string
}

// frrBase is a das-schiff FRR base configuration (hint comments), rendered into with RenderBrownfield.
type frrBase struct {
	Name     string
	Path     string
	Origin   origin
	ASN      uint32
	RouterID netip.Addr
	// Mgmt is the skipVRFConfig list of the node the base belongs to.
	Mgmt []string
	// Refused maps a resource set to the message RenderBrownfield refuses it with, on purpose.
	Refused map[string]string
	// Residue is exactly what the reload diff (frr-reload.py --test's) still reports after loading a config rendered into this
	// base (documented FRR display quirks of the base's own lines), in its order.
	Residue []string
}

var resourceSets = []resourceSet{
	{
		Name:   "legacy-api",
		Path:   "../../operator/webhook/testdata/dasschiff-legacy-api.yaml",
		Origin: origin{"docs/advanced/legacy-api.md", "4ac55458f0e8c266c62aabe79529702022e08faf"},
	},
	{
		Name:   "e2e-network-operator-configs",
		Path:   "testdata/dasschiff/e2e-network-operator-configs.yaml",
		Origin: origin{"e2etests/testdata/network-operator-configs.yaml", "83702d5ac3ac8fd12db0dba16d82190b746ce218"},
	},
	{
		Name:   "e2e-cluster2-network-configs",
		Path:   "testdata/dasschiff/e2e-cluster2-network-configs.yaml",
		Origin: origin{"e2etests/testdata/cluster2-network-configs.yaml", "4b0d6666bf98dade9acc8b68713c9043f4fb64c6"},
	},
	{
		Name:   "e2e-mirror",
		Path:   "testdata/dasschiff/e2e-mirror-manifests.yaml",
		Origin: origin{"e2etests/testdata/mirror/manifests.yaml", "5dbf3b54710febe0a81bf3eb7a54b34e11a6a613"},
	},
	{
		Name:   "proposal-traffic-mirroring",
		Path:   "testdata/dasschiff/proposal-traffic-mirroring.yaml",
		Origin: origin{"docs/proposals/01-traffic-mirroring/README.md", "93ad5ffa00dd12afdb2e660c782d834143cab5b2"},
		// The proposal's selectors name a Layer2 network and a VRF it never defines: admitted, held back.
		Held: []string{
			`MirrorSelector/mirror-ext-egress: mirrorSource: VRFRouteConfiguration "external" does not exist`,
			`MirrorSelector/mirror-vlan100-ingress: mirrorSource: Layer2NetworkConfiguration "vlan100" does not exist or is held back`,
		},
	},
	{
		Name:   "proposal-traffic-mirroring-apigroup",
		Path:   "testdata/dasschiff/proposal-traffic-mirroring-apigroup.yaml",
		Origin: origin{"docs/proposals/01-traffic-mirroring/README.md", "93ad5ffa00dd12afdb2e660c782d834143cab5b2"},
		Refused: map[string]string{
			"mirror-vlan100-ingress": "mirrorTarget.apiGroup network.t-caas.telekom.com is not this API group: leave apiGroup out (or write network.network-operator.io)",
		},
	},
	{
		Name:   "samples",
		Path:   "testdata/dasschiff/samples.yaml",
		Origin: origin{"config/samples/network_v1alpha1_{vrfrouteconfiguration,layer2networkconfiguration,routingtable}.yaml", "86fe1e7e1d245d3817325b56a10b3d64d9216189"},
		// Placeholders ("TODO(user): Add fields here", spec null): every required field is missing. The VRF's
		// refusal includes the documented one of a VRF without vni.
		Refused: map[string]string{
			"vrfrouteconfiguration-sample": `spec.vrf: Required value: the VRF name, spec.vni: Required value: VRF "" needs its L3 VNI: ` +
				`write spec.vni (1..16777215, the same in every VRFRouteConfiguration of the VRF; das-schiff v0.2 read it ` +
				`from the node vnimap file, which the operator does not have), spec.seq: Invalid value: 0: route-map ` +
				`sequence must be within 1..65534]`,
			"layer2networkconfiguration-sample": `[spec.id: Invalid value: 0: VLAN id must be within 1..4094, spec.vni: ` +
				`Invalid value: 0: VNI must be within 1..16777215, spec.mtu: Invalid value: 0: MTU must be within 1000..9000]`,
			"routingtable-sample": `spec.tableId: Invalid value: 0: table id (below the VRF tables 1000000000+VNI) must be ` +
				`within 1..1000000000`,
		},
	},
}

const nodeFiles = "../../agent/specfile/testdata/das-schiff/"

// withVRFs names the VRFs of das-schiff's README example (vrf1..vrf3 from its vnimap, mgmt_vrf of its
// skipVRFConfig) with nothing but their names: the agent resolves them the das-schiff way.
const withVRFs = `apiVersion: network.network-operator.io/v1alpha1
kind: NodeNetworkConfig
metadata:
  name: worker-1
spec:
  revision: conformance
  underlay:
    asn: 65000
    interfaces: [eth0]
  vrfs:
  - name: mgmt_vrf
  - name: vrf1
  - name: vrf2
  - name: vrf3
`

// withoutVRFs only gives the AS number (the operator's file has empty lookup tables).
const withoutVRFs = `apiVersion: network.network-operator.io/v1alpha1
kind: NodeNetworkConfig
metadata:
  name: worker-1
spec:
  revision: conformance
  underlay:
    asn: 65000
    interfaces: [eth0]
`

var nodeFileInputs = []nodeFile{
	{Name: "readme-example", Path: nodeFiles + "readme-example.yaml",
		Origin: origin{"README.md", "86b3ae397032c373f1278ea7b4049c87fe035e2e"}, WithNodeNetworkConfig: withVRFs},
	{Name: "pkg-config-testdata", Path: nodeFiles + "config.yaml",
		Origin: origin{"pkg/config/testdata/config.yaml", "ffcf9dcd5ab7f86bcffd161a114f2b4bb9e30b35"}, WithNodeNetworkConfig: withVRFs},
	{Name: "operator-config", Path: nodeFiles + "operator-config.yaml",
		Origin: origin{"config/operator/config.yaml", "50c9a5dd2d494fbd232468445272d0f370136565"}, WithNodeNetworkConfig: withoutVRFs},
	{Name: "pkg-config-invalid", Path: nodeFiles + "invalidConfig.yaml",
		Origin: origin{"pkg/config/testdata/invalidConfig.yaml", "ffcf9dcd5ab7f86bcffd161a114f2b4bb9e30b35"},
		// "-invalid" is a YAML string, not a mapping: das-schiff's own loader refuses it too.
		ParseErr: "invalid input: node config file: document 1: error unmarshaling JSON: while decoding JSON: json: " +
			"cannot unmarshal string into Go value of type map[string]interface {}"},
}

const frrBases = "../../pkg/frr/testdata/brownfield/"

var frrBaseInputs = []frrBase{
	{Name: "readme-base", Path: frrBases + "dasschiff-readme.conf",
		Origin: origin{"README.md", "6a4775794d35b5904b07dbbc8e6e7051ad6890aa"},
		ASN:    65000, RouterID: netip.MustParseAddr("10.0.0.1"), Mgmt: []string{"mgmt_vrf"},
		Refused: refusedV6},
	{Name: "testdata-base", Path: frrBases + "dasschiff-testdata.conf",
		Origin: origin{"testdata/frr.conf.tpl", "86b3ae397032c373f1278ea7b4049c87fe035e2e"},
		ASN:    64510, RouterID: netip.MustParseAddr("198.51.100.0"), Mgmt: []string{"om_refm2m"},
		Refused: refusedV6,
		// Under "frr defaults traditional" without "no bgp default ipv4-unicast", ipv4 unicast is active by
		// default and FRR 8.4 never shows the base's own explicit "neighbor X activate" lines (pkg/frr's
		// accept_test.go, baseResidue): the reload diff reports exactly these, each time.
		Residue: []string{
			"+ router bgp 64510", "+  address-family ipv4 unicast", "+   neighbor def_mgmt activate",
			"+ router bgp 64510 vrf Vrf_mgmt", "+  address-family ipv4 unicast", "+   neighbor mgmt_def activate",
		}},
}

// refusedV6: neither das-schiff base has the optional #++{{.NeighborsV6}} hint, so the sets with IPv6 leaks or
// an IPv6 cluster peering are refused in brownfield mode, naming the hint (docs/migrating-from-das-schiff.md,
// "FRR base configurations"); das-schiff would have dropped those lines silently.
var refusedV6 = map[string]string{
	"legacy-api": "brownfield base config: missing hint #++{{.NeighborsV6}}: the default BGP instance's ipv6 unicast " +
		"lines of workload-loopbacks-n6, taas.100, import vrf route-map rm6_cluster_import would be lost (the hint " +
		"goes inside its address-family ipv6 unicast)",
	"e2e-network-operator-configs": "brownfield base config: missing hint #++{{.NeighborsV6}}: the default BGP " +
		"instance's ipv6 unicast lines of vr.m2m, import vrf route-map rm6_cluster_import would be lost (the hint " +
		"goes inside its address-family ipv6 unicast)",
}
