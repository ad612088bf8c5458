package loader

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// driverName asks the kernel (ETHTOOL_GDRVINFO) for the driver of ifname in
// the calling thread's network namespace.
func driverName(ifname string) (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, ifname)
	if err != nil {
		return "", fmt.Errorf("ETHTOOL_GDRVINFO %s: %w", ifname, err)
	}
	return unix.ByteSliceToString(info.Driver[:]), nil
}
