package frrproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/test/harness/testreq"
)

func TestPoll(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Poll = %v after %d calls, want nil after 3", err, calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := Poll(ctx, time.Millisecond, func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, ErrTimeout) {
		t.Errorf("never-true condition: %v, want ErrTimeout", err)
	}
	boom := errors.New("boom")
	if err := Poll(context.Background(), time.Millisecond, func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("condition error: %v", err)
	}
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName("frrn1-"), UniqueName("frrn1-")
	if a == b || !strings.HasPrefix(a, "frrn1-") || len(a) != len("frrn1-")+8 {
		t.Errorf("UniqueName: %q, %q", a, b)
	}
}

// TestInstanceLifecycle starts zebra and bgpd with an initial config in a
// namespace, reads it back and checks Stop removes the directory.
func TestInstanceLifecycle(t *testing.T) {
	tools := shippedFRR(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := NewNetns(ctx, "frrproc-")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete(context.Background()) //nolint:errcheck
	in, err := Start(ctx, Options{Tools: tools, Netns: ns.Name, Config: []byte("router bgp 65042\n bgp router-id 192.0.2.42\nexit\n")})
	if err != nil {
		t.Fatal(err)
	}
	var vrfs map[string]map[string]any
	if err := in.JSON(ctx, "show bgp vrf all json", &vrfs); err != nil {
		t.Fatal(err)
	}
	if d := vrfs["default"]; d["localAS"] != float64(65042) || d["routerId"] != "192.0.2.42" {
		t.Errorf("show bgp vrf all json = %v", vrfs)
	}
	dir := in.Dir
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(ctx, Options{Tools: tools, Netns: ns.Name, Config: []byte("router bgp notanumber\n")}); err == nil {
		t.Error("an invalid initial config was accepted")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop left %s (%v)", dir, err)
	}
}

// TestGuard: when the owner's end of the pipe closes (as when the owner is killed), the guard kills the
// daemons and removes the namespace and the directory; stopped first, it does nothing.
func TestGuard(t *testing.T) {
	tools := shippedFRR(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ownerDies := range []bool{true, false} {
		ns, err := NewNetns(ctx, "frrguard-")
		if err != nil {
			t.Fatal(err)
		}
		in, err := Start(ctx, Options{Tools: tools, Netns: ns.Name, NoBGPListen: true})
		if err != nil {
			t.Fatal(err)
		}
		g, err := StartGuard(ns, in)
		if err != nil {
			t.Fatal(err)
		}
		if !ownerDies {
			if err := g.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat("/run/netns/" + ns.Name); err != nil {
				t.Errorf("a stopped guard removed the namespace: %v", err)
			}
			if err := in.Stop(); err != nil {
				t.Error(err)
			}
			if err := ns.Delete(ctx); err != nil {
				t.Error(err)
			}
			continue
		}
		g.w.Close() // what the kernel does when the owner dies
		if err := g.cmd.Wait(); err != nil {
			t.Fatalf("guard: %v", err)
		}
		for _, d := range in.procs {
			select {
			case <-d.done:
			case <-ctx.Done():
				t.Fatalf("%s still runs after the guard", d.name)
			}
		}
		if _, err := os.Stat("/run/netns/" + ns.Name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s left: %v", ns.Name, err)
		}
		if _, err := os.Stat(in.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory %s left: %v", in.Dir, err)
		}
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"", false},
		{"% Can't open configuration file /etc/frr/vtysh.conf due to 'No such file or directory'.\n", false},
		{"% Echo mode works correctly for IPv4, but only works when the peer is also FRR for IPv6.\n", false},
		{"line 3: % Unknown command[25]: neighbor x bfd profile\n", true},
		{"% Echo mode works correctly for IPv4, but only works when the peer is also FRR for IPv6.\n% Configuration failed.\n", true},
		{"  % Specify remote-as or peer-group commands first\n", true},
	} {
		if got := Refused([]byte(tc.out)); got != tc.want {
			t.Errorf("Refused(%q) = %v, want %v", tc.out, got, tc.want)
		}
	}
}

// shippedFRR needs the FRR image's root file system (frrtest.Require, which imports this package, says the same).
func shippedFRR(t *testing.T) Tools {
	t.Helper()
	tools := Tools{Root: os.Getenv(EnvRoot)}
	if tools.Root == "" {
		testreq.Need(t, "the FRR image's root file system", fmt.Errorf("%s is not set (make frr-root builds it)", EnvRoot))
	}
	testreq.Need(t, "FRR daemons", tools.CheckDaemons())
	return tools
}
