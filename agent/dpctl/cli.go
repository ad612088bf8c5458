package dpctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/network-operator/network-operator/pkg/loader"
)

// ErrUsage marks errors in the command line itself (exit status 2).
var ErrUsage = errors.New("usage")

type command struct {
	name, args, help string
	run              func(c *cli, ctx context.Context, args []string) error
}

// commands lists the commands with their one-line help, in the order `help` shows them.
func commands() []command {
	return []command{
		{"attach", "--iface a,b [--mode auto|tcx|tc|xdp-native|xdp-generic] [--pin-dir DIR]",
			"load the router (or adopt the running one) and attach it to interfaces", (*cli).attach},
		{"apply", "-f tables.yaml [--revision R] [--pin-dir DIR]",
			"make the tables in the file live in one atomic generation swap", (*cli).apply},
		{"dump", "[-o table|json] [-f tables.yaml] [--pin-dir DIR]",
			"show the live tables, version and per-VRF counters (-f: label VRFs with the file's names)", (*cli).dump},
		{"detach", "[--iface a,b] [--pin-dir DIR]",
			"detach the router from the interfaces (all of ours without --iface); tables stay", (*cli).detach},
		{"uninstall", "[--pin-dir DIR]",
			"detach everywhere and remove every pinned program, map and link", (*cli).uninstall},
	}
}

type cli struct {
	stdout, stderr io.Writer
}

// Run runs one data-plane command; args start after the word "dataplane". Interface names are looked up in the
// network namespace the process runs in (use `nsenter --net=...`, not `ip netns exec`, which hides /sys/fs/bpf).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := &cli{stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		c.usage(stdout)
		if len(args) == 0 {
			return fmt.Errorf("%w: missing command", ErrUsage)
		}
		return nil
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			err := cmd.run(c, ctx, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil // -h: the flag package printed the command's flags
			}
			return err
		}
	}
	c.usage(stderr)
	return fmt.Errorf("%w: unknown command %q", ErrUsage, args[0])
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: network-agent dataplane <command> [flags]")
	fmt.Fprintln(w, "\nCommands:")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n  %-10s   %s\n", cmd.name, cmd.help, "", cmd.args)
	}
	fmt.Fprintf(w, "\nThe pin directory (default %s) holds the maps, programs and links; every command takes it.\n",
		loader.DefaultPinDir)
}

// flags returns a FlagSet for a command whose errors go to stderr and whose failures are ErrUsage.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("dataplane "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s: unexpected argument %q", ErrUsage, fs.Name(), fs.Arg(0))
	}
	return nil
}

// splitList turns "a,b, c" into [a b c], dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
