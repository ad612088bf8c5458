package uninstall

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestOptionsCheck(t *testing.T) {
	full := Options{Namespace: "netop", AgentDaemonSet: "network-agent", OperatorDeployment: "network-operator", CleanupImage: "agent:1"}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		ok     bool
	}{
		{name: "complete", change: func(*Options) {}, ok: true},
		{name: "no namespace", change: func(o *Options) { o.Namespace = "" }},
		{name: "no agent DaemonSet", change: func(o *Options) { o.AgentDaemonSet = "" }},
		{name: "no operator Deployment", change: func(o *Options) { o.OperatorDeployment = "" }},
		{name: "no cleanup image", change: func(o *Options) { o.CleanupImage = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := full
			tc.change(&o)
			err := o.Check()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrOptions)) {
				t.Fatalf("Check = %v, want ok %v (or ErrOptions)", err, tc.ok)
			}
			// Run refuses the same options before it touches the cluster (a nil client would panic).
			if !tc.ok {
				if err := Run(context.Background(), nil, o); !errors.Is(err, ErrOptions) {
					t.Errorf("Run = %v, want ErrOptions", err)
				}
			}
		})
	}
}

func TestCleanupArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{name: "none", in: nil, want: nil},
		{name: "state flags kept, the rest dropped",
			in:   []string{"--node-name=n1", "--pin-dir=/sys/fs/bpf/x", "--listen=:9750", "--state-file=/var/lib/s", "--frr-state-dir=/var/lib/frr"},
			want: []string{"--pin-dir=/sys/fs/bpf/x", "--state-file=/var/lib/s", "--frr-state-dir=/var/lib/frr"}},
		{name: "an empty value is not kept", in: []string{"--pin-dir="}, want: nil},
		{name: "pod networking kept",
			in: []string{"--pod-network=true", "--cri-socket=/run/containerd/containerd.sock", "--pod-netns=auto",
				"--pod-state-dir=/var/lib/network-operator/pods", "--pod-sysctl-dir=/host/proc/sys", "--resync=30s"},
			want: []string{"--pod-network=true", "--cri-socket=/run/containerd/containerd.sock", "--pod-netns=auto",
				"--pod-state-dir=/var/lib/network-operator/pods", "--pod-sysctl-dir=/host/proc/sys"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cleanupArgs(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("cleanupArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
