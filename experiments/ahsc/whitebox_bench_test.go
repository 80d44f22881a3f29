package ahsc

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/stats"
)

// BenchmarkWhitebox measures what the white-box record (--whitebox at its default settings)
// adds to a full-fidelity trial at the paper preset: a Bayesmark MLP (breast: the clean
// protocol's MLP, and the authors' scikit-learn model, 5-fold cross-validation then the
// recorded refit) and the OpenML MLPs of beyond.md's study (kc1 under both protocols;
// blood-transfusion, australian and credit-g under the clean one). Each iteration trains the
// same HYPERFLAT_WHITEBOX_CONFIGS (default 3) configurations, drawn by random search from the
// dataset's space, without and with the record. Metrics: overhead_% is the extra wall time of
// the recorded trials over the plain ones, record_% the record's own time (Whitebox.Seconds)
// over the plain trials', cpu_overhead_% the extra CPU time of the process (all threads, the
// garbage collector's included) over the plain trials': on a loaded machine, where wall time
// counts the waits for a core, the figure to compare (the figures measured are in
// docs/performance.md). A few configurations are not a search: the record's cost grows more
// slowly than the trial's, and the long trials carry a search's time, so over whole searches
// the share is smaller (beyond.md's section (c); blood-transfusion's clean trials: about 90%
// over the default 3–5 configurations, 31% over 30, 22% over the study's random searches).
// Skipped where the data are missing.
func BenchmarkWhitebox(b *testing.B) {
	configs := 3
	if v, err := strconv.Atoi(os.Getenv("HYPERFLAT_WHITEBOX_CONFIGS")); err == nil && v > 0 {
		configs = v
	}
	opts := benchWhiteboxOptions(b)
	for _, c := range []struct{ name, dataset, protocol string }{
		{"bayesmark-breast-clean", "breast", protocolClean},
		{"bayesmark-breast-sklearn", "breast", protocolAuthors},
		{"openml-kc1-clean", "kc1", protocolClean},
		{"openml-kc1-authors", "kc1", protocolAuthors},
		// The other OpenML sets of beyond.md's study.
		{"openml-blood-transfusion-clean", "blood-transfusion", protocolClean},
		{"openml-australian-clean", "australian", protocolClean},
		{"openml-credit-g-clean", "credit-g", protocolClean},
		{"openml-blood-transfusion-authors", "blood-transfusion", protocolAuthors},
		{"openml-australian-authors", "australian", protocolAuthors},
		{"openml-credit-g-authors", "credit-g", protocolAuthors},
	} {
		b.Run(c.name, func(b *testing.B) {
			task, hps := benchWhiteboxTask(b, c.dataset, c.protocol, configs)
			var plain, recorded, plainCPU, recordedCPU time.Duration
			var record float64
			cpuOK := true
			cpu := func() time.Duration {
				d, ok := processCPU()
				cpuOK = cpuOK && ok
				return d
			}
			for b.Loop() {
				for _, hp := range hps {
					task.Whitebox = nil
					start, c0 := time.Now(), cpu()
					e := task.Evaluate(context.Background(), hp, 1)
					plain += time.Since(start)
					plainCPU += cpu() - c0
					task.Whitebox = &opts
					start, c0 = time.Now(), cpu()
					w := task.Evaluate(context.Background(), hp, 1)
					recorded += time.Since(start)
					recordedCPU += cpu() - c0
					if (e.Err == nil) != (w.Err == nil) {
						b.Fatalf("%v: plain %v, recorded %v", hp, e.Err, w.Err)
					}
					if w.Whitebox != nil {
						record += w.Whitebox.Seconds
					}
				}
			}
			b.ReportMetric(100*(recorded-plain).Seconds()/plain.Seconds(), "overhead_%")
			b.ReportMetric(100*record/plain.Seconds(), "record_%")
			if cpuOK {
				b.ReportMetric(100*(recordedCPU-plainCPU).Seconds()/plainCPU.Seconds(), "cpu_overhead_%")
			}
			b.ReportMetric(plain.Seconds()/float64(b.N*len(hps)), "trial_s")
		})
	}
}

// benchWhiteboxTask is the paper preset's trial task on dataset under protocol and n
// configurations drawn from its space by random search; the benchmark is skipped without the
// data.
func benchWhiteboxTask(b *testing.B, dataset, protocol string, n int) (*convexity.Task, []search.Config) {
	cfg := defaultConfig(b, experiments.PaperScale)
	cfg.Dataset, cfg.Protocol, cfg.BayesmarkModel = dataset, protocol, bayesmarkAuto
	if err := cfg.Finish(experiments.PaperScale); err != nil {
		b.Fatal(err)
	}
	opt := experiments.Options{Preset: experiments.PaperScale, Seed: 1, Config: cfg, DataDir: datasets.ResolveDir("")}
	task, err := TrialTask(context.Background(), opt, 0)
	if err != nil {
		b.Skipf("%s: %v", dataset, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var hps []search.Config
	for range n {
		hp, err := search.Random{}.Ask(rng, task.Space, nil)
		if err != nil {
			b.Fatal(err)
		}
		hps = append(hps, hp)
	}
	return task, hps
}

// BenchmarkWhiteboxRows weighs the record's Rows by what they do to its estimates, the data a
// change of the default (256) would be decided on: on HYPERFLAT_WHITEBOX_CONFIGS (default 8)
// configurations of kc1 (clean protocol) and breast (the clean protocol's MLP), each record
// made with 64, 128, 256 and all of a split's rows (every setting trains the configuration
// again: the record does not change the training), it logs per row count the medians over
// the configurations of tr H's relative standard error (4 probes), of the relative change of
// tr H against 16 probes on all rows, and of λ_max's and Eq. 7's against their 256-row and
// all-row values, and Spearman's ρ across the configurations with the all-row values (the
// study correlates the signals across trials). Run it with -benchtime 1x.
func BenchmarkWhiteboxRows(b *testing.B) {
	configs := 8
	if v, err := strconv.Atoi(os.Getenv("HYPERFLAT_WHITEBOX_CONFIGS")); err == nil && v > 0 {
		configs = v
	}
	const all = 1 << 30
	settings := []convexity.WhiteboxOptions{{Rows: 64}, {Rows: 128}, {Rows: 256}, {Rows: all}, {Rows: all, Probes: 16}}
	for _, c := range []struct{ name, dataset, protocol string }{
		{"openml-kc1-clean", "kc1", protocolClean}, {"bayesmark-breast-clean", "breast", protocolClean},
	} {
		b.Run(c.name, func(b *testing.B) {
			task, hps := benchWhiteboxTask(b, c.dataset, c.protocol, configs)
			for b.Loop() {
				recs := make([][]*convexity.Whitebox, len(settings)) // [setting][configuration]
				for i, o := range settings {
					task.Whitebox = &o
					for _, hp := range hps {
						e := task.Evaluate(context.Background(), hp, 1)
						if e.Err != nil {
							b.Fatalf("%v: %v", hp, e.Err)
						}
						recs[i] = append(recs[i], e.Whitebox)
					}
				}
				b.Logf("%-5s %8s %8s %8s %8s %8s %8s | ρ with all rows: %5s %5s %5s", "rows", "se/|tr|", "tr/all16", "λ/256", "λ/all", "eq7/256", "eq7/all", "tr", "λ", "eq7")
				for i, name := range []string{"64", "128", "256", "all"} {
					b.Logf("%-5s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f | %16.2f %5.2f %5.2f", name,
						medianOf(recs[i], recs[i], func(w, _ *convexity.Whitebox) float64 { return w.TraceStdErr / math.Abs(w.Trace) }),
						medianOf(recs[i], recs[4], relChange(func(w *convexity.Whitebox) float64 { return w.Trace })),
						medianOf(recs[i], recs[2], relChange(topOf)), medianOf(recs[i], recs[3], relChange(topOf)),
						medianOf(recs[i], recs[2], relChange(eq7Of)), medianOf(recs[i], recs[3], relChange(eq7Of)),
						rhoOf(recs[i], recs[4], func(w *convexity.Whitebox) float64 { return w.Trace }), rhoOf(recs[i], recs[3], topOf), rhoOf(recs[i], recs[3], eq7Of))
				}
			}
		})
	}
}

func topOf(w *convexity.Whitebox) float64 { return w.TopEigenvalue }
func eq7Of(w *convexity.Whitebox) float64 { return w.Eq7 }

// relChange is |f(w) − f(ref)| / |f(ref)|.
func relChange(f func(*convexity.Whitebox) float64) func(w, ref *convexity.Whitebox) float64 {
	return func(w, ref *convexity.Whitebox) float64 { return math.Abs(f(w)-f(ref)) / math.Abs(f(ref)) }
}

// medianOf is the median of f over the pairs of records ws[i], refs[i].
func medianOf(ws, refs []*convexity.Whitebox, f func(w, ref *convexity.Whitebox) float64) float64 {
	v := make([]float64, len(ws))
	for i := range ws {
		v[i] = f(ws[i], refs[i])
	}
	return stats.Median(v)
}

// rhoOf is Spearman's ρ of f over ws and over refs (NaN where it is undefined).
func rhoOf(ws, refs []*convexity.Whitebox, f func(*convexity.Whitebox) float64) float64 {
	x, y := make([]float64, len(ws)), make([]float64, len(ws))
	for i := range ws {
		x[i], y[i] = f(ws[i]), f(refs[i])
	}
	r, err := stats.Spearman(x, y)
	if err != nil {
		return math.NaN()
	}
	return r.Rho
}

// benchWhiteboxOptions are the record's settings: the defaults, or HYPERFLAT_WHITEBOX's
// "probes,iters,stride,rows" (0: a default) to weigh others.
func benchWhiteboxOptions(b *testing.B) convexity.WhiteboxOptions {
	v := os.Getenv("HYPERFLAT_WHITEBOX")
	if v == "" {
		return convexity.WhiteboxOptions{}
	}
	var n [4]int
	for i, f := range strings.Split(v, ",") {
		x, err := strconv.Atoi(f)
		if err != nil || i >= len(n) {
			b.Fatalf("HYPERFLAT_WHITEBOX=%q: want probes,iters,stride,rows", v)
		}
		n[i] = x
	}
	return convexity.WhiteboxOptions{Probes: n[0], PowerIters: n[1], Stride: n[2], Rows: n[3]}
}
