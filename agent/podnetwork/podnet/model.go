package podnet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// Kind is the kind of a pod interface: the API's interface types.
type Kind = v1.PodInterfaceType

// AliasPrefix starts the IFLA_IFALIAS of every link the agent makes for a pod, inside the pod and on the host:
// "netop-pod:<pod uid>/<interface>". It is the ownership mark: links without it are never changed or deleted
// (the primary interface, the main CNI's, is only tuned, and its original values are kept in podrecords).
const AliasPrefix = "netop-pod:"

// DefaultRouteProtocol tags the routes the agent adds in pods: the agent's protocol number (nodenet's).
const DefaultRouteProtocol = nodenet.DefaultRouteProtocol

// DefaultSysctlDir is where sysctls are written, from a thread inside the pod's network namespace.
const DefaultSysctlDir = "/proc/sys"

// hostNamePrefix starts the name of a veth's host end.
const hostNamePrefix = "np"

// Alias is the ownership mark of the link made for interface ifname of pod uid.
func Alias(uid, ifname string) string { return AliasPrefix + uid + "/" + ifname }

// ParseAlias returns the pod UID and interface an alias marks; ok is false for any other alias.
func ParseAlias(alias string) (uid, ifname string, ok bool) {
	rest, found := strings.CutPrefix(alias, AliasPrefix)
	if !found {
		return "", "", false
	}
	uid, ifname, found = strings.Cut(rest, "/")
	if !found || uid == "" || ifname == "" {
		return "", "", false
	}
	return uid, ifname, true
}

func digest(kind, uid, ifname string) []byte {
	sum := sha256.Sum256([]byte(kind + "\x00" + uid + "\x00" + ifname))
	return sum[:]
}

// HostVethName is the name of the host end of pod uid's veth ifname: "np" and 13 hex digits of a hash (15 bytes,
// the kernel's limit), the same after every restart.
func HostVethName(uid, ifname string) string {
	return hostNamePrefix + hex.EncodeToString(digest("host", uid, ifname))[:13]
}

// MAC is the address of pod uid's interface ifname (veth and macvlan): locally administered, unicast, derived
// from the pod UID so no two pods share one, and so a removed interface's neighbour and FDB entries on the host
// can be told from anyone else's.
func MAC(uid, ifname string) net.HardwareAddr {
	d := digest("mac", uid, ifname)
	mac := net.HardwareAddr{d[0], d[1], d[2], d[3], d[4], d[5]}
	mac[0] = mac[0]&^0x01 | 0x02
	return mac
}

// Pod identifies one pod.
type Pod struct {
	Namespace, Name, UID string
}

func (p Pod) String() string { return p.Namespace + "/" + p.Name + " (" + p.UID + ")" }

// Reasons of a PodNetworkStatus (status.pods[].reason).
const (
	// ReasonNetworkNotAllowed: the interface's network does not exist or no longer admits the pod's namespace
	// (validation.NetworkAdmitsNamespace: the administrator withdrew it, or the namespace's labels changed); the
	// interface is not made, and removed when the pod has it.
	ReasonNetworkNotAllowed = "NetworkNotAllowed"
	// ReasonNetworkNotOnNode: the interface's network is not one of this node's layer-2 networks.
	ReasonNetworkNotOnNode = "NetworkNotOnNode"
	// ReasonNoAddress: the operator has not allocated (all) the interface's addresses yet.
	ReasonNoAddress = "NoAddress"
	// ReasonNotSupported: this kernel lacks the interface kind (802.1Q), or the pod has the host's network.
	ReasonNotSupported = "NotSupported"
	// ReasonApplyFailed: a kernel operation failed.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonPodNotRunning: the pod has no network namespace (yet, or any more).
	ReasonPodNotRunning = "PodNotRunning"
	// ReasonConflict: another PodNetworkConfig of the pod, or an object the agent does not own, already holds
	// the name, route or setting.
	ReasonConflict = "Conflict"
	// ReasonInvalid: a value the agent cannot apply (admission normally refuses it first).
	ReasonInvalid = "Invalid"
)

// Problem is why (part of) a PodNetworkConfig is not applied to the pod.
type Problem struct {
	Reason  string
	Message string
}

func (p Problem) String() string { return p.Reason + ": " + p.Message }

// Link is one interface the agent makes in the pod.
type Link struct {
	// Name in the pod; Config the PodNetworkConfig that asks for it.
	Name, Config string
	Kind         Kind
	// MTU of the interface (and of a veth's host end); 0: the kernel's default, not managed.
	MTU int
	// MAC of a veth's pod end or a macvlan (nil: the kernel's).
	MAC net.HardwareAddr
	// Network is the Layer2NetworkConfiguration of a veth or macvlan, Bridge its bridge on the node: the master
	// of a veth's host end, the parent of a macvlan.
	Network, Bridge string
	// HostName is a veth's host end.
	HostName string
	// Mode of a macvlan.
	Mode v1.MACVLANMode
	// Parent (in the pod) and VLAN id of a vlan.
	Parent string
	VLAN   int
	// Master is the pod bridge the interface is a port of ("" none).
	Master string
	// Addrs are the interface's addresses (from status.allocations), sorted.
	Addrs []netip.Prefix
}

func (l Link) describe() string {
	var attrs []string
	switch l.Kind {
	case v1.PodInterfaceVeth:
		attrs = append(attrs, "host end "+l.HostName, "master "+l.Bridge+" (network "+l.Network+")")
	case v1.PodInterfaceMACVLAN:
		attrs = append(attrs, "on "+l.Bridge+" (network "+l.Network+")", "mode "+string(l.Mode))
	case v1.PodInterfaceVLAN:
		attrs = append(attrs, fmt.Sprintf("id %d on %s", l.VLAN, l.Parent))
	}
	if l.MTU != 0 {
		attrs = append(attrs, fmt.Sprintf("mtu %d", l.MTU))
	}
	if l.MAC != nil {
		attrs = append(attrs, "mac "+l.MAC.String())
	}
	if len(attrs) == 0 {
		return fmt.Sprintf("%s %s", l.Kind, l.Name)
	}
	return fmt.Sprintf("%s %s (%s)", l.Kind, l.Name, strings.Join(attrs, ", "))
}

// record is what podrecords remembers of the link.
func (l Link) record() podrecords.Interface {
	in := podrecords.Interface{Name: l.Name, Kind: string(l.Kind), HostName: l.HostName, Bridge: l.Bridge}
	if l.MAC != nil {
		in.MAC = l.MAC.String()
	}
	return in
}

// Route is a route in the pod's main table.
type Route struct {
	Dst     netip.Prefix
	Gateway netip.Addr // invalid: on-link
	Dev     string     // "" : the kernel picks it from the gateway
	// Metric: 0 for IPv4; IPv6 routes get 1024 (the kernel's default), so the observed route matches.
	Metric uint32
	Config string
}

type routeKey struct {
	dst    netip.Prefix
	metric uint32
}

func (r Route) key() routeKey { return routeKey{r.Dst, r.Metric} }

func (r Route) String() string {
	var b strings.Builder
	if r.Dst.Bits() == 0 {
		b.WriteString("default")
		if r.Dst.Addr().Is6() {
			b.WriteString(" (ipv6)")
		}
	} else {
		b.WriteString(r.Dst.String())
	}
	if r.Gateway.IsValid() {
		b.WriteString(" via " + r.Gateway.String())
	}
	if r.Dev != "" {
		b.WriteString(" dev " + r.Dev)
	}
	if r.Metric != 0 {
		fmt.Fprintf(&b, " metric %d", r.Metric)
	}
	return b.String()
}

// same reports whether the observed route o is the desired route r (a route without a device: any).
func (r Route) same(o Route) bool { return r.Gateway == o.Gateway && (r.Dev == "" || r.Dev == o.Dev) }

// Sysctl is one sysctl of the pod's network namespace.
type Sysctl struct {
	Name, Value, Config string
	// Link is the agent's own interface the key belongs to (net.ipv4.conf.<link>.*): set after the link exists,
	// gone with it, never restored. "": the key is the namespace's or the primary interface's, and its original
	// value is remembered and restored.
	Link string
}

// Primary is the tuning of the pod's primary interface (nil fields: not tuned).
type Primary struct {
	Name       string
	MTU        *int
	TxQueueLen *int
	Config     string
}

// ConfigResult is what one PodNetworkConfig asks of the pod and what of it cannot be applied.
type ConfigResult struct {
	Name       string
	Generation int64
	// Interfaces are the config's interfaces that are desired (in spec order).
	Interfaces []string
	Problems   []Problem
}

// Desired is everything the agent wants in one pod and on the host for it.
type Desired struct {
	Pod Pod
	// Links in creation order: veths and macvlans, then vlans after their parents and bridges after their ports.
	Links   []Link
	Routes  []Route
	Sysctls []Sysctl
	Primary *Primary
	// Configs are the PodNetworkConfigs selecting the pod, by name.
	Configs []ConfigResult
}

func (d *Desired) link(name string) (Link, bool) {
	for _, l := range d.Links {
		if l.Name == name {
			return l, true
		}
	}
	return Link{}, false
}

func (d *Desired) problem(config string, p Problem) {
	for i := range d.Configs {
		if d.Configs[i].Name == config {
			d.Configs[i].Problems = append(d.Configs[i].Problems, p)
			return
		}
	}
}

// Features are the kernel's link kinds the pod interfaces depend on.
type Features struct {
	// VLAN: 802.1Q devices can be created; VLANReason says why not.
	VLAN       bool
	VLANReason string
}

// PodLink is an observed link in the pod.
type PodLink struct {
	Name  string
	Kind  string
	Alias string
	Index int
	MTU   int
	// TxQueueLen of the link.
	TxQueueLen int
	MAC        net.HardwareAddr
	Master     string
	Up         bool
	// ParentIndex is IFLA_LINK: a veth's peer or a macvlan's parent (in the host when LinkNetNS), a vlan's parent.
	ParentIndex int
	// ParentName is a vlan's parent in the pod.
	ParentName string
	VLAN       int
	Mode       v1.MACVLANMode
	Addrs      []netip.Prefix
}

// HostLink is an observed link on the host: a veth's host end (or a foreign link holding its name), or a bridge.
type HostLink struct {
	Name   string
	Kind   string
	Alias  string
	Index  int
	MTU    int
	Master string
	Up     bool
}

// Neighbour is a neighbour entry on a host bridge whose link-layer address is one of the pod's interfaces'.
type Neighbour struct {
	Dev string
	IP  netip.Addr
	MAC net.HardwareAddr
}

// FDBEntry is a bridge FDB entry on the host for one of the pod's interfaces' MACs.
type FDBEntry struct {
	Port, Bridge string
	MAC          net.HardwareAddr
	VLAN         int
	// Static: added (bridge fdb ... static), not learnt; only observed.
	Static bool
}

// Observed is the state of one pod and of the host objects that are the pod's.
type Observed struct {
	// HasNetns: the pod's network namespace was observed; without it only the host side was.
	HasNetns bool
	// PodLinks are every link of the pod (foreign ones too: the primary, and for conflicts).
	PodLinks []PodLink
	// Routes are the pod's main-table routes with the agent's protocol; Foreign the keys of the others.
	Routes  []Route
	Foreign []Route
	// Sysctls are the current values of the sysctls desired or remembered (a missing key is absent).
	Sysctls map[string]string
	// HostLinks are the host's links marked as this pod's, the links holding a desired veth's host name, and
	// the bridges of the desired and remembered interfaces.
	HostLinks []HostLink
	// Neighbours and FDB are the host entries for the MACs of the desired and remembered interfaces.
	Neighbours []Neighbour
	FDB        []FDBEntry
	// Record is what podrecords remembers of the pod (nil: nothing).
	Record *podrecords.Record
}

func (o *Observed) podLink(name string) (PodLink, bool) {
	for _, l := range o.PodLinks {
		if l.Name == name {
			return l, true
		}
	}
	return PodLink{}, false
}

func (o *Observed) hostLink(name string) (HostLink, bool) {
	for _, l := range o.HostLinks {
		if l.Name == name {
			return l, true
		}
	}
	return HostLink{}, false
}
