package throughput

import (
	"errors"
	"strings"
	"testing"

	"github.com/network-operator/network-operator/test/harness/bench/report"
)

func TestRunCountsCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		counts  runCounts
		via     forwarder
		wantErr string // "" = no error
	}{
		{"eBPF path", runCounts{Generated: 1000, Delivered: 990, Flows: 8, ViaEBPF: 995}, viaEBPF, ""},
		{"kernel path", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaKernel: 1000, ViaEBPF: 3}, viaKernel, ""},
		{"direct path", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaKernel: 2}, viaNone, ""},
		{"direct path, but a router forwarded", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaEBPF: 1000}, viaNone, "forwarded count grew by 1000 too"},
		{"nothing delivered", runCounts{Generated: 1000, ViaEBPF: 1000}, viaEBPF, "nothing delivered"},
		{"a flow missing", runCounts{Generated: 1000, Delivered: 1000, Flows: 7, ViaEBPF: 1000}, viaEBPF, "7 of 8 flows"},
		{"kernel forwarded the eBPF path's packets", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaKernel: 1000}, viaEBPF, "forwarded count grew by 0"},
		{"both forwarded", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaEBPF: 1000, ViaKernel: 500}, viaEBPF, "ForwDatagrams grew by 500 too"},
		{"router counted more than generated", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaKernel: 2000}, viaKernel, "ForwDatagrams grew by 2000"},
		{"eBPF router forwarded on the kernel path", runCounts{Generated: 1000, Delivered: 1000, Flows: 8, ViaKernel: 1000, ViaEBPF: 900}, viaKernel, "forwarded count grew by 900 too"},
	} {
		err := c.counts.check(c.via, 8)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.wantErr)
		}
	}
}

func TestRatio(t *testing.T) {
	ok := func(v float64) report.Row { return report.Row{Name: "x", Value: v} }
	failed := report.Row{Name: "failed path", Err: errors.New("boom")}
	for _, c := range []struct {
		name     string
		num, den report.Row
		target   float64
		want     float64
		status   string
	}{
		{"met", ok(1500), ok(1000), 1.5, 1.5, "met"},
		{"missed", ok(1100), ok(1000), 1.5, 1.1, "MISSED"},
		{"no target", ok(500), ok(1000), 0, 0.5, ""},
		{"numerator failed", failed, ok(1000), 4, 0, "not measured"},
		{"denominator failed", ok(1000), failed, 4, 0, "not measured"},
	} {
		r := ratio(SectionSmall, "r", c.num, c.den, c.target, "")
		if r.Value != c.want || r.Status() != c.status {
			t.Errorf("%s: %v (%s), want %v (%s)", c.name, r.Value, r.Status(), c.want, c.status)
		}
		if (c.num.Err != nil || c.den.Err != nil) && (r.Err == nil || !strings.Contains(r.Err.Error(), "failed path")) {
			t.Errorf("%s: error %v, want it to name the failed path", c.name, r.Err)
		}
	}
}
