package bpf_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/network-operator/network-operator/bpf"
	"github.com/network-operator/network-operator/bpf/limits"
	"github.com/network-operator/network-operator/pkg/maps"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// reasonEnum returns the members of enum reason from the object's BTF.
func reasonEnum(t *testing.T, spec *ebpf.CollectionSpec) []btf.EnumValue {
	t.Helper()
	var e *btf.Enum
	if err := spec.Types.TypeByName("reason", &e); err != nil {
		t.Fatalf("enum reason in BTF: %v", err)
	}
	return e.Values
}

// TestReasonEncoding: every reason of the compiled program has a class and its own counter slot, the slots are
// 0..REASON_MAX-1, and Go knows each one under the same value, so Go's class (maps.Reason.Action) is the C
// value's class, which is also what the program's verdict decodes (router.c run()).
func TestReasonEncoding(t *testing.T) {
	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatal(err)
	}
	if maps.NumReasons >= limits.ReasonSlots {
		t.Fatalf("%d reasons fill all %d counter slots: no room for another one without a migration",
			maps.NumReasons, limits.ReasonSlots)
	}
	seen := map[maps.Reason]string{}
	reasons := 0
	for _, v := range reasonEnum(t, spec) {
		c := bpf.RouterReason(v.Value)
		if v.Name == "REASON_MAX" {
			if int(c) != maps.NumReasons || maps.ActionOf(c) != maps.ActionUnknown {
				t.Errorf("REASON_MAX = %#x, want %d with no class", v.Value, maps.NumReasons)
			}
			continue
		}
		reasons++
		slot := maps.Reason(c & limits.ReasonSlotMask)
		if int(slot) >= maps.NumReasons {
			t.Errorf("%s: slot %d, want below REASON_MAX %d", v.Name, slot, maps.NumReasons)
			continue
		}
		if other, dup := seen[slot]; dup {
			t.Errorf("%s and %s share counter slot %d", v.Name, other, slot)
		}
		seen[slot] = v.Name
		action := maps.ActionOf(c)
		// The names say what the class should be; the class itself is only in the value.
		var want maps.Action
		switch {
		case strings.HasPrefix(v.Name, "REASON_FWD_"), strings.HasPrefix(v.Name, "REASON_REDIRECT"):
			want = maps.ActionForwarded
		case strings.HasPrefix(v.Name, "REASON_PASS_"):
			want = maps.ActionPassed
		case strings.HasPrefix(v.Name, "REASON_DROP_"):
			want = maps.ActionDropped
		}
		if action != want {
			t.Errorf("%s = %#x: class %q, its name says %q", v.Name, v.Value, action, want)
		}
		if got, ok := slot.CValue(); !ok || got != c {
			t.Errorf("%s = %#x: Go's reason %s has C value %#x (%v)", v.Name, v.Value, slot, got, ok)
		}
		if slot.Action() != action {
			t.Errorf("%s: Go says %q, the C value's class is %q", v.Name, slot.Action(), action)
		}
		if strings.HasPrefix(slot.String(), "reason(") {
			t.Errorf("%s: no name in pkg/maps", v.Name)
		}
	}
	if reasons != maps.NumReasons {
		t.Errorf("%d reasons in BTF, REASON_MAX is %d", reasons, maps.NumReasons)
	}
	if got := maps.Reason(limits.ReasonSlots - 1).Action(); got != maps.ActionUnknown {
		t.Errorf("unused slot: action %q, want unknown", got)
	}
}

// TestCountersLayoutNeutral: the map specs do not depend on the number of reasons. router.c is compiled (with the
// flags of gen.go) with more reasons than it has, up to every counter slot; every map must keep its type, key and
// value size, max_entries and flags, so the pinned maps of a running node stay compatible (no migration, no
// counter reset). One reason more than REASON_SLOTS must not compile.
func TestCountersLayoutNeutral(t *testing.T) {
	clang := testreq.Tools(t, "clang")[0]
	spec, err := bpf.RouterSpec()
	if err != nil {
		t.Fatal(err)
	}
	vs := spec.Maps[bpf.RouterMapVrfCounters]
	if want := uint32(limits.ReasonSlots * unsafe.Sizeof(bpf.RouterCounter{})); vs.KeySize != 4 || vs.ValueSize != want ||
		vs.MaxEntries != limits.MaxVRFs {
		t.Errorf("%s: key %d value %d max_entries %d, want 4, %d (REASON_SLOTS counters), %d", vs.Name,
			vs.KeySize, vs.ValueSize, vs.MaxEntries, want, limits.MaxVRFs)
	}

	src, err := os.ReadFile("router.h")
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("router.c")
	if err != nil {
		t.Fatal(err)
	}
	include, err := filepath.Abs("include")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []int{1, limits.ReasonSlots - maps.NumReasons, limits.ReasonSlots - maps.NumReasons + 1} {
		t.Run(fmt.Sprintf("%d more", extra), func(t *testing.T) {
			dir := t.TempDir()
			header, err := withReasons(src, extra)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "router.h"), header, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "router.c"), code, 0o644); err != nil {
				t.Fatal(err)
			}
			obj := filepath.Join(dir, "router.o")
			out, err := exec.Command(clang, "-target", "bpfel", "-O2", "-g", "-Wall", "-Werror", "-nostdinc",
				"-I"+include, "-c", filepath.Join(dir, "router.c"), "-o", obj).CombinedOutput()
			if maps.NumReasons+extra > limits.ReasonSlots {
				if err == nil || !bytes.Contains(out, []byte("more reasons than counter slots")) {
					t.Fatalf("%d reasons in %d slots compiled (%v): %s", maps.NumReasons+extra, limits.ReasonSlots, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("clang: %v\n%s", err, out)
			}
			got, err := ebpf.LoadCollectionSpec(obj)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(reasonEnum(t, got)) - 1; n != maps.NumReasons+extra {
				t.Fatalf("compiled %d reasons, want %d", n, maps.NumReasons+extra)
			}
			if len(got.Maps) != len(spec.Maps) {
				t.Errorf("%d maps, want %d", len(got.Maps), len(spec.Maps))
			}
			for name, want := range spec.Maps {
				m := got.Maps[name]
				if m == nil {
					t.Errorf("map %s missing", name)
					continue
				}
				if m.Type != want.Type || m.KeySize != want.KeySize || m.ValueSize != want.ValueSize ||
					m.MaxEntries != want.MaxEntries || m.Flags != want.Flags {
					t.Errorf("map %s: %s key %d value %d max_entries %d flags %#x; with %d reasons %s key %d value %d max_entries %d flags %#x",
						name, m.Type, m.KeySize, m.ValueSize, m.MaxEntries, m.Flags,
						maps.NumReasons, want.Type, want.KeySize, want.ValueSize, want.MaxEntries, want.Flags)
				}
			}
		})
	}
}

// withReasons returns router.h with n reasons more, in the next slots, and REASON_MAX moved up accordingly.
func withReasons(h []byte, n int) ([]byte, error) {
	oldMax := fmt.Sprintf("\tREASON_MAX = %d,\n", maps.NumReasons)
	if bytes.Count(h, []byte(oldMax)) != 1 {
		return nil, fmt.Errorf("router.h: no single %q", strings.TrimSpace(oldMax))
	}
	var add strings.Builder
	for i := range n {
		class := []string{"PASSED", "DROPPED", "FORWARDED"}[i%3]
		fmt.Fprintf(&add, "\tREASON_LAYOUT_TEST_%d = %s(%d),\n", i, class, maps.NumReasons+i)
	}
	fmt.Fprintf(&add, "\tREASON_MAX = %d,\n", maps.NumReasons+n)
	return bytes.Replace(h, []byte(oldMax), []byte(add.String()), 1), nil
}
