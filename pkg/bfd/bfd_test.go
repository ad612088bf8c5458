package bfd

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const ms = time.Millisecond

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Profile
		want []string // fields refused, in order
	}{
		{"defaults", Profile{}, nil},
		{"bounds", Profile{ReceiveInterval: MinInterval, TransmitInterval: MaxInterval, EchoInterval: MinInterval, DetectMultiplier: MaxDetectMultiplier}, nil},
		{"interval below bfdd's", Profile{ReceiveInterval: 9 * ms}, []string{"spec.bfd.receiveInterval"}},
		{"interval above", Profile{TransmitInterval: MaxInterval + ms}, []string{"spec.bfd.transmitInterval"}},
		{"not whole milliseconds", Profile{EchoInterval: 10*ms + time.Microsecond}, []string{"spec.bfd.echoInterval"}},
		{"negative", Profile{ReceiveInterval: -ms}, []string{"spec.bfd.receiveInterval"}},
		{"multiplier 1", Profile{DetectMultiplier: 1}, []string{"spec.bfd.detectMultiplier"}},
		{"multiplier 256", Profile{DetectMultiplier: 256}, []string{"spec.bfd.detectMultiplier"}},
		{"all at once", Profile{ReceiveInterval: ms, TransmitInterval: ms, EchoInterval: ms, DetectMultiplier: -1},
			[]string{"spec.bfd.receiveInterval", "spec.bfd.transmitInterval", "spec.bfd.echoInterval", "spec.bfd.detectMultiplier"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range tc.p.Validate(field.NewPath("spec", "bfd")) {
				got = append(got, e.Field)
				if e.Type != field.ErrorTypeInvalid || e.Detail == "" {
					t.Errorf("%s: want an Invalid error with a reason, got %v", e.Field, e)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("refused %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNameAndLines(t *testing.T) {
	for _, tc := range []struct {
		p     Profile
		name  string
		lines []string
	}{
		{Profile{}, "default", nil},
		{Profile{ReceiveInterval: DefaultInterval, TransmitInterval: DefaultInterval, DetectMultiplier: DefaultDetectMultiplier}, "default", nil},
		{Profile{ReceiveInterval: 100 * ms, TransmitInterval: 100 * ms}, "tx100-rx100", []string{"transmit-interval 100", "receive-interval 100"}},
		{Profile{DetectMultiplier: 5, Passive: true}, "x5-passive", []string{"detect-multiplier 5", "passive-mode"}},
		{Profile{EchoInterval: DefaultEchoInterval}, "echo50", []string{"echo-mode"}},
		{Profile{EchoInterval: 20 * ms}, "echo20", []string{"echo-mode", "echo transmit-interval 20", "echo receive-interval 20"}},
	} {
		if got := tc.p.Name(); got != tc.name {
			t.Errorf("%+v: name %q, want %q", tc.p, got, tc.name)
		}
		if got := tc.p.Lines(); !slices.Equal(got, tc.lines) {
			t.Errorf("%+v: lines %q, want %q", tc.p, got, tc.lines)
		}
		if tc.p.IsDefault() != (tc.name == "default") {
			t.Errorf("%+v: IsDefault %v", tc.p, tc.p.IsDefault())
		}
	}
}

// TestNameIdentifiesSettings: over random valid profiles, two profiles share a name exactly when bfdd would run
// them alike (the same lines), so sessions that share a profile share its settings and a changed setting is a
// changed name; every name is a valid bfdd profile name (at most 64 characters, no spaces).
func TestNameIdentifiesSettings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	interval := func() time.Duration {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return DefaultInterval
		}
		return time.Duration(10+rng.IntN(60000-10+1)) * ms
	}
	byName := map[string]string{}
	for range 20000 {
		p := Profile{ReceiveInterval: interval(), TransmitInterval: interval(), Passive: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			p.DetectMultiplier = MinDetectMultiplier + rng.IntN(MaxDetectMultiplier-MinDetectMultiplier+1)
		}
		if rng.IntN(2) == 0 {
			p.EchoInterval = interval()
		}
		if errs := p.Validate(field.NewPath("p")); len(errs) > 0 {
			t.Fatalf("generated an invalid profile %+v: %v", p, errs)
		}
		name, lines := p.Name(), strings.Join(p.Lines(), "\n")
		if len(name) > 64 || strings.ContainsAny(name, " \t") {
			t.Fatalf("%+v: name %q is not a bfdd profile name", p, name)
		}
		if prev, ok := byName[name]; ok && prev != lines {
			t.Fatalf("name %q stands for two settings:\n%s\n--\n%s", name, prev, lines)
		}
		byName[name] = lines
	}
	lines := map[string]string{}
	for name, l := range byName {
		if other, ok := lines[l]; ok {
			t.Fatalf("the same settings have two names %q and %q", name, other)
		}
		lines[l] = name
	}
}
