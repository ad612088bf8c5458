package bpf_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/internal/wait"
	"github.com/network-operator/network-operator/internal/wait/waittest"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// packetSocket is an AF_PACKET socket bound to one interface of the lab.
type packetSocket struct{ fd int }

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPacketSocket(ifindex int) (*packetSocket, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind packet socket to ifindex %d: %w", ifindex, err)
	}
	// Receive timeouts bound each read; the caller polls until its deadline.
	// PACKET_AUXDATA tells whether a received frame still carries a VLAN
	// tag in its metadata (AF_PACKET strips it from the data).
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	tv := unix.Timeval{Usec: 100_000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &packetSocket{fd: fd}, nil
}

func (s *packetSocket) close() { unix.Close(s.fd) }

func (s *packetSocket) send(frame []byte) error {
	_, err := unix.Write(s.fd, frame)
	return err
}

// await returns the first frame for which match is true and whether it had a
// VLAN tag in its metadata, or an error at the deadline. The kernel's own
// frames (ND, MLD) are skipped by match.
func (s *packetSocket) await(deadline time.Time, match func([]byte) bool) ([]byte, bool, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{}))))
	for time.Now().Before(deadline) {
		n, oobn, _, _, err := unix.Recvmsg(s.fd, buf, oob, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if !match(buf[:n]) {
			continue
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, false, err
		}
		tagged := false
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_PACKET && m.Header.Type == unix.PACKET_AUXDATA &&
				len(m.Data) >= int(unsafe.Sizeof(unix.TpacketAuxdata{})) {
				aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
				tagged = aux.Status&unix.TP_STATUS_VLAN_VALID != 0
			}
		}
		return append([]byte(nil), buf[:n]...), tagged, nil
	}
	return nil, false, errors.New("no matching frame before the deadline")
}

// TestRouterLiveTC attaches tc_router with tcx to rin and sends real frames
// from its veth peer. It covers what BPF_PROG_TEST_RUN cannot: a VLAN tag
// that the stack already moved into skb->vlan_tci (hardware-accelerated tag)
// before tc ingress, and a real bpf_redirect to the egress veth.
func TestRouterLiveTC(t *testing.T) {
	l := newLab(t)
	var (
		tx, rx *packetSocket
		lnk    link.Link
	)
	err := runInNS(l.ns, func() error {
		var err error
		lnk, err = link.AttachTCX(link.TCXOptions{Interface: l.in, Program: l.objs.TcRouter, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("attach tcx to rin: %w", err)
		}
		peerIn, err := net.InterfaceByName("rinp")
		if err != nil {
			return err
		}
		peerOut, err := net.InterfaceByName("routp")
		if err != nil {
			return err
		}
		if tx, err = openPacketSocket(peerIn.Index); err != nil {
			return err
		}
		rx, err = openPacketSocket(peerOut.Index)
		return err
	})
	if tx != nil {
		defer tx.close()
	}
	if rx != nil {
		defer rx.close()
	}
	if lnk != nil {
		defer lnk.Close()
	}
	if errors.Is(err, ebpf.ErrNotSupported) {
		testreq.KernelLacks(t, "tcx", err)
	}
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		pkt    packet
		vrf    uint32
		reason maps.Reason
	}{
		{"untagged ipv4", ip4(addrRoute, protoUDP), 1, maps.ReasonForwardedFib},
		{"vlan tag in skb metadata ipv4", tagged(ip4(addrRoute, protoUDP), vlanRoute), 1, maps.ReasonForwardedFib},
		{"vlan tag in skb metadata ipv6", tagged(ip6(route6, protoUDP), vlanRoute), 1, maps.ReasonForwardedFib},
		// Only the tag selects VRF 2 (forwarding off): proves the metadata tag is read.
		{"vlan tag selects the interface entry", tagged(ip4(addrRoute, protoUDP), vlanFwdOff), 2, maps.ReasonPassedFwdDisabled},
		{"vlan tag selects strict drop", tagged(ip4(addrBlack, protoUDP), vlanStrict), 1, maps.ReasonDroppedFib},
		{"802.1ad tag passes", with(tagged(ip4(addrRoute, protoUDP), vlanRoute), func(p *packet) { p.TPID = 0x88a8 }),
			1, maps.ReasonPassedNotIP},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.pkt
			p.SrcPort = uint16(50000 + i) // tells this case's frame apart
			want := routed.frame(p)
			before, err := l.counters(c.vrf)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.send(p.bytes()); err != nil {
				t.Fatal(err)
			}
			// The program counts while the frame is still in flight: poll.
			deadline := time.Now().Add(5 * time.Second)
			var d uint64
			err = wait.Poll(context.Background(), time.Millisecond, time.Until(deadline), "counted", waittest.Check(func() (bool, error) {
				after, err := l.counters(c.vrf)
				if err != nil {
					return false, waittest.Permanent(err)
				}
				d = after[c.vrf][c.reason].Packets - before[c.vrf][c.reason].Packets
				return d >= 1, nil
			}))
			if err != nil || d != 1 {
				t.Fatalf("vrf %d %s counted %d times, want 1 (%v)", c.vrf, c.reason, d, err)
			}
			if c.reason.Action() != maps.ActionForwarded {
				return
			}
			got, tagged, err := rx.await(deadline, func(f []byte) bool {
				return len(f) == len(want) && bytes.Equal(f[12:14], want[12:14]) &&
					binary.BigEndian.Uint16(f[len(f)-len(p.l4()):]) == p.SrcPort
			})
			if err != nil {
				t.Fatalf("routed frame did not arrive on routp: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("frame on routp\n got %x\nwant %x", got, want)
			}
			if tagged {
				t.Error("routed frame still carries a VLAN tag in its metadata")
			}
		})
	}
}
