package ahsc

import (
	"context"
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
)

// BenchmarkWhitebox measures what the white-box record (--whitebox at its default settings)
// adds to a full-fidelity trial at the paper preset: a Bayesmark MLP (breast: the clean
// protocol's MLP, and the authors' scikit-learn model, 5-fold cross-validation then the
// recorded refit) and an OpenML MLP (kc1, clean protocol). Each iteration trains the same
// HYPERFLAT_WHITEBOX_CONFIGS (default 3) configurations, drawn by random search from the
// dataset's space, without and with the record. Metrics: overhead_% is the extra wall time
// of the recorded trials over the plain ones, record_% the record's own time
// (Whitebox.Seconds) over the plain trials', cpu_overhead_% the extra CPU time of the
// process (all threads, the garbage collector's included) over the plain trials': on a
// loaded machine, where wall time counts the waits for a core, the figure to compare.
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
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := DefaultConfig(experiments.PaperScale)
			cfg.Dataset, cfg.Protocol, cfg.BayesmarkModel = c.dataset, c.protocol, bayesmarkAuto
			if err := cfg.Finish(experiments.PaperScale); err != nil {
				b.Fatal(err)
			}
			opt := experiments.Options{Preset: experiments.PaperScale, Seed: 1, Config: cfg, DataDir: datasets.ResolveDir("")}
			task, err := TrialTask(context.Background(), opt, 0)
			if err != nil {
				b.Skipf("%s: %v", c.dataset, err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var hps []search.Config
			for range configs {
				hp, err := search.Random{}.Ask(rng, task.Space, nil)
				if err != nil {
					b.Fatal(err)
				}
				hps = append(hps, hp)
			}
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
