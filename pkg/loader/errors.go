package loader

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

var (
	// ErrNotSupported means the kernel or the device lacks a feature the
	// operation needs (tcx, native XDP, bpf_link, ...). The underlying error
	// stays in the chain.
	ErrNotSupported = errors.New("not supported by the kernel or device")

	// ErrForeignXDP means another owner's XDP program occupies the
	// interface. The concrete error is a *ForeignXDPError.
	ErrForeignXDP = errors.New("foreign XDP program attached")

	// ErrForeignFilter means a cls_bpf filter that we do not own sits at our
	// priority and handle on the clsact ingress hook.
	ErrForeignFilter = errors.New("foreign tc filter at our priority and handle")

	// ErrRebuildRequired means the pinned maps are incompatible with the spec
	// and Options.Rebuild is nil, so the tables cannot be refilled.
	ErrRebuildRequired = errors.New("pinned maps are incompatible and Options.Rebuild is not set")

	// ErrNoProgram means the spec lacks the program a mode needs.
	ErrNoProgram = errors.New("program missing from collection spec")

	// ErrClosed is returned by every method after Close or Remove.
	ErrClosed = errors.New("loader is closed")
)

// errnoENOTSUPP is the kernel-internal ENOTSUPP (524) that some BPF paths
// leak to user space; x/sys/unix does not define it.
const errnoENOTSUPP = syscall.Errno(524)

// ForeignXDPError names the interface and the foreign program found on it.
type ForeignXDPError struct {
	Interface string
	ProgramID ebpf.ProgramID
	// AttachMode is "native", "generic", "offload" or "unknown".
	AttachMode string
}

func (e *ForeignXDPError) Error() string {
	return fmt.Sprintf("interface %s: %s XDP program id %d is not ours", e.Interface, e.AttachMode, e.ProgramID)
}

// Is makes errors.Is(err, ErrForeignXDP) hold.
func (e *ForeignXDPError) Is(target error) bool { return target == ErrForeignXDP }

// IncompatibleMapsError lists the pinned maps whose definition changed.
type IncompatibleMapsError struct {
	Maps []string
	Err  error
}

func (e *IncompatibleMapsError) Error() string {
	return fmt.Sprintf("pinned maps %v are incompatible with the spec: %v", e.Maps, e.Err)
}

func (e *IncompatibleMapsError) Unwrap() error { return e.Err }

// asNotSupported marks err with ErrNotSupported when it says a feature is
// missing, keeping the original error in the chain; other errors pass
// through unchanged.
func asNotSupported(err error) error {
	if err == nil || errors.Is(err, ErrNotSupported) {
		return err
	}
	if errors.Is(err, ebpf.ErrNotSupported) ||
		errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, errnoENOTSUPP) {
		return fmt.Errorf("%w: %w", ErrNotSupported, err)
	}
	return err
}
