// Package bpf holds the network-operator's eBPF router (router.c, GPL-2.0-only,
// see LICENSE) and the Go bindings bpf2go generates for it. Only little-endian
// objects (bpfel: amd64, arm64) are generated; the package does not build for
// big-endian targets.
//
// Regenerate with `go generate ./bpf/...` (needs clang 14 and llvm-strip, no
// system headers; CI checks that the committed objects are fresh).
package bpf

// Every header router.c and floor.c include is vendored under include/ (see
// include/README.md): -nostdinc keeps the system's headers out, so the objects
// do not depend on the distribution or the build machine's architecture.
// -mcpu=v3 (Linux 5.1; bpf2go's default is v1) lets clang use 32-bit jumps and
// registers: fewer instructions per packet than v1's shift pairs.
//go:generate go tool bpf2go -tags linux -go-package bpf -target bpfel -type iface_key -type iface_value -type iface_cache_value -type iface_mode -type iface_flags -type vrf_key -type vrf_value -type vrf_flags -type sbr_key -type sbr_value -type redirect_key -type redirect_value -type redirect_flags -type counter -type vrf_stats -type version_info -type reason Router router.c -- -O2 -mcpu=v3 -g -Wall -Werror -nostdinc -Iinclude
//go:generate go tool bpf2go -tags linux -go-package bpf -target bpfel Floor floor.c -- -O2 -g -Wall -Werror -nostdinc -Iinclude
