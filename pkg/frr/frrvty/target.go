package frrvty

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrproc"
)

// Target says where the running FRR daemons and their files are.
type Target struct {
	// VtySocket is the directory of the daemons' *.vty sockets (their
	// --vty_socket). Empty: FRR's default, or the pathspace's.
	VtySocket string
	// Pathspace is FRR's -N namespace (daemons started by "frrinit.sh start NS").
	Pathspace string
	// ConfDir holds frr.conf. Default /etc/frr, or /etc/frr/<Pathspace>.
	ConfDir string
	// RunDir is where frr-reload.py writes its temporary command files
	// (they contain secrets). Default ConfDir, which only FRR can read.
	RunDir string
	// Version is the FRR release the daemons run, whose frr-reload.py the Go diff follows; zero: Shipped.
	Version frr.Version
	// Tools runs FRR's programs: this file system's, or those of the FRR image's root file system.
	Tools frrproc.Tools
	// VtyshPath, ReloadScript, DaemonDir and Python locate the FRR tools (inside Tools.Root).
	VtyshPath    string
	ReloadScript string
	DaemonDir    string
	Python       string
}

func (t Target) WithDefaults() Target {
	if t.ConfDir == "" {
		t.ConfDir = "/etc/frr"
		if t.Pathspace != "" {
			t.ConfDir = filepath.Join(t.ConfDir, t.Pathspace)
		}
	}
	if t.RunDir == "" {
		t.RunDir = t.ConfDir
	}
	if t.VtyshPath == "" {
		t.VtyshPath = "/usr/bin/vtysh"
	}
	if t.ReloadScript == "" {
		t.ReloadScript = "/usr/lib/frr/frr-reload.py"
	}
	if t.DaemonDir == "" {
		t.DaemonDir = "/usr/lib/frr"
	}
	if t.Python == "" {
		t.Python = "python3"
	}
	return t
}

// ConfigPath is the frr.conf the daemons read at start.
func (t Target) ConfigPath() string { return filepath.Join(t.WithDefaults().ConfDir, "frr.conf") }

// VtyshArgs select the daemons for vtysh. With a pathspace vtysh appends the
// pathspace to --config_dir itself, so only -N is given.
func (t Target) VtyshArgs() []string {
	t = t.WithDefaults()
	if t.Pathspace != "" {
		return []string{"-N", t.Pathspace}
	}
	args := []string{"--config_dir", t.ConfDir}
	if t.VtySocket != "" {
		args = append(args, "--vty_socket", t.VtySocket)
	}
	return args
}

// Vtysh runs commands through vtysh against the target's daemons. Output
// that could carry secrets (running-config) must not be logged by callers.
func (t Target) Vtysh(ctx context.Context, cmds ...string) ([]byte, error) {
	args := t.VtyshArgs()
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	stdout, stderr, err := t.Run(ctx, t.WithDefaults().VtyshPath, args...)
	if err != nil {
		return stdout, fmt.Errorf("vtysh %q: %w: %s", cmds, err, frr.Redact(strings.TrimSpace(stderr+string(stdout))))
	}
	return stdout, nil
}

// ShowJSON runs one "show ... json" command and decodes the output into v.
func (t Target) ShowJSON(ctx context.Context, command string, v any) error {
	out, err := t.Show(ctx, command)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("decode %q output: %w", command, err)
	}
	return nil
}

// RunningConfig returns "show running-config". It contains secrets.
func (t Target) RunningConfig(ctx context.Context) ([]byte, error) {
	return t.Vtysh(ctx, "show running-config")
}

// SettledRunningConfig reads the running config until two reads 100 ms apart agree (at most 5 s): FRR 10's
// mgmtd hands a loaded config to its backend daemons (zebra, staticd; prefix lists and route maps to all of
// them) in transactions of its own, which can still be under way when "vtysh -f" returns on a busy machine.
func (t Target) SettledRunningConfig(ctx context.Context) ([]byte, error) {
	prev, err := t.RunningConfig(ctx)
	if err != nil || t.Version.OrShipped().Major < 10 {
		return prev, err
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = frrproc.Poll(sctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		cur, err := t.RunningConfig(ctx)
		if err != nil {
			return false, err
		}
		settled := bytes.Equal(cur, prev)
		prev = cur
		return settled, nil
	})
	if errors.Is(err, frrproc.ErrTimeout) && ctx.Err() == nil {
		return prev, nil // still changing after 5 s: the caller diffs the last read
	}
	return prev, err
}

// Run runs one of FRR's programs as t.Tools says.
func (t Target) Run(ctx context.Context, name string, args ...string) (stdout []byte, stderr string, err error) {
	cmd := t.Tools.Command(ctx, append([]string{name}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.String(), err
}
