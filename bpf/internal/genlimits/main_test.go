package main

import (
	"bytes"
	"os"
	"testing"
)

// TestLimitsFresh fails when bpf/router.h changed without `go generate ./bpf/...`.
func TestLimitsFresh(t *testing.T) {
	src, err := os.ReadFile("../../router.h")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../limits/limits.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("bpf/limits/limits.go is stale; run go generate ./bpf/...\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestGenerateMissingDefine(t *testing.T) {
	if _, err := generate([]byte("#define MAX_VRFS 4096\n")); err == nil {
		t.Error("a header without IFACE_TABLE_SIZE generated limits")
	}
}
