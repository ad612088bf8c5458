package frrproc

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/network-operator/network-operator/internal/testreq"
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
	testreq.Need(t, "FRR daemons", Check())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := NewNetns(ctx, "frrproc-")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete(context.Background()) //nolint:errcheck
	in, err := Start(ctx, Options{Netns: ns.Name, Config: []byte("router bgp 65042\n bgp router-id 192.0.2.42\nexit\n")})
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
	if _, err := Start(ctx, Options{Netns: ns.Name, Config: []byte("router bgp notanumber\n")}); err == nil {
		t.Error("an invalid initial config was accepted")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop left %s (%v)", dir, err)
	}
}
