package ahsc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/stats"
	"gorgonia.org/tensor"
)

// The float32 default of the OpenML sets (Config.Dtype) rests on TestDtypeAgreement; its
// flags make the larger measurement that doc.go reports:
//
//	go test ./experiments/ahsc -run TestDtypeAgreement -v -args -dtype.epochs 20 \
//	    -dtype.repeats 8 -dtype.sets blood-transfusion,australian,kc1,credit-g
var (
	dtypeRepeats = flag.Int("dtype.repeats", 2, "TestDtypeAgreement: repeats per dataset")
	dtypeSets    = flag.String("dtype.sets", "blood-transfusion,australian,kc1", "TestDtypeAgreement: OpenML sets compared")
	dtypeEpochs  = flag.Int("dtype.epochs", 10, "TestDtypeAgreement: most epochs of a full training (the quick preset's 20 for the measurement)")
)

// dtypeRuns are one repeat's three AHSC searches: float64, float32 from the same seeds, and
// float64 from other initial weights (the run-to-run noise the float32 change is held to).
type dtypeRuns struct{ f64, f32, alt run }

// TestDtypeAgreement runs AHSC (quick preset, full trainings cut to -dtype.epochs) on OpenML
// sets in float32 and float64 from the same split, initial weights and search stream, and
// requires float32 to disturb the μ ranking of the screenings (Algorithm 1, lines 6–14), the
// top N2 it trains and the selected configuration's test ROC-AUC no more than a change of
// the initial weights does in float64.
func TestDtypeAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three AHSC searches per repeat of each set")
	}
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Methods, cfg.Epochs = []string{"ahsc"}, *dtypeEpochs
	opt := experiments.Options{Seed: 1, DataDir: datasets.ResolveDir("")}
	var d32, dAlt []float64 // |test ROC-AUC − float64's| per repeat, over every dataset
	for _, name := range strings.Split(*dtypeSets, ",") {
		t.Run(name, func(t *testing.T) {
			runs := dtypeSearches(t, opt, cfg, name, *dtypeRepeats)
			n := len(d32)
			var rho32, rhoAlt, top32, topAlt, t64, t32, tAlt, s64, s32 []float64
			var muDiff float64 // the largest relative μ difference, float32 against float64
			for _, r := range runs {
				for i, s := range r.f32.screenings {
					if m := r.f64.screenings[i].score; s.reason == "" && r.f64.screenings[i].reason == "" {
						muDiff = max(muDiff, math.Abs(s.score-m)/math.Abs(m))
					}
				}
				rho32 = append(rho32, muRankCorrelation(t, r.f32, r.f64))
				rhoAlt = append(rhoAlt, muRankCorrelation(t, r.alt, r.f64))
				top32 = append(top32, topOverlap(r.f32, r.f64, cfg.N2))
				topAlt = append(topAlt, topOverlap(r.alt, r.f64, cfg.N2))
				t64, t32, tAlt = append(t64, r.f64.value), append(t32, r.f32.value), append(tAlt, r.alt.value)
				d32, dAlt = append(d32, math.Abs(r.f32.value-r.f64.value)), append(dAlt, math.Abs(r.alt.value-r.f64.value))
				s64, s32 = append(s64, r.f64.seconds), append(s32, r.f32.seconds)
			}
			t.Logf("μ rank correlation with float64: float32 %.3f, other weights %.3f (means; float32's μ within %.1e relative); top-%d shared: %.2f vs %.2f",
				stats.Mean(rho32), stats.Mean(rhoAlt), muDiff, cfg.N2, stats.Mean(top32), stats.Mean(topAlt))
			t.Logf("test ROC-AUC median: float64 %.4f, float32 %.4f, other weights %.4f; seed spread (sd, float64) %.4f; "+
				"search seconds (medians) float64 %.2f, float32 %.2f", stats.Median(t64), stats.Median(t32), stats.Median(tAlt),
				spread(t64), stats.Median(s64), stats.Median(s32))
			t.Logf("mean |test ROC-AUC − float64's|: float32 %.4f, other weights %.4f; selected the same configuration as float64: float32 %d/%d, other weights %d/%d",
				stats.Mean(d32[n:]), stats.Mean(dAlt[n:]), sameSelection(runs, false), len(runs), sameSelection(runs, true), len(runs))
			if stats.Mean(rho32) < stats.Mean(rhoAlt) {
				t.Errorf("float32 reorders the screenings more than other initial weights do: ρ %.3f < %.3f", stats.Mean(rho32), stats.Mean(rhoAlt))
			}
			if stats.Mean(top32) < stats.Mean(topAlt) {
				t.Errorf("float32 changes the top %d more than other initial weights do: %.2f < %.2f shared", cfg.N2, stats.Mean(top32), stats.Mean(topAlt))
			}
			if diff, other := math.Abs(stats.Median(t32)-stats.Median(t64)), math.Abs(stats.Median(tAlt)-stats.Median(t64)); diff > max(other, spread(t64)) {
				t.Errorf("median test ROC-AUC: float32 %.4f, float64 %.4f: differ by %.4f, more than other weights (%.4f) or the seed spread (%.4f)",
					stats.Median(t32), stats.Median(t64), diff, other, spread(t64))
			}
		})
	}
	if len(d32) > 0 && stats.Mean(d32) > stats.Mean(dAlt) {
		t.Errorf("float32 moves the selected configuration's test ROC-AUC by %.4f on average, other initial weights by %.4f", stats.Mean(d32), stats.Mean(dAlt))
	}
}

// dtypeSearches runs the three searches of every repeat of one OpenML set, skipping the test
// when the set is not in the data directory.
func dtypeSearches(t *testing.T, opt experiments.Options, cfg *Config, name string, repeats int) []dtypeRuns {
	t.Helper()
	ctx := context.Background()
	c64, c32 := *cfg, *cfg
	c64.Dtype, c32.Dtype = dtypeFloat64, ""
	p64, err := loadProblem(ctx, opt, &c64, name)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is not in the data directory %s (set %s): %v", name, opt.DataDir, datasets.EnvDataDir, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	p32, err := loadProblem(ctx, opt, &c32, name)
	if err != nil {
		t.Fatal(err)
	}
	if p32.dtype == p64.dtype || p32.group != openML {
		t.Fatalf("%s: the default dtype is %v, float64's %v; want float32 on an OpenML set", name, p32.dtype, p64.dtype)
	}
	out := make([]dtypeRuns, repeats)
	for r := range out {
		sp, err := p64.split(r) // the split does not depend on the dtype
		if err != nil {
			t.Fatal(err)
		}
		sd := cellSeeds(repeatSeed(opt.Seed, name, r), "ahsc")
		alt := sd
		alt.weights = experiments.DeriveSeed(sd.weights, "other")
		search := func(p *problem, c *Config, s seeds) run {
			res, err := runOne(ctx, p, sp, c, "ahsc", r, s, limits{}, 1)
			if err == nil && res.err != "" {
				err = errors.New(res.err)
			}
			if err != nil {
				t.Fatalf("%s repeat %d (%v): %v", name, r, p.dtype, err)
			}
			return res
		}
		out[r] = dtypeRuns{f64: search(p64, &c64, sd), f32: search(p32, &c32, sd), alt: search(p64, &c64, alt)}
	}
	return out
}

// sameSelection counts the repeats whose float32 (or, with alt, other-weights) search selected
// float64's configuration.
func sameSelection(runs []dtypeRuns, alt bool) int {
	n := 0
	for _, r := range runs {
		o := r.f32
		if alt {
			o = r.alt
		}
		if o.config == r.f64.config {
			n++
		}
	}
	return n
}

// muRankCorrelation is Spearman's ρ between two runs' μ over the screenings both ranked (the
// runs screen the same configurations in the same order).
func muRankCorrelation(t *testing.T, a, b run) float64 {
	t.Helper()
	var x, y []float64
	for i, s := range a.screenings {
		if s.config != b.screenings[i].config {
			t.Fatalf("screening %d: %s and %s; want the same configurations", i, s.config, b.screenings[i].config)
		}
		if s.reason == "" && b.screenings[i].reason == "" {
			x, y = append(x, s.score), append(y, b.screenings[i].score)
		}
	}
	res, err := stats.Spearman(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rho
}

// topOverlap is how many of the n configurations of least μ two runs share.
func topOverlap(a, b run, n int) float64 {
	top := func(r run) []string {
		ranked := slices.DeleteFunc(slices.Clone(r.screenings), func(s screening) bool { return s.reason != "" })
		slices.SortStableFunc(ranked, func(p, q screening) int { return cmp.Compare(p.score, q.score) })
		var out []string
		for _, s := range ranked[:min(n, len(ranked))] {
			out = append(out, s.config)
		}
		return out
	}
	ta, tb := top(a), top(b)
	shared := 0
	for _, c := range ta {
		if slices.Contains(tb, c) {
			shared++
		}
	}
	return float64(shared)
}

// spread is the sample standard deviation (0 for fewer than two values).
func spread(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := stats.Mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// TestDtypeDefaults checks each suite's own float type, the explicit choices, and that the
// default leaves a run's identity (its configuration's JSON) as before the flag existed.
func TestDtypeDefaults(t *testing.T) {
	for _, preset := range []string{experiments.Quick, experiments.PaperScale} {
		b, err := json.Marshal(defaultConfig(t, preset))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "dtype") {
			t.Errorf("the %s preset's configuration names the dtype: %s", preset, b)
		}
	}
	want := map[string][3]tensor.Dtype{ // Bayesmark, OpenML (and a user's table), images
		"":        {tensor.Float64, tensor.Float32, tensor.Float32},
		"float32": {tensor.Float32, tensor.Float32, tensor.Float32},
		"float64": {tensor.Float64, tensor.Float64, tensor.Float64},
	}
	for v, w := range want {
		c, err := Experiment().Configure(experiments.Quick, map[string]string{"dtype": v})
		if err == nil {
			err = c.Finish(experiments.Quick)
		}
		if err != nil {
			t.Fatalf("--dtype %q: %v", v, err)
		}
		cc := c.(*Config)
		if got := [3]tensor.Dtype{cc.dtype(bayesmark), cc.dtype(openML), cc.dtype(image)}; got != w || cc.dtype(user) != w[1] {
			t.Errorf("--dtype %q: %v (user %v), want %v", v, got, cc.dtype(user), w)
		}
	}
	c, err := Experiment().Configure(experiments.Quick, map[string]string{"dtype": "float16"})
	if err == nil {
		err = c.Finish(experiments.Quick)
	}
	if err == nil || !strings.Contains(err.Error(), "dtype") {
		t.Errorf("--dtype float16: %v, want a refusal naming --dtype", err)
	}
	// The builders compute in the type they are given.
	ds, _, err := datasets.Load(context.Background(), "iris", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		cfg := search.Config{Space: OpenMLSpace(8), Values: []float64{1, 4, 2, -3}}
		cand, err := OpenMLBuild(3, dt)(ds)(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := cand.Model.Net().Dtype(); got != dt {
			t.Errorf("OpenMLBuild(3, %v) computes in %v", dt, got)
		}
	}
}
