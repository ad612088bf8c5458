package kernellane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/internal/agent/netconf"
	"github.com/network-operator/network-operator/internal/namedns"
)

// FeatureReport is what a kernel offers the agent and its router, as the lane measures it on each kernel it
// boots (TestKernelFeatureReport) for docs/install.md's kernel table.
type FeatureReport struct {
	// Kernel is the release (uname -r); Series its major.minor.
	Kernel, Series string
	// Router are the router's variant features (bpf.ProbeFeatures).
	Router bpf.Features
	// TCX: the tcx attach types (6.6); without them the agent attaches through clsact and cls_bpf.
	TCX bool
	// VRF, VLAN, GRE: the link kinds the agent creates (VRF devices, 802.1Q, gretap for mirroring).
	VRF, VLAN, GRE bool
}

// FeatureReportPrefix starts the test log line that carries a FeatureReport as JSON.
const FeatureReportPrefix = "kernel-features: "

// ProbeFeatures measures the running kernel without creating anything (each link kind asked with an argument
// its driver refuses, as netconf probes).
func ProbeFeatures(ctx context.Context) (FeatureReport, error) {
	var r FeatureReport
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return r, err
	}
	r.Kernel = unix.ByteSliceToString(u.Release[:])
	if m := regexp.MustCompile(`^(\d+\.\d+)`).FindString(r.Kernel); m != "" {
		r.Series = m
	}
	var err error
	if r.Router, err = bpf.ProbeFeatures(); err != nil {
		return r, err
	}
	_, err = link.QueryPrograms(link.QueryOptions{Target: 1, Attach: ebpf.AttachTCXIngress})
	switch {
	case err == nil:
		r.TCX = true
	case errors.Is(err, unix.EINVAL), errors.Is(err, link.ErrNotSupported): // the attach type is unknown before 6.6
	default:
		return r, fmt.Errorf("query tcx: %w", err)
	}
	// The link probes run in a namespace of their own: a gretap probe that succeeds makes a device.
	name := fmt.Sprintf("klprobe-%d", os.Getpid())
	ns, err := namedns.Create(name)
	if err != nil {
		return r, err
	}
	defer func() {
		ns.Close()
		_ = namedns.Delete(name)
	}()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return r, err
	}
	defer h.Close()
	nf, err := netconf.Probe(ctx, h)
	if err != nil {
		return r, err
	}
	r.VRF, r.VLAN = nf.VRF, nf.VLAN
	// A kernel without ip_gre answers EOPNOTSUPP ("Unknown device type").
	switch err := h.LinkAdd(&netlink.Gretap{LinkAttrs: netlink.LinkAttrs{Name: "probe-gre"}}); {
	case err == nil:
		r.GRE = true
	case errors.Is(err, unix.EOPNOTSUPP):
	default:
		return r, fmt.Errorf("probe gretap: %w", err)
	}
	return r, nil
}

// ReadFeatureReports finds the reports in test2json streams.
func ReadFeatureReports(streams ...[]byte) ([]FeatureReport, error) {
	var out []FeatureReport
	for _, s := range streams {
		for _, line := range bytes.Split(s, []byte("\n")) {
			var ev struct{ Action, Output string }
			if json.Unmarshal(line, &ev) != nil || ev.Action != "output" {
				continue
			}
			_, js, ok := strings.Cut(ev.Output, FeatureReportPrefix)
			if !ok {
				continue
			}
			var r FeatureReport
			if err := json.Unmarshal([]byte(strings.TrimSpace(js)), &r); err != nil {
				return nil, fmt.Errorf("feature report %q: %w", js, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// debian names the Debian release whose kernel series this is, for the table.
func debian(series string) string {
	switch series {
	case "5.10":
		return "Debian 11 (bullseye) "
	case "6.1":
		return "Debian 12 (bookworm) "
	case "6.12":
		return "Debian 13 (trixie) "
	}
	return ""
}

// FeatureTable renders reports as docs/install.md's kernel table: one row per kernel series (patch levels
// change with every Debian point release; the table must not), oldest first.
func FeatureTable(reports []FeatureReport) string {
	bySeries := map[string]FeatureReport{}
	for _, r := range reports {
		bySeries[r.Series] = r
	}
	series := make([]string, 0, len(bySeries))
	for s := range bySeries {
		series = append(series, s)
	}
	sort.Slice(series, func(i, j int) bool {
		var ai, bi, aj, bj int
		fmt.Sscanf(series[i], "%d.%d", &ai, &bi)
		fmt.Sscanf(series[j], "%d.%d", &aj, &bj)
		return ai < aj || ai == aj && bi < bj
	})
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	var b strings.Builder
	b.WriteString("| kernel | tcx | `bpf_cast_to_kern_ctx` | `BPF_FIB_LOOKUP_TBID` | VRF devices | 802.1Q | GRE | the router and the agent there |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range series {
		r := bySeries[s]
		name := debian(s) + s
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, yes(r.TCX), yes(r.Router.KernCtx),
			yes(r.Router.FIBTableID), yes(r.VRF), yes(r.VLAN), yes(r.GRE), behaviour(r))
	}
	return b.String()
}

// behaviour says what the agent does with a kernel's features; the decisions live in bpf (the variant),
// pkg/loader (the hook) and netconf (the VRF mode).
func behaviour(r FeatureReport) string {
	var parts []string
	if r.TCX {
		parts = append(parts, "attaches with tcx")
	} else {
		parts = append(parts, "attaches with clsact + cls_bpf")
	}
	if !r.Router.KernCtx {
		parts = append(parts, "IPv6 forwarding updates skb->csum without reading ip_summed")
	}
	if r.Router.FIBTableID {
		parts = append(parts, "VRFs as devices or table-only")
	} else {
		parts = append(parts, "VRFs only as devices (table-only VRFs and sbrPrefixes refused at start or apply)")
	}
	return strings.Join(parts, "; ")
}

// Doc markers around the generated table in docs/install.md.
const (
	TableBegin = "<!-- kernel-table:begin (generated by the kernel lane: make kernel-table) -->"
	TableEnd   = "<!-- kernel-table:end -->"
)

// ErrStaleTable: the document's kernel table is not what the lane measured.
var ErrStaleTable = errors.New("kernel table differs from what the lane measured")

// SpliceTable puts table between the markers of doc; update=false only checks, returning ErrStaleTable when
// it differs.
func SpliceTable(doc []byte, table string, update bool) ([]byte, error) {
	s := string(doc)
	i, j := strings.Index(s, TableBegin), strings.Index(s, TableEnd)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q ... %q markers", TableBegin, TableEnd)
	}
	cur := s[i+len(TableBegin) : j]
	want := "\n" + table
	if cur == want {
		return doc, nil
	}
	if !update {
		return nil, fmt.Errorf("%w:\n%s", ErrStaleTable, table)
	}
	return []byte(s[:i+len(TableBegin)] + want + s[j:]), nil
}
