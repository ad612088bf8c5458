package frrapply

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/pkg/frr"
	"github.com/network-operator/network-operator/pkg/frr/frrreload"
	"github.com/network-operator/network-operator/pkg/frr/frrtest"
)

// The change is one line of the rendered config, the demo change's export prefix.
func TestChangeIsOneLine(t *testing.T) {
	var lines [2][]string
	for i := range lines {
		c := NodeConfig(i == 1)
		out, err := frr.Render(&c)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = strings.Split(string(out), "\n")
	}
	if len(lines[1]) != len(lines[0])+1 {
		t.Fatalf("the changed config has %d lines, the base %d: want one more", len(lines[1]), len(lines[0]))
	}
	i := 0
	for i < len(lines[0]) && lines[0][i] == lines[1][i] {
		i++
	}
	if rest := slices.Delete(slices.Clone(lines[1]), i, i+1); !strings.Contains(lines[1][i], changedPrefix) || !slices.Equal(rest, lines[0]) {
		t.Errorf("line %d %q: want the only new line to carry %s", i+1, lines[1][i], changedPrefix)
	}
}

func TestMeasureSmall(t *testing.T) {
	rows := Measure(context.Background(), Options{Applies: 2, FRR: frrtest.Require(t)})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want p50 and p99", len(rows))
	}
	for _, r := range rows {
		if r.Err != nil || r.Value <= 0 {
			t.Errorf("%s: %v ms, %v", r.Name, r.Value, r.Err)
		}
	}
	if !strings.Contains(rows[0].Detail, "2 applies") || !strings.Contains(rows[0].Detail, frrreload.StepDelta) {
		t.Errorf("p50 detail %q lacks the count or the step breakdown", rows[0].Detail)
	}
}
