package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

// TestScreenAfterWorkload times AHSC's screening (50 configurations, widths ≤ 2^8) in this
// process, twice fresh and then after other work, printing for each its wall and CPU time,
// minor page faults, collections, live heap and heap goal:
//
//	INPROC_SCREEN=w[,w...]  the work: goWorkloads names (5 steps each, e.g. resnet18_train_f32)
//	                        or ballast:MB, a live byte slice that touches no kernel
//	INPROC_DROP=1           drop the work (and collect) before screening again
//	INPROC_AFTER=n          screenings after the work (default 2)
//	INPROC_WHAT=mu          time muPerBatch(50) instead of the screening
//	INPROC_WORKERS=2        screen on two workers
//	INPROC_PROFILE=prefix   a CPU profile of each screening; INPROC_HEAP=file a heap profile
//	                        after the drop
//
// A live heap of ResNet programs or of plain bytes slows the screening alike, and dropping it
// undoes that: the collector's heap goal, not a kernel's state (see local.release).
func TestScreenAfterWorkload(t *testing.T) {
	spec := os.Getenv("INPROC_SCREEN")
	if spec == "" {
		t.Skip("set INPROC_SCREEN")
	}
	gcpolicy.Apply()
	workers := 1
	if os.Getenv("INPROC_WORKERS") == "2" {
		workers = 2
	}
	n := 0
	screen := func(label string) {
		prof := profileSteps(t, "")
		if p := os.Getenv("INPROC_PROFILE"); p != "" {
			prof = profileSteps(t, fmt.Sprintf("%s.%d.%s.prof", p, n, label))
		}
		prof.start()
		s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		gc0 := s[0].Value.Uint64()
		cpu0, faults0 := usage()
		t0 := time.Now()
		what := "screening"
		if os.Getenv("INPROC_WHAT") == "mu" {
			mu, err := muPerBatch(50)
			if err != nil {
				t.Fatal(err)
			}
			what = fmt.Sprintf("μ %.3f ms/batch", mu)
		} else if _, err := screenTime(50, 8, workers); err != nil {
			t.Fatal(err)
		}
		el := time.Since(t0).Seconds()
		cpu1, faults1 := usage()
		prof.stop()
		metrics.Read(s)
		t.Logf("%-8s %s %d: %.2f s wall %.2f s cpu %7d faults %4d GCs; live %.0f MB, goal %.0f MB, mapped %.0f MB; load %s",
			label, what, n, el, cpu1-cpu0, faults1-faults0, s[0].Value.Uint64()-gc0, float64(s[1].Value.Uint64())/1e6,
			float64(s[3].Value.Uint64())/1e6, float64(s[2].Value.Uint64())/1e6, loadavg())
		n++
	}
	screen("fresh")
	screen("fresh")
	var keep []stepper
	var ballast []byte
	for _, name := range strings.Split(spec, ",") {
		if mb, ok := strings.CutPrefix(name, "ballast:"); ok { // a live heap that is only bytes
			var n int
			if _, err := fmt.Sscan(mb, &n); err != nil {
				t.Fatal(err)
			}
			ballast = make([]byte, n<<20)
			for i := range ballast {
				ballast[i] = byte(i)
			}
			continue
		}
		mk, ok := goWorkloads[name]
		if !ok {
			t.Fatalf("no workload %s", name)
		}
		s, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		for i := 0; i < 5; i++ {
			if err := s(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: 5 steps in %.2f s", name, time.Since(t0).Seconds())
		keep = append(keep, s)
	}
	if os.Getenv("INPROC_DROP") != "" {
		keep, ballast, lastProgram = nil, nil, nil
		runtime.GC()
		runtime.GC()
		if p := os.Getenv("INPROC_HEAP"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	after := 2
	if s := os.Getenv("INPROC_AFTER"); s != "" {
		if _, err := fmt.Sscan(s, &after); err != nil {
			t.Fatal(err)
		}
	}
	for range after {
		screen("after")
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(ballast)
}

// TestReleaseFreesPrograms checks that local.release leaves nothing of the workloads' programs
// alive: kept, they set the collector's heap goal for the AHSC figures measured after them.
func TestReleaseFreesPrograms(t *testing.T) {
	l := &local{steps: map[string]stepper{}}
	var progs []weak.Pointer[graph.Program]
	for _, n := range []string{"mlp_train_f32", "openml_mlp_train_f32"} { // compile's and a Trainer's
		lastProgram = nil
		if _, err := l.warm(n); err != nil {
			t.Fatal(err)
		}
		if lastProgram == nil {
			t.Fatalf("%s: no program", n)
		}
		progs = append(progs, weak.Make(lastProgram))
	}
	l.release()
	runtime.GC()
	for i, w := range progs {
		if w.Value() != nil {
			t.Errorf("program %d of a released workload is still reachable", i)
		}
	}
	if len(l.steps) != 0 {
		t.Errorf("%d steps kept", len(l.steps))
	}
	if l.flops["mlp_train_f32"] == 0 {
		t.Error("release dropped the flop count, which the results still print")
	}
}
