package gcpolicy

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
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
	restoreGC(t)

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

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		live uint64
		want int
	}{
		{0, Percent}, {8 * mib, Percent}, {16 * mib, Percent}, // Percent of it fits in Headroom
		{16*mib + 1, 399}, {32 * mib, 200}, {48 * mib, 133}, // Headroom beyond it
		{64 * mib, 100}, {400 * mib, MinPercent}, {1 << 40, MinPercent},
	}
	for _, c := range cases {
		if got := PercentFor(c.live); got != c.want {
			t.Errorf("PercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
		if got := PercentFor(c.live); c.live > 0 && got > MinPercent && c.live*uint64(got)/100 > Headroom {
			t.Errorf("PercentFor(%d) = %d allows more than Headroom", c.live, got)
		}
	}
}

// TestApplyBoundsHeadroom: with a big live heap the collector's goal is at most Headroom or
// Go's default beyond it, not Percent; back at a small heap, Percent again; and a GOGC the
// program sets itself stays.
func TestApplyBoundsHeadroom(t *testing.T) {
	restoreGC(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	if p := Apply(); p.Percent != Percent {
		t.Skipf("Apply = %+v: this system does not say how much memory it has", p)
	}
	// waitFor collects until GOGC is want (the policy resets it in a finalizer, after the
	// collection)
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
			if GOGC() == want {
				return
			}
		}
		t.Fatalf("GOGC %d with %d bytes live; want %d", GOGC(), liveHeap(), want)
	}
	if !Tuning() {
		t.Error("Apply set GOGC, but Tuning reports no policy")
	}
	ballast := make([]byte, 256<<20)
	waitFor(MinPercent)
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	if goal, live := s[0].Value.Uint64(), liveHeap(); goal > live*(100+MinPercent)/100+(4<<20) {
		t.Errorf("heap goal %d with %d bytes live: more than GOGC %d allows", goal, live, MinPercent)
	}
	runtime.KeepAlive(ballast) // and no further
	waitFor(Percent)

	debug.SetGCPercent(150) // the program's own
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := GOGC(); got != 150 {
		t.Errorf("GOGC %d after the program set 150", got)
	}
	if Tuning() {
		t.Error("Tuning reports the policy after the program set its own GOGC")
	}
}

// restoreGC sets Go's defaults (GOGC 100, no memory limit) for the test and puts back what was
// in effect after it.
func restoreGC(t *testing.T) {
	oldPct := debug.SetGCPercent(100)
	oldLim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLim) })
}
