package machine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	d := Describe(context.Background())
	for _, want := range []string{"Linux ", fmt.Sprintf("%d x ", runtime.NumCPU()), runtime.Version(), "load average "} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() = %q, lacks %q", d, want)
		}
	}
}
