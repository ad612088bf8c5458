package images

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRecipePinsEveryPackage(t *testing.T) {
	if err := DefaultFRRRecipe(nil).check(); err != nil {
		t.Fatalf("the default recipe: %v", err)
	}
	tests := []struct {
		packages []string
		wantErr  string
	}{
		{[]string{"frr=10.3-3+deb13u1", "python3=3.13.5-1"}, ""},
		{[]string{"frr=10.3-3+deb13u1", "python3"}, `package "python3" is not pinned`},
		{[]string{"frr="}, `package "frr=" is not pinned`},
		{[]string{"=10.3"}, `package "=10.3" is not pinned`},
	}
	for _, tt := range tests {
		err := FRRRecipe{Suite: FRRSuite, Packages: tt.packages}.check()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%v: error %v, want %q", tt.packages, err, tt.wantErr)
		}
	}
	if got := (FRRRecipe{Packages: []string{"frr=10.3-3+deb13u1", "iproute2=6.15.0-1"}}).names(); !slices.Equal(got, []string{"frr", "iproute2"}) {
		t.Errorf("names %v", got)
	}
}

func TestDpkgVersions(t *testing.T) {
	const status = "Package: frr\nStatus: install ok installed\nPriority: optional\nVersion: 8.4.4-1.1~deb12u2\n" +
		"Description: FRRouting\n more text: with a colon\n\n" +
		"Package: iproute2\nStatus: deinstall ok config-files\nVersion: 6.1.0-3\n\n" +
		"Package: python3\nStatus: install ok installed\nVersion: 3.11.2-1+b1\n"
	tests := []versionCase{
		{name: "installed", packages: []string{"frr", "python3"},
			want: map[string]string{"frr": "8.4.4-1.1~deb12u2", "python3": "3.11.2-1+b1"}},
		{name: "only config files left", packages: []string{"iproute2"}, wantErr: "iproute2 is not installed"},
	}
	runVersionCases(t, []byte(status), dpkgVersions, tests)
}

// versionCase is one case of a function that reads package versions from a text.
type versionCase struct {
	name     string
	packages []string
	want     map[string]string
	wantErr  string
}

func runVersionCases(t *testing.T, text []byte, read func([]byte, []string) (map[string]string, error), tests []versionCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read(text, tt.packages)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFilterRootfs feeds an mmdebstrap-like tarball through the filter the FRR layer uses.
func TestFilterRootfs(t *testing.T) {
	clamp := time.Unix(1747699200, 0).UTC()
	old := clamp.Add(-24 * time.Hour)
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	entries := []tar.Header{
		{Name: "./dev/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: old},
		{Name: "./dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3, ModTime: old},
		{Name: "./dev/fd", Typeflag: tar.TypeSymlink, Linkname: "/proc/self/fd", ModTime: old},
		{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: old},
		{Name: "./bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin", ModTime: old},
		{Name: "./usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: old},
		{Name: "./usr/bin/ping", Typeflag: tar.TypeReg, Mode: 0o755, Size: 4, ModTime: clamp.Add(time.Hour),
			AccessTime: time.Now(), ChangeTime: time.Now(), Format: tar.FormatPAX,
			PAXRecords: map[string]string{"SCHILY.xattr.security.capability": "\x01\x00\x00\x02"}},
		{Name: "./usr/bin/ping4", Typeflag: tar.TypeLink, Linkname: "./usr/bin/ping", ModTime: old},
	}
	for _, h := range entries {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := filterRootfs(&in, &out, clamp); err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	var names []string
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		got[h.Name] = h
	}
	if want := []string{"dev/", "bin", "usr/bin/", "usr/bin/ping", "usr/bin/ping4"}; !slices.Equal(names, want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	ping := got["usr/bin/ping"]
	if !ping.ModTime.Equal(clamp) || !ping.AccessTime.IsZero() || !ping.ChangeTime.IsZero() {
		t.Errorf("ping times: mod %v access %v change %v; want mod clamped to %v, no others",
			ping.ModTime, ping.AccessTime, ping.ChangeTime, clamp)
	}
	if ping.PAXRecords["SCHILY.xattr.security.capability"] == "" {
		t.Errorf("ping lost its capability xattr: %v", ping.PAXRecords)
	}
	if l := got["usr/bin/ping4"].Linkname; l != "usr/bin/ping" {
		t.Errorf("hard link target %q, want usr/bin/ping", l)
	}
	if l := got["bin"].Linkname; l != "usr/bin" {
		t.Errorf("symlink target %q changed", l)
	}
	if !got["bin"].ModTime.Equal(old) {
		t.Errorf("old file time changed to %v", got["bin"].ModTime)
	}
}
