package mirror

import (
	"errors"
	"testing"
)

// A tunnel the kernel refuses is reported once per mirror into it, so the status can name the mirrors.
func TestTunnelProblems(t *testing.T) {
	tun := Tunnel{Target: "col", Device: "gm.col"}
	rules := []Rule{{Mirror: "a", TargetDevice: "gm.col", Family: 4}, {Mirror: "a", TargetDevice: "gm.col", Family: 6},
		{Mirror: "b", TargetDevice: "gm.other"}, {Mirror: "c", TargetDevice: "gm.col"}}
	got := tunnelProblems(rules, tun, ErrNotSupported)
	if len(got) != 2 || got[0].Mirror != "a" || got[1].Mirror != "c" || !errors.Is(got[0].Err, ErrNotSupported) ||
		got[0].Err.Error() != "target col: not supported by this kernel" {
		t.Fatalf("problems %v", got)
	}
	if got := tunnelProblems(nil, tun, ErrNotSupported); len(got) != 1 || got[0].Mirror != "target col" {
		t.Fatalf("without rules: %v", got)
	}
}
