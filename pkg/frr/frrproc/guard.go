package frrproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// Guard removes an instance and its namespace when this process ends without stopping them (killed, or exited
// without its cleanup): a shell that waits for its stdin, a pipe only this process writes to, to reach its end,
// then kills the daemons and removes the namespace and the instance's directories. A long-lived instance
// (pkg/frr's scratch instance lives as long as the agent) must not outlive the process that owns it.
type Guard struct {
	cmd *exec.Cmd
	w   *os.File
}

// guardScript runs with the namespace, the directories and then the daemons' pids as arguments.
const guardScript = `read -r _
ns=$1 conf=$2 run=$3 space=$4
shift 4
kill -KILL "$@" 2>/dev/null
ip netns del "$ns"
rm -rf "$conf" "$run" ${space:+"$space"}`

// StartGuard starts the guard of in, running in ns. Stop it before stopping them.
func StartGuard(ns *Netns, in *Instance) (*Guard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("guard pipe: %w", err)
	}
	defer r.Close()
	args := []string{"-c", guardScript, "frr-guard", ns.Name, in.ConfDir, in.Dir, in.RunSpace}
	for _, pid := range in.Pids() {
		args = append(args, strconv.Itoa(pid))
	}
	cmd := exec.Command("sh", args...)
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start the guard of %s: %w", ns.Name, err)
	}
	return &Guard{cmd: cmd, w: w}, nil
}

// Stop ends the guard without it doing anything: the owner stops the instance itself.
func (g *Guard) Stop() error {
	kerr := g.cmd.Process.Kill()
	werr := g.cmd.Wait()
	g.w.Close()
	var exit *exec.ExitError
	if kerr != nil && !errors.Is(kerr, os.ErrProcessDone) || werr != nil && !errors.As(werr, &exit) {
		return fmt.Errorf("stop the guard: %w", errors.Join(kerr, werr))
	}
	return nil
}
