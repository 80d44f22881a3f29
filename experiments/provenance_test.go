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

// TestModifiedTreeVersions: two builds from differently modified trees at one commit have
// different versions (both said "…+dirty"): the diff's hash when the build recorded it, else
// the executable's; a clean build is its revision alone, and one without VCS information
// (both said "devel") is named by its executable's hash.
func TestModifiedTreeVersions(t *testing.T) {
	exe := func(h string) func() string { return func() string { return h } }
	a := versionString("abc123", true, "", exe("111111111111"))
	b := versionString("abc123", true, "", exe("222222222222"))
	if a == b || !strings.HasPrefix(a, "abc123+dirty.exe-") {
		t.Errorf("two modified builds: %q and %q", a, b)
	}
	if d1, d2 := versionString("abc123", true, "d1", exe("x")), versionString("abc123", true, "d2", exe("x")); d1 == d2 || d1 != "abc123+dirty.diff-d1" {
		t.Errorf("two recorded diffs: %q and %q", d1, d2)
	}
	if c := versionString("abc123", false, "", exe("x")); c != "abc123" {
		t.Errorf("a clean build: %q", c)
	}
	if u1, u2 := versionString("devel", false, "", exe("111111111111")), versionString("devel", false, "", exe("222222222222")); u1 == u2 || u1 != "devel.exe-111111111111" {
		t.Errorf("two builds without VCS information: %q and %q", u1, u2)
	}
	if h := executableHash(); len(h) != 12 || h == "unknown" {
		t.Errorf("the test binary's hash: %q", h)
	}
	if v := CodeVersion(); strings.HasSuffix(strings.Fields(v)[0], "+dirty") {
		t.Errorf("CodeVersion() = %q: a bare +dirty", v)
	}
}
