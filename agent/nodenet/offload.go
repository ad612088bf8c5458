package nodenet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/pkg/netnsrun"
)

// Segmentation offload (NodeLayer2.DisableSegmentation) is switched on a layer-2 network's bridge, the interface
// carrying its gateway addresses (das-schiff's VLAN interface), through the ethtool ioctl (ETHTOOL_GFEATURES /
// ETHTOOL_SFEATURES, feature bits found by name). nodenet switches three features, named as in "ethtool -K":
// tso (every TCP segmentation feature), gso and gro.
//
// What nodenet turned off is written into the link's alias (segOffMark and the feature names), so the settings
// survive a restart and, when the flag goes away, nodenet turns on again only what it turned off.

// From linux/ethtool.h (x/sys/unix lacks them).
const (
	ethSSFeatures = 4  // ETH_SS_FEATURES: the string set of device feature names
	ethGStringLen = 32 // ETH_GSTRING_LEN
)

// segmentationFeatures are the features nodenet switches, in plan order, with the kernel feature strings of each.
var segmentationFeatures = []struct {
	name string
	bits []string
}{
	{"tso", []string{"tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation",
		"tx-tcp-accecn-segmentation"}},
	{"gso", []string{"tx-generic-segmentation"}},
	{"gro", []string{"rx-gro"}},
}

func segmentationFeatureNames() []string {
	out := make([]string, 0, len(segmentationFeatures))
	for _, f := range segmentationFeatures {
		out = append(out, f.name)
	}
	return out
}

// segOffMark follows the ownership alias of a link on which nodenet turned segmentation features off, then
// those features, comma-separated: "network-operator:l2bridge:net1 segmentation-off=tso,gso,gro".
const segOffMark = " segmentation-off="

// splitSegMark returns the alias without the segmentation mark and the features the mark names.
func splitSegMark(alias string) (base string, off []string) {
	base, list, ok := strings.Cut(alias, segOffMark)
	if !ok || list == "" {
		return base, nil
	}
	return base, strings.Split(list, ",")
}

// withSegMark is base marked with the features nodenet turned off (in plan order; none: base).
func withSegMark(base string, off []string) string {
	var names []string
	for _, n := range segmentationFeatureNames() {
		if slices.Contains(off, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return base
	}
	return base + segOffMark + strings.Join(names, ",")
}

// OffloadFeature is the observed state of one segmentation feature of a link.
type OffloadFeature struct {
	Name string // tso, gso, gro
	On   bool   // any of its kernel features is active
	// Changeable: the driver lets it be switched (ethtool does not show it "[fixed]").
	Changeable bool
}

// ethtool talks SIOCETHTOOL through a datagram socket of the namespace nodenet works in.
type ethtool struct {
	fd int
	// bits maps kernel feature strings to their bit (read once per socket).
	bits map[string]int
	// words is the number of 32-bit feature words.
	words int
}

// openEthtool opens a socket in ns (0: the caller's namespace) for ethtool ioctls.
func openEthtool(ns netns.NsHandle) (*ethtool, error) {
	e := &ethtool{fd: -1}
	err := netnsrun.Run(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		e.fd = fd
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ethtool socket: %w", err)
	}
	return e, nil
}

func (e *ethtool) Close() { unix.Close(e.fd) }

// ifreq is struct ifreq with ifr_data.
type ifreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

// ioctl runs one SIOCETHTOOL command whose buffer starts with the command word; it returns the ioctl's
// non-negative result (ETHTOOL_SFEATURES reports flags there).
func (e *ethtool) ioctl(dev string, buf []byte) (uintptr, error) {
	var ifr ifreq
	copy(ifr.name[:unix.IFNAMSIZ-1], dev)
	ifr.data = unsafe.Pointer(&buf[0])
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(e.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

// ifindex is the index of dev in the socket's namespace.
func (e *ethtool) ifindex(dev string) (int, error) {
	ifr, err := unix.NewIfreq(dev)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(e.fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, err
	}
	return int(ifr.Uint32()), nil
}

// loadBits reads the kernel's feature strings (the same for every device; dev is any device).
func (e *ethtool) loadBits(dev string) error {
	if e.bits != nil {
		return nil
	}
	ne := binary.NativeEndian
	info := make([]byte, 24) // ethtool_sset_info: cmd, reserved, sset_mask (u64), data[1]
	ne.PutUint32(info[0:], unix.ETHTOOL_GSSET_INFO)
	ne.PutUint64(info[8:], 1<<ethSSFeatures)
	if _, err := e.ioctl(dev, info); err != nil {
		return fmt.Errorf("ETHTOOL_GSSET_INFO: %w", err)
	}
	if ne.Uint64(info[8:]) == 0 {
		return errors.New("ETHTOOL_GSSET_INFO: no feature strings")
	}
	n := int(ne.Uint32(info[16:]))
	strs := make([]byte, 12+n*ethGStringLen) // ethtool_gstrings: cmd, string_set, len, data
	ne.PutUint32(strs[0:], unix.ETHTOOL_GSTRINGS)
	ne.PutUint32(strs[4:], ethSSFeatures)
	ne.PutUint32(strs[8:], uint32(n))
	if _, err := e.ioctl(dev, strs); err != nil {
		return fmt.Errorf("ETHTOOL_GSTRINGS: %w", err)
	}
	e.bits = make(map[string]int, n)
	for i := range n {
		s := strs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if end := slices.Index(s, 0); end >= 0 {
			s = s[:end]
		}
		e.bits[string(s)] = i
	}
	e.words = (n + 31) / 32
	return nil
}

// featureBlock is one 32-bit word of ethtool_get_features_block.
type featureBlock struct{ available, requested, active, neverChanged uint32 }

func (e *ethtool) getFeatures(dev string) ([]featureBlock, error) {
	if err := e.loadBits(dev); err != nil {
		return nil, err
	}
	ne := binary.NativeEndian
	buf := make([]byte, 8+16*e.words)
	ne.PutUint32(buf[0:], unix.ETHTOOL_GFEATURES)
	ne.PutUint32(buf[4:], uint32(e.words))
	if _, err := e.ioctl(dev, buf); err != nil {
		return nil, fmt.Errorf("ETHTOOL_GFEATURES: %w", err)
	}
	out := make([]featureBlock, e.words)
	for i := range out {
		b := buf[8+16*i:]
		out[i] = featureBlock{ne.Uint32(b), ne.Uint32(b[4:]), ne.Uint32(b[8:]), ne.Uint32(b[12:])}
	}
	return out, nil
}

// segmentation reads the segmentation features of dev, after checking that dev is the link with ifindex
// index (the link netlink reported: the socket is in the namespace of the netlink handle).
func (e *ethtool) segmentation(dev string, index int) ([]OffloadFeature, error) {
	if got, err := e.ifindex(dev); err != nil || got != index {
		return nil, fmt.Errorf("%s is not ifindex %d in the namespace of the ethtool socket (index %d, %v): Settings.NetNS is not the namespace of the netlink handle",
			dev, index, got, err)
	}
	blocks, err := e.getFeatures(dev)
	if err != nil {
		return nil, err
	}
	var out []OffloadFeature
	for _, f := range segmentationFeatures {
		st := OffloadFeature{Name: f.name}
		known := false
		for _, name := range f.bits {
			bit, ok := e.bits[name]
			if !ok {
				continue
			}
			known = true
			b, mask := blocks[bit/32], uint32(1)<<(bit%32)
			st.On = st.On || b.active&mask != 0
			st.Changeable = st.Changeable || b.available&mask != 0
		}
		if known {
			out = append(out, st)
		}
	}
	return out, nil
}

// setSegmentation switches the changeable kernel features of the named segmentation features of dev (ifindex
// index) on or off and returns those of them it switched (that were not in the wanted state before and are now).
func (e *ethtool) setSegmentation(dev string, index int, names []string, on bool) ([]string, error) {
	before, err := e.segmentation(dev, index)
	if err != nil {
		return nil, err
	}
	blocks, err := e.getFeatures(dev)
	if err != nil {
		return nil, err
	}
	valid := make([]uint32, e.words)
	for _, f := range segmentationFeatures {
		if !slices.Contains(names, f.name) {
			continue
		}
		for _, name := range f.bits {
			if bit, ok := e.bits[name]; ok && blocks[bit/32].available&(1<<(bit%32)) != 0 {
				valid[bit/32] |= 1 << (bit % 32)
			}
		}
	}
	ne := binary.NativeEndian
	buf := make([]byte, 8+8*e.words)
	ne.PutUint32(buf[0:], unix.ETHTOOL_SFEATURES)
	ne.PutUint32(buf[4:], uint32(e.words))
	for i, v := range valid {
		ne.PutUint32(buf[8+8*i:], v)
		if on {
			ne.PutUint32(buf[12+8*i:], v)
		}
	}
	if _, err := e.ioctl(dev, buf); err != nil {
		return nil, fmt.Errorf("ETHTOOL_SFEATURES: %w", err)
	}
	// A positive result (ETHTOOL_F_WISH) says the kernel kept some features as they were (a dependency); the
	// features read back say which.
	now, err := e.segmentation(dev, index)
	if err != nil {
		return nil, err
	}
	var done []string
	for i, f := range now {
		if slices.Contains(names, f.Name) && f.On == on && i < len(before) && before[i].On != on {
			done = append(done, f.Name)
		}
	}
	return done, nil
}
