package kubenodes

// HostRuntimeDir is the runtime directory the host's clusters share.
var HostRuntimeDir = hostShared.RuntimeDir

// HostStateDir holds the clusters' leases on it.
var HostStateDir = hostShared.State

// HostOtherHolders counts the clusters of other processes on the host.
func HostOtherHolders() (int, error) { return hostShared.otherHolders() }

// ShimSockets are the sockets of the running shims of the containerd at address.
func ShimSockets(address string) []string { return hostShared.shimSockets(address) }

// CgroupLayout names the host's cgroup layout and whether it is cgroup v2 only.
func CgroupLayout() (string, bool, error) {
	l, err := detectCgroupLayout(cgroupMount)
	return l.String(), l == cgroupUnified, err
}
