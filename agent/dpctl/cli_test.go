package dpctl

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRunUsage covers command-line mistakes, which must fail with ErrUsage before touching any BPF state.
func TestRunUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no command", nil, "missing command"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"attach without iface", []string{"attach"}, "--iface is required"},
		{"attach bad mode", []string{"attach", "--iface", "eth0", "--mode", "turbo"}, "--mode"},
		{"apply without file", []string{"apply"}, "-f is required"},
		{"dump bad output", []string{"dump", "-o", "yaml"}, `-o "yaml": want table or json`},
		{"unknown flag", []string{"dump", "--bogus"}, "flag provided but not defined"},
		{"extra argument", []string{"uninstall", "now"}, `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Run(context.Background(), tt.args, &out, &errOut)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run(%q) = %v, want ErrUsage containing %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestRunHelpListsEveryCommand(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		if !strings.Contains(out.String(), "  "+c.name+" ") {
			t.Errorf("help lacks %q:\n%s", c.name, out.String())
		}
	}
	var fl bytes.Buffer
	if err := Run(context.Background(), []string{"apply", "-h"}, &fl, &fl); err != nil {
		t.Fatalf("apply -h: %v", err)
	}
	if !strings.Contains(fl.String(), "-revision") {
		t.Errorf("apply -h does not list its flags:\n%s", fl.String())
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(" a,b ,, c,")
	if strings.Join(got, "|") != "a|b|c" {
		t.Fatalf("splitList = %q", got)
	}
}
