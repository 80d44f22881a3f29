package weightdecay

import (
	"encoding/json"
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
	cfg := DefaultConfig(experiments.Quick)
	cfg.Repeats, cfg.Zetas, cfg.InnerSteps, cfg.OuterSteps = 3, zetas, inner, 3
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
	md := string(tc.Markdown("hyperflat report --markdown X"))
	// two replicates: a mean's bootstrap interval spans them (0.50 and 0.54 for Eq. 1)
	for _, w := range []string{"| linear / MNIST | 0.520 ± 0.028 [0.500, 0.540] | 0.650 ± 0.014 [0.640, 0.660] (ζ 1 2) | " +
		"0.660 ± 0.028 [0.640, 0.680] (ζ 2 2) | 0.675 ± 0.035 [0.650, 0.700] (hyper-steps 2 1) | 0.540 (replicate 1) | 2 of 3 (run 1) |",
		"# Table C.1 (PAC-Bayes weight decay), reproduced\n\n**Verdict.** The paper's headline", "Eq. 7 (ζ by selection images) ends above Eq. 1 on 1 of 1 pairs.",
		"0 of 1 pairs ran at the paper's budget",
		"| ResNet-34 / CIFAR-10 | not yet run |", "| Eq. 7, ζ by selection images | -3.7% | +20.4% | +25.0% |",
		"on 0 of 1 pairs read as checkpoint selection", "hyperflat report --markdown X", "| 1 | linear / MNIST | quick |", Figure42,
		"| 2: linear / MNIST, offline, ζ 1,2 | 0.520 ± 0.028 [0.500, 0.540] |", Figure43Others} {
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
