// Package nodenet manages the node's network objects for the agent through netlink: per VRF a VRF device (or,
// on kernels without VRF support, only its routing table), an L3VNI bridge and VXLAN, per layer-2 network a
// bridge and VXLAN with anycast gateway addresses (flooding by EVPN or to static peers), veth pairs to the default
// VRF, the node's Links (bridges and VXLANs), and the routes and rules those need.
//
// It works in three steps: BuildDesired turns a NodeNetworkConfigSpec plus node-local Settings into object specs
// (pure), Observe reads what exists, ComputePlan diffs the two into ordered, printable actions (pure), and
// Manager.Apply executes one Phase of a plan at a time, so the runtime can configure FRR between the VRFs and
// the interfaces, and swap the BPF generation before removals.
//
// Ownership: nodenet only ever changes links whose alias (IFLA_IFALIAS) starts with AliasPrefix, and routes and
// rules carrying its protocol number. A foreign link holding one of its names is reported as a Conflict and left
// alone. FDB entries carry no mark: nodenet's are the all-zero-MAC ("self") flood entries of its own VXLANs that
// learn, which it makes learn for static flooding only (an EVPN VXLAN does not learn, and its flood entries are
// zebra's, never read).
//
// Failure handling is by convergence: there is no undo log. After a failed Apply, planning the last good spec
// again and applying every phase restores it, because the planner is declarative.
package nodenet
