package loader

import (
	"fmt"
	"runtime"
	"unsafe"

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

// Offload names a device offload the XDP-on-veth caveats depend on.
type Offload string

const (
	// OffloadTxChecksum: native XDP on veth stalls TCP unless the sending
	// veth has TX checksum offload off.
	OffloadTxChecksum Offload = "tx-checksum"
	// OffloadTSO and OffloadGSO: generic XDP drops GSO packets larger than
	// the MTU (EMSGSIZE) unless segmentation offloads are off.
	OffloadTSO Offload = "tso"
	OffloadGSO Offload = "gso"
)

// ethtoolCmds returns the legacy get/set ethtool commands of an offload.
func (o Offload) ethtoolCmds() (get, set uint32, err error) {
	switch o {
	case OffloadTxChecksum:
		return unix.ETHTOOL_GTXCSUM, unix.ETHTOOL_STXCSUM, nil
	case OffloadTSO:
		return unix.ETHTOOL_GTSO, unix.ETHTOOL_STSO, nil
	case OffloadGSO:
		return unix.ETHTOOL_GGSO, unix.ETHTOOL_SGSO, nil
	}
	return 0, 0, fmt.Errorf("offload %q: want %s, %s or %s", o, OffloadTxChecksum, OffloadTSO, OffloadGSO)
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqPtr is struct ifreq with its union holding a pointer (ifr_data).
type ifreqPtr struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func ethtoolValueIoctl(ifname string, v *ethtoolValue) error {
	if len(ifname) >= unix.IFNAMSIZ || ifname == "" {
		return fmt.Errorf("interface name %q: want 1..%d bytes", ifname, unix.IFNAMSIZ-1)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	var ifr ifreqPtr
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(v)
	if errno != 0 {
		return errno
	}
	return nil
}

// getOffload and setOffload run in the calling thread's namespace.
func getOffload(ifname string, o Offload) (bool, error) {
	get, _, err := o.ethtoolCmds()
	if err != nil {
		return false, err
	}
	v := ethtoolValue{cmd: get}
	if err := ethtoolValueIoctl(ifname, &v); err != nil {
		return false, asNotSupported(fmt.Errorf("get %s of %s: %w", o, ifname, err))
	}
	return v.data != 0, nil
}

func setOffload(ifname string, o Offload, on bool) error {
	_, set, err := o.ethtoolCmds()
	if err != nil {
		return err
	}
	v := ethtoolValue{cmd: set}
	if on {
		v.data = 1
	}
	if err := ethtoolValueIoctl(ifname, &v); err != nil {
		return asNotSupported(fmt.Errorf("set %s of %s to %v: %w", o, ifname, on, err))
	}
	return nil
}
