// Command gocmp is the engine of bench/compare: it runs hyperflat's workloads in process and
// their references (PyTorch, Optuna: bench/ref.py; optionally hyperflat's pure-Go build in
// serve mode) as servers, interleaves them A/B over several repetitions on identical shapes and
// data, and prints RATIO and FIGURE lines and a table. See bench/compare.
//
//	gocmp [--quick] [--reps N] [--python /usr/bin/python3] [--ref bench/ref.py] [--purego BIN]
//	gocmp serve        (answer WARM/RUN/INFO/QUIT on stdin like bench/ref.py)
//	gocmp screen N1 W  (one AHSC screening on one worker, for the two-process bound)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

// A side runs workloads: in process, or a server process.
type side interface {
	warm(name string) (float64, error)
	run(name string, k int) ([]float64, error)
	close()
}

// local runs Go workloads in this process.
type local struct {
	steps map[string]stepper
	flops map[string]int64 // matrix-product work of a workload's program per step
}

func (l *local) warm(name string) (float64, error) {
	s, ok := l.steps[name]
	if !ok {
		mk, ok := goWorkloads[name]
		if !ok {
			return 0, fmt.Errorf("no workload %s", name)
		}
		var err error
		lastProgram = nil
		if s, err = mk(); err != nil {
			return 0, err
		}
		l.steps[name] = s
		if lastProgram != nil {
			if l.flops == nil {
				l.flops = map[string]int64{}
			}
			l.flops[name] = lastProgram.Flops()
		}
	}
	ms := 0.0
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if err := s(); err != nil {
			return 0, err
		}
		ms = float64(time.Since(t0).Nanoseconds()) / 1e6
	}
	return ms, nil
}

func (l *local) run(name string, k int) ([]float64, error) {
	s := l.steps[name]
	ts := make([]float64, k)
	for i := range ts {
		t0 := time.Now()
		if err := s(); err != nil {
			return nil, err
		}
		ts[i] = float64(time.Since(t0).Nanoseconds()) / 1e6
	}
	return ts, nil
}

func (l *local) close() {}

// release drops the programs of the workloads warmed so far (their flop counts stay), so that
// work measured after them sees the heap a fresh process would. The collector's heap goal
// follows the live heap (GOGC=400: five times it), and the papers' ResNet programs kept alive
// make it gigabytes: the AHSC screening's and μ's short-lived allocations then never meet a
// collection and land on never-touched pages, whose first touch costs about 13 µs per 4 KiB
// page on the Firecracker VMs of docs/performance.md (guest and host both fault), which made
// the in-process screening take twice as long as in a fresh process.
func (l *local) release() {
	clear(l.steps)
	lastProgram = nil
	runtime.GC()
}

// referenceEnviron is this process's environment as the reference side should see it:
// bench/compare runs hyperflat with OPENBLAS_NUM_THREADS=1 (graph sets one thread anyway, but
// OpenBLAS starts its thread pool when the library loads, and those threads spun for 16% of a
// screening's samples), and gives the reference the value the user had (origOpenBLASThreads).
func referenceEnviron() []string {
	orig, had := os.LookupEnv(origOpenBLASThreads)
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_NUM_THREADS=") && !strings.HasPrefix(kv, origOpenBLASThreads+"=") {
			out = append(out, kv)
		}
	}
	if had && orig != "unset" {
		out = append(out, "OPENBLAS_NUM_THREADS="+orig)
	} else if !had {
		if v, ok := os.LookupEnv("OPENBLAS_NUM_THREADS"); ok {
			out = append(out, "OPENBLAS_NUM_THREADS="+v) // run without bench/compare: unchanged
		}
	}
	return out
}

// origOpenBLASThreads carries the user's OPENBLAS_NUM_THREADS ("unset" when none) past
// bench/compare's setting for hyperflat's side.
const origOpenBLASThreads = "HYPERFLAT_BENCH_ORIG_OPENBLAS_NUM_THREADS"

// server is a side in another process speaking the line protocol of bench/ref.py.
type server struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startServer(name string, env []string, argv ...string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(referenceEnviron(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &server{name: name, cmd: cmd, in: in, out: sc}, nil
}

func (s *server) call(line string) ([]string, error) {
	if _, err := fmt.Fprintln(s.in, line); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if !s.out.Scan() {
		return nil, fmt.Errorf("%s exited (%v) on %q", s.name, s.out.Err(), line)
	}
	f := strings.Fields(s.out.Text())
	if len(f) == 0 || f[0] != "OK" {
		return nil, fmt.Errorf("%s: %s", s.name, s.out.Text())
	}
	return f[1:], nil
}

func floats(f []string) ([]float64, error) {
	out := make([]float64, len(f))
	for i, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (s *server) warm(name string) (float64, error) {
	line := "WARM " + name
	if w := refWeights[name]; w != "" {
		line += " " + w
	}
	f, err := s.call(line)
	if err != nil {
		return 0, err
	}
	v, err := floats(f)
	if err != nil || len(v) != 1 {
		return 0, fmt.Errorf("%s: bad WARM answer %v", s.name, f)
	}
	return v[0], nil
}

func (s *server) run(name string, k int) ([]float64, error) {
	f, err := s.call(fmt.Sprintf("RUN %s %d", name, k))
	if err != nil {
		return nil, err
	}
	return floats(f)
}

func (s *server) close() {
	fmt.Fprintln(s.in, "QUIT")
	s.in.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// serve answers the protocol on stdin/stdout with the in-process workloads.
func serve() {
	l := &local{steps: map[string]stepper{}}
	sc := bufio.NewScanner(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	reply := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...); w.Flush() }
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "QUIT":
			return
		case f[0] == "INFO":
			ext, blas := graph.Kernels()
			reply("OK blas=%s kernels=%s gomaxprocs=%d", strings.ReplaceAll(blas, " ", "_"), ext, runtime.GOMAXPROCS(0))
		case f[0] == "WARM" && len(f) == 2:
			ms, err := l.warm(f[1])
			if err != nil {
				reply("ERR %v", err)
				continue
			}
			reply("OK %.6f", ms)
		case f[0] == "RUN" && len(f) == 3:
			k, _ := strconv.Atoi(f[2])
			if _, ok := l.steps[f[1]]; !ok {
				reply("ERR %s not warmed", f[1])
				continue
			}
			ts, err := l.run(f[1], k)
			if err != nil {
				reply("ERR %v", err)
				continue
			}
			var b strings.Builder
			b.WriteString("OK")
			for _, t := range ts {
				fmt.Fprintf(&b, " %.6f", t)
			}
			reply("%s", b.String())
		default:
			reply("ERR bad command %q", sc.Text())
		}
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// peakGFLOPs measures the float32 FMA throughput of all cores: the best of several 50 ms runs
// of the widest FMA loop (peakLoop) on GOMAXPROCS goroutines.
func peakGFLOPs() float64 {
	if !haveFMA() {
		return math.NaN()
	}
	p := runtime.GOMAXPROCS(0)
	const iters = 1 << 21
	loop, flops, _ := peakLoop()
	best := 0.0
	for r := 0; r < 7; r++ {
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := 0; i < p; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); loop(iters) }()
		}
		wg.Wait()
		el := time.Since(t0).Seconds()
		best = max(best, float64(p)*iters*flops/el/1e9)
	}
	return best
}

func main() {
	// the garbage collector's policy of the hyperflat command, so that the figures are the
	// command's (package gcpolicy; GOGC and GOMEMLIMIT override it in both)
	gcpolicy.Apply()
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve()
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "screen" { // screenProcesses's children
		n1, err1 := strconv.Atoi(os.Args[2])
		width, err2 := strconv.Atoi(os.Args[3])
		workers, err3 := strconv.Atoi(os.Args[4])
		if err1 != nil || err2 != nil || err3 != nil || workers < 1 {
			fmt.Fprintln(os.Stderr, "gocmp screen: want N1 WIDTH WORKERS")
			os.Exit(2)
		}
		if _, err := screenTime(n1, width, workers); err != nil {
			fmt.Fprintln(os.Stderr, "gocmp screen:", err)
			os.Exit(1)
		}
		return
	}
	quick := flag.Bool("quick", false, "fewer repetitions and shorter runs (under 5 minutes)")
	reps := flag.Int("reps", 0, "A/B repetitions per workload (default 5, 3 with --quick)")
	python := flag.String("python", "/usr/bin/python3", "interpreter with python3-torch and python3-optuna")
	ref := flag.String("ref", "bench/ref.py", "the reference server script")
	purego := flag.String("purego", "", "a pure-Go (no openblas tag) build of this program, also benchmarked")
	only := flag.String("only", "", "comma-separated results to measure (skips the AHSC and peak figures)")
	flag.Parse()
	if err := compare(*quick, *reps, *python, *ref, *purego, *only); err != nil {
		fmt.Fprintln(os.Stderr, "gocmp:", err)
		os.Exit(1)
	}
}
