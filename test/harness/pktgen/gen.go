// Package pktgen is a packet generator and counter for benchmarks (pktgen.c, GPL-2.0-only, see bpf/LICENSE): an
// XDP program run with BPF_F_TEST_XDP_LIVE_FRAMES that transmits UDP frames of several flows out of a veth, and
// an XDP program on the receiving veth that counts and drops them. Nothing here is part of the router.
package pktgen

// Compiled like the router (see bpf/gen.go): vendored headers only.
//go:generate go tool bpf2go -tags linux -go-package pktgen -target bpfel Pktgen pktgen.c -- -O2 -g -Wall -Werror -nostdinc -I../../../bpf/include
