// Package bpf holds the network-operator's eBPF router (router.c, GPL-2.0-only,
// see LICENSE) and the Go bindings bpf2go generates for it. Only little-endian
// objects (bpfel: amd64, arm64) are generated; the package does not build for
// big-endian targets.
//
// Regenerate with `go generate ./bpf/...` (needs clang 14 and llvm-strip; CI
// checks that the committed objects are fresh).
package bpf

// The include path of the asm/ headers differs per distribution; Debian and
// Ubuntu keep them under the multiarch directory. Missing directories are
// ignored by clang.
//go:generate go tool bpf2go -tags linux -go-package bpf -target bpfel -type iface_key -type iface_value -type iface_mode -type iface_flags -type vrf_key -type vrf_value -type redirect_key -type redirect_value -type redirect_flags -type counter -type vrf_stats -type version_info -type reason Router router.c -- -O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu
//go:generate go tool bpf2go -tags linux -go-package bpf -target bpfel Floor floor.c -- -O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu
