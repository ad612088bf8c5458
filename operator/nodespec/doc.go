// Package nodespec builds one node's NodeNetworkConfig spec from a revision snapshot.
//
// Build is a pure function of (revision snapshot, Node, the node's current spec, operator options), so
// every node given the same inputs gets the same spec and the same expected map version.
//
// Selection: a resource without nodeSelector applies to every node; otherwise its label selector must
// match the Node's labels. A BGPPeering with peeringVlan applies only where its Layer2 network applies
// too (a node cannot listen on a network it does not have).
//
// Routing table ids (kernel tables, pure functions of the VRF, shared by every node):
//
//	VRF with VNI v:                     TableIDBase + v  (1000000001 .. 1016777215; "table 1000001234" is VNI 1234)
//	"default" / "cluster" (no VNI):     254, the kernel's main table (both name the node's cluster VRF)
//
// A table id therefore never changes when other VRFs are added or removed.
//
// BPF VRF ids (the vrf_table key and vrf_counters index, 1..MaxVRFID, node-local): a VRF keeps the id it
// has in the node's current spec; VRFs new to the node take the lowest free ids in (VNI, name) order.
// Adding or removing a VRF never renumbers another one, so its counters and map entries stay put.
//
// Loopback addresses and flood peers are the parts planned over all nodes at once: Build leaves loopbacks[].address
// empty, and AssignLoopbackAddresses fills it in the specs of every node of the revision (PlanLoopbackAddresses, also
// pure: a node keeps its address, the others take the lowest free host address in node name order); Build leaves
// the peers of static flooding without listed peers empty, and AssignFloodPeers fills in the VTEP address of every
// other node of the layer-2 network or Link.
//
// Links: the Links the node is selected by, their device and master references resolved to interface names.
//
// Underlay (fabric side), from operator flags and Node annotations:
//
//	ASN:          annotation network.network-operator.io/asn, else Options.Underlay.ASN
//	router id:    annotation network.network-operator.io/router-id, else the Node's first IPv4 InternalIP
//	VTEP address: annotation network.network-operator.io/vtep-address, else the router id (or, with
//	              Options.Underlay.VTEPFamily IPv6, the Node's first global IPv6 InternalIP); of VTEPFamily when set
//	families:     Options.Underlay.Families (addressFamilies; empty: the VTEP's family)
//	uplinks:      annotation network.network-operator.io/underlay-interfaces (comma separated), else
//	              Options.Underlay.Interfaces; each gets an unnumbered neighbour with Options.Underlay.RemoteASN
//	numbered:     annotation network.network-operator.io/underlay-neighbors (comma separated, "fe80::1%eth0" for a
//	              link-local one), else Options.Underlay.Neighbors; each of a family the underlay carries
//
// Data plane: the eBPF router routes on the bridge and VXLAN device of every VRF with a VNI
// ("br.<vrf>", "vx.<vrf>", mode route, in that VRF), plus Options.Interfaces whose VRF is on the node.
package nodespec
