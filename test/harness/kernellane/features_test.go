package kernellane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/agent/nodenet"
	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/pkg/namedns"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestKernelFeatureReport measures the running kernel and logs the report the lane turns into docs/install.md's
// kernel table (hack/tools/kernellane -features-doc).
func TestKernelFeatureReport(t *testing.T) {
	testreq.Root(t)
	r, err := probeFeatures(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Series == "" || !strings.HasPrefix(r.Kernel, r.Series) {
		t.Errorf("kernel %q: series %q", r.Kernel, r.Series)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(FeatureReportPrefix + string(js))
}

func TestFeatureTable(t *testing.T) {
	old := FeatureReport{Kernel: "6.1.0-50-amd64", Series: "6.1", Router: bpf.Features{FIBTableID: true}, VRF: true, VLAN: true, GRE: true}
	oldest := FeatureReport{Kernel: "5.10.0-32-amd64", Series: "5.10", VRF: true}
	cur := FeatureReport{Kernel: "6.12.117+deb13-amd64", Series: "6.12", Router: bpf.Features{KernCtx: true, FIBTableID: true}, TCX: true, VRF: true}
	line := func(r FeatureReport) string {
		js, _ := json.Marshal(r)
		ev, _ := json.Marshal(map[string]string{"Action": "output", "Test": "TestKernelFeatureReport",
			"Output": "    features_test.go:30: " + FeatureReportPrefix + string(js) + "\n"})
		return string(ev)
	}
	stream := strings.Join([]string{line(cur), `{"Action":"pass","Test":"TestX"}`, line(old), line(oldest)}, "\n")
	reports, err := ReadFeatureReports([]byte(stream))
	if err != nil || len(reports) != 3 || reports[0] != cur {
		t.Fatalf("ReadFeatureReports = %+v, %v", reports, err)
	}
	table := FeatureTable(reports)
	rows := strings.Split(strings.TrimSpace(table), "\n")
	want := []string{
		"| Debian 11 (bullseye) 5.10 | no | no | no | yes | no | no | attaches with clsact + cls_bpf; IPv6 forwarding updates skb->csum without reading ip_summed; VRFs only as devices (table-only VRFs and sbrPrefixes refused at start or apply) |",
		"| Debian 12 (bookworm) 6.1 | no | no | yes | yes | yes | yes | attaches with clsact + cls_bpf; IPv6 forwarding updates skb->csum without reading ip_summed; VRFs as devices or table-only |",
		"| Debian 13 (trixie) 6.12 | yes | yes | yes | yes | no | no | attaches with tcx; VRFs as devices or table-only |",
	}
	if len(rows) != 5 || fmt.Sprint(rows[2:]) != fmt.Sprint(want) {
		t.Errorf("table:\n%s\nwant rows:\n%s", table, strings.Join(want, "\n"))
	}

	doc := []byte("# Install\n\n" + TableBegin + "\nold table\n" + TableEnd + "\nmore\n")
	if _, err := SpliceTable(doc, table, false); !errors.Is(err, ErrStaleTable) {
		t.Errorf("check of a stale table = %v, want ErrStaleTable", err)
	}
	updated, err := SpliceTable(doc, table, true)
	if err != nil || !strings.Contains(string(updated), TableBegin+"\n"+table+TableEnd+"\nmore\n") {
		t.Fatalf("update = %q, %v", updated, err)
	}
	if again, err := SpliceTable(updated, table, false); err != nil || string(again) != string(updated) {
		t.Errorf("check of the updated table = %v", err)
	}
	if _, err := SpliceTable([]byte("no markers"), table, true); err == nil {
		t.Error("SpliceTable accepted a document without markers")
	}
}

// ProbeFeatures measures the running kernel without creating anything (each link kind asked with an argument
// its driver refuses, as nodenet probes).
func probeFeatures(ctx context.Context) (FeatureReport, error) {
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
	nf, err := nodenet.Probe(ctx, h)
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
