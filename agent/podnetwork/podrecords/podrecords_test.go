package podrecords_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/network-operator/network-operator/agent/podnetwork/podrecords"
)

func ptr(v int) *int { return &v }

func TestStore(t *testing.T) {
	s := podrecords.New(filepath.Join(t.TempDir(), "pods"))
	if r, err := s.Load("uid-1"); err != nil || r != nil {
		t.Fatalf("Load of a missing record: %v, %v", r, err)
	}
	if uids, err := s.UIDs(); err != nil || len(uids) != 0 {
		t.Fatalf("UIDs without a directory: %v, %v", uids, err)
	}
	r := &podrecords.Record{UID: "uid-1", Namespace: "ns", Name: "p", Primary: &podrecords.Primary{Name: "eth0", MTU: ptr(1500)},
		Sysctls: map[string]string{"net.ipv4.ip_forward": "0"}, Interfaces: []podrecords.Interface{{Name: "net1", Kind: "veth"}}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&podrecords.Record{UID: "uid-2", Interfaces: []podrecords.Interface{{Name: "x"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("uid-1")
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("Load = %+v, %v; want %+v", got, err, r)
	}
	if uids, err := s.UIDs(); err != nil || !slices.Equal(uids, []string{"uid-1", "uid-2"}) {
		t.Fatalf("UIDs = %v, %v", uids, err)
	}
	// An empty record removes the file.
	if err := s.Save(&podrecords.Record{UID: "uid-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "uid-2.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty record kept its file: %v", err)
	}
	if err := s.Remove("uid-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("uid-1"); err != nil {
		t.Fatalf("Remove of a missing record: %v", err)
	}
	for _, bad := range []string{"", "..", "../x", "a/b", ".hidden"} {
		if _, err := s.Load(bad); !errors.Is(err, podrecords.ErrBadUID) {
			t.Errorf("Load(%q) = %v, want ErrBadUID", bad, err)
		}
	}
	// A file that claims another UID is refused.
	if err := os.WriteFile(filepath.Join(s.Dir(), "uid-3.json"), []byte(`{"uid":"uid-4"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("uid-3"); err == nil {
		t.Error("a record holding another uid was accepted")
	}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b *podrecords.Record
		want *podrecords.Record
	}{
		{"nil and nil", nil, nil, nil},
		{"old only", &podrecords.Record{UID: "u", Sysctls: map[string]string{"k": "1"}}, nil,
			&podrecords.Record{UID: "u", Sysctls: map[string]string{"k": "1"}}},
		{
			"union, the new one wins",
			&podrecords.Record{UID: "u", Primary: &podrecords.Primary{Name: "eth0", MTU: ptr(1500)}, Sysctls: map[string]string{"a": "1"},
				Interfaces: []podrecords.Interface{{Name: "net2", Bridge: "l2br.1"}, {Name: "net1", Bridge: "l2br.1"}}},
			&podrecords.Record{UID: "u", Name: "p", Primary: &podrecords.Primary{Name: "eth0", TxQueueLen: ptr(1000)},
				Sysctls: map[string]string{"b": "2"}, Interfaces: []podrecords.Interface{{Name: "net1", Bridge: "l2br.2"}}},
			&podrecords.Record{UID: "u", Name: "p", Primary: &podrecords.Primary{Name: "eth0", MTU: ptr(1500), TxQueueLen: ptr(1000)},
				Sysctls: map[string]string{"a": "1", "b": "2"}, Interfaces: []podrecords.Interface{{Name: "net1", Bridge: "l2br.2"}, {Name: "net2", Bridge: "l2br.1"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podrecords.Merge(tc.a, tc.b); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Merge = %+v, want %+v", got, tc.want)
			}
		})
	}
}
