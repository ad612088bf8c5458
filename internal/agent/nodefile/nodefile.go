// Package nodefile reads the node configuration file of standalone mode (`network-agent --config-file`): either a
// NodeNetworkConfig document (apiVersion network.network-operator.io/v1alpha1, kind NodeNetworkConfig) or the
// older das-schiff node config file, which is converted into a NodeNetworkConfigSpec.
//
// The das-schiff format:
//
//	vnimap:          # VRF name -> L3 VNI
//	  vrf1: 100
//	skipVRFConfig:   # VRFs set up by provisioning: the agent leaves them alone
//	  - mgmt_vrf
//	bpfInterfaces:   # interfaces the eBPF router is attached to
//	  - br.vrf1
//
// Conversion rules (Legacy):
//   - Every vnimap entry becomes a NodeVRF with that VNI. Its routing table is v1.VRFTableIDBase + VNI - the rule
//     the operator uses (operator/nodeconfig), so a node moved from the file to the operator keeps its tables, and
//     the table id never depends on which other VRFs exist. BPF VRF ids are 1..n in VRF name order.
//   - skipVRFConfig VRFs are not managed: they get no VRF, bridge or VXLAN, and are only reported as notes.
//   - Each bpfInterfaces entry becomes a data-plane interface (hook auto). Its VRF is inferred from its name: the
//     agent's own prefixes ("br.<vrf>", "vx.<vrf>", "vr.<vrf>"), "vx.<vni>" for a vnimap VNI, or "<vrf>_<suffix>"
//     (das-schiff's "<vrf>_def" veths). With a managed VRF the interface routes in it (mode route); otherwise
//     (a skipVRFConfig VRF, or no VRF recognisable) it is attached in mode pass - counted, handed to the kernel -
//     and a note says so.
//   - The file has no underlay, so FRR is not configured from it (the spec's underlay stays empty).
package nodefile

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/fielderr"
)

// invalidFile is a problem of the whole file (no single field to name); like the field errors it matches
// fielderr.ErrInvalid: the file cannot be used.
func invalidFile(format string, args ...any) error {
	return fmt.Errorf("%w: node config file: %s", fielderr.ErrInvalid, fmt.Sprintf(format, args...))
}

// Format says which kind of document a file held.
type Format string

// Formats.
const (
	FormatNodeNetworkConfig Format = "NodeNetworkConfig"
	FormatLegacy            Format = "das-schiff"
)

// Document is a parsed file.
type Document struct {
	Format Format
	// Name is metadata.name of a NodeNetworkConfig document ("" for the legacy format).
	Name string
	Spec v1.NodeNetworkConfigSpec
	// Notes describe conversion decisions (legacy format).
	Notes []string
}

// Legacy is the das-schiff node config file.
type Legacy struct {
	VNIMap        map[string]int32 `json:"vnimap,omitempty"`
	SkipVRFConfig []string         `json:"skipVRFConfig,omitempty"`
	BPFInterfaces []string         `json:"bpfInterfaces,omitempty"`
}

// ReadFile reads and parses path.
func ReadFile(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read node config file: %w", err)
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Parse decodes a NodeNetworkConfig document or a legacy file. Unknown fields are errors. Every problem of the
// file matches fielderr.ErrInvalid.
func Parse(data []byte) (*Document, error) {
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, invalidFile("%v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 || top == nil {
		return nil, invalidFile("empty document")
	}
	if _, ok := top["kind"]; ok {
		return parseNNC(data, top)
	}
	for _, k := range []string{"vnimap", "skipVRFConfig", "bpfInterfaces"} {
		if _, ok := top[k]; ok {
			var l Legacy
			if err := yaml.UnmarshalStrict(data, &l); err != nil {
				return nil, invalidFile("legacy format: %v", err)
			}
			spec, notes, err := l.Spec()
			if err != nil {
				return nil, err
			}
			return &Document{Format: FormatLegacy, Spec: spec, Notes: notes}, nil
		}
	}
	return nil, invalidFile("neither a NodeNetworkConfig (no kind) nor a das-schiff file (no vnimap, skipVRFConfig or bpfInterfaces)")
}

func parseNNC(data []byte, top map[string]any) (*Document, error) {
	if k := fmt.Sprint(top["kind"]); k != "NodeNetworkConfig" {
		return nil, fielderr.Join(field.ErrorList{field.NotSupported(field.NewPath("kind"), k, []string{"NodeNetworkConfig"})})
	}
	if av, ok := top["apiVersion"]; ok && fmt.Sprint(av) != v1.GroupVersion.String() {
		return nil, fielderr.Join(field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), fmt.Sprint(av), []string{v1.GroupVersion.String()})})
	}
	var nnc v1.NodeNetworkConfig
	if err := yaml.UnmarshalStrict(data, &nnc); err != nil {
		return nil, invalidFile("%v", err)
	}
	return &Document{Format: FormatNodeNetworkConfig, Name: nnc.Name, Spec: nnc.Spec}, nil
}

// Spec converts the legacy file (see the package documentation for the rules).
func (l Legacy) Spec() (v1.NodeNetworkConfigSpec, []string, error) {
	var errs field.ErrorList
	var spec v1.NodeNetworkConfigSpec
	var notes []string

	skip := map[string]bool{}
	for i, s := range l.SkipVRFConfig {
		if s == "" {
			errs = append(errs, field.Required(field.NewPath("skipVRFConfig").Index(i), "a VRF name"))
		}
		skip[s] = true
	}
	names := make([]string, 0, len(l.VNIMap))
	for name := range l.VNIMap {
		names = append(names, name)
	}
	slices.Sort(names)
	byVNI := map[int32]string{}
	managed := map[string]bool{}
	for _, name := range names {
		vni := l.VNIMap[name]
		f := field.NewPath("vnimap").Child(name)
		switch {
		case name == "" || len(name) > v1.MaxVRFNameLen:
			errs = append(errs, field.Invalid(f, name, fmt.Sprintf("not a VRF name (1..%d bytes)", v1.MaxVRFNameLen)))
			continue
		case vni < v1.MinVNI || vni > v1.MaxVNI:
			errs = append(errs, field.Invalid(f, vni, fmt.Sprintf("not a VNI (%d..%d)", v1.MinVNI, v1.MaxVNI)))
			continue
		case byVNI[vni] != "":
			errs = append(errs, field.Invalid(f, vni, "also the VNI of "+byVNI[vni]))
			continue
		case skip[name]:
			notes = append(notes, fmt.Sprintf("vrf %s: in skipVRFConfig, not managed (vnimap entry ignored)", name))
			continue
		}
		byVNI[vni] = name
		managed[name] = true
		spec.VRFs = append(spec.VRFs, v1.NodeVRF{Name: name, ID: int32(len(spec.VRFs) + v1.MinVRFID), TableID: v1.VRFTableIDBase + vni, VNI: vni})
	}
	for _, s := range l.SkipVRFConfig {
		if _, inMap := l.VNIMap[s]; !inMap && s != "" {
			notes = append(notes, fmt.Sprintf("vrf %s: in skipVRFConfig, not managed", s))
		}
	}

	seen := map[string]bool{}
	for i, ifname := range l.BPFInterfaces {
		f := field.NewPath("bpfInterfaces").Index(i)
		switch {
		case ifname == "" || len(ifname) > v1.MaxInterfaceNameLen || strings.ContainsAny(ifname, "/ \t"):
			errs = append(errs, field.Invalid(f, ifname, fmt.Sprintf("not an interface name (1..%d bytes)", v1.MaxInterfaceNameLen)))
			continue
		case seen[ifname]:
			errs = append(errs, field.Duplicate(f, ifname))
			continue
		}
		seen[ifname] = true
		vrf := inferVRF(ifname, managed, skip, byVNI)
		di := v1.DataPlaneInterface{Name: ifname, Hook: v1.HookAuto}
		switch {
		case managed[vrf]:
			di.VRF, di.Mode = vrf, v1.ModeRoute
		case vrf != "":
			di.Mode = v1.ModePass
			notes = append(notes, fmt.Sprintf("interface %s: VRF %s is not managed (skipVRFConfig): attached in mode pass", ifname, vrf))
		default:
			di.Mode = v1.ModePass
			notes = append(notes, fmt.Sprintf("interface %s: no VRF recognisable from the name: attached in mode pass", ifname))
		}
		spec.DataPlane.Interfaces = append(spec.DataPlane.Interfaces, di)
	}
	slices.SortFunc(spec.DataPlane.Interfaces, func(a, b v1.DataPlaneInterface) int { return strings.Compare(a.Name, b.Name) })
	if err := fielderr.Join(errs); err != nil {
		return v1.NodeNetworkConfigSpec{}, nil, err
	}
	notes = append(notes, "no underlay in a das-schiff file: FRR is not configured")
	return spec, notes, nil
}

// inferVRF returns the VRF an interface name points to ("" when none), managed or skipped.
func inferVRF(ifname string, managed, skip map[string]bool, byVNI map[int32]string) string {
	known := func(n string) bool { return managed[n] || skip[n] }
	for _, p := range []string{v1.BridgePrefix, v1.VXLANPrefix, v1.VRFDevicePrefix} {
		rest, ok := strings.CutPrefix(ifname, p)
		if !ok {
			continue
		}
		if known(rest) {
			return rest
		}
		if p == v1.VXLANPrefix {
			if vni, err := strconv.ParseInt(rest, 10, 32); err == nil && byVNI[int32(vni)] != "" {
				return byVNI[int32(vni)]
			}
		}
	}
	if i := strings.LastIndexByte(ifname, '_'); i > 0 && known(ifname[:i]) {
		return ifname[:i]
	}
	if known(ifname) {
		return ifname
	}
	return ""
}
