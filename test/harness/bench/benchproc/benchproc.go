// Package benchproc runs the project's binaries (the operator, the agent) as processes of a benchmark: each in a
// process group of its own, so that stopping it also stops what it started (the agent's scratch FRR), with its
// output kept for the error that says why a run failed. It also writes the kubeconfig they are given and finds
// free local addresses for their listeners.
package benchproc

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tailBytes is how much of a process's output an error carries.
const tailBytes = 4000

// Proc is one started binary.
type Proc struct {
	name string
	cmd  *exec.Cmd
	out  func() ([]byte, error) // the output so far
	done chan error
}

// Start starts cmd as name in a process group of its own. cmd's Stdout and Stderr must be set by the caller;
// output reads back what they received (the tail goes into errors).
func Start(name string, cmd *exec.Cmd, output func() ([]byte, error)) (*Proc, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{name: name, cmd: cmd, out: output, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// Pid is the process's id (and its group's).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Running returns an error, with the output's tail, when the process has exited.
func (p *Proc) Running() error {
	select {
	case err := <-p.done:
		p.done <- err
		return fmt.Errorf("%s exited: %v\n%s", p.name, err, p.Tail())
	default:
		return nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and waits for the process. How it exited does
// not matter, only that it did within grace.
func (p *Proc) Stop(grace time.Duration) error {
	_, err := p.stop(grace)
	return err
}

// StopCleanly is Stop for a process that must exit by itself on SIGTERM with status 0 (the operator's shutdown).
func (p *Proc) StopCleanly(grace time.Duration) error {
	exit, err := p.stop(grace)
	if err != nil {
		return err
	}
	if exit != nil {
		return fmt.Errorf("%s exited with %w after SIGTERM:\n%s", p.name, exit, p.Tail())
	}
	return nil
}

// stop returns the process's exit error, and an error when it had to be killed.
func (p *Proc) stop(grace time.Duration) (exit, err error) {
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case exit = <-p.done:
		p.done <- exit
		return exit, nil
	case <-timer.C:
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		exit = <-p.done
		p.done <- exit
		return exit, fmt.Errorf("%s did not stop within %v of SIGTERM:\n%s", p.name, grace, p.Tail())
	}
}

// Output is the process's output so far.
func (p *Proc) Output() string {
	data, err := p.out()
	if err != nil {
		return fmt.Sprintf("(output of %s: %v)", p.name, err)
	}
	return string(data)
}

// Tail is the last of the process's output.
func (p *Proc) Tail() string {
	data := p.Output()
	if len(data) > tailBytes {
		return "..." + data[len(data)-tailBytes:]
	}
	return data
}

// WriteKubeconfig writes cfg's server and client certificate as a kubeconfig file for user.
func WriteKubeconfig(cfg *rest.Config, user, path string) error {
	if cfg == nil || cfg.Host == "" {
		return errors.New("write kubeconfig: no API server address")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: user}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
