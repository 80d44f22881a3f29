package weightdecay

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// TestMinNormIndex checks the heuristic's choice: the smallest norm among the classifiers at
// the maximal validation accuracy, not the smallest norm overall nor the most accurate.
func TestMinNormIndex(t *testing.T) {
	cs := []checkpoint{{valAcc: 0.9, norm: 1}, {valAcc: 1, norm: 5}, {valAcc: 1, norm: 3}, {valAcc: 0.98, norm: 2}, {valAcc: 1, norm: 3}}
	if got := minNormIndex(cs); got != 2 {
		t.Errorf("minNormIndex = %d, want 2 (norm 3 at validation accuracy 1, the first on ties)", got)
	}
}

// ck is a checkpoint whose regularizer is ten times its generalization gap, so that
// Spearman's ρ over any set of them is 1.
func ck(step int, val, test, sel, norm float64) checkpointJSON {
	type F = experiments.F64
	return checkpointJSON{Step: step, ValAcc: F(val), TestAcc: F(test), SelAcc: F(sel), Distance: F(10 * (val - test)), Norm: F(norm)}
}

// storedRunOf is a stored quick linear/MNIST run of 3 planned replicates at the ζ grid zetas,
// 3 hyper-steps of inner Adam steps, whose done cells hold fits.
func storedRunOf(t *testing.T, id int64, inner int, zetas []float64, fits []fitJSON) StoredRun {
	return storedRunWith(t, id, zetas, fits, func(c *Config) { c.InnerSteps = inner })
}

// storedRunWith is storedRunOf with the configuration set by edit.
func storedRunWith(t *testing.T, id int64, zetas []float64, fits []fitJSON, edit func(*Config)) StoredRun {
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Repeats, cfg.Zetas, cfg.OuterSteps = 3, zetas, 3
	edit(cfg)
	cb, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := json.Marshal(map[string]any{"preset": "quick", "seed": 1, "config": json.RawMessage(cb)})
	sr := StoredRun{ID: id, Options: opts, Cells: 3 * (1 + len(zetas)), CellSeconds: 3 * float64(len(fits))}
	for _, f := range fits {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		sr.Outputs = append(sr.Outputs, b)
	}
	return sr
}

// synthFits are the fits of a run of ζ ∈ {0, 1, 2} whose replicates 0 and 1 are complete and
// replicate 2 has only its Eq. 1 cell done.
var synthFits = []fitJSON{
	// Replicate 0: Eq. 1 peaks at hyper-step 2 (test 0.70, the min-norm checkpoint) and ends at 0.50.
	{Replicate: 0, Zeta: 0, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 1, 0.7, 0.5, 2), ck(3, 1, 0.5, 0.5, 3)}},
	{Replicate: 0, Zeta: 1, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.64, 0.5, 1), ck(3, 1, 0.66, 0.60, 1.5)}},
	{Replicate: 0, Zeta: 2, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.7, 0.5, 1), ck(3, 0.98, 0.68, 0.55, 1.2)}},
	// Replicate 1: every Eq. 1 checkpoint at validation accuracy 1, the first the smallest.
	{Replicate: 1, Zeta: 0, Seconds: 3, History: []checkpointJSON{ck(1, 1, 0.65, 0.5, 2), ck(2, 1, 0.6, 0.5, 2.2), ck(3, 1, 0.54, 0.5, 2.5)}},
	{Replicate: 1, Zeta: 1, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.6, 0.5, 1), ck(3, 1, 0.62, 0.50, 1)}},
	{Replicate: 1, Zeta: 2, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.6, 0.5, 1), ck(3, 1, 0.64, 0.58, 1)}},
	{Replicate: 2, Zeta: 0, Seconds: 3, History: []checkpointJSON{ck(1, 1, 0.9, 0.5, 1), ck(2, 1, 0.9, 0.5, 1), ck(3, 1, 0.9, 0.5, 0.1)}},
}

func synthRun(t *testing.T, id int64, inner int) StoredRun {
	return storedRunOf(t, id, inner, []float64{1, 2}, synthFits)
}

// TestTableC1 checks every Table C.1 column on a stored run whose values are derived by hand:
// Eq. 1 (0.50 + 0.54)/2, Eq. 7 by selection images (ζ 1 then 2: 0.66, 0.64), the oracle
// (ζ 2, 2: 0.68, 0.64), min-norm checkpoints (0.70, 0.65), min-norm final (replicate 1's 0.54,
// the smaller norm at validation accuracy 1; replicate 2, incomplete, takes no part), and
// the headline (0.65 − 0.675)/0.675 and (0.65 − 0.54)/0.54.
func TestTableC1(t *testing.T) {
	pending := synthRun(t, 3, 5)
	pending.Options = []byte(strings.Replace(string(pending.Options), `"dataset":"mnist"`, `"dataset":"cifar10"`, 1))
	pending.Outputs = pending.Outputs[6:] // replicate 2's Eq. 1 cell alone
	tc, err := ReadTableC1(synthRun(t, 1, 10), synthRun(t, 2, 5), pending)
	if err != nil {
		t.Fatal(err)
	}
	cells := tc.Cells()
	if len(cells.Rows) != len(Pairs) || tc.Measured() != 1 {
		t.Fatalf("%d rows, %d measured; want 6 rows, 1 measured", len(cells.Rows), tc.Measured())
	}
	want := map[string]float64{"eq1_ci_low": 0.50, "eq1_ci_high": 0.54, "replicates": 2, "replicates_planned": 3, "eq1": 0.52, "eq1_sd": math.Sqrt(0.0008),
		"eq7": 0.65, "oracle": 0.66, "minnorm_ckpt": 0.675, "minnorm_final": 0.54, "minnorm_final_replicate": 1,
		"eq1_val_acc": 1, "eq7_val_acc": 1, "eq1_peak_test_acc": 0.65, "eq1_peak_step": 2, "eq1_drop": (0.2 + 0.11) / 2,
		"eq7_drop": 0, "spearman_rho": 1, "spearman_points": 18, "top_zeta": 2, "spearman_rho_top_zeta": 1,
		"seconds_per_inner_step": 3.0 / 30, "minnorm_ckpt_mean_step": 1.5, "eq7_top_share": 0.5, "oracle_top_share": 1}
	for col, v := range want {
		if got := cells.Float(0, col); math.Abs(got-v) > 1e-12 {
			t.Errorf("linear/mnist %s = %v, want %v", col, got, v)
		}
	}
	for col, v := range map[string]string{"run": "1", "eq7_zetas": "1 2", "oracle_zetas": "2 2", "minnorm_ckpt_steps": "2 1",
		"status": "in progress: 2 of 3 replicates complete"} {
		if got := cells.String(0, col); got != v {
			t.Errorf("linear/mnist %s = %q, want %q", col, got, v)
		}
	}
	// The penalty term at the smallest ζ (1), by hand: ζη²/2 (offline) times the largest
	// logged regularizer of the ζ = 1 fits, 10 × (1 − 0.62) = 3.8 (replicate 1's last step).
	lr := defaultConfig(t, experiments.Quick).LR
	if got, want := cells.Float(0, "smallest_zeta_penalty"), 3.8*lr*lr/2; math.Abs(got-want) > 1e-12*want {
		t.Errorf("smallest_zeta_penalty = %v, want %v", got, want)
	}
	if got, want := cells.String(0, "small_zeta_test_accs"), "Eq. 1 0.520; ζ 1 0.640, 2 0.660"; got != want {
		t.Errorf("small_zeta_test_accs = %q, want %q", got, want)
	}
	if s := cells.String(1, "status"); !strings.HasPrefix(s, "in progress: run 3, 1 of 9 cells done") {
		t.Errorf("linear/cifar10 status %q", s)
	}
	if s := cells.String(2, "status"); s != "not yet run" || !math.IsNaN(cells.Float(2, "eq1")) {
		t.Errorf("resnet18/mnist status %q, eq1 %v", s, cells.Float(2, "eq1"))
	}
	for _, c := range []struct {
		eq7, heuristic string
		want           float64
	}{{"eq7", "minnorm_ckpt", (0.65 - 0.675) / 0.675}, {"eq7", "minnorm_final", (0.65 - 0.54) / 0.54}, {"oracle", "eq1", (0.66 - 0.52) / 0.52}} {
		if got, n := Improvement(cells, c.eq7, c.heuristic); n != 1 || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Improvement(%s, %s) = %v over %d pairs, want %v over 1", c.eq7, c.heuristic, got, n, c.want)
		}
	}
	if h := tc.History(); len(h.Rows) != 9 {
		t.Errorf("history has %d rows, want 3 ζ × 3 hyper-steps", len(h.Rows))
	}
	mdb, err := tc.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	md := string(mdb)
	// A cell's interval, by hand: two replicates resample to the mean of either or of both,
	// so the 2.5% and 97.5% quantiles are the two values (Eq. 1: 0.50 and 0.54).
	// The headline's intervals, by hand: over replicates 0 and 1, resampled with replacement,
	// the means of Eq. 7 − checkpoint (−4, −1 points) are −4, −2.5 and −1; relative to the
	// checkpoints', −5.7%, −3.7% and −1.5%; against the final-model reading, which picks
	// replicate 1's 0.54 unless only replicate 0 is drawn (0.50), +16, +11 and +10.
	for _, w := range []string{"| linear / MNIST | clean, offline; 10 × 3 steps; η 0.001; ζ grid 1,2 | 0.520 ± 0.028 [0.500, 0.540] | 0.650 ± 0.014 [0.640, 0.660] (ζ 1 2; the grid's smallest in 1, its largest in 1 of 2: not bracketed) | " +
		"0.660 ± 0.028 [0.640, 0.680] (ζ 2 2; the grid's largest in 2 of 2: not bracketed) | 0.675 ± 0.035 [0.650, 0.700] (hyper-steps 2 1) | 0.540 (replicate 1) | 2 of 3 (run 1) |",
		"brackets the test-oracle ζ (every replicate's choice interior to the grid) on 0 of 1 pairs; not on linear / MNIST",
		"| ResNet-34 / CIFAR-10 | | not yet run |",
		"| Eq. 7, ζ by selection images | min-norm, checkpoint selection | – | – | -2.5 [-4.0, -1.0] | -3.7% [-5.7, -1.5] |",
		"| Eq. 7, ζ by selection images | min-norm, final-model selection | – | – | +11.0 [+10.0, +16.0] |",
		"No pair has run at the paper's budget yet", "Table C.1 has 1 of 6 pairs: 0 at the paper's budget, linear / MNIST at a reduced budget",
		"on 0 of 1 pairs read as checkpoint selection",
		"`" + RegenerateCommand + "`; do not edit by hand. " + experiments.RegenerationData(false) + " The experiment", "| 1 | linear / MNIST | quick |", Figure42,
		"| 2: linear / MNIST, ζ 1,2 | clean, offline; 5 × 3 steps; η 0.001 | 0.520 ± 0.028 [0.500, 0.540] |", Figure43Others} {
		if !strings.Contains(md, w) {
			t.Errorf("tablec1.md lacks %q:\n%s", w, md)
		}
	}
	dir := t.TempDir()
	paths, err := tc.Figures(dir)
	if err != nil || len(paths) != 4 {
		t.Fatalf("Figures: %v, %v; want the reported pair's two and run 2's two", paths, err)
	}
	for _, p := range []string{Figure42, Figure43, Figure42Others, Figure43Others} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestMergeGrids checks that runs differing only in their ζ grids report one grid search over
// the union: run 4 adds ζ = 4 to run 1's {1, 2} on replicates 0 and 1 (its Eq. 1 fits the same
// as run 1's), so replicate 0 selects ζ 4 (selection accuracy 0.7: test 0.75) and replicate 1
// ζ 2 (0.58: test 0.64); when run 4's Eq. 1 fit differs, the runs are not merged.
func TestMergeGrids(t *testing.T) {
	z4 := func(rep int, test, sel float64) fitJSON {
		return fitJSON{Replicate: rep, Zeta: 4, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.6, 0.5, 1), ck(3, 1, test, sel, 1)}}
	}
	extra := []fitJSON{synthFits[0], synthFits[3], z4(0, 0.75, 0.7), z4(1, 0.60, 0.4)}
	tc, err := ReadTableC1(synthRun(t, 1, 10), storedRunOf(t, 4, 10, []float64{4}, extra))
	if err != nil {
		t.Fatal(err)
	}
	cells := tc.Cells()
	if got := cells.String(0, "run") + " " + cells.String(0, "zetas") + " " + cells.String(0, "eq7_zetas"); got != "1+4 1,2,4 4 2" {
		t.Errorf("run, grid, selected ζ = %q, want \"1+4 1,2,4 4 2\"", got)
	}
	if got := cells.Float(0, "eq7"); math.Abs(got-0.695) > 1e-12 || cells.Int(0, "replicates") != 2 {
		t.Errorf("merged Eq. 7 %v over %d replicates, want 0.695 over 2", got, cells.Int(0, "replicates"))
	}
	if o := tc.Others(); len(o.Rows) != 2 {
		t.Errorf("%d other runs, want runs 1 and 4 alone", len(o.Rows))
	}
	bad := slices.Clone(extra)
	bad[0].History = slices.Clone(bad[0].History)
	bad[0].History[2].TestAcc = 0.51
	tc, err = ReadTableC1(synthRun(t, 1, 10), storedRunOf(t, 4, 10, []float64{4}, bad))
	if err != nil {
		t.Fatal(err)
	}
	if cells := tc.Cells(); cells.String(0, "run") != "1" {
		got := cells.String(0, "run")
		t.Errorf("runs whose Eq. 1 fits differ: row from run %q, want run 1 alone (the wider grid)", got)
	}
}

// TestZetaColors (issue 50): a ζ keeps one colour in every panel of every figure, whatever
// the panel's grid or order (ζ=3 was orange in one panel, ζ=1000 in others); a panel draws at
// most experiments.MaxSeries ζ in colour, the rest muted under one legend entry.
func TestZetaColors(t *testing.T) {
	grids := [][]float64{{0, 1, 2, 3, 4, 5, 10, 100, 1000, 10000}, {0, 1, 2, 3, 4, 5, 10, 100, 1000},
		{0, 10, 100, 1000}, {1000, 100, 10, 0}, {0, 30, 300}, {0, 1, 2, 3, 4, 5}}
	colorOf := map[float64]color.Color{}
	for _, zs := range grids {
		hist := &experiments.Table{Columns: []string{"zeta", "step", "test_acc", "val_acc", "regularizer"}}
		steps := &experiments.Table{Columns: []string{"zeta", "regularizer", "val_acc", "test_acc"}}
		for _, z := range zs {
			hist.Add(z, 1.0, 0.5, 0.6, 10.0)
			steps.Add(z, 10.0, 0.6, 0.5)
		}
		acc, reg := historyPanels(hist, "linear", "mnist")
		for _, p := range []experiments.Panel{testPanel(hist, "t"), gapPanel(steps, "g"), acc, reg} {
			coloured, legend := map[color.Color]bool{}, 0
			for _, s := range p.Series {
				if s.Label != "" && s.Color != nil && !s.Muted && strings.HasPrefix(s.Label, "ζ=") || s.Label == "Eq. 1" {
					coloured[s.Color] = true
					z := 0.0
					if s.Label != "Eq. 1" {
						z, _ = strconv.ParseFloat(strings.TrimPrefix(s.Label, "ζ="), 64)
					}
					if c, ok := colorOf[z]; ok && c != s.Color {
						t.Errorf("grid %v, panel %q: ζ %g in %v, elsewhere %v", zs, p.Title, z, s.Color, c)
					}
					colorOf[z] = s.Color
				}
				if s.Label != "" {
					legend++
				}
			}
			text := p.Title + p.XLabel + p.YLabel
			for _, s := range p.Series {
				text += s.Label
			}
			if strings.ContainsRune(text, '‖') { // the font's ‖ reads as "|a_tl" at figure size
				t.Errorf("panel %q writes ‖; spell the norm norm(a_t)", p.Title)
			}
			if len(coloured) > experiments.MaxSeries {
				t.Errorf("grid %v, panel %q: %d coloured ζ, want at most %d", zs, p.Title, len(coloured), experiments.MaxSeries)
			}
			if len(zs) > experiments.MaxSeries && !slices.ContainsFunc(p.Series, func(s experiments.Series) bool {
				return s.Muted && strings.Contains(s.Label, "ζ=2,3,4,5")
			}) {
				t.Errorf("grid %v, panel %q: no muted legend entry for ζ 2–5", zs, p.Title)
			}
		}
	}
	if colorOf[0] != experiments.MethodColor("Eq. 1") || colorOf[1000] != experiments.MethodColor("ζ=1000") {
		t.Errorf("Eq. 1 or ζ=1000 not in its MethodColor")
	}
}

// TestFigureTitlesNoRunIDs (issue 50): panel titles name the pair, not the store's run ids
// ("run 2+11+13").
func TestFigureTitlesNoRunIDs(t *testing.T) {
	z4 := fitJSON{Replicate: 0, Zeta: 4, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.6, 0.5, 1), ck(3, 1, 0.7, 0.7, 1)}}
	tc, err := ReadTableC1(synthRun(t, 11, 10), storedRunOf(t, 13, 10, []float64{4}, []fitJSON{synthFits[0], z4}), synthRun(t, 2, 5))
	if err != nil {
		t.Fatal(err)
	}
	pairs := tc.otherRuns()
	for _, sp := range tc.chosen {
		pairs = append(pairs, sp)
	}
	if len(pairs) < 2 {
		t.Fatalf("%d stored pairs, want the merged one and another", len(pairs))
	}
	runID := regexp.MustCompile(`\brun[s]? \d|\d\+\d`)
	for _, sp := range pairs {
		if title := sp.title(); runID.MatchString(title) || !strings.Contains(title, "linear / MNIST") {
			t.Errorf("panel title %q carries a run id or lacks its pair", title)
		}
	}
}

// TestVerdictPaperScale checks the verdict and the headline's paper-scale columns on a
// paper-budget authors run of linear/MNIST (synthFits: hand-derived intervals in TestTableC1)
// beside a reduced ResNet-18/MNIST run whose checkpoints carry the eval-mode accuracies too
// (the BatchNorm table: 0.10 points higher in eval mode for every Eq. 1 fit).
func TestVerdictPaperScale(t *testing.T) {
	paper := storedRunWith(t, 1, []float64{1, 2}, synthFits, func(c *Config) {
		c.Protocol, c.InnerSteps, c.OuterSteps, c.LR, c.TestRows = protocolAuthors, 1000, 100, 1e-4, 10000
	})
	paper.Identity = "weightdecay-0123456789abcdef"
	var bnFits []fitJSON
	for _, f := range synthFits {
		g := f
		g.History = slices.Clone(f.History)
		for i, c := range g.History {
			v, te := c.ValAcc, c.TestAcc+0.1
			g.History[i].ValEval, g.History[i].TestEval = &v, &te
		}
		bnFits = append(bnFits, g)
	}
	resnet := storedRunWith(t, 2, []float64{1, 2}, bnFits, func(c *Config) {
		c.Protocol, c.Model, c.Width, c.InnerSteps, c.TestRows = protocolAuthors, "resnet18", 1.0/16, 10, 500
	})
	resnet.Identity = "weightdecay-fedcba9876543210"
	tc, err := ReadTableC1(paper, resnet)
	if err != nil {
		t.Fatal(err)
	}
	mdb, err := tc.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	md := string(mdb)
	for _, w := range []string{
		"1 at the paper's budget (linear / MNIST (2 of 3 replicates, authors, offline)), ResNet-18 / MNIST at a reduced budget",
		"At paper scale, Eq. 7 with ζ chosen on the selection images ends -2.5 [-4.0, -1.0] points (-3.7% [-5.7, -1.5])",
		"the headline's sign reproduces against final-model selection; it is reversed against checkpoint selection",
		"| Eq. 7, ζ by selection images | min-norm, checkpoint selection | -2.5 [-4.0, -1.0] | -3.7% [-5.7, -1.5] |",
		"| ResNet-18 / MNIST | authors, offline; width 1/16; 10 × 3 steps; η 0.001; 500 test images; ζ grid 1,2 |",
		"| linear / MNIST | authors, offline; 1000 × 100 steps; η 0.0001; ζ grid 1,2 |", "2 of 3 (run 01234567) |",
		"| fedcba98 | ResNet-18 / MNIST | authors, offline; width 1/16; 10 × 3 steps; η 0.001; 500 test images | 2 | 0.520 → 0.620 (+10.0 points) |",
		"changes Eq. 1's final test accuracy by +10.0 points on ResNet-18 / MNIST (run fedcba98), and its final validation accuracy by +0.0 points",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("tablec1.md lacks %q:\n%s", w, md)
		}
	}
	// A store rebuilt from the exports numbers the runs differently: the same bytes.
	paper.ID, resnet.ID = 41, 40
	again, err := ReadTableC1(resnet, paper)
	if err != nil {
		t.Fatal(err)
	}
	if mdb2, err := again.Markdown(); err != nil || string(mdb2) != md {
		t.Errorf("renumbered runs give another tablec1.md (%v)", err)
	}
}

// TestEdgeNote checks, on hand-made grids, when a ζ grid brackets the replicates' choices:
// an interior choice says nothing; an end of the grid, or a grid of one ζ, is named.
func TestEdgeNote(t *testing.T) {
	for _, c := range []struct {
		grid, chosen, want string
		smallest           float64
		bracketed          bool
	}{
		{"1,10,100,1000,3000,10000", "100 100 100 100 100", "", 1e-3, true},
		{"1,10,100,1000,3000,10000", "100 10000 100", "the grid's largest in 1 of 3: not bracketed", 1e-3, false},
		{"30,300", "300 300 300 300 300", "the grid's largest in 5 of 5: not bracketed", 1e-3, false},
		{"1,2,3", "1 3", "the grid's smallest in 1, its largest in 1 of 2: not bracketed", 1e-3, false},
		{"100", "100 100", "the grid's only ζ: not bracketed", 1e-3, false},
		{"1e+06,10,1000", "1e+06", "the grid's largest in 1 of 1: not bracketed", 1e-3, false},
		{"1,10", "", "", 1e-3, true},
		// The smallest ζ: an end unless the penalty term there is negligible, where ζ → 0
		// (Eq. 1) closes the grid; an end at the largest is never closed so.
		{"0.001,0.01,1", "0.001 0.01", "the grid's smallest in 1 of 2: not bracketed", 1e-5, false},
		{"0.001,0.01,1", "0.001 0.01", "the grid's smallest in 1 of 2, where the penalty term is at most 1.5e-08: Eq. 1 up to rounding, " +
			"bracketed by ζ → 0 (the Eq. 1 column)", 1.5e-8, true},
		{"0.001,0.01,1", "0.001 1", "the grid's smallest in 1, its largest in 1 of 2: not bracketed", 1.5e-8, false},
		{"0.001,0.01,1", "0.001", "the grid's smallest in 1 of 1: not bracketed", math.NaN(), false},
	} {
		got, ok := edgeNote(c.grid, c.chosen, c.smallest)
		if got != c.want || ok != c.bracketed {
			t.Errorf("edgeNote(%q, %q, %g) = %q, %v; want %q, %v", c.grid, c.chosen, c.smallest, got, ok, c.want, c.bracketed)
		}
	}
}

// TestBracketText checks the count of bracketed pairs: a pair only ζ → 0 brackets is named
// apart and counted with neither the interior nor the open ones.
func TestBracketText(t *testing.T) {
	got := bracketText([]string{"A"}, []string{"B (penalty …)"}, 3)
	for _, want := range []string{"on 1 of 3 pairs; on B (penalty …) a replicate chose the grid's smallest ζ", "; not on A, where"} {
		if !strings.Contains(got, want) {
			t.Errorf("bracketText = %q, want it to contain %q", got, want)
		}
	}
	if got := bracketText(nil, nil, 2); !strings.HasSuffix(got, "on 2 of 2 pairs.") {
		t.Errorf("bracketText(all interior) = %q", got)
	}
}

// TestPanelTitle checks that a figure panel names a run in progress by its complete and
// planned replicates (synthRun: 2 of 3 complete) and a ResNet's width as the table writes it.
func TestPanelTitle(t *testing.T) {
	tc, err := ReadTableC1(synthRun(t, 1, 10))
	if err != nil {
		t.Fatal(err)
	}
	sp := tc.chosen[[2]string{"linear", "mnist"}]
	if sp == nil {
		t.Fatal("no linear/mnist row")
	}
	if got, want := sp.title(), "linear / MNIST, clean, offline, 2 ζ: 2 of 3 replicates, 10×3 steps"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	sp.cfg.Model, sp.cfg.Width, sp.cfg.Repeats = "resnet18", 1.0/16, 2
	if got, want := sp.title(), "ResNet-18 / MNIST, clean, offline, 2 ζ: 2 replicates, width 1/16, 10×3 steps"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// Tables and legends wrote ζ = 10⁶ as "1e+06" beside "300000".
func TestZetaString(t *testing.T) {
	for z, want := range map[float64]string{1e6: "1000000", 300000: "300000", 0.5: "0.5", 1e20: "1e+20", 3: "3"} {
		if got := zetaString(z); got != want {
			t.Errorf("zetaString(%g) = %q, want %q", z, got, want)
		}
	}
}

// withEvals is fits whose checkpoints carry eval-mode accuracies too: test accuracy +0.1.
func withEvals(fits []fitJSON) []fitJSON {
	var out []fitJSON
	for _, f := range fits {
		g := f
		g.History = slices.Clone(f.History)
		for i, c := range g.History {
			v, te := c.ValAcc, c.TestAcc+0.1
			g.History[i].ValEval, g.History[i].TestEval = &v, &te
		}
		out = append(out, g)
	}
	return out
}

// The BatchNorm table listed a run merged into a wider grid beside the merge (the same Eq. 1
// fits twice), and the verdict repeated every run of the table. Now the merge stands for its
// runs, and the verdict speaks of the reported row (run 1+4) alone, not of the smaller run 3.
func TestBatchNormRowsMerged(t *testing.T) {
	resnet := func(c *Config) {
		c.Protocol, c.Model, c.Width, c.InnerSteps, c.TestRows = protocolAuthors, "resnet18", 1.0/16, 10, 500
	}
	z4 := fitJSON{Replicate: 0, Zeta: 4, Seconds: 3, History: []checkpointJSON{ck(1, 0.8, 0.6, 0.5, 1), ck(2, 0.9, 0.6, 0.5, 1), ck(3, 1, 0.7, 0.6, 1)}}
	z4b := z4
	z4b.Replicate = 1
	runs := []StoredRun{
		storedRunWith(t, 1, []float64{1, 2}, withEvals(synthFits), resnet),
		storedRunWith(t, 4, []float64{4}, withEvals([]fitJSON{synthFits[0], synthFits[3], z4, z4b}), resnet),
		storedRunWith(t, 3, []float64{1, 2}, withEvals(synthFits), func(c *Config) { resnet(c); c.InnerSteps = 5 }),
	}
	for i, id := range []string{"1111111111111111", "4444444444444444", "3333333333333333"} {
		runs[i].Identity = "weightdecay-" + id
	}
	tc, err := ReadTableC1(runs...)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range tc.batchNormRows() {
		labels = append(labels, fmt.Sprintf("%s reported=%v", r.label, r.reported))
	}
	if got := strings.Join(labels, "; "); got != "33333333 reported=false; 11111111+44444444 reported=true" {
		t.Errorf("BatchNorm rows %q, want the smaller run and the merge (reported) alone", got)
	}
	md, err := tc.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "by +10.0 points on ResNet-18 / MNIST (run 11111111+44444444), and its final validation") {
		t.Errorf("the verdict's BatchNorm sentence does not name the reported row alone:\n%s", md)
	}
}

// TestChosenZetasInColour checks that a panel of more ζ than experiments.MaxSeries keeps the ζ
// the table's cells list in colour (ResNet-18/CIFAR-10's 0.01 and 0.1 were greyed, the powers
// of ten around the best mean taking their place).
func TestChosenZetasInColour(t *testing.T) {
	hist := experiments.Table{Name: "history", Columns: []string{"zeta", "step", "test_acc"}}
	for i, z := range []float64{0, 0.01, 0.1, 1, 10, 100, 1000, 10000} {
		hist.Add(z, 1, 0.1+float64(i)/100) // the best mean: 10000
	}
	styles := zetaStyles(&hist, 0.01, 0.1)
	for _, z := range []float64{0, 10000, 0.01, 0.1} {
		if styles[z].muted {
			t.Errorf("ζ %g muted", z)
		}
	}
	n := 0
	for _, st := range styles {
		if !st.muted {
			n++
		}
	}
	if n != experiments.MaxSeries {
		t.Errorf("%d ζ in colour, want %d", n, experiments.MaxSeries)
	}
}

// TestLimitText: the pair's smallest ζ is read from the grid whatever its order.
func TestLimitText(t *testing.T) {
	cells := experiments.Table{Columns: []string{"model", "dataset", "zetas", "smallest_zeta_penalty", "small_zeta_test_accs"}}
	cells.Add("resnet34", "mnist", "10,0.0001,1", 3.5e-8, "Eq. 1 0.284; ζ 0.0001 0.208, 1 0.254, 10 0.262")
	want := "ResNet-34 / MNIST (penalty term at most 3.5e-08 at ζ 0.0001; final test accuracy Eq. 1 0.284; ζ 0.0001 0.208, 1 0.254, 10 0.262)"
	if got := limitText(cells, 0); got != want {
		t.Errorf("limitText = %q, want %q", got, want)
	}
}
