package experiments

import (
	"strings"
	"testing"
)

func TestDescribeCPU(t *testing.T) {
	entry := func(model, flags string) string {
		return "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: " + model +
			"\nmodel name\t: AMD EPYC\nflags\t\t: " + flags + "\n\n"
	}
	for _, tc := range []struct{ cpuinfo, want string }{
		{entry("1", "fpu sse avx fma avx2 sha_ni") + entry("17", "avx512f"), "AMD EPYC, family 25 model 1, AVX2"},
		{entry("17", "fpu avx avx2 avx512f avx512bw"), "AMD EPYC, family 25 model 17, AVX-512"},
		{entry("1", "fpu sse avx"), "AMD EPYC, family 25 model 1, AVX"},
		{"processor\t: 0\nmodel name\t: Neoverse\nflags\t\t: avx512fx\n", "Neoverse"},
		{"processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n", ""},
		{"", ""},
	} {
		if got := describeCPU(strings.NewReader(tc.cpuinfo)); got != tc.want {
			t.Errorf("describeCPU(%q) = %q, want %q", tc.cpuinfo, got, tc.want)
		}
	}
	d := hostDescription()
	if !strings.Contains(d, " CPUs)") || strings.HasPrefix(d, " ") {
		t.Errorf("hostDescription() = %q", d)
	}
	t.Logf("this machine: %s", d)
}
