package gcpolicy

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func write(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadMeminfoTotal(t *testing.T) {
	p := write(t, "meminfo", "MemFree:  100 kB\nMemTotal:       24683628 kB\nBuffers: 1 kB\n")
	if got, want := readMeminfoTotal(p), int64(24683628)*1024; got != want {
		t.Errorf("MemTotal = %d, want %d", got, want)
	}
	for _, bad := range []string{"", "MemTotal:\n", "MemTotal: x kB\n", "MemTotal: -5 kB\n"} {
		if got := readMeminfoTotal(write(t, "m", bad)); got != 0 {
			t.Errorf("%q: got %d, want 0", bad, got)
		}
	}
	if got := readMeminfoTotal(filepath.Join(t.TempDir(), "absent")); got != 0 {
		t.Errorf("absent file: got %d", got)
	}
}

func TestReadLimit(t *testing.T) {
	cases := map[string]int64{"2147483648\n": 2147483648, "max\n": 0, "": 0, "-1": 0}
	for in, want := range cases {
		if got := readLimit(write(t, "memory.max", in)); got != want {
			t.Errorf("%q: got %d, want %d", in, got, want)
		}
	}
}

func TestApplyRespectsEnvironment(t *testing.T) {
	oldPct := debug.SetGCPercent(100)
	oldLim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLim) })

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if p := Apply(); p != (Policy{}) {
		t.Errorf("with GOGC and GOMEMLIMIT set, Apply changed %+v", p)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC changed to %d", got)
	}

	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	if availableMemory() <= 0 {
		t.Skip("this system does not say how much memory it has")
	}
	p := Apply()
	if p.Percent != Percent || p.Limit <= 0 {
		t.Fatalf("Apply = %+v, want GOGC %d and a limit", p, Percent)
	}
	if got := debug.SetGCPercent(100); got != Percent {
		t.Errorf("GOGC in effect %d, want %d", got, Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != p.Limit {
		t.Errorf("memory limit in effect %d, want %d", got, p.Limit)
	}
}
