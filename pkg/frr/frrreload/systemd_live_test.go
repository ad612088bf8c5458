//go:build hostsystemd

package frrreload

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSystemdLiveReload reloads the host's frr.service over D-Bus. Test machines run no systemd, so it is behind
// the build tag hostsystemd, outside the normal run; where systemd manages an frr.service, run it with
//
//	go test -tags hostsystemd -run TestSystemdLiveReload ./pkg/frr/
func TestSystemdLiveReload(t *testing.T) {
	// The build tag asked for it: a machine without systemd is a failure, not a skip.
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Fatalf("no systemd on this machine (no frr.service to reload over D-Bus): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := NewSystemdDBus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ReloadUnit(ctx, "frr.service"); err != nil {
		t.Fatal(err)
	}
}
