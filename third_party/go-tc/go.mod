module github.com/florianl/go-tc

go 1.13

require (
	github.com/cilium/ebpf v0.8.1
	github.com/google/go-cmp v0.6.0
	github.com/josharian/native v1.1.0
	github.com/jsimonetti/rtnetlink v0.0.0-20211022192332-93da33804786
	github.com/mdlayher/netlink v1.6.0
	golang.org/x/sys v0.0.0-20220128215802-99c3d69c2c27
)
