// Package desirednode translates a node's spec, once per reconcile, into everything the agent wants on the node:
// the netlink objects (agent/nodenet), the FRR model (agent/frrmodel, validated by pkg/frr), the BPF tables by
// interface name (agent/bpftables) and the table generation's revision. The planners consume a Node instead of
// reading the spec each for itself, so a VRF is translated in one place per part and every part of one plan comes
// from the same translation; what only the node can say (ifindexes, attachments, what runs) is added when
// planning against the node.
package desirednode

import (
	"context"
	"errors"
	"fmt"

	"github.com/network-operator/network-operator/agent/bpftables"
	"github.com/network-operator/network-operator/agent/frrmodel"
	"github.com/network-operator/network-operator/agent/nodenet"
	v1 "github.com/network-operator/network-operator/api/v1alpha1"
	"github.com/network-operator/network-operator/pkg/frr"
)

// Node is what the agent wants on its node, translated from Spec.
type Node struct {
	Spec *v1.NodeNetworkConfigSpec
	// Hash is lastapplied.SpecHash of Spec (the caller's: computed once per reconcile).
	Hash string
	// MapVersion is the revision of the table generation (bpftables.Revision).
	MapVersion string
	// Netlink is nodenet's objects of the spec on this node (its settings and kernel features).
	Netlink *nodenet.Desired
	// FRR is the validated FRR model; nil when FRRSkip says why FRR is not managed.
	FRR     *frr.NodeConfig
	FRRSkip string
	// Tables are the BPF tables by interface name, resolved against the node's links when planned. Their
	// lookup devices are the VRF devices of Netlink, where the kernel has them.
	Tables bpftables.Desired
}

// FRR says how the FRR model is built; a nil *FRR leaves FRR unmanaged.
type FRR struct {
	// Passwords reads the Secrets the BGP peers name.
	Passwords frrmodel.PasswordFunc
	// Version is the FRR release the config is validated and rendered for; zero: frr.Shipped.
	Version frr.Version
	// GracefulRestart goes into every config (the node a graceful-restart speaker); nil: none.
	GracefulRestart *frr.GracefulRestart
}

// Inputs are what the translation needs besides the spec.
type Inputs struct {
	// Netlink returns nodenet's objects of the spec with that hash (*nodenet.Manager.DesiredFor).
	Netlink func(ctx context.Context, hash string, spec *v1.NodeNetworkConfigSpec) (*nodenet.Desired, error)
	FRR     *FRR
}

// SkipFRRDisabled and SkipNoUnderlay are Node.FRRSkip's reasons.
const (
	SkipFRRDisabled = "FRR is disabled (--frr=none)"
	SkipNoUnderlay  = "the spec has no underlay"
)

// Build translates spec (hash: its lastapplied.SpecHash). An error names the part that refused ("map version",
// "netlink", "frr") and wraps the cause: a field error of the spec, or a fault reading the node or a Secret.
func Build(ctx context.Context, spec *v1.NodeNetworkConfigSpec, hash string, in Inputs) (*Node, error) {
	n := &Node{Spec: spec, Hash: hash}
	var err error
	if n.MapVersion, err = bpftables.Revision(spec); err != nil {
		return nil, fmt.Errorf("map version: %w", err)
	}
	if n.Netlink, err = in.Netlink(ctx, hash, spec); err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	if n.FRR, n.FRRSkip, err = frrModel(ctx, spec, in.FRR); err != nil {
		return nil, fmt.Errorf("frr: %w", err)
	}
	n.Tables = bpftables.FromSpec(spec, LookupDevices(n.Netlink))
	return n, nil
}

func frrModel(ctx context.Context, spec *v1.NodeNetworkConfigSpec, in *FRR) (*frr.NodeConfig, string, error) {
	if in == nil {
		return nil, SkipFRRDisabled, nil
	}
	nc, err := frrmodel.NodeConfig(ctx, spec, in.Passwords)
	if errors.Is(err, frrmodel.ErrNoUnderlay) {
		return nil, SkipNoUnderlay, nil
	}
	if err != nil {
		return nil, "", err
	}
	nc.Underlay.GracefulRestart = in.GracefulRestart
	nc.FRR = in.Version
	if err := nc.Validate(); err != nil {
		return nil, "", err
	}
	return nc, "", nil
}

// LookupDevices names, per VRF, the device whose forwarding flag bpf_fib_lookup checks: its VRF device where
// the kernel has VRF devices (bpftables.FromSpec).
func LookupDevices(d *nodenet.Desired) map[string]string {
	devs := map[string]string{}
	for _, v := range d.VRFs {
		if v.Device != "" {
			devs[v.Name] = v.Device
		}
	}
	return devs
}

// NeedsSecrets reports whether the spec's translation reads Secrets (a BGP password): such a Node must be built
// again for every reconcile, since a password may change under the same spec.
func NeedsSecrets(spec *v1.NodeNetworkConfigSpec) bool {
	for _, p := range spec.BGPPeers {
		if p.PasswordSecretRef != nil {
			return true
		}
	}
	return false
}
