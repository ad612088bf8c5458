// Package podnet applies PodNetworkConfigs to one pod's network namespace from the host, on the tenant's behalf:
// additional interfaces (a veth whose host end is a port of a layer-2 network's bridge on the node, a macvlan on
// that bridge, a vlan or a bridge inside the pod), their addresses (the operator's allocations), routes and
// sysctls in the pod, and the primary interface's MTU and transmit queue length. The pod needs no capability.
//
// It works like nodenet, in four steps: BuildDesired turns the configs selecting the pod, their allocations and
// the node's NodeNetworkConfig spec into the pod's desired state (pure); Observe reads the pod's namespace and
// the host; ComputePlan diffs the two into ordered, printable actions (pure: create in dependency order - veths
// and macvlans, vlans after their parents, bridges after their ports - and delete in reverse); Applier.Apply runs
// exactly those actions. A restarted agent observes what exists and plans nothing for a pod that is as desired.
//
// Ownership: links the agent makes carry the alias "netop-pod:<pod uid>/<interface>" (AliasPrefix), inside the
// pod and on the host (a veth's host end, named HostVethName(uid, interface)); routes in the pod carry the
// agent's protocol number. Nothing else is changed or deleted, except the primary interface's MTU and queue
// length and the namespace's sysctls, whose original values are kept in podrecords and restored when the tuning
// goes. Veth ends and macvlans get a MAC derived from the pod UID (MAC), so when an interface goes the host's
// neighbour and FDB entries for it are found by that MAC on its bridge and removed, even after the pod's
// namespace is gone.
//
// What a config cannot have is reported per config (Problem, with the reasons of status.pods[].reason), and
// the rest is applied: a vlan where the kernel lacks 802.1Q (nodenet.Probe) is NotSupported, a network the
// node lacks NetworkNotOnNode, a name or route another config or a foreign object holds a Conflict.
package podnet
