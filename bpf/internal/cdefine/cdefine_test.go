package cdefine

import (
	"maps"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string]uint64
		err  bool
	}{
		{name: "decimal, hex, suffix, comment", src: "#define A 4096\n# define B 0x10 /* sixteen */\n#define C 8U\n",
			want: map[string]uint64{"A": 4096, "B": 16, "C": 8}},
		{name: "guards, macros and expressions are skipped", src: "#ifndef H\n#define H\n#define F(x) (x)\n#define E (1 << 3)\n#define S \"s\"\n",
			want: map[string]uint64{}},
		{name: "indented", src: "\t#define A 1\n", want: map[string]uint64{"A": 1}},
		{name: "duplicate", src: "#define A 1\n#define A 2\n", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.src))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %t", err, tc.err)
			}
			if !tc.err && !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
