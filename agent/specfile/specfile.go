// Package specfile reads the node configuration file of standalone mode (`network-agent --config-file`): a
// NodeNetworkConfig document (apiVersion network.network-operator.io/v1alpha1, kind NodeNetworkConfig), a
// das-schiff node config file, or both as two YAML documents of one file (separated by "---").
//
// The das-schiff node config file (every generation of das-schiff's pkg/config):
//
//	vnimap:          # VRF name -> L3 VNI (v0.1): a lookup table
//	  vrf1: 100
//	vrfConfig:       # VRF name -> L3 VNI and route target (later versions): a lookup table, wins over vnimap
//	  vrf2: {vni: 101, rt: "65000:101"}
//	skipVRFConfig:   # VRFs the provisioning set up: never created here
//	  - mgmt_vrf
//	bpfInterfaces:   # interfaces the eBPF router is attached to
//	  - br.vrf1
//	serverASN: 65001 # the AS number of the node's BGP instances (das-schiff: of its VRF instances)
//	replacements:    # text replacements in the rendered FRR configuration, in order
//	  - {old: "a", new: "b"}
//	  - {old: "route-map (\\S+) permit", new: "route-map $1 deny", regex: true}
//
// Semantics (those of das-schiff's agent):
//   - vnimap and vrfConfig are lookup tables, not VRFs: a VRF exists on the node only once a resource names it.
//     The resource here is the NodeNetworkConfig document next to the das-schiff document; a NodeVRF that gives
//     only its name (no vni, no tableID) is resolved: vrfConfig first (VNI and, when the NodeVRF has none, its
//     route target), then vnimap, then skipVRFConfig. The routing table is v1.VRFTableIDBase + VNI - the rule
//     the operator uses (operator/nodespec), so a node moved from the file to the operator keeps its tables;
//     a NodeVRF without an id gets the lowest free one (name order). A file without a NodeNetworkConfig
//     document names no VRF: the node gets none.
//   - skipVRFConfig: a named VRF the provisioning set up; das-schiff renders no VRF, bridge, VXLAN nor VRF
//     template for it. Here it is left out of the node's spec (a note says so).
//   - bpfInterfaces: each one gets the router attached (hook auto). Its VRF is inferred from its name among
//     the VRFs of the node's spec: the agent's prefixes ("br.<vrf>", "vx.<vrf>", "vr.<vrf>"), "vx.<vni>" or
//     "<vrf>_<suffix>" (das-schiff's "<vrf>_def" veths), or the VRF's own name. With such a VRF the router routes
//     its traffic (mode route, like das-schiff's router). An interface of a skipVRFConfig VRF is routed too, in
//     mode fib: by the table of the VRF device the provisioning set up (das-schiff's router looked up the
//     ingress interface's table), counted under VRF id 0. An interface of no recognisable VRF is attached in
//     mode pass - counted and handed to the kernel. A note says which. An interface the NodeNetworkConfig
//     lists itself keeps that entry.
//   - serverASN becomes underlay.asn (when the NodeNetworkConfig sets another one, that is an error); with an
//     AS number the node's FRR is configured, the router id being the VTEP address (das-schiff's: the address
//     of its underlay loopback) unless the NodeNetworkConfig sets one.
//   - replacements are applied, in order, to the rendered FRR configuration (Document.Replacements.Apply).
//
// What the file cannot say - the VTEP address - comes from Env (ResolveVTEP): --vtep-address, the
// NodeNetworkConfig's underlay.vtepAddress, the address of --vtep-interface, of das-schiff's underlay loopback
// "dum.underlay", or the router id, in that order. It is only needed when a VNI is configured or FRR needs a
// router id; when none of them gives one the error names every source tried.
//
// Unknown keys are errors naming the key; a value that cannot work is a field error naming the field and value
// (all problems at once, joined by pkg/fielderr); every problem of the file matches fielderr.ErrInvalid.
package specfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/bgp"
	"github.com/network-operator/network-operator/pkg/bounds"
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
	// FormatCombined is a das-schiff document and a NodeNetworkConfig document in one file.
	FormatCombined Format = "das-schiff+NodeNetworkConfig"
)

// UnderlayLoopback is the interface das-schiff's agent takes the VTEP (and router id) address from.
const UnderlayLoopback = "dum.underlay"

// Document is a parsed file.
type Document struct {
	Format Format
	// Name is metadata.name of the NodeNetworkConfig document ("" without one).
	Name string
	Spec v1.NodeNetworkConfigSpec
	// Replacements are das-schiff's replacements of the rendered FRR configuration (nil: none).
	Replacements Replacements
	// Notes describe conversion decisions.
	Notes []string
}

// Legacy is the das-schiff node config file (the union of its generations' keys).
type Legacy struct {
	VNIMap        map[string]int64     `json:"vnimap,omitempty"`
	VRFConfig     map[string]LegacyVRF `json:"vrfConfig,omitempty"`
	SkipVRFConfig []string             `json:"skipVRFConfig,omitempty"`
	BPFInterfaces []string             `json:"bpfInterfaces,omitempty"`
	ServerASN     int64                `json:"serverASN,omitempty"`
	Replacements  []Replacement        `json:"replacements,omitempty"`
}

// LegacyVRF is one vrfConfig entry.
type LegacyVRF struct {
	VNI int64  `json:"vni"`
	RT  string `json:"rt,omitempty"`
}

// legacyKeys are the top-level keys that make a document a das-schiff file.
var legacyKeys = []string{"vnimap", "vrfConfig", "skipVRFConfig", "bpfInterfaces", "serverASN", "replacements"}

// Replacement replaces Old by New in the rendered FRR configuration; with Regex, Old is a Go regular expression
// and New may refer to its groups ($1).
type Replacement struct {
	Old   string `json:"old"`
	New   string `json:"new"`
	Regex bool   `json:"regex,omitempty"`

	re *regexp.Regexp
}

// Replacements apply in order.
type Replacements []Replacement

// Apply returns config with every replacement applied in order.
func (rs Replacements) Apply(config []byte) []byte {
	for _, r := range rs {
		switch {
		case r.re != nil:
			config = r.re.ReplaceAll(config, []byte(r.New))
		case r.Regex:
			config = regexp.MustCompile(r.Old).ReplaceAll(config, []byte(r.New)) // checked when parsed
		default:
			config = bytes.ReplaceAll(config, []byte(r.Old), []byte(r.New))
		}
	}
	return config
}

// Env is what the node says that the file cannot: where the VTEP address comes from.
type Env struct {
	// VTEPAddress is --vtep-address (zero: not given).
	VTEPAddress netip.Addr
	// VTEPInterface is --vtep-interface ("" : not given); its address is a candidate.
	VTEPInterface string
	// Addrs returns the addresses of an interface (an error wrapping fs.ErrNotExist when there is none such);
	// nil: interfaces are not looked at.
	Addrs func(ifname string) ([]netip.Addr, error)
}

// ReadFile reads and parses path.
func ReadFile(path string, env Env) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read node config file: %w", err)
	}
	d, err := Parse(data, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Parse decodes the file's documents (a NodeNetworkConfig, a das-schiff file, or one of each) into the node's
// spec. Unknown fields are errors. Every problem of the file matches fielderr.ErrInvalid.
func Parse(data []byte, env Env) (*Document, error) {
	var nncData, legacyData []byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 0; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidFile("%v", err)
		}
		var top map[string]any
		if err := yaml.Unmarshal(doc, &top); err != nil {
			return nil, invalidFile("document %d: %v", n+1, err)
		}
		if top == nil {
			continue // empty document
		}
		switch {
		case top["kind"] != nil:
			if nncData != nil {
				return nil, invalidFile("more than one NodeNetworkConfig document")
			}
			if err := checkKind(top); err != nil {
				return nil, err
			}
			nncData = doc
		case slices.ContainsFunc(legacyKeys, func(k string) bool { _, ok := top[k]; return ok }):
			if legacyData != nil {
				return nil, invalidFile("more than one das-schiff document")
			}
			legacyData = doc
		default:
			return nil, invalidFile("neither a NodeNetworkConfig (no kind) nor a das-schiff file (none of %s)", strings.Join(legacyKeys, ", "))
		}
	}
	if nncData == nil && legacyData == nil {
		return nil, invalidFile("empty document")
	}

	d := &Document{Format: FormatNodeNetworkConfig}
	if nncData != nil {
		var nnc v1.NodeNetworkConfig
		if err := yaml.UnmarshalStrict(nncData, &nnc); err != nil {
			return nil, invalidFile("%v", err)
		}
		d.Name, d.Spec = nnc.Name, nnc.Spec
	}
	if legacyData != nil {
		var l Legacy
		if err := yaml.UnmarshalStrict(legacyData, &l); err != nil {
			return nil, invalidFile("das-schiff format: %v", err)
		}
		d.Format = FormatLegacy
		if nncData != nil {
			d.Format = FormatCombined
		}
		if err := l.apply(d); err != nil {
			return nil, err
		}
	}
	if err := completeUnderlay(d, env); err != nil {
		return nil, err
	}
	return d, nil
}

func checkKind(top map[string]any) error {
	if k := fmt.Sprint(top["kind"]); k != "NodeNetworkConfig" {
		return fielderr.Join(field.ErrorList{field.NotSupported(field.NewPath("kind"), k, []string{"NodeNetworkConfig"})})
	}
	if av, ok := top["apiVersion"]; ok && fmt.Sprint(av) != v1.GroupVersion.String() {
		return fielderr.Join(field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), fmt.Sprint(av), []string{v1.GroupVersion.String()})})
	}
	return nil
}

// entry is a resolved lookup-table entry.
type entry struct {
	vni  int32
	rt   string
	from string // the field it came from
}

// table checks the lookup tables and returns them merged (vrfConfig wins over vnimap, as in das-schiff).
func (l *Legacy) table() (map[string]entry, field.ErrorList) {
	var errs field.ErrorList
	out := map[string]entry{}
	vrfName := func(f *field.Path, name string) bool {
		if name == "" || len(name) > v1.MaxVRFNameLen {
			errs = append(errs, field.Invalid(f, name, fmt.Sprintf("not a VRF name (1..%d bytes)", v1.MaxVRFNameLen)))
			return false
		}
		return true
	}
	vni := func(f *field.Path, v int64) bool {
		if verrs := bounds.VNI(f, int64(v)); len(verrs) > 0 {
			errs = append(errs, verrs...)
			return false
		}
		return true
	}
	for _, name := range sortedKeys(l.VNIMap) {
		f := field.NewPath("vnimap").Child(name)
		if vrfName(f, name) && vni(f, l.VNIMap[name]) {
			out[name] = entry{vni: int32(l.VNIMap[name]), from: f.String()}
		}
	}
	for _, name := range sortedKeys(l.VRFConfig) {
		f := field.NewPath("vrfConfig").Child(name)
		c := l.VRFConfig[name]
		ok := vrfName(f, name)
		ok = vni(f.Child("vni"), c.VNI) && ok
		if c.RT != "" {
			if rerrs := bgp.ValidateRouteTarget(f.Child("rt"), c.RT, false); len(rerrs) > 0 {
				errs, ok = append(errs, rerrs...), false
			}
		}
		if ok {
			out[name] = entry{vni: int32(c.VNI), rt: c.RT, from: f.String()}
		}
	}
	byVNI := map[int32]string{}
	for _, name := range sortedKeys(out) {
		e := out[name]
		if prev, dup := byVNI[e.vni]; dup {
			errs = append(errs, field.Invalid(field.NewPath(e.from), e.vni, "also the VNI of "+prev))
			continue
		}
		byVNI[e.vni] = name
	}
	return out, errs
}

// apply resolves the VRFs the NodeNetworkConfig names through the lookup tables and adds the file's interfaces,
// AS number and replacements to d.
func (l *Legacy) apply(d *Document) error {
	table, errs := l.table()
	spec := &d.Spec
	skip, serrs := l.skipped()
	errs = append(errs, serrs...)
	vrfs, verrs := l.vrfs(d, table, skip)
	errs = append(errs, verrs...)
	errs = append(errs, l.interfaces(d, vrfs, skip)...)
	errs = append(errs, l.serverASN(spec)...)
	errs = append(errs, l.compileReplacements()...)
	d.Replacements = l.Replacements

	if err := fielderr.Join(errs); err != nil {
		return err
	}
	if len(vrfs) == 0 && len(table) > 0 {
		d.Notes = append(d.Notes, "no VRF is named (vnimap and vrfConfig are lookup tables): the node gets no VRF")
	}
	if spec.Underlay.ASN == 0 {
		d.Notes = append(d.Notes, "no AS number (serverASN): FRR is not configured")
	}
	return nil
}

// skipped are the VRFs of skipVRFConfig (set up by the provisioning).
func (l *Legacy) skipped() (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	skip := map[string]bool{}
	for i, s := range l.SkipVRFConfig {
		if s == "" {
			errs = append(errs, field.Required(field.NewPath("skipVRFConfig").Index(i), "a VRF name"))
		}
		skip[s] = true
	}

	return skip, errs
}

// vrfs completes the VRFs the resource names from the lookup tables (vrfConfig, vnimap); a VRF of skipVRFConfig
// is left to the provisioning. They replace the spec's VRFs.
func (l *Legacy) vrfs(d *Document, table map[string]entry, skip map[string]bool) ([]v1.NodeVRF, field.ErrorList) {
	spec := &d.Spec
	var errs field.ErrorList
	var vrfs []v1.NodeVRF
	for i, vrf := range spec.VRFs {
		if vrf.VNI != 0 || vrf.TableID != 0 {
			vrfs = append(vrfs, vrf) // the resource says everything itself
			continue
		}
		e, ok := table[vrf.Name]
		switch {
		case ok:
			vrf.VNI, vrf.TableID = e.vni, v1.VRFTableIDBase+e.vni
			if e.rt != "" && len(vrf.RouteTargets) == 0 {
				vrf.RouteTargets = []string{e.rt}
			}
			d.Notes = append(d.Notes, fmt.Sprintf("vrf %s: VNI %d from %s, table %d", vrf.Name, e.vni, e.from, vrf.TableID))
			vrfs = append(vrfs, vrf)
		case skip[vrf.Name]:
			d.Notes = append(d.Notes, fmt.Sprintf("vrf %s: in skipVRFConfig (set up by the provisioning): not created here", vrf.Name))
		default:
			errs = append(errs, field.Invalid(field.NewPath("spec", "vrfs").Index(i).Child("name"), vrf.Name,
				"named without vni and tableID, but in none of vrfConfig, vnimap and skipVRFConfig"))
		}
	}
	assignIDs(vrfs)
	spec.VRFs = vrfs

	return vrfs, errs
}

// interfaces adds the router's interfaces (bpfInterfaces) the spec does not list, each in the VRF its name says.
func (l *Legacy) interfaces(d *Document, vrfs []v1.NodeVRF, skip map[string]bool) field.ErrorList {
	spec := &d.Spec
	var errs field.ErrorList
	known := map[string]bool{}
	byVNI := map[int32]string{}
	for _, v := range vrfs {
		known[v.Name] = true
		if v.VNI != 0 {
			byVNI[v.VNI] = v.Name
		}
	}
	listed := map[string]bool{}
	for _, di := range spec.DataPlane.Interfaces {
		listed[di.Name] = true
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
		if listed[ifname] {
			d.Notes = append(d.Notes, fmt.Sprintf("interface %s: listed by the NodeNetworkConfig, its entry is used", ifname))
			continue
		}
		di := v1.DataPlaneInterface{Name: ifname, Hook: v1.HookAuto, Mode: v1.ModePass}
		switch vrf := inferVRF(ifname, func(n string) bool { return known[n] || skip[n] }, byVNI); {
		case known[vrf]:
			di.VRF, di.Mode = vrf, v1.ModeRoute
			d.Notes = append(d.Notes, fmt.Sprintf("interface %s: routed in VRF %s", ifname, vrf))
		case vrf != "":
			di.Mode = v1.ModeFIB
			d.Notes = append(d.Notes, fmt.Sprintf("interface %s: VRF %s is set up by the provisioning (skipVRFConfig): routed in mode fib, by the table of its VRF device", ifname, vrf))
		default:
			d.Notes = append(d.Notes, fmt.Sprintf("interface %s: no VRF of this node recognisable from the name: attached in mode pass", ifname))
		}
		spec.DataPlane.Interfaces = append(spec.DataPlane.Interfaces, di)
	}
	slices.SortStableFunc(spec.DataPlane.Interfaces, func(a, b v1.DataPlaneInterface) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(a.VLAN - b.VLAN)
	})

	return errs
}

// serverASN is the underlay's AS number unless the NodeNetworkConfig names one (then they must agree).
func (l *Legacy) serverASN(spec *v1.NodeNetworkConfigSpec) field.ErrorList {
	var errs field.ErrorList
	if l.ServerASN != 0 {
		f := field.NewPath("serverASN")
		switch aerrs := bgp.ValidateASN(f, l.ServerASN); {
		case len(aerrs) > 0:
			errs = append(errs, aerrs...)
		case spec.Underlay.ASN == 0:
			spec.Underlay.ASN = l.ServerASN
		case spec.Underlay.ASN != l.ServerASN:
			errs = append(errs, field.Invalid(f, l.ServerASN, fmt.Sprintf("the NodeNetworkConfig's spec.underlay.asn is %d", spec.Underlay.ASN)))
		}
	}

	return errs
}

// compileReplacements checks the FRR replacements and compiles their regular expressions.
func (l *Legacy) compileReplacements() field.ErrorList {
	var errs field.ErrorList
	for i := range l.Replacements {
		r := &l.Replacements[i]
		f := field.NewPath("replacements").Index(i)
		if r.Old == "" {
			errs = append(errs, field.Required(f.Child("old"), "the text to replace"))
			continue
		}
		if r.Regex {
			re, err := regexp.Compile(r.Old)
			if err != nil {
				errs = append(errs, field.Invalid(f.Child("old"), r.Old, "not a regular expression: "+err.Error()))
				continue
			}
			r.re = re
		}
	}
	return errs
}

// assignIDs gives every VRF without an id the lowest free one, in name order.
func assignIDs(vrfs []v1.NodeVRF) {
	used := map[int32]bool{}
	for _, v := range vrfs {
		used[v.ID] = true
	}
	order := make([]int, 0, len(vrfs))
	for i := range vrfs {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(vrfs[a].Name, vrfs[b].Name) })
	next := int32(v1.MinVRFID)
	for _, i := range order {
		if vrfs[i].ID != 0 {
			continue
		}
		for used[next] {
			next++
		}
		vrfs[i].ID, used[next] = next, true
	}
}

// inferVRF returns the VRF an interface name points to ("" when none).
func inferVRF(ifname string, known func(string) bool, byVNI map[int32]string) string {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
