package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/internal/gcpolicy"

	"github.com/hyperflat/hyperflat/stats"
)

func TestWorkloadsRun(t *testing.T) {
	for name, mk := range goWorkloads {
		s, err := mk()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := 0; i < 2; i++ {
			if err := s(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}

func BenchmarkScreen1(b *testing.B) { benchScreen(b, 1) }
func BenchmarkScreen2(b *testing.B) { benchScreen(b, 2) }

func benchScreen(b *testing.B, workers int) {
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := screenTime(50, 8, workers); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
}

func benchWorkload(b *testing.B, name string) {
	s, err := goWorkloads[name]()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-c0)/float64(b.N)*1e3, "cpu-ms/op")
}

// cpuTime is this process's user and system CPU time in seconds (a measure less sensitive than
// wall time to other work on the machine).
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func BenchmarkHGPlain(b *testing.B)    { benchWorkload(b, "hg_plain") }
func BenchmarkHGStep(b *testing.B)     { benchWorkload(b, "hg_step") }
func BenchmarkMLPTrain(b *testing.B)   { benchWorkload(b, "mlp_train_f32") }
func BenchmarkMLPHVP(b *testing.B)     { benchWorkload(b, "mlp_hvp_f32") }
func BenchmarkCNNTrain(b *testing.B)   { benchWorkload(b, "cnn_train_f32") }
func BenchmarkCNNHVP(b *testing.B)     { benchWorkload(b, "cnn_hvp_f32") }
func BenchmarkTPESuggest(b *testing.B) { benchWorkload(b, "tpe_suggest") }

func TestProfileOps(t *testing.T) {
	name := os.Getenv("PROFILE_WORKLOAD")
	if name == "" {
		t.Skip("set PROFILE_WORKLOAD")
	}
	profiling = true
	s, err := goWorkloads[name]()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	total, flops := 0.0, int64(0)
	for _, o := range lastProgram.OpTimes() {
		total += o.Seconds
		flops += o.Flops
	}
	for _, o := range lastProgram.OpTimes()[:min(40, len(lastProgram.OpTimes()))] {
		t.Logf("%6.2f%% %8.3f ms/step %4d calls %7.2f MFLOP %s", 100*o.Seconds/total, o.Seconds*1e3/20, o.Calls/20, float64(o.Flops)/20e6, o.Op)
	}
	t.Logf("total %.3f ms/step, %.1f MFLOP/step", total*1e3/20, float64(flops)/20e6)
}

// TestHGRatio interleaves the hypergradient and plain steps (HG_RATIO=1 to run).
func TestHGRatio(t *testing.T) {
	if os.Getenv("HG_RATIO") == "" {
		t.Skip("set HG_RATIO=1")
	}
	l := &local{steps: map[string]stepper{}}
	for _, n := range []string{"hg_plain", "hg_step"} {
		if _, err := l.warm(n); err != nil {
			t.Fatal(err)
		}
	}
	var a, b []float64
	for r := 0; r < 30; r++ {
		x, _ := l.run("hg_plain", 15)
		y, _ := l.run("hg_step", 5)
		a = append(a, stats.Median(x))
		b = append(b, stats.Median(y))
	}
	t.Logf("plain %.3f ms, step %.3f ms, ratio %.3f", stats.Median(a), stats.Median(b), stats.Median(b)/stats.Median(a))
}

func TestPeakScaling(t *testing.T) {
	if os.Getenv("PEAK") == "" {
		t.Skip("set PEAK=1")
	}
	t.Logf("peak on GOMAXPROCS goroutines: %.1f GFLOP/s", peakGFLOPs())
}

func BenchmarkPaper(b *testing.B) {
	for _, n := range []string{"resnet18_train_f32", "resnet34_train_f32", "resnet18_cifar_train_f32", "ahsc_convnet_train_f32", "openml_mlp_train_f32", "openml_mlp_train_f64"} {
		b.Run(n, func(b *testing.B) { benchWorkload(b, n) })
	}
}

// TestPaperChecksAgainstTorch compares the papers' workloads' loss and gradient norm with
// bench/ref.py's (REF_CHECK=1; needs /usr/bin/python3 with python3-torch).
func TestPaperChecksAgainstTorch(t *testing.T) {
	if os.Getenv("REF_CHECK") == "" {
		t.Skip("set REF_CHECK=1")
	}
	ref, err := startServer("torch", nil, "/usr/bin/python3", "../ref.py")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.close()
	dir := t.TempDir()
	for _, n := range append(paperChecks, strings.Fields(os.Getenv("REF_CHECK_MORE"))...) {
		w, err := weightsFile(dir, n)
		if err != nil {
			t.Fatal(err)
		}
		l, g, err := paperCheck(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ref.call("CHECK " + n + " " + w)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: loss %.8g vs %s, gradient norm %.8g vs %s", n, l, f[0], g, f[1])
	}
}

// TestStepTimes prints each step's wall and CPU time, bytes allocated, minor page faults and
// garbage collections of a workload (STEP_TIMES=name, STEP_COUNT=n steps, default 30), then
// the spread (p90/median, as bench/compare computes it) of both times over the steps after
// the first three. On a loaded machine the wall time measures the run queue as much as the
// step; the CPU time and the faults are what the step itself does (issue 53's two clusters
// were faults on fresh heap pages, which show in both). STEP_PROFILE=file writes a CPU
// profile of the steps after the first three.
func TestStepTimes(t *testing.T) {
	name := os.Getenv("STEP_TIMES")
	if name == "" {
		t.Skip("set STEP_TIMES")
	}
	count := 30
	if s := os.Getenv("STEP_COUNT"); s != "" {
		if _, err := fmt.Sscan(s, &count); err != nil || count < 5 {
			t.Fatalf("STEP_COUNT=%q: want a number ≥ 5", s)
		}
	}
	gcpolicy.Apply() // as the gocmp command runs
	mk, ok := goWorkloads[name]
	if !ok {
		t.Fatalf("STEP_TIMES=%s: no such workload", name)
	}
	s, err := mk()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load average at start %s", loadavg())
	stop := profileSteps(t, os.Getenv("STEP_PROFILE"))
	var wall, cpu, faults []float64
	gcs := uint32(0)
	for i := 0; i < count; i++ {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c0, f0 := usage()
		t0 := time.Now()
		if err := s(); err != nil {
			t.Fatal(err)
		}
		el := time.Since(t0).Seconds() * 1e3
		c1, f1 := usage()
		runtime.ReadMemStats(&m1)
		t.Logf("step %2d: %8.1f ms wall %8.1f ms cpu %8.1f MB allocated %6d faults %2d GCs, heap %6.1f MB", i, el, (c1-c0)*1e3,
			float64(m1.TotalAlloc-m0.TotalAlloc)/1e6, f1-f0, m1.NumGC-m0.NumGC, float64(m1.HeapAlloc)/1e6)
		if i == 2 {
			stop.start()
		}
		if i >= 3 { // the first steps size buffers and fault in the heap
			wall, cpu, faults = append(wall, el), append(cpu, (c1-c0)*1e3), append(faults, float64(f1-f0))
			gcs += m1.NumGC - m0.NumGC
		}
	}
	stop.stop()
	t.Logf("steps 3–%d: wall median %.1f ms, p90/median %.2f; cpu median %.1f ms, p90/median %.2f; median %.0f faults a step, %d GCs; load average at end %s",
		count-1, stats.Median(wall), spread(wall), stats.Median(cpu), spread(cpu), stats.Median(faults), gcs, loadavg())
}

// stepProfile writes a CPU profile of the steps after the first three (STEP_PROFILE=file):
// whole-test profiles count the first steps, which size buffers and fault in pages.
type stepProfile struct {
	t    *testing.T
	path string
	f    *os.File
}

func profileSteps(t *testing.T, path string) *stepProfile { return &stepProfile{t: t, path: path} }

func (p *stepProfile) start() {
	if p.path == "" {
		return
	}
	f, err := os.Create(p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		p.t.Fatal(err)
	}
	p.f = f
}

func (p *stepProfile) stop() {
	if p.f == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		p.t.Error(err)
	}
	p.f = nil
}

// usage is this process's user and system CPU time in seconds and its minor page faults.
func usage() (float64, int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, ru.Minflt
}

// TestRatioDividesByFasterTorch checks that a RATIO's reference is the faster PyTorch
// configuration and that the spread is the 90th percentile over the median.
func TestRatioDividesByFasterTorch(t *testing.T) {
	c := &comparison{sides: []string{"hyperflat", "torch_tuned", "torch_default"}, ms: [][]float64{{3}, {24}, {2}}}
	med := func(c *comparison, i int) float64 { return stats.Median(c.ms[i]) }
	if b := best(c, med); b != 2 {
		t.Errorf("best = %d; the default configuration (2 ms) is faster than the tuned (24 ms)", b)
	}
	c.ms[2] = []float64{30}
	if b := best(c, med); b != 1 {
		t.Errorf("best = %d; the tuned configuration is faster", b)
	}
	if b := best(&comparison{sides: []string{"hyperflat", "optuna"}, ms: [][]float64{{1}, {2}}}, med); b != 1 {
		t.Errorf("best = %d for a single reference", b)
	}
	ts := []float64{10, 10, 10, 10, 10, 10, 10, 10, 10, 30}
	if s := spread(ts); s != 1 {
		t.Errorf("spread = %v; the 90th percentile of nine 10s and a 30 is 10", s)
	}
	if s := spread([]float64{10, 10, 10, 10, 10, 20, 20, 20, 20, 20}); s != 20.0/15 {
		t.Errorf("spread = %v, want 20/15", s)
	}
	if m := cpuModel(); !strings.Contains(m, "logical CPUs") {
		t.Errorf("cpuModel() = %q", m)
	}
}

// bench/compare gives hyperflat one OpenBLAS thread and the reference the user's setting.
func TestReferenceEnviron(t *testing.T) {
	has := func(env []string, kv string) bool { return slices.Contains(env, kv) }
	t.Setenv("OPENBLAS_NUM_THREADS", "1")
	t.Setenv(origOpenBLASThreads, "4")
	if env := referenceEnviron(); !has(env, "OPENBLAS_NUM_THREADS=4") || has(env, "OPENBLAS_NUM_THREADS=1") {
		t.Errorf("user's 4: reference sees %v", env)
	}
	t.Setenv(origOpenBLASThreads, "unset")
	for _, kv := range referenceEnviron() {
		if strings.HasPrefix(kv, "OPENBLAS_NUM_THREADS=") || strings.HasPrefix(kv, origOpenBLASThreads) {
			t.Errorf("user had none: reference sees %s", kv)
		}
	}
}
