package images

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAptSources(t *testing.T) {
	const keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
	tests := []struct {
		name    string
		files   map[string]string // below etc/apt
		want    []string
		wantErr string
	}{
		{
			name: "deb822 with pockets, other suites and a disabled stanza",
			files: map[string]string{
				"sources.list.d/debian.sources": "# comment\nTypes: deb deb-src\nURIs: http://mirror.example/debian\n" +
					"Suites: bookworm bookworm-updates\nComponents: main contrib\nSigned-By: " + keyring + "\n\n" +
					"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n" +
					"Components: main\nSigned-By: " + keyring + "\n\n\n" +
					"Types: deb\nURIs: http://old.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n",
				"sources.list.d/node.sources": "Types: deb\nURIs: https://node.example/node_20.x\nSuites: nodistro\n" +
					"Components: main\nArchitectures: amd64\nSigned-By: /usr/share/keyrings/node.gpg\n",
				"sources.list.d/sdk.list": "deb https://sdk.example/apt cloud-sdk-bookworm main\n",
			},
			want: []string{
				"deb [signed-by=" + keyring + "] http://mirror.example/debian bookworm main contrib",
				"deb [signed-by=" + keyring + "] http://mirror.example/debian bookworm-updates main contrib",
				"deb [signed-by=" + keyring + "] http://mirror.example/debian-security bookworm-security main",
			},
		},
		{
			name: "one-line format with options, comments, deb-src and duplicates",
			files: map[string]string{
				"sources.list": "# deb http://commented.example/debian bookworm main\n" +
					"deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main # trailing\n" +
					"deb-src http://mirror.example/debian bookworm main\n" +
					"deb http://security.example/debian-security bookworm/updates main\n" +
					"deb http://mirror.example/debian trixie main\n",
				"sources.list.d/dup.list": "deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n",
			},
			want: []string{
				"deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main",
				"deb http://security.example/debian-security bookworm/updates main",
			},
		},
		{
			name: "deb822 options become one-line options",
			files: map[string]string{
				"sources.list.d/x.sources": "Types: deb\nURIs: http://a.example/debian http://b.example/debian\n" +
					"Suites: bookworm\nComponents: main\nArchitectures: amd64 arm64\nTrusted: yes\n",
			},
			want: []string{
				"deb [arch=amd64,arm64 trusted=yes] http://a.example/debian bookworm main",
				"deb [arch=amd64,arm64 trusted=yes] http://b.example/debian bookworm main",
			},
		},
		{
			name: "an embedded key is refused",
			files: map[string]string{
				"sources.list.d/x.sources": "Types: deb\nURIs: http://a.example/debian\nSuites: bookworm\n" +
					"Components: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n",
			},
			wantErr: "embedded key",
		},
		{
			name:    "no source for the suite",
			files:   map[string]string{"sources.list": "deb http://mirror.example/debian trixie main\n"},
			wantErr: `no apt source for suite "bookworm"`,
		},
		{
			name:    "unterminated options",
			files:   map[string]string{"sources.list": "deb [arch=amd64 http://mirror.example/debian bookworm main\n"},
			wantErr: "unterminated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(root, "etc/apt", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := AptSources(root, "bookworm")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestAptSourcesFor(t *testing.T) {
	const keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
	write := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for name, content := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	bookworm := "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n" +
		"Signed-By: " + keyring + "\n\nTypes: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n" +
		"Components: main\n"
	tests := []struct {
		name    string
		files   map[string]string
		want    []string
		wantErr string
	}{
		{
			name: "the machine's release pointed at trixie, pockets and options kept",
			files: map[string]string{"etc/os-release": "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_CODENAME=bookworm\n",
				"etc/apt/sources.list.d/debian.sources": bookworm},
			want: []string{
				"deb [signed-by=" + keyring + "] http://mirror.example/debian trixie main",
				"deb [signed-by=" + keyring + "] http://mirror.example/debian trixie-updates main",
				"deb http://mirror.example/debian-security trixie-security main",
			},
		},
		{
			name: "the machine's own trixie entries win",
			files: map[string]string{"etc/os-release": "VERSION_CODENAME=bookworm\n",
				"etc/apt/sources.list.d/debian.sources": bookworm,
				"etc/apt/sources.list":                  "deb http://own.example/debian trixie main\n"},
			want: []string{"deb http://own.example/debian trixie main"},
		},
		{
			name:    "no release name",
			files:   map[string]string{"etc/os-release": "ID=debian\n", "etc/apt/sources.list.d/debian.sources": bookworm},
			wantErr: "no VERSION_CODENAME",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AptSourcesFor(write(t, tt.files), "trixie")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
