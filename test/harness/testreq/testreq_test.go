package testreq

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// helperCase names the case TestHelperNeed runs in a child process.
const helperCase = "TESTREQ_HELPER_CASE"

// TestHelperNeed is run by TestModes in a child process; it does nothing in a normal run.
func TestHelperNeed(t *testing.T) {
	switch os.Getenv(helperCase) {
	case "":
		return
	case "missing":
		Need(t, "widget", errors.New("no widget here"))
	case "present":
		Need(t, "widget", nil)
	case "tool-present":
		Available(t, "widget", nil)
	case "kernel":
		KernelLacks(t, "VRF devices", errors.New("operation not supported"))
	case "kernel-guess":
		KernelLacks(t, "VRF devices", nil)
	}
	t.Log("ran to the end")
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		mode, helper string
		want         []string
	}{
		{"", "missing", []string{"--- SKIP", MissingSkipPrefix + "widget: no widget here"}},
		{"skip", "present", []string{"--- PASS", "ran to the end"}},
		{"require", "missing", []string{"--- FAIL", "missing prerequisite widget: no widget here"}},
		{"require", "present", []string{"--- PASS", "ran to the end"}},
		{"exclude", "present", []string{"--- SKIP", ExcludedSkipPrefix + "widget"}},
		{"exclude", "tool-present", []string{"--- PASS", "ran to the end"}},
		{"require", "kernel", []string{"--- SKIP", KernelSkipPrefix + "VRF devices: operation not supported"}},
		{"require", "kernel-guess", []string{"--- FAIL", "without the error that detected it"}},
		{"bogus", "present", []string{"--- FAIL", `NETOP_TEST_PREREQS="bogus"`}},
	} {
		t.Run(tc.mode+"/"+tc.helper, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperNeed$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), EnvMode+"="+tc.mode, helperCase+"="+tc.helper)
			out, _ := cmd.CombinedOutput()
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
