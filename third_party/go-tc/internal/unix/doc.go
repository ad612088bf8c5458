// Package unix contains some constants, that are needed to use github.com/florianl/go-tc.
// Some of these constants are copied from golang.org/x/sys/unix to make them available also to
// other OS than linux. In the end, the only source of truth will be the Linux kernel itself.
package unix
