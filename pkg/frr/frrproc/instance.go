package frrproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/network-operator/network-operator/pkg/syncbuf"
)

// Locations of the Debian FRR packages.
const (
	DefaultDaemonDir    = "/usr/lib/frr"
	DefaultReloadScript = "/usr/lib/frr/frr-reload.py"
	DefaultVtysh        = "/usr/bin/vtysh"
)

// Options configure Start.
type Options struct {
	// Netns to run in ("" = the caller's namespace).
	Netns string
	// Config is loaded after the daemons are up, through vtysh as watchfrr
	// does ("vtysh -b"), then saved as frr.conf. Not handed to each daemon
	// with -f: a daemon reading the integrated file misreads other daemons'
	// lines (zebra takes bgpd's "vni N" for an L3VNI).
	Config []byte
	// Daemons to start, in order; default zebra, bgpd.
	Daemons []string
	// NoBGPListen starts bgpd without a listening socket (-p 0).
	NoBGPListen bool
	// Tools runs FRR's programs: this file system's, or the FRR image's root file system.
	Tools Tools
	// DaemonDir and Vtysh locate FRR's programs (inside Tools.Root); defaults are Debian's.
	DaemonDir string
	Vtysh     string
	// Profile is FRR's defaults profile (-F); default "datacenter".
	Profile string
	// KeepRoutes starts zebra with -K: at start it keeps the routes a crashed zebra left in the kernel this
	// long (graceful restart), as the chart's FRR container does. Zero: no -K.
	KeepRoutes time.Duration
	// Pathspace runs the daemons with FRR's -N: files under
	// /etc/frr/<Pathspace> and /var/run/frr/<Pathspace> (as "frrinit.sh start
	// <Pathspace>" would), both removed by Stop. Empty: a private temp dir.
	Pathspace string
}

// Instance is a set of FRR daemons sharing one directory: frr.conf,
// vtysh.conf, pid files, logs and the vty sockets; it belongs to user frr.
// With a pathspace, ConfDir (frr.conf, vtysh.conf) differs from Dir.
type Instance struct {
	Netns   string
	Dir     string
	ConfDir string
	// RunSpace is the directory FRR derives from a pathspace for what it does not let a flag place: mgmtd's
	// frontend and backend sockets, bfdd's control socket (/var/run/frr/<pathspace>). Every instance has one
	// of its own, so instances side by side (the agent's scratch daemons next to the node's FRR, tests in
	// parallel) never reach each other's mgmtd.
	RunSpace string
	opts     Options
	procs    []*daemon
	flags    map[string]map[string]bool // each daemon's long options, from its --help
}

type daemon struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan error
}

// Start creates the directory, writes the initial config and starts the
// daemons in the foreground as children of this process (so they are
// reaped), each waited for until it answers on its vty socket.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	setDefaults(&opts)
	uid, gid, err := FRRUser()
	if err != nil {
		return nil, err
	}
	addMgmtd(&opts)
	in := &Instance{Netns: opts.Netns, opts: opts, flags: map[string]map[string]bool{}}
	fail := func(err error) (*Instance, error) {
		_ = in.Stop()
		return nil, err
	}
	if opts.Pathspace != "" {
		if err := in.makePathspaceDirs(); err != nil {
			return fail(err)
		}
	} else {
		// Not t.TempDir: its parents are private to root, the daemons run as frr.
		dir, err := os.MkdirTemp("", "frr-")
		if err != nil {
			return nil, fmt.Errorf("frr instance dir: %w", err)
		}
		if err := in.makePrivateDirs(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	if err := in.writeConfFiles(); err != nil {
		return fail(err)
	}
	if err := in.chownDirs(uid, gid); err != nil {
		return fail(err)
	}
	for _, name := range opts.Daemons {
		if err := in.start(ctx, name, in.ConfigPath()); err != nil {
			return fail(err)
		}
	}
	if len(opts.Config) > 0 {
		if err := in.loadInitial(ctx, opts.Config, uid, gid); err != nil {
			return fail(err)
		}
	}
	return in, nil
}

// setDefaults fills in the Options left empty: Debian's locations, the datacenter profile, zebra and bgpd.
func setDefaults(opts *Options) {
	if opts.DaemonDir == "" {
		opts.DaemonDir = DefaultDaemonDir
	}
	if opts.Vtysh == "" {
		opts.Vtysh = DefaultVtysh
	}
	if opts.Profile == "" {
		opts.Profile = "datacenter"
	}
	if len(opts.Daemons) == 0 {
		opts.Daemons = []string{"zebra", "bgpd"}
	}
}

// addMgmtd adds mgmtd to the daemons, right after zebra, where the FRR in use has it and they lack it.
// FRR 9 and later configure some daemons (staticd, part of zebra) through mgmtd, which watchfrr starts
// with zebra: without it vtysh cannot configure them.
func addMgmtd(opts *Options) {
	if _, err := os.Stat(filepath.Join(rootOf(opts.Tools), opts.DaemonDir, "mgmtd")); err == nil && !slices.Contains(opts.Daemons, "mgmtd") {
		at := slices.Index(opts.Daemons, "zebra") + 1
		opts.Daemons = slices.Insert(slices.Clone(opts.Daemons), at, "mgmtd")
	}
}

// makePathspaceDirs makes the pathspace's directories under /var/run/frr and /etc/frr, as in.Dir and in.ConfDir.
func (in *Instance) makePathspaceDirs() error {
	in.Dir = filepath.Join("/var/run/frr", in.opts.Pathspace)
	in.ConfDir = filepath.Join("/etc/frr", in.opts.Pathspace)
	for _, d := range []string{in.Dir, in.ConfDir} {
		if err := os.Mkdir(d, 0o750); err != nil {
			return fmt.Errorf("pathspace dir: %w", err)
		}
	}
	return nil
}

// makePrivateDirs takes the fresh temp dir as in.Dir and in.ConfDir and makes the instance's own run space
// under /var/run/frr (uid and gid are user frr's).
func (in *Instance) makePrivateDirs(dir string, uid, gid int) error {
	in.Dir, in.ConfDir = dir, dir
	if err := os.Chmod(dir, 0o750); err != nil {
		return fmt.Errorf("frr instance dir: %w", err)
	}
	if err := ensureFRRRunDir(uid, gid); err != nil {
		return err
	}
	in.RunSpace = filepath.Join("/var/run/frr", "netop-"+filepath.Base(dir))
	if err := os.Mkdir(in.RunSpace, 0o750); err != nil {
		return fmt.Errorf("frr instance run space: %w", err)
	}
	return nil
}

// ensureFRRRunDir makes /var/run/frr, owned by user frr (uid, gid), where it does not exist.
// FRR's own directory, made as its packaging makes it where nothing did (a fresh /run: the kernel
// lane's guest, a container): the daemons, user frr, must reach their run space inside.
func ensureFRRRunDir(uid, gid int) error {
	if _, err := os.Stat("/var/run/frr"); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir("/var/run/frr", 0o755); err != nil {
			return fmt.Errorf("frr run directory: %w", err)
		}
		if err := os.Chown("/var/run/frr", uid, gid); err != nil {
			return fmt.Errorf("frr run directory: %w", err)
		}
	}
	return nil
}

// writeConfFiles writes the initial, empty frr.conf and the vtysh.conf of an integrated config into in.ConfDir.
func (in *Instance) writeConfFiles() error {
	files := map[string][]byte{
		"frr.conf":   nil,
		"vtysh.conf": []byte("service integrated-vtysh-config\n"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(in.ConfDir, name), content, 0o640); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// chownDirs hands the instance's directories, with everything in them, to user frr (uid, gid).
func (in *Instance) chownDirs(uid, gid int) error {
	for _, d := range []string{in.Dir, in.ConfDir, in.RunSpace} {
		if d == "" {
			continue
		}
		if err := chownTree(d, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

func (in *Instance) loadInitial(ctx context.Context, config []byte, uid, gid int) error {
	path := in.ConfigPath()
	if err := os.WriteFile(path, config, 0o640); err != nil {
		return fmt.Errorf("write frr.conf: %w", err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return fmt.Errorf("chown frr.conf: %w", err)
	}
	out, err := in.LoadFile(ctx, path)
	if err != nil || Refused(out) {
		return fmt.Errorf("load initial config: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// daemonFlags are the long options the daemon takes, read once from its --help: FRR 10's mgmtd backends
// (staticd) read no config file (-f) and open no TCP vty (-P).
func (in *Instance) daemonFlags(ctx context.Context, name string) (map[string]bool, error) {
	if f, ok := in.flags[name]; ok {
		return f, nil
	}
	out, err := in.opts.Tools.Command(ctx, filepath.Join(in.opts.DaemonDir, name), "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s --help: %w: %s", name, err, out)
	}
	f := map[string]bool{}
	for _, field := range strings.Fields(string(out)) {
		if long, ok := strings.CutPrefix(strings.TrimRight(field, ","), "--"); ok && long != "" {
			f[long] = true
		}
	}
	in.flags[name] = f
	return f, nil
}

// start runs one daemon reading config at start (-f where it takes one; ignored with a pathspace).
func (in *Instance) start(ctx context.Context, name, config string) error {
	flags, err := in.daemonFlags(ctx, name)
	if err != nil {
		return err
	}
	args := []string{
		"-F", in.opts.Profile,
		"-u", "frr", "-g", "frr",
		"--log", "file:" + filepath.Join(in.Dir, name+".log"),
	}
	if flags["vty_port"] {
		args = append(args, "-P", "0") // no TCP vty: the unix socket is enough
	}
	if in.opts.Pathspace != "" {
		args = append(args, "-N", in.opts.Pathspace) // FRR derives every path
	} else {
		if flags["config_file"] {
			args = append(args, "-f", config)
		}
		args = append(args,
			"-N", filepath.Base(in.RunSpace), // only for the paths no flag below sets
			"-i", filepath.Join(in.Dir, name+".pid"),
			"-z", filepath.Join(in.Dir, "zserv.api"),
			"--vty_socket", in.Dir)
	}
	if name == "zebra" && in.opts.KeepRoutes > 0 {
		args = append(args, "-K", strconv.Itoa(int(in.opts.KeepRoutes.Seconds())))
	}
	if name == "bgpd" && in.opts.NoBGPListen {
		args = append(args, "-p", "0")
	}
	argv := in.opts.Tools.Argv(append([]string{filepath.Join(in.opts.DaemonDir, name)}, args...)...)
	if in.Netns != "" {
		// ip netns exec execs the daemon: the child pid is the daemon's.
		argv = append([]string{"ip", "netns", "exec", in.Netns}, argv...)
	}
	// Not CommandContext: the daemon outlives the start-up context.
	cmd := exec.Command(argv[0], argv[1:]...)
	d := &daemon{name: name, cmd: cmd, out: &syncbuf.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = d.out, d.out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	go func() { d.done <- cmd.Wait() }()
	in.procs = append(in.procs, d)
	err = Poll(ctx, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		select {
		case err := <-d.done:
			d.done <- err
			return false, fmt.Errorf("%s exited: %v: %s", name, err, strings.TrimSpace(d.out.String()))
		default:
		}
		if _, err := os.Stat(filepath.Join(in.Dir, name+".vty")); err != nil {
			return false, nil
		}
		_, err := in.vtysh(ctx, name, "show version")
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s (netns %q): %w", name, in.Netns, err)
	}
	return nil
}

// Kill ends one daemon with SIGKILL, as a crash would (no clean shutdown: bgpd sends no NOTIFICATION, zebra
// removes nothing), and waits until it is gone.
func (in *Instance) Kill(ctx context.Context, name string) error {
	for i, d := range in.procs {
		if d.name != name {
			continue
		}
		_ = d.cmd.Process.Kill()
		select {
		case <-d.done:
		case <-ctx.Done():
			return fmt.Errorf("%s (netns %q) after SIGKILL: %w", name, in.Netns, ctx.Err())
		}
		in.procs = append(in.procs[:i], in.procs[i+1:]...)
		return nil
	}
	return fmt.Errorf("%s: not a daemon of this instance", name)
}

// advisories are "% " messages vtysh prints for commands FRR took: a missing vtysh.conf, and bfdd's note on
// echo mode (said for every profile with echo-mode, IPv4 or not).
var advisories = []string{"Can't open configuration file", "Echo mode works correctly for IPv4"}

// Advisory reports whether a vtysh "% " message is advice about a command FRR took, not a refusal.
func Advisory(msg string) bool {
	return slices.ContainsFunc(advisories, func(a string) bool { return strings.Contains(msg, a) })
}

// Refused reports whether vtysh's output for a config it was fed names a command FRR did not take: a "% "
// message that is not advisory.
func Refused(out []byte) bool {
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "% ") && !Advisory(line) {
			return true
		}
	}
	return false
}

// Restart kills one daemon as a crash would and starts it again; it reads the instance's frr.conf at start, as
// FRR does.
func (in *Instance) Restart(ctx context.Context, name string) error {
	if err := in.Kill(ctx, name); err != nil {
		return err
	}
	return in.start(ctx, name, in.ConfigPath())
}

// CrashRestart ends every daemon as a crash would (SIGKILL, nothing cleaned up) and starts them again the way
// the chart's FRR container does: each daemon empty, then frr.conf loaded through vtysh -b. It returns when the
// config is loaded.
func (in *Instance) CrashRestart(ctx context.Context) error {
	names := make([]string, 0, len(in.procs))
	for _, d := range in.procs {
		names = append(names, d.name)
	}
	for _, name := range names {
		if err := in.Kill(ctx, name); err != nil {
			return err
		}
	}
	empty := filepath.Join(in.Dir, "empty.conf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		return fmt.Errorf("empty config: %w", err)
	}
	for _, name := range names {
		if err := in.start(ctx, name, empty); err != nil {
			return err
		}
	}
	out, err := in.LoadFile(ctx, in.ConfigPath())
	if err != nil || Refused(out) {
		return fmt.Errorf("load frr.conf after the restart: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Tools are the FRR programs the instance runs.
func (in *Instance) Tools() Tools { return in.opts.Tools }

// ConfigPath is the instance's frr.conf.
func (in *Instance) ConfigPath() string { return filepath.Join(in.ConfDir, "frr.conf") }

// Vtysh runs commands through vtysh against this instance.
func (in *Instance) Vtysh(ctx context.Context, cmds ...string) ([]byte, error) {
	return in.vtysh(ctx, "", cmds...)
}

func (in *Instance) vtyshArgs() []string {
	if in.opts.Pathspace != "" {
		return []string{"-N", in.opts.Pathspace}
	}
	return []string{"--vty_socket", in.Dir, "--config_dir", in.ConfDir}
}

func (in *Instance) vtysh(ctx context.Context, daemonName string, cmds ...string) ([]byte, error) {
	args := in.vtyshArgs()
	if daemonName != "" {
		args = append(args, "-d", daemonName)
	}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	cmd := in.opts.Tools.Command(ctx, append([]string{in.opts.Vtysh}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("vtysh %q: %w: %s", cmds, err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	return stdout.Bytes(), nil
}

// LoadFile feeds a config file to the daemons line by line ("vtysh -f") and
// returns vtysh's combined output; vtysh's exit status is also returned as
// err, but FRR reports some refusals with status 0, so callers read the
// output too.
func (in *Instance) LoadFile(ctx context.Context, file string) ([]byte, error) {
	cmd := in.opts.Tools.Command(ctx, append(append([]string{in.opts.Vtysh}, in.vtyshArgs()...), "-f", file)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// JSON runs one "show ... json" command and decodes its output into v.
func (in *Instance) JSON(ctx context.Context, command string, v any) error {
	out, err := in.Vtysh(ctx, command)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("decode %q: %w", command, err)
	}
	return nil
}

// Logs returns the daemons' log files and start-up output, for failure reports.
func (in *Instance) Logs() string {
	var b strings.Builder
	for _, d := range in.procs {
		data, _ := os.ReadFile(filepath.Join(in.Dir, d.name+".log"))
		fmt.Fprintf(&b, "==== %s (netns %q) ====\n%s%s\n", d.name, in.Netns, d.out.String(), data)
	}
	return b.String()
}

// Stop ends the daemons (SIGTERM, SIGKILL after 5s) in reverse start order
// and removes the directory. KeepDir leaves it for inspection.
func (in *Instance) Stop() error {
	var errs []error
	for i := len(in.procs) - 1; i >= 0; i-- {
		d := in.procs[i]
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
			errs = append(errs, fmt.Errorf("%s (netns %q) ignored SIGTERM for 5s", d.name, in.Netns))
		}
	}
	in.procs = nil
	for _, d := range []string{in.Dir, in.ConfDir, in.RunSpace} {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// KeepDir makes Stop leave the directories (logs, config) in place.
func (in *Instance) KeepDir() string {
	d := in.Dir + " " + in.ConfDir + " " + in.RunSpace
	in.Dir, in.ConfDir, in.RunSpace = "", "", ""
	return d
}

// FRRUser returns the uid and gid of user and group "frr".
func FRRUser() (uid, gid int, err error) {
	u, err := user.Lookup("frr")
	if err != nil {
		return 0, 0, fmt.Errorf("user frr: %w", err)
	}
	g, err := user.LookupGroup("frr")
	if err != nil {
		return 0, 0, fmt.Errorf("group frr: %w", err)
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return 0, 0, fmt.Errorf("user frr uid %q: %w", u.Uid, err)
	}
	if gid, err = strconv.Atoi(g.Gid); err != nil {
		return 0, 0, fmt.Errorf("group frr gid %q: %w", g.Gid, err)
	}
	return uid, gid, nil
}

func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Chown(path, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", path, err)
		}
		return nil
	})
}

// Poll calls cond every interval until it reports true, returns an error, or
// ctx ends (ErrTimeout). It is how callers wait: no sleeps as synchronisation.
func Poll(ctx context.Context, interval time.Duration, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
		case <-t.C:
		}
	}
}

// ErrTimeout is returned by Poll when the deadline passes first.
var ErrTimeout = errors.New("condition not met before deadline")

// Pids returns the process ids of the running daemons.
func (in *Instance) Pids() []int {
	var pids []int
	for _, d := range in.procs {
		pids = append(pids, d.cmd.Process.Pid)
	}
	return pids
}
