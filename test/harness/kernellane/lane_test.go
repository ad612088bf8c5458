package kernellane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readOutcomes keeps each finished test with the last line it printed (a skip's or failure's reason), and a
// package that failed outside its tests; passing packages and output framing are not outcomes.
func TestReadOutcomes(t *testing.T) {
	stream := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: kernel lacks VRF devices\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.10s)\n"}
{"Action":"skip","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":2.5}
not json: a line the guest printed
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: want 1, got 2\n"}
{"Action":"fail","Package":"p","Test":"TestC","Elapsed":0.2}
{"Action":"fail","Package":"p","Elapsed":3}
{"Action":"pass","Package":"q","Elapsed":1}
`
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readOutcomes(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{
		{Package: "p", Test: "TestA", Action: "skip", Elapsed: 0.1, Reason: "a_test.go:9: kernel lacks VRF devices"},
		{Package: "p", Test: "TestB", Action: "pass", Elapsed: 2.5},
		{Package: "p", Test: "TestC", Action: "fail", Elapsed: 0.2, Reason: "c_test.go:3: want 1, got 2"},
		{Package: "p", Action: "fail", Elapsed: 3},
	}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes:\n%+v\nwant\n%+v", got, want)
	}
	if _, err := readOutcomes(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing stream: no error")
	}
}

// The initramfs is named after the guest scripts in it: the same scripts, the same name.
func TestGuestHashIsStable(t *testing.T) {
	if a, b := guestHash(), guestHash(); a != b || len(a) != 12 {
		t.Errorf("guestHash %q, %q", a, b)
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		n          int
		want       string
	}{
		{"fewer lines than n", "a\nb\n", 5, "a\nb\n"},
		{"the last n", "a\nb\nc\nd\n", 2, "c\nd\n"},
		{"no final newline", "a\nb\nc", 2, "b\nc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := tail(p, tc.n); got != tc.want {
				t.Errorf("tail(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
			}
		})
	}
	if got := tail(filepath.Join(dir, "missing"), 3); !strings.Contains(got, "no such file") {
		t.Errorf("tail of a missing file = %q, want the error", got)
	}
}

// A guest that dies without its job's status is booted once more; other errors and a second death are final.
func TestBootAgain(t *testing.T) {
	other := errors.New("qemu-system-x86_64 missing")
	for _, tc := range []struct {
		name     string
		errs     []error // what each boot returns, in order
		wantRuns int
		wantErr  error
	}{
		{"first boot passes", []error{nil}, 1, nil},
		{"died once, then passes", []error{ErrNoStatus, nil}, 2, nil},
		{"died twice", []error{ErrNoStatus, ErrNoStatus, nil}, 2, ErrNoStatus},
		{"another error is final", []error{other, nil}, 1, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, failed := 0, 0
			res, err := bootAgain(context.Background(), 2, func(context.Context) (Result, error) {
				e := tc.errs[runs]
				runs++
				if e != nil {
					return Result{RC: -1}, e
				}
				return Result{RC: 0}, nil
			}, func(int, error) { failed++ })
			if runs != tc.wantRuns || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("%d boots, err %v; want %d boots, err %v", runs, err, tc.wantRuns, tc.wantErr)
			}
			if tc.wantErr == nil && res.RC != 0 {
				t.Errorf("result %+v of the passing boot", res)
			}
			if want := runs - btoi(tc.wantErr == nil); failed != want {
				t.Errorf("told of %d failed boots, want %d", failed, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
