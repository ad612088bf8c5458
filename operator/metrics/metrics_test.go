package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

func TestNewRegistersLintCleanMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Snapshots.WithLabelValues("created").Inc()
	m.RolloutFailures.WithLabelValues("ApplyFailed").Inc()
	m.NodesUpdated.WithLabelValues("rollout").Add(3)
	m.RolloutNodes.WithLabelValues("updated").Set(5)
	m.RolloutDuration.Observe(2)

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
	if len(families) < 8 {
		t.Errorf("gathered %d families, want at least 8", len(families))
	}
	var got dto.Metric
	if err := m.NodesUpdated.WithLabelValues("rollout").Write(&got); err != nil {
		t.Fatal(err)
	}
	if v := got.GetCounter().GetValue(); v != 3 {
		t.Errorf("node updates = %v, want 3", v)
	}
	// A second registration on the same registry must fail loudly, not silently share state.
	if _, err := New(reg); err == nil || !strings.Contains(err.Error(), "register operator metrics") {
		t.Fatalf("second New on one registry: err = %v", err)
	}
}
