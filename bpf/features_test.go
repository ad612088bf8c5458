package bpf_test

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestProbeFeatures checks each probe against a second witness (the kernel lane runs it on Debian 12's 6.1 and
// 13's 6.12; distributions backport, so a release number is no witness): the kfunc against loading the full
// variant, the lookup flag against the tbid member of the kernel's own struct bpf_fib_lookup.
func TestProbeFeatures(t *testing.T) {
	requireRoot(t)
	f, err := bpf.ProbeFeatures()
	if err != nil {
		t.Fatal(err)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	t.Logf("Linux %s: %s", unix.ByteSliceToString(u.Release[:]), f)

	full, err := bpf.RouterSpecFor(bpf.Features{KernCtx: true, FIBTableID: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range full.Maps {
		m.Pinning = ebpf.PinNone
	}
	coll, err := ebpf.NewCollection(full)
	if err == nil {
		coll.Close()
	}
	// Without the kfunc its weak call stays in the full variant's live code: the verifier refuses it.
	if loads := err == nil; loads != f.KernCtx {
		t.Errorf("KernCtx = %t, but the full variant loads: %t (%v)", f.KernCtx, loads, err)
	}

	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	var params *btf.Struct
	if err := kernel.TypeByName("bpf_fib_lookup", &params); err != nil {
		t.Fatal(err)
	}
	hasTBID := false
	for _, m := range params.Members {
		if m.Name == "tbid" {
			hasTBID = true
		}
		if u, ok := btf.UnderlyingType(m.Type).(*btf.Union); ok && m.Name == "" {
			for _, um := range u.Members {
				if st, ok := btf.UnderlyingType(um.Type).(*btf.Struct); ok && um.Name == "" {
					for _, sm := range st.Members {
						hasTBID = hasTBID || sm.Name == "tbid"
					}
				}
				hasTBID = hasTBID || um.Name == "tbid"
			}
		}
	}
	if f.FIBTableID != hasTBID {
		t.Errorf("FIBTableID = %t, but the kernel's struct bpf_fib_lookup has a tbid member: %t", f.FIBTableID, hasTBID)
	}
}

// TestRouterOldKernelVariant runs every router case with the variant for a kernel without
// bpf_cast_to_kern_ctx (Debian 12's 6.1): IPv6 forwarding then updates skb->csum without reading ip_summed,
// and must decide and rewrite exactly as the full variant.
func TestRouterOldKernelVariant(t *testing.T) {
	requireRoot(t)
	f, err := bpf.ProbeFeatures()
	if err != nil {
		t.Fatal(err)
	}
	if !f.FIBTableID {
		testreq.KernelLacks(t, bpf.FeatureFIBTableID+" (the lab routes by table id, without VRF devices)",
			errors.New("bpf_fib_lookup answers EINVAL to BPF_FIB_LOOKUP_TBID"))
	}
	f.KernCtx = false
	runRouterCases(t, newLabFor(t, false, &f))
}

// TestRouterSpecDefaultsToAllFeatures: a spec nobody configured asks for everything, so loading it on an old
// kernel fails instead of silently looking up the wrong table.
func TestRouterSpecDefaultsToAllFeatures(t *testing.T) {
	raw, err := bpf.LoadRouter()
	if err != nil {
		t.Fatal(err)
	}
	var bits uint32
	if err := raw.Variables["kernel_features"].Get(&bits); err != nil {
		t.Fatal(err)
	}
	none, err := bpf.RouterSpecFor(bpf.Features{})
	if err != nil {
		t.Fatal(err)
	}
	var noBits uint32
	if err := none.Variables["kernel_features"].Get(&noBits); err != nil {
		t.Fatal(err)
	}
	all, err := bpf.RouterSpecFor(bpf.Features{KernCtx: true, FIBTableID: true})
	if err != nil {
		t.Fatal(err)
	}
	var allBits uint32
	if err := all.Variables["kernel_features"].Get(&allBits); err != nil {
		t.Fatal(err)
	}
	if bits != allBits || noBits != 0 || allBits == 0 {
		t.Errorf("kernel_features: unconfigured %#x, all %#x, none %#x; want unconfigured == all != 0, none 0", bits, allBits, noBits)
	}
}
