package frrvty

import (
	"context"
	"fmt"

	"github.com/network-operator/network-operator/pkg/frr"
)

// RunningVersion asks the target's daemons which release they are ("show version").
func (t Target) RunningVersion(ctx context.Context) (frr.Version, error) {
	out, err := t.Vtysh(ctx, "show version")
	if err != nil {
		return frr.Version{}, fmt.Errorf("FRR's release: %w", err)
	}
	return frr.ParseVersion(string(out))
}
