// Package cri finds a pod's network namespace through the container runtime's CRI socket (containerd's): the
// pod's ready sandbox (ListPodSandbox by the pod UID label the kubelet sets) and its verbose status, which
// names both the sandbox's process id and the network namespace's path in the runtime spec.
//
// Two ways lead from there to the namespace, and the agent's pod needs what the one it uses needs:
//
//   - path: the namespace's bind mount that the runtime made (containerd: /var/run/netns/cni-..., or under its
//     state directory). The agent needs that directory mounted at the same path (hostPath, mountPropagation
//     HostToContainer, since the mounts appear after the agent started). No process access is needed.
//   - pid: /proc/<sandbox pid>/ns/net. The agent needs the host's PID namespace (hostPID: true) and may open
//     another user's process namespaces (CAP_SYS_PTRACE). Works for any runtime that reports the pid.
//
// SourceAuto (the default) takes the path when it is visible here and the pid otherwise; when neither works
// the error (ErrNetnsUnavailable) says what is missing for each.
package cri

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultSocket is containerd's CRI socket.
const DefaultSocket = "/run/containerd/containerd.sock"

// PodUIDLabel is the sandbox label the kubelet sets to the pod's UID.
const PodUIDLabel = "io.kubernetes.pod.uid"

// Source is how the namespace is reached from the sandbox's status.
type Source string

// Sources.
const (
	SourceAuto Source = "auto"
	SourcePath Source = "path"
	SourcePID  Source = "pid"
)

// Check returns ErrBadSource for anything but auto, path and pid.
func (s Source) Check() error {
	switch s {
	case SourceAuto, SourcePath, SourcePID:
		return nil
	}
	return fmt.Errorf("%w %q: want %s, %s or %s", ErrBadSource, string(s), SourceAuto, SourcePath, SourcePID)
}

var (
	// ErrNoSandbox: the pod has no ready sandbox on this node (not yet, or no more).
	ErrNoSandbox = errors.New("no ready pod sandbox")
	// ErrHostNetwork: the pod's sandbox uses the node's network namespace (hostNetwork).
	ErrHostNetwork = errors.New("the pod sandbox uses the node's network namespace")
	// ErrNetnsUnavailable: the sandbox's namespace cannot be reached from this process (NetnsError says why).
	ErrNetnsUnavailable = errors.New("the pod's network namespace is not reachable from the agent")
	// ErrRuntimeUnavailable: the CRI socket does not answer.
	ErrRuntimeUnavailable = errors.New("container runtime not reachable")
	// ErrBadSource: an unknown Source.
	ErrBadSource = errors.New("unknown netns source")
)

// Options configure a Client.
type Options struct {
	// Source: auto (default), path or pid.
	Source Source
	// ProcRoot is the proc file system of the host's PID namespace as this process sees it (default /proc).
	ProcRoot string
}

// Client asks one runtime.
type Client struct {
	socket string
	conn   *grpc.ClientConn
	rt     runtimeapi.RuntimeServiceClient
	o      Options
}

// New returns a client of the CRI socket (a path); nothing is dialled before the first call, so a runtime that
// starts later is found then.
func New(socket string, o Options) (*Client, error) {
	if socket == "" {
		socket = DefaultSocket
	}
	if o.Source == "" {
		o.Source = SourceAuto
	}
	if err := o.Source.Check(); err != nil {
		return nil, err
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	abs, err := filepath.Abs(socket)
	if err != nil {
		return nil, fmt.Errorf("CRI socket %s: %w", socket, err)
	}
	conn, err := grpc.NewClient("unix://"+abs, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("CRI socket %s: %w", abs, err)
	}
	return &Client{socket: abs, conn: conn, rt: runtimeapi.NewRuntimeServiceClient(conn), o: o}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Netns is where a pod's network namespace is.
type Netns struct {
	SandboxID string
	// Path is what Open opens: the runtime's netns path, or /proc/<pid>/ns/net.
	Path   string
	Source Source
}

// Open opens the namespace.
func (n Netns) Open() (netns.NsHandle, error) {
	h, err := netns.GetFromPath(n.Path)
	if err != nil {
		return 0, fmt.Errorf("open network namespace %s of sandbox %s: %w", n.Path, short(n.SandboxID), err)
	}
	return h, nil
}

// NetnsError says why neither way reached the sandbox's namespace.
type NetnsError struct {
	SandboxID string
	// PathErr and PIDErr say why each way did not work (nil: not tried).
	PathErr, PIDErr error
}

func (e *NetnsError) Error() string {
	var why []string
	if e.PathErr != nil {
		why = append(why, e.PathErr.Error())
	}
	if e.PIDErr != nil {
		why = append(why, e.PIDErr.Error())
	}
	return fmt.Sprintf("sandbox %s: %v: %s", short(e.SandboxID), ErrNetnsUnavailable, strings.Join(why, "; and "))
}

func (e *NetnsError) Unwrap() error { return ErrNetnsUnavailable }

func short(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

func (c *Client) callErr(what string, err error) error {
	if s, ok := status.FromError(err); ok && (s.Code() == codes.Unavailable || s.Code() == codes.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: CRI socket %s: %s", what, ErrRuntimeUnavailable, c.socket, s.Message())
	}
	return fmt.Errorf("%s (CRI socket %s): %w", what, c.socket, err)
}

// PodNetns finds the network namespace of the pod with that UID.
func (c *Client) PodNetns(ctx context.Context, podUID string) (Netns, error) {
	resp, err := c.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{PodUIDLabel: podUID},
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
	}})
	if err != nil {
		return Netns{}, c.callErr("list pod sandboxes", err)
	}
	var ready []*runtimeapi.PodSandbox
	for _, s := range resp.GetItems() {
		// Filter again: a runtime may ignore parts of the filter.
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY && s.GetLabels()[PodUIDLabel] == podUID {
			ready = append(ready, s)
		}
	}
	if len(ready) == 0 {
		return Netns{}, fmt.Errorf("pod %s: %w", podUID, ErrNoSandbox)
	}
	// The newest: a sandbox being replaced may still be listed as ready for a moment.
	sb := slices.MaxFunc(ready, func(a, b *runtimeapi.PodSandbox) int { return int(a.GetCreatedAt() - b.GetCreatedAt()) })
	st, err := c.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.GetId(), Verbose: true})
	if err != nil {
		if s, ok := status.FromError(err); ok && s.Code() == codes.NotFound {
			return Netns{}, fmt.Errorf("pod %s: sandbox %s: %w", podUID, short(sb.GetId()), ErrNoSandbox)
		}
		return Netns{}, c.callErr("pod sandbox status", err)
	}
	if st.GetStatus().GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE {
		return Netns{}, fmt.Errorf("pod %s: sandbox %s: %w", podUID, short(sb.GetId()), ErrHostNetwork)
	}
	info, err := parseInfo(st.GetInfo())
	if err != nil {
		return Netns{}, fmt.Errorf("pod %s: sandbox %s: %w", podUID, short(sb.GetId()), err)
	}
	return c.resolve(sb.GetId(), info)
}

// sandboxInfo is what the agent reads of the runtime's verbose sandbox status (containerd's "info" key).
type sandboxInfo struct {
	Pid         int  `json:"pid"`
	NetNSClosed bool `json:"netNamespaceClosed"`
	RuntimeSpec struct {
		Linux struct {
			Namespaces []struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"namespaces"`
		} `json:"linux"`
	} `json:"runtimeSpec"`
}

func (i sandboxInfo) netnsPath() string {
	for _, ns := range i.RuntimeSpec.Linux.Namespaces {
		if ns.Type == "network" {
			return ns.Path
		}
	}
	return ""
}

func parseInfo(m map[string]string) (sandboxInfo, error) {
	var info sandboxInfo
	raw, ok := m["info"]
	if !ok {
		return info, fmt.Errorf("%w: the runtime's verbose status has no \"info\" (it reports neither pid nor netns path)", ErrNetnsUnavailable)
	}
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return info, fmt.Errorf("the runtime's verbose sandbox info: %w", err)
	}
	if info.NetNSClosed {
		return info, fmt.Errorf("its network namespace is closed: %w", ErrNoSandbox)
	}
	return info, nil
}

// resolve picks the way to the namespace.
func (c *Client) resolve(id string, info sandboxInfo) (Netns, error) {
	e := &NetnsError{SandboxID: id}
	if c.o.Source != SourcePID {
		p := info.netnsPath()
		if p == "" {
			e.PathErr = errors.New("the runtime spec names no network namespace path")
		} else if err := isNetns(p); err != nil {
			e.PathErr = fmt.Errorf("its network namespace %s is not visible here (mount the runtime's netns directory %s into the agent, "+
				"mountPropagation HostToContainer): %w", p, filepath.Dir(p), err)
		} else {
			return Netns{SandboxID: id, Path: p, Source: SourcePath}, nil
		}
	}
	if c.o.Source != SourcePath {
		if err := c.hostPID(); err != nil {
			e.PIDErr = err
		} else if info.Pid <= 0 {
			e.PIDErr = errors.New("the runtime reports no sandbox pid")
		} else {
			p := filepath.Join(c.o.ProcRoot, strconv.Itoa(info.Pid), "ns", "net")
			if _, err := os.Lstat(p); err != nil {
				e.PIDErr = fmt.Errorf("sandbox pid %d: %w", info.Pid, err)
			} else {
				return Netns{SandboxID: id, Path: p, Source: SourcePID}, nil
			}
		}
	}
	return Netns{}, e
}

// errNotNsfs: the path exists but is not a namespace's bind mount here (e.g. the empty mount point a runtime in
// another mount namespace mounted the namespace on).
var errNotNsfs = errors.New("not a namespace file (nsfs) in this mount namespace")

// isNetns checks that the runtime's netns path is a namespace bind mount as this process sees it.
func isNetns(p string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	if st.Type != unix.NSFS_MAGIC {
		return errNotNsfs
	}
	return nil
}

// hostPID checks that ProcRoot shows the host's PID namespace: only there are kernel threads visible, and
// kthreadd is pid 2 with parent 0. In a container's own PID namespace a pid the runtime reports names another
// process, or none.
func (c *Client) hostPID() error {
	const hint = "this process does not see the host's PID namespace (the agent's pod needs hostPID: true for --pod-netns=pid)"
	data, err := os.ReadFile(filepath.Join(c.o.ProcRoot, "2", "stat"))
	if err != nil {
		return fmt.Errorf("%s: %w", hint, err)
	}
	// "2 (kthreadd) S 0 ...": the command may contain spaces and parentheses, the last ')' ends it.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || !strings.Contains(s[:i], "(kthreadd") {
		return errors.New(hint + ": pid 2 is not kthreadd")
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 || fields[1] != "0" {
		return errors.New(hint + ": pid 2 has a parent")
	}
	return nil
}
