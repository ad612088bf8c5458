package podnet

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/internal/podnetwork/podselect"
	"github.com/network-operator/network-operator/internal/validation"
)

// Input is what the desired state of one pod is built from.
type Input struct {
	Pod Pod
	// Configs are the PodNetworkConfigs that select the pod (Selecting).
	Configs []v1.PodNetworkConfig
	// Node is the node's NodeNetworkConfig spec (nil: none yet): its layer-2 networks are the ones pods can join.
	Node *v1.NodeNetworkConfigSpec
	// Features of the kernel.
	Features Features
	// Admission, when set, holds what decides whether a network admits the pod's namespace: a veth or macvlan
	// into a network that does not (or no longer does) is left out - removed when the pod has it - with reason
	// NetworkNotAllowed. The agent always sets it; nil (the uninstall's removals, plan tests) checks nothing.
	Admission *Admission
}

// Admission is what the networks' podNamespaceSelectors are checked against (validation.NetworkAdmitsNamespace,
// admission's rule).
type Admission struct {
	// Networks are the cluster's Layer2NetworkConfigurations by name.
	Networks map[string]*v1.Layer2NetworkConfiguration
	// NamespaceLabels are the labels of the pod's namespace.
	NamespaceLabels map[string]string
}

// admits reports whether network admits the pod's namespace.
func (a *Admission) admits(network string) bool {
	if a == nil {
		return true
	}
	ok, err := validation.NetworkAdmitsNamespace(a.Networks[network], a.NamespaceLabels)
	return ok && err == nil
}

// Selecting returns the configs that apply to the pod (internal/podnetwork/podselect: its namespace's configs whose selector
// matches, while the pod is scheduled, not on the host network and not terminated), by name. A config whose
// selector cannot be parsed selects nothing (admission refuses such selectors).
func Selecting(configs []v1.PodNetworkConfig, pod *corev1.Pod) []v1.PodNetworkConfig {
	var out []v1.PodNetworkConfig
	for i := range configs {
		c := &configs[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		sel, err := podselect.Selector(c)
		if err != nil || !podselect.Selects(c, sel, pod) {
			continue
		}
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b v1.PodNetworkConfig) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// BuildDesired turns the configs selecting a pod into the pod's desired state. It is pure and deterministic.
// Configs are taken in name order; what a config cannot have (a name, route or setting an earlier config holds, a
// network the node lacks, an unsupported kind) is left out and named in its ConfigResult, the rest is desired.
func BuildDesired(in Input) *Desired {
	d := &Desired{Pod: in.Pod}
	configs := slices.Clone(in.Configs)
	slices.SortFunc(configs, func(a, b v1.PodNetworkConfig) int { return strings.Compare(a.Name, b.Name) })
	b := builder{in: in, d: d, owner: map[string]string{}, routes: map[routeKey]string{}, sysctls: map[string]string{}}
	for _, c := range configs {
		d.Configs = append(d.Configs, ConfigResult{Name: c.Name, Generation: c.Generation})
	}
	for _, c := range configs {
		b.config(c)
	}
	d.Links = orderLinks(d.Links)
	return d
}

type builder struct {
	in      Input
	d       *Desired
	owner   map[string]string   // interface name -> config
	routes  map[routeKey]string // route key -> config
	sysctls map[string]string   // sysctl -> config
	// skipped are a config's interfaces left out, for its dependants' messages.
	skipped map[string]string
}

func (b *builder) primaryName(c v1.PodNetworkConfig) string {
	if p := c.Spec.Primary; p != nil && p.Name != "" {
		return p.Name
	}
	if b.d.Primary != nil {
		return b.d.Primary.Name
	}
	return v1.DefaultPrimaryInterface
}

func (b *builder) config(c v1.PodNetworkConfig) {
	b.skipped = map[string]string{}
	prob := func(reason, format string, args ...any) {
		b.d.problem(c.Name, Problem{Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	primary := b.primaryName(c)
	if p := c.Spec.Primary; p != nil && (p.MTU != nil || p.TxQueueLen != nil) {
		if b.d.Primary != nil {
			prob(ReasonConflict, "primary interface tuning: PodNetworkConfig %s already tunes %s", b.d.Primary.Config, b.d.Primary.Name)
		} else {
			b.d.Primary = &Primary{Name: primary, MTU: intPtr(p.MTU), TxQueueLen: intPtr(p.TxQueueLen), Config: c.Name}
		}
	}
	var mine []Link
	for _, spec := range c.Spec.Interfaces {
		l, ok := b.link(c, spec, primary, prob)
		if !ok {
			b.skipped[spec.Name] = c.Name
			continue
		}
		b.owner[spec.Name] = c.Name
		mine = append(mine, l)
	}
	mine = b.bridges(c, mine, prob)
	for _, l := range mine {
		b.d.Links = append(b.d.Links, l)
		res := &b.d.Configs[slices.IndexFunc(b.d.Configs, func(r ConfigResult) bool { return r.Name == c.Name })]
		res.Interfaces = append(res.Interfaces, l.Name)
	}
	for i, r := range c.Spec.Routes {
		b.route(c, i, r, primary, prob)
	}
	for _, s := range c.Spec.Sysctls {
		b.sysctl(c, s, primary, prob)
	}
}

func intPtr(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// link builds one interface of config c; ok is false when it is left out (the problem is recorded).
func (b *builder) link(c v1.PodNetworkConfig, spec v1.PodInterface, primary string,
	prob func(reason, format string, args ...any)) (Link, bool) {
	name := spec.Name
	if !b.checkLinkName(name, primary, prob) {
		return Link{}, false
	}
	l := Link{Name: name, Config: c.Name, Kind: spec.Type}
	if spec.MTU != nil {
		l.MTU = int(*spec.MTU)
	}
	switch spec.Type {
	case v1.PodInterfaceVeth, v1.PodInterfaceMACVLAN:
		if !b.networkLink(spec, &l, prob) {
			return Link{}, false
		}
	case v1.PodInterfaceVLAN:
		if !b.vlanLink(c, spec, primary, &l, prob) {
			return Link{}, false
		}
	case v1.PodInterfaceBridge:
		// Ports are resolved once all of the config's interfaces are known (bridges).
	default:
		prob(ReasonInvalid, "interface %s: unknown type %q", name, spec.Type)
		return Link{}, false
	}
	l.Addrs = b.addresses(c, spec, prob)
	return l, true
}

// checkLinkName reports whether name may be a pod interface: valid, neither the primary interface nor the
// loopback, and not another config's (else the problem is recorded).
func (b *builder) checkLinkName(name, primary string, prob func(reason, format string, args ...any)) bool {
	switch {
	case !validIfName(name):
		prob(ReasonInvalid, "interface %q: not a valid interface name", name)
		return false
	case name == primary || name == "lo":
		prob(ReasonInvalid, "interface %s: the name of the primary interface or the loopback", name)
		return false
	case b.owner[name] != "":
		prob(ReasonConflict, "interface %s: PodNetworkConfig %s already has an interface of that name", name, b.owner[name])
		return false
	}
	return true
}

// networkLink fills in l, a veth or macvlan interface, from its layer-2 network; false when the pod may not use
// the network, the node does not have it or the macvlan mode is passthru (the problem is recorded).
func (b *builder) networkLink(spec v1.PodInterface, l *Link, prob func(reason, format string, args ...any)) bool {
	name := spec.Name
	if !b.in.Admission.admits(spec.Network) {
		// Admission's words: a tenant learns nothing about networks it may not use.
		prob(ReasonNetworkNotAllowed, "interface %s: no Layer2NetworkConfiguration %q admits pods of namespace %q "+
			"(its spec.podNamespaceSelector)", name, spec.Network, b.in.Pod.Namespace)
		return false
	}
	net, ok := b.network(spec.Network)
	if !ok {
		prob(ReasonNetworkNotOnNode, "interface %s: network %q is not one of this node's layer-2 networks", name, spec.Network)
		return false
	}
	l.Network, l.Bridge = net.Name, v1.L2BridgePrefix+strconv.Itoa(int(net.VLAN))
	if l.MTU == 0 {
		l.MTU = int(net.MTU)
	}
	l.MAC = MAC(b.in.Pod.UID, name)
	if spec.Type == v1.PodInterfaceVeth {
		l.HostName = HostVethName(b.in.Pod.UID, name)
		return true
	}
	l.Mode = spec.MACVLANMode
	if l.Mode == "" {
		l.Mode = v1.MACVLANBridge
	}
	if l.Mode == v1.MACVLANPassthru {
		// passthru takes the whole lower device: the network's bridge is the node's, never one pod's.
		prob(ReasonInvalid, "interface %s: macvlan mode passthru would give the pod the network's bridge itself", name)
		return false
	}
	return true
}

// vlanLink fills in l, an 802.1Q vlan interface of config c; false when the kernel lacks vlan devices, the id is
// out of range or the parent is not the primary or an earlier applied interface of c (the problem is recorded).
func (b *builder) vlanLink(c v1.PodNetworkConfig, spec v1.PodInterface, primary string, l *Link,
	prob func(reason, format string, args ...any)) bool {
	name := spec.Name
	if !b.in.Features.VLAN {
		reason := b.in.Features.VLANReason
		if reason == "" {
			reason = "802.1Q vlan devices: not supported by this kernel"
		}
		prob(ReasonNotSupported, "interface %s: %s", name, reason)
		return false
	}
	if spec.VLAN < v1.MinVLAN || spec.VLAN > v1.MaxVLAN {
		prob(ReasonInvalid, "interface %s: vlan %d not within %d..%d", name, spec.VLAN, v1.MinVLAN, v1.MaxVLAN)
		return false
	}
	switch {
	case spec.Parent == "":
		prob(ReasonInvalid, "interface %s: a vlan needs a parent", name)
		return false
	case b.skipped[spec.Parent] != "":
		prob(ReasonInvalid, "interface %s: its parent %s is not applied", name, spec.Parent)
		return false
	case spec.Parent != primary && b.owner[spec.Parent] != c.Name:
		prob(ReasonInvalid, "interface %s: parent %s is neither the primary interface nor an earlier interface of this config", name, spec.Parent)
		return false
	}
	l.Parent, l.VLAN = spec.Parent, int(spec.VLAN)
	return true
}

// network returns the node's layer-2 network of that name.
func (b *builder) network(name string) (v1.NodeLayer2, bool) {
	if b.in.Node == nil || name == "" {
		return v1.NodeLayer2{}, false
	}
	i := slices.IndexFunc(b.in.Node.Layer2s, func(l v1.NodeLayer2) bool { return l.Name == name })
	if i < 0 {
		return v1.NodeLayer2{}, false
	}
	return b.in.Node.Layer2s[i], true
}

// addresses returns the interface's allocated addresses; a pool family without an allocation is a NoAddress
// problem (the interface is made without it, the address comes when the operator allocates it).
func (b *builder) addresses(c v1.PodNetworkConfig, spec v1.PodInterface, prob func(reason, format string, args ...any)) []netip.Prefix {
	var out []netip.Prefix
	have := map[bool]bool{} // is4 -> allocated
	for _, a := range c.Status.Allocations {
		if a.PodUID != b.in.Pod.UID || a.Interface != spec.Name {
			continue
		}
		p, err := netip.ParsePrefix(a.Address)
		if err != nil {
			prob(ReasonInvalid, "interface %s: allocated address %q is not an address with prefix length", spec.Name, a.Address)
			continue
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits())
		if slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
		have[p.Addr().Is4()] = true
	}
	if spec.Addresses != nil {
		want := map[bool]bool{}
		for _, r := range spec.Addresses.Ranges {
			if p, err := netip.ParsePrefix(r); err == nil {
				want[p.Addr().Unmap().Is4()] = true
			}
		}
		for _, s := range spec.Addresses.Static {
			if a, err := netip.ParseAddr(s); err == nil {
				want[a.Unmap().Is4()] = true
			}
		}
		for _, is4 := range []bool{true, false} {
			if want[is4] && !have[is4] {
				fam := "IPv6"
				if is4 {
					fam = "IPv4"
				}
				prob(ReasonNoAddress, "interface %s: no %s address allocated yet", spec.Name, fam)
			}
		}
	}
	slices.SortFunc(out, func(x, y netip.Prefix) int { return strings.Compare(x.String(), y.String()) })
	return out
}

// bridges resolves the ports of config c's bridges; a port in two bridges or a bridge in itself is invalid.
func (b *builder) bridges(c v1.PodNetworkConfig, mine []Link, prob func(reason, format string, args ...any)) []Link {
	specs := map[string]v1.PodInterface{}
	for _, s := range c.Spec.Interfaces {
		specs[s.Name] = s
	}
	index := map[string]int{}
	for i, l := range mine {
		index[l.Name] = i
	}
	for i := range mine {
		br := &mine[i]
		if br.Kind != v1.PodInterfaceBridge {
			continue
		}
		for _, port := range specs[br.Name].Ports {
			j, ok := index[port]
			switch {
			case b.skipped[port] != "":
				prob(ReasonInvalid, "bridge %s: port %s is not applied", br.Name, port)
			case !ok:
				prob(ReasonInvalid, "bridge %s: port %s is not an interface of this config", br.Name, port)
			case port == br.Name:
				prob(ReasonInvalid, "bridge %s: a bridge cannot be its own port", br.Name)
			case mine[j].Master != "":
				prob(ReasonInvalid, "bridge %s: port %s is already a port of %s", br.Name, port, mine[j].Master)
			default:
				mine[j].Master = br.Name
			}
		}
	}
	// A bridge that is (through ports) its own ancestor cannot be made: leave the cycle out.
	for i := range mine {
		seen := map[string]bool{}
		for n := mine[i].Master; n != ""; {
			if seen[n] || n == mine[i].Name {
				prob(ReasonInvalid, "bridge %s: its ports form a cycle", mine[i].Name)
				mine[i].Master = ""
				break
			}
			seen[n] = true
			n = mine[index[n]].Master
		}
	}
	return mine
}

// orderLinks sorts links into creation order: each after what it needs (a vlan's parent, a bridge's ports),
// otherwise veths and macvlans first, in the order given.
func orderLinks(links []Link) []Link {
	rank := func(k Kind) int {
		switch k {
		case v1.PodInterfaceVeth, v1.PodInterfaceMACVLAN:
			return 0
		case v1.PodInterfaceVLAN:
			return 1
		}
		return 2
	}
	byName := map[string]int{}
	for i, l := range links {
		byName[l.Name] = i
	}
	deps := func(l Link) []string {
		var out []string
		if l.Parent != "" {
			out = append(out, l.Parent)
		}
		for _, p := range links {
			if p.Master == l.Name {
				out = append(out, p.Name)
			}
		}
		return out
	}
	sorted := slices.Clone(links)
	slices.SortStableFunc(sorted, func(a, b Link) int { return rank(a.Kind) - rank(b.Kind) })
	out := make([]Link, 0, len(links))
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(l Link)
	visit = func(l Link) {
		if state[l.Name] != 0 {
			return // done, or a cycle (bridges left it out already)
		}
		state[l.Name] = 1
		for _, dep := range deps(l) {
			if i, ok := byName[dep]; ok {
				visit(links[i])
			}
		}
		state[l.Name] = 2
		out = append(out, l)
	}
	for _, l := range sorted {
		visit(l)
	}
	return out
}

// route adds config c's route i.
func (b *builder) route(c v1.PodNetworkConfig, i int, r v1.PodRoute, primary string, prob func(reason, format string, args ...any)) {
	var dst netip.Prefix
	switch r.Destination {
	case "default":
		dst = netip.MustParsePrefix("0.0.0.0/0")
	case "default6":
		dst = netip.MustParsePrefix("::/0")
	default:
		p, err := netip.ParsePrefix(r.Destination)
		if err != nil {
			prob(ReasonInvalid, "routes[%d]: destination %q is not a CIDR, default or default6", i, r.Destination)
			return
		}
		dst = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()).Masked()
	}
	rt := Route{Dst: dst, Dev: r.Interface, Config: c.Name}
	if r.Gateway != "" {
		gw, err := netip.ParseAddr(r.Gateway)
		if err != nil || gw.Unmap().Is4() != dst.Addr().Is4() {
			prob(ReasonInvalid, "routes[%d]: gateway %q is not an address of the destination's family", i, r.Gateway)
			return
		}
		rt.Gateway = gw.Unmap()
	}
	if dst.Addr().Is6() {
		rt.Metric = 1024
	}
	switch {
	case r.Interface == "" && !rt.Gateway.IsValid():
		prob(ReasonInvalid, "routes[%d] %s: needs a gateway or an interface", i, rt)
		return
	case r.Interface == "" || r.Interface == primary:
	case b.skipped[r.Interface] != "":
		prob(ReasonInvalid, "routes[%d] %s: interface %s is not applied", i, rt, r.Interface)
		return
	default:
		if _, ok := b.d.link(r.Interface); !ok {
			prob(ReasonInvalid, "routes[%d] %s: interface %s is neither the primary interface nor one of the pod's interfaces", i, rt, r.Interface)
			return
		}
	}
	if prev, dup := b.routes[rt.key()]; dup {
		prob(ReasonConflict, "routes[%d] %s: PodNetworkConfig %s already has a route to %s", i, rt, prev, dst)
		return
	}
	b.routes[rt.key()] = c.Name
	b.d.Routes = append(b.d.Routes, rt)
}

// sysctl adds config c's sysctl s, when the allow-list (validation.PodSysctlAllowed, admission's) takes it.
func (b *builder) sysctl(c v1.PodNetworkConfig, s v1.PodSysctl, primary string, prob func(reason, format string, args ...any)) {
	ifs := []string{primary}
	for _, i := range c.Spec.Interfaces {
		ifs = append(ifs, i.Name)
	}
	if err := validation.PodSysctlAllowed(s.Name, s.Value, ifs); err != nil {
		prob(ReasonInvalid, "sysctl %s: %v", s.Name, err)
		return
	}
	dev, _ := sysctlDevice(s.Name)
	sc := Sysctl{Name: s.Name, Value: s.Value, Config: c.Name}
	if dev != "" {
		if b.skipped[dev] != "" {
			prob(ReasonInvalid, "sysctl %s: interface %s is not applied", s.Name, dev)
			return
		}
		if _, ok := b.d.link(dev); ok {
			sc.Link = dev
		}
	}
	if prev, dup := b.sysctls[s.Name]; dup {
		prob(ReasonConflict, "sysctl %s: PodNetworkConfig %s already sets it", s.Name, prev)
		return
	}
	b.sysctls[s.Name] = c.Name
	b.d.Sysctls = append(b.d.Sysctls, sc)
}

// sysctlDevice returns the interface of a per-interface key (net.ipv4.conf.<dev>.<knob>, also ipv6 and neigh;
// the device may contain dots, the knob does not) and the path below the sysctl root.
func sysctlDevice(name string) (dev string, path []string) {
	parts := strings.SplitN(name, ".", 4)
	if len(parts) == 4 && (parts[1] == "ipv4" || parts[1] == "ipv6") && (parts[2] == "conf" || parts[2] == "neigh") {
		i := strings.LastIndex(parts[3], ".")
		if i > 0 {
			dev = parts[3][:i]
			if dev == "all" || dev == "default" {
				dev = ""
			}
			return dev, []string{parts[0], parts[1], parts[2], parts[3][:i], parts[3][i+1:]}
		}
	}
	return "", strings.Split(name, ".")
}

var ifNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func validIfName(n string) bool { return len(n) <= v1.MaxInterfaceNameLen && ifNameRE.MatchString(n) }
