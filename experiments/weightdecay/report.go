package weightdecay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// StoredRun is one stored weightdecay run as the published Table C.1 reads it: its stored
// options, the outputs of its done cells (a run still in progress contributes its complete
// replicates) and its timing in the store.
type StoredRun struct {
	// ID is the run's number in its store, Identity its store-independent name
	// (experiments.Identity) and Created when it was created: the table names a run by the
	// start of its identity, as its export file is named, and orders runs by creation, so that
	// a store rebuilt from the exports (hyperflat import), where the numbers differ, gives the
	// same bytes.
	ID       int64
	Identity string
	Created  time.Time
	Options  json.RawMessage
	Outputs  []json.RawMessage
	// Cells is the number of cells of its plan; Wall its wall time (first claim to last
	// completion), CellSeconds the sum of its cells' seconds.
	Cells       int
	Wall        time.Duration
	CellSeconds float64
}

// Pairs are Table C.1's six classifier–dataset pairs (Section 4.2, Appendix C.2), in the
// table's order.
var Pairs = [][2]string{{"linear", "mnist"}, {"linear", "cifar10"}, {"resnet18", "mnist"}, {"resnet18", "cifar10"},
	{"resnet34", "mnist"}, {"resnet34", "cifar10"}}

// storedPair is a stored run read as its pair: the fits of its done cells, those of its
// complete replicates (every ζ of the grid done), the pair's statistics and the result they
// assemble to.
type storedPair struct {
	run StoredRun
	// names are the stored runs it comes from (StoredRun.name): one, or several merged (merge).
	names []string
	opt   experiments.Options
	cfg   *Config
	done  []fit
	fits  []fit
	p     *pair
	res   *experiments.Result
}

// variant names the run's protocol and algorithm: "authors" or "clean" (Config.Protocol),
// then "offline" (Algorithm 1 with K = 0, weight_decay.py's default) or "online" (Algorithm
// C.3).
func (c *Config) variant() string {
	v := c.Protocol + ", offline"
	if c.Online {
		v = c.Protocol + ", online"
	}
	return v
}

// tabled tells whether the run can report its pair: more than one hyper-step.
func (sp *storedPair) tabled() bool { return sp.cfg.OuterSteps > 1 }

func (sp *storedPair) key() [2]string { return [2]string{sp.cfg.Model, sp.cfg.Dataset} }

// steps is the Adam steps of one fit.
func (sp *storedPair) steps() int { return sp.cfg.InnerSteps * sp.cfg.OuterSteps }

// readRun decodes a stored run and keeps its complete replicates.
func readRun(sr StoredRun) (*storedPair, error) {
	opt, err := experiments.DecodeOptions(Experiment(), sr.Options)
	if err != nil {
		return nil, fmt.Errorf("weightdecay: run %d: %w", sr.ID, err)
	}
	cfg, ok := opt.Config.(*Config)
	if !ok {
		return nil, fmt.Errorf("weightdecay: run %d: its options are not a weightdecay configuration", sr.ID)
	}
	var all []fit
	for _, raw := range sr.Outputs {
		var j fitJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("weightdecay: run %d: a cell's output: %w", sr.ID, err)
		}
		if len(j.History) > 0 {
			all = append(all, j.fit())
		}
	}
	return newStoredPair(sr, []string{sr.name()}, opt, cfg, all), nil
}

// name is how the published table names the run: the first 8 hex digits of its identity, the
// start of its export's file name (docs/reproduction/runs/weightdecay-NAME….jsonl.gz), the same
// in every store; its number in the store when it has no identity.
func (sr StoredRun) name() string {
	id := strings.TrimPrefix(sr.Identity, "weightdecay-")
	if id == "" {
		return strconv.FormatInt(sr.ID, 10)
	}
	return id[:min(8, len(id))]
}

// newStoredPair reads the done fits of cfg's grid: it keeps the complete replicates' and
// assembles them.
func newStoredPair(sr StoredRun, names []string, opt experiments.Options, cfg *Config, all []fit) *storedPair {
	zetas := append([]float64{0}, cfg.Zetas...)
	done := map[int]int{}
	for _, f := range all {
		done[f.replicate]++
	}
	var fits []fit
	for _, f := range all {
		if done[f.replicate] == len(zetas) {
			fits = append(fits, f)
		}
	}
	slices.SortFunc(fits, func(a, b fit) int {
		if a.replicate != b.replicate {
			return a.replicate - b.replicate
		}
		return slices.Index(zetas, a.zeta) - slices.Index(zetas, b.zeta)
	})
	sp := &storedPair{run: sr, names: names, opt: opt, cfg: cfg, done: all, fits: fits, p: newPair(cfg, fits), res: result(opt, cfg, zetas, fits)}
	sp.res.Params = experiments.FlagValues(cfg)
	return sp
}

// label names the stored runs a row comes from: "0a1b2c3d", or "0a1b2c3d+4e5f6a7b" when merged.
func (sp *storedPair) label() string { return strings.Join(sp.names, "+") }

// mergeKey is what runs must share to be merged: every setting but the ζ grid and the
// number of replicates, and the seed. Such runs draw the same images and, replicate by
// replicate, the same initial weights, so their Eq. 1 fits are the same computation.
func mergeKey(sp *storedPair) string {
	c := *sp.cfg
	c.Zetas, c.Repeats = nil, 0
	b, _ := json.Marshal(c)
	return fmt.Sprintf("%d %s", sp.opt.Seed, b)
}

// merge joins runs of one mergeKey into one grid search over the union of their ζ grids,
// as the paper's "grid search to select the ζ" over every penalty tried: a replicate counts
// once every ζ of the union is done. A fit two runs both hold (Eq. 1's) must agree, else the
// runs are not merged (nil): they were computed differently.
func merge(group []*storedPair) *storedPair {
	cfg := *group[0].cfg
	cfg.Zetas, cfg.Repeats = nil, 0
	type cellKey struct {
		rep  int
		zeta float64
	}
	seen := map[cellKey]fit{}
	var all []fit
	last := group[len(group)-1].run
	sr := StoredRun{ID: last.ID, Identity: last.Identity, Created: last.Created}
	var names []string
	for _, sp := range group {
		for _, z := range sp.cfg.Zetas {
			if !slices.Contains(cfg.Zetas, z) {
				cfg.Zetas = append(cfg.Zetas, z)
			}
		}
		cfg.Repeats = max(cfg.Repeats, sp.cfg.Repeats)
		for _, f := range sp.done {
			k := cellKey{f.replicate, f.zeta}
			if g, ok := seen[k]; ok {
				if !sameCheckpoint(g.final(), f.final()) {
					return nil
				}
				continue
			}
			seen[k] = f
			all = append(all, f)
		}
		names = append(names, sp.run.name())
		sr.Cells += sp.run.Cells
		sr.Wall += sp.run.Wall
		sr.CellSeconds += sp.run.CellSeconds
	}
	slices.Sort(cfg.Zetas)
	return newStoredPair(sr, names, group[0].opt, &cfg, all)
}

// TableC1 is Table C.1 read from stored runs: every run; the candidates for a row (the runs of
// more than one hyper-step, and the merges of those that differ only in their ζ grids); and
// per pair the candidate it reports.
type TableC1 struct {
	runs, candidates []*storedPair
	chosen           map[[2]string]*storedPair
}

// ReadTableC1 reads the stored runs. Each pair reports, of its candidates with a complete
// replicate, one of the authors' protocol (Table C.1 is weight_decay.py's experiment) before
// a clean one, an offline one (the code's default) before an online one, then the one
// of the most Adam steps per fit (inner × outer), then of the widest ζ grid, then of the
// most complete replicates, then the latest. A run of one hyper-step measures cost alone (it
// has no checkpoints to select among and no Figure 4.2) and is never reported.
func ReadTableC1(runs ...StoredRun) (*TableC1, error) {
	t := &TableC1{chosen: map[[2]string]*storedPair{}}
	for _, sr := range runs {
		sp, err := readRun(sr)
		if err != nil {
			return nil, err
		}
		t.runs = append(t.runs, sp)
	}
	slices.SortFunc(t.runs, func(a, b *storedPair) int {
		return cmp.Or(a.run.Created.Compare(b.run.Created), cmp.Compare(a.run.name(), b.run.name()), cmp.Compare(a.run.ID, b.run.ID))
	})
	groups := map[string][]*storedPair{}
	var keys []string
	for _, sp := range t.runs {
		if !sp.tabled() {
			continue
		}
		t.candidates = append(t.candidates, sp)
		k := mergeKey(sp)
		if len(groups[k]) == 0 {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], sp)
	}
	for _, k := range keys {
		if len(groups[k]) > 1 {
			if m := merge(groups[k]); m != nil {
				t.candidates = append(t.candidates, m)
			}
		}
	}
	for _, sp := range t.candidates {
		if len(sp.p.reps) == 0 {
			continue
		}
		if c, ok := t.chosen[sp.key()]; !ok || better(sp, c) {
			t.chosen[sp.key()] = sp
		}
	}
	return t, nil
}

// better tells whether a, a later candidate, should report its pair instead of b.
func better(a, b *storedPair) bool {
	if da, db := a.cfg.authors(), b.cfg.authors(); da != db {
		return da
	}
	if da, db := !a.cfg.Online, !b.cfg.Online; da != db {
		return da
	}
	if a.steps() != b.steps() {
		return a.steps() > b.steps()
	}
	if len(a.cfg.Zetas) != len(b.cfg.Zetas) {
		return len(a.cfg.Zetas) > len(b.cfg.Zetas)
	}
	return len(a.p.reps) >= len(b.p.reps)
}

// Measured is how many pairs have a complete replicate.
func (t *TableC1) Measured() int { return len(t.chosen) }

// cellColumns are Table C.1's columns, one row per pair (tablec1.csv).
var cellColumns = []string{"model", "dataset", "status", "run", "preset", "variant", "width", "inner_steps", "outer_steps", "lr", "zetas",
	"test_rows", "replicates", "replicates_planned",
	"eq1", "eq1_sd", "eq7", "eq7_sd", "eq7_zetas", "oracle", "oracle_sd", "oracle_zetas",
	"minnorm_ckpt", "minnorm_ckpt_sd", "minnorm_ckpt_steps", "minnorm_ckpt_mean_step", "minnorm_final", "minnorm_final_replicate",
	"eq1_val_acc", "eq7_val_acc", "eq1_peak_test_acc", "eq1_peak_step", "eq1_drop", "eq7_drop",
	"spearman_rho", "spearman_p", "spearman_points", "top_zeta", "spearman_rho_top_zeta", "eq7_top_share", "oracle_top_share",
	"wall_seconds", "cell_seconds", "seconds_per_inner_step", "paper_scale",
	"eq1_ci_low", "eq1_ci_high", "eq7_ci_low", "eq7_ci_high", "oracle_ci_low", "oracle_ci_high", "minnorm_ckpt_ci_low", "minnorm_ckpt_ci_high",
	"smallest_zeta_penalty", "small_zeta_test_accs"}

// textColumns are the columns of cellColumns that hold text.
var textColumns = []string{"run", "preset", "variant", "zetas", "eq7_zetas", "oracle_zetas", "minnorm_ckpt_steps", "small_zeta_test_accs"}

// Cells is Table C.1 as one row per pair, every column of the published table and more; a
// pair without a complete replicate has its status and NaN elsewhere.
func (t *TableC1) Cells() experiments.Table {
	out := experiments.Table{Name: "tablec1", Columns: cellColumns}
	for _, k := range Pairs {
		sp, ok := t.chosen[k]
		if !ok {
			row := make([]any, len(cellColumns))
			row[0], row[1], row[2] = k[0], k[1], t.pendingStatus(k)
			for i := 3; i < len(row); i++ {
				row[i] = math.NaN()
				if slices.Contains(textColumns, cellColumns[i]) {
					row[i] = ""
				}
			}
			out.Rows = append(out.Rows, row)
			continue
		}
		out.Rows = append(out.Rows, sp.cells())
	}
	return out
}

// pendingStatus says why pair k has no row: no run, or runs without a complete replicate.
func (t *TableC1) pendingStatus(k [2]string) string {
	for _, sp := range slices.Backward(t.runs) {
		if sp.key() == k && sp.tabled() {
			return fmt.Sprintf("in progress: run %s, %d of %d cells done, no replicate complete", sp.label(), len(sp.run.Outputs), sp.run.Cells)
		}
	}
	return "not yet run"
}

// cells is the pair's row of Cells.
func (sp *storedPair) cells() []any {
	cfg, p := sp.cfg, sp.p
	rows := p.rows()
	mean := func(i int) (float64, float64) { return stats.Mean(rows[i].test), stats.StdDev(rows[i].test) }
	ci := func(i int) interval { return meanCI(rows[i].test) }
	var selZ, orZ, ckSteps []string
	var d1, d7, steps, selTop, orTop []float64
	top := func(f *fit) float64 { return map[bool]float64{true: 1}[f.zeta == p.topZeta] }
	for _, r := range p.reps {
		ckSteps, steps = append(ckSteps, strconv.Itoa(r.ckpt.step)), append(steps, float64(r.ckpt.step))
		d1 = append(d1, drop(r.base))
		if r.bySel != nil {
			selZ, orZ = append(selZ, zetaString(r.bySel.zeta)), append(orZ, zetaString(r.byTst.zeta))
			d7, selTop, orTop = append(d7, drop(*r.bySel)), append(selTop, top(r.bySel)), append(orTop, top(r.byTst))
		}
	}
	peak, peakStep := sp.eq1Peak()
	e1, e1s := mean(0)
	e7, e7s := mean(1)
	or, ors := mean(2)
	ck, cks := mean(3)
	status := "measured"
	switch n := len(p.reps); {
	case len(sp.names) > 1:
		status = fmt.Sprintf("grid search over runs %s: %d replicates hold every ζ", sp.label(), n)
	case n < cfg.Repeats:
		status = fmt.Sprintf("in progress: %d of %d replicates complete", n, cfg.Repeats)
	}
	return []any{cfg.Model, cfg.Dataset, status, sp.label(), sp.opt.Preset, cfg.variant(), cfg.Width, cfg.InnerSteps, cfg.OuterSteps, cfg.LR,
		joinZetas(cfg.Zetas), cfg.testRows(), len(p.reps), cfg.Repeats,
		e1, e1s, e7, e7s, strings.Join(selZ, " "), or, ors, strings.Join(orZ, " "),
		ck, cks, strings.Join(ckSteps, " "), stats.Mean(steps), stats.Mean(rows[4].test), p.reps[p.finalRep].rep,
		stats.Mean(rows[0].val), stats.Mean(rows[1].val), peak, peakStep, stats.Mean(d1), stats.Mean(d7),
		p.all.rho, p.all.p, p.all.points, p.topZeta, p.top.rho, stats.Mean(selTop), stats.Mean(orTop),
		sp.run.Wall.Seconds(), sp.run.CellSeconds, sp.perStep(), map[bool]float64{true: 1}[sp.paperScale()],
		ci(0).lo, ci(0).hi, ci(1).lo, ci(1).hi, ci(2).lo, ci(2).hi, ci(3).lo, ci(3).hi,
		sp.smallestZetaPenalty(), sp.smallZetaTestAccs(3)}
}

// smallestZetaPenalty is the largest value Eq. 7's penalty term takes at the grid's smallest
// ζ, over its fits and hyper-steps: the weight Config.penalty gives that ζ times the logged
// regularizer (edgeNote, negligiblePenalty).
func (sp *storedPair) smallestZetaPenalty() float64 {
	z := slices.Min(sp.cfg.Zetas)
	w, _ := sp.cfg.penalty(z)
	worst := math.NaN()
	for _, f := range sp.fits {
		if f.zeta != z {
			continue
		}
		for _, c := range f.history {
			if !(w*c.distance <= worst) {
				worst = w * c.distance
			}
		}
	}
	return worst
}

// smallZetaTestAccs is the final test accuracy, averaged over the complete replicates, of
// Eq. 1 and of Eq. 7 at the grid's k smallest ζ: "Eq. 1 0.284; ζ 0.0001 0.208, …".
func (sp *storedPair) smallZetaTestAccs(k int) string {
	zs := slices.Sorted(slices.Values(sp.cfg.Zetas))
	zs = append([]float64{0}, zs[:min(k, len(zs))]...)
	parts := make([]string, len(zs))
	for j, z := range zs {
		var accs []float64
		for _, r := range sp.p.reps {
			for _, f := range sp.fits {
				if f.replicate == r.rep && f.zeta == z {
					accs = append(accs, f.final().testAcc)
				}
			}
		}
		acc := fmt.Sprintf("%.3f", stats.Mean(accs))
		if z == 0 {
			parts[j] = "Eq. 1 " + acc
			continue
		}
		parts[j] = fmt.Sprintf("ζ %s %s", zetaString(z), acc)
		if j > 1 {
			parts[j] = zetaString(z) + " " + acc
		}
	}
	return parts[0] + "; " + strings.Join(parts[1:], ", ")
}

// drop is how far a fit's final test accuracy lies below its best hyper-step's (Figure 4.2:
// Eq. 1's degrades, Eq. 7's "remains stable").
func drop(f fit) float64 {
	best := math.Inf(-1)
	for _, c := range f.history {
		best = max(best, c.testAcc)
	}
	return best - f.final().testAcc
}

// eq1Peak is the best test accuracy of the Eq. 1 history averaged over replicates, and its
// hyper-step.
func (sp *storedPair) eq1Peak() (float64, int) {
	h := sp.res.Table("history")
	best, step := math.NaN(), 0
	for i := range h.Rows {
		if h.Float(i, "zeta") == 0 && !(h.Float(i, "test_acc") <= best) {
			best, step = h.Float(i, "test_acc"), h.Int(i, "step")
		}
	}
	return best, step
}

func joinZetas(zs []float64) string {
	s := make([]string, len(zs))
	for i, z := range zs {
		s[i] = zetaString(z)
	}
	return strings.Join(s, ",")
}

// History is Figure 4.2's data for every reported pair: each hyper-step's validation and test
// accuracy, regularizer and weight norm, averaged over replicates, for every ζ
// (tablec1_history.csv).
func (t *TableC1) History() experiments.Table {
	out := experiments.Table{Name: "tablec1_history", Columns: []string{"model", "dataset", "run", "zeta", "step", "val_acc", "test_acc", "regularizer", "weight_norm"}}
	for _, k := range Pairs {
		sp, ok := t.chosen[k]
		if !ok {
			continue
		}
		h := sp.res.Table("history")
		for _, row := range h.Rows {
			out.Rows = append(out.Rows, append([]any{k[0], k[1], sp.label()}, row...))
		}
	}
	return out
}

// Improvement is the paper's headline statistic: the mean over the reported pairs of the
// relative improvement (eq7 − heuristic) / heuristic in final test accuracy, with the columns
// of Cells that hold Eq. 7's and the heuristic's accuracies; NaN without a pair.
func Improvement(cells experiments.Table, eq7, heuristic string) (float64, int) {
	var rel []float64
	for i := range cells.Rows {
		a, b := cells.Float(i, eq7), cells.Float(i, heuristic)
		if !math.IsNaN(a) && !math.IsNaN(b) && b > 0 {
			rel = append(rel, (a-b)/b)
		}
	}
	return stats.Mean(rel), len(rel)
}

// Display names of the models and datasets, as the paper writes them.
var displayNames = map[string]string{"linear": "linear", "resnet18": "ResNet-18", "resnet34": "ResNet-34", "mnist": "MNIST", "cifar10": "CIFAR-10"}

func pairName(model, dataset string) string {
	return displayNames[model] + " / " + displayNames[dataset]
}

// The figures of the published table, written by Figures next to tablec1.md: those of the
// reported pairs, and those of the other stored runs.
const (
	Figure42       = "tablec1_fig4_2.png"
	Figure43       = "tablec1_fig4_3.png"
	Figure42Others = "tablec1_fig4_2_other_runs.png"
	Figure43Others = "tablec1_fig4_3_other_runs.png"
)

// RegenerateCommand is how tablec1.md is rebuilt from a clone: the weightdecay exports
// imported into a new store, then the report. tablec1.md names it in place of the store it
// was generated from, so that the file is the same from every store that holds the runs.
const RegenerateCommand = "hyperflat import --store tablec1.db docs/reproduction/runs/weightdecay-*.jsonl.gz && " +
	"hyperflat report --store tablec1.db --markdown docs/reproduction"

// Markdown renders Table C.1 as docs/reproduction/tablec1.md: the verdict, the table, the
// paper's headline statistic, the BatchNorm comparison, Figures 4.2 and 4.3 with their
// statistics, a reading generated from the numbers, the budgets and runs, and the paper-scale
// commands with their measured cost. It depends on the stored runs alone, not on the store
// (its run numbers) nor on the command that asked for it.
func (t *TableC1) Markdown() ([]byte, error) {
	cells := t.Cells()
	lines, err := t.headline()
	if err != nil {
		return nil, err
	}
	bn := t.batchNormRows()
	var b strings.Builder
	fmt.Fprintf(&b, "# Table C.1 (PAC-Bayes weight decay), reproduced\n\nGenerated from the exported runs (docs/reproduction/runs/weightdecay-*) by `%s`; do not edit by hand. %s "+
		"The experiment of Section 4.2 and Appendix C.2 of Cherian et al. (2020), as `weight_decay.py` in DEShawResearch/PACBayesHyperOpt runs it "+
		"(see `go doc ./experiments/weightdecay`; the protocols and every remaining difference: [weightdecay-protocol.md](weightdecay-protocol.md)): "+
		"per-parameter weight decays tuned on 50 validation images, by Eq. 1 (validation risk) or Eq. 7 "+
		"(with the PAC-Bayes regularizer). Cells: the final test accuracy, mean ± standard deviation over replicates (initializations), "+
		"in brackets the 95%% percentile bootstrap interval of the mean (%d resamples of the replicates) where there are two or more. "+
		"Table C.1's own cells are not in the text of the paper available to this project, so there is no per-pair "+
		"value to set beside ours: the main text gives the averaged headline, the "+
		"validation accuracies and the signs checked below. Runs are named by the start of their identity, as their export files are.\n", RegenerateCommand,
		experiments.RegenerationData(false), bootResamples)
	writeVerdict(&b, cells, lines, bn)
	writeMainTable(&b, cells)
	writeHeadline(&b, lines, cells)
	writeBatchNorm(&b, bn)
	writeFigureTable(&b, cells)
	writeReading(&b, cells)
	t.writeOthers(&b)
	t.writeRuns(&b, cells)
	if err := t.writePaperScale(&b); err != nil {
		return nil, err
	}
	b.WriteString(definitions)
	return []byte(b.String()), nil
}

// budgetText is the row's protocol and budget, in Table C.1 itself: the width of a ResNet,
// the Adam steps × hyper-steps of a fit, η, and the test images when not the whole set.
func budgetText(cells experiments.Table, i int) string {
	parts := []string{cells.String(i, "variant")}
	if m := cells.String(i, "model"); m != "linear" {
		parts = append(parts, "width "+widthText(cells.Float(i, "width")))
	}
	parts = append(parts, fmt.Sprintf("%d × %d steps", cells.Int(i, "inner_steps"), cells.Int(i, "outer_steps")),
		fmt.Sprintf("η %g", cells.Float(i, "lr")))
	if n := cells.Int(i, "test_rows"); n < 10000 {
		parts = append(parts, fmt.Sprintf("%d test images", n))
	}
	return strings.Join(parts, "; ")
}

// widthText is a width multiplier as the fraction it usually is: 0.0625 is "1/16".
func widthText(w float64) string {
	if w > 0 && w < 1 {
		if inv := 1 / w; inv == math.Round(inv) {
			return fmt.Sprintf("1/%g", inv)
		}
	}
	return fmt.Sprintf("%g", w)
}

// cellText is "mean ± sd [bootstrap interval of the mean]" (the mean alone for one replicate).
func cellText(cells experiments.Table, i int, col string) string {
	m := cells.Float(i, col)
	if math.IsNaN(m) {
		return "–"
	}
	s := strconv.FormatFloat(m, 'f', 3, 64)
	if v := cells.Float(i, col+"_sd"); cells.Column(col+"_sd") >= 0 && !math.IsNaN(v) {
		s += " ± " + strconv.FormatFloat(v, 'f', 3, 64)
	}
	if lo, hi := cells.Float(i, col+"_ci_low"), cells.Float(i, col+"_ci_high"); cells.Column(col+"_ci_low") >= 0 && !math.IsNaN(lo) && !math.IsNaN(hi) {
		s += " [" + strconv.FormatFloat(lo, 'f', 3, 64) + ", " + strconv.FormatFloat(hi, 'f', 3, 64) + "]"
	}
	return s
}

func measured(cells experiments.Table, i int) bool { return !math.IsNaN(cells.Float(i, "eq1")) }

func writeMainTable(b *strings.Builder, cells experiments.Table) {
	b.WriteString("\n## Table C.1: final test accuracy\n")
	writeAccuracyRows(b, cells, "pair")
	b.WriteString("\n† ζ chosen on the test set, as the paper did (\"grid search to select the ζ that minimizes out-of-sample error\", " +
		"Section 4.2): an optimistic oracle, not a method. The ζ column of the other Eq. 7 cell is chosen on 50 further training-split " +
		"images (the selection images) and never sees the test set. ζ lists each replicate's choice, in the units of `weight_decay.py` " +
		"(ζη²/2 multiplies √Σ‖a_t‖²). The two min-norm columns are the two readings of the heuristic (see Definitions): the " +
		"checkpoint column lists each replicate's selected hyper-step, the final-model column the replicate whose final Eq. 1 model " +
		"was selected (one model, so no ±).\n")
}

// writeAccuracyRows writes Table C.1's accuracy columns, a row per row of cells, first naming
// the pair ("pair") or the run and its pair ("run").
func writeAccuracyRows(b *strings.Builder, cells experiments.Table, first string) {
	fmt.Fprintf(b, "\n| %s | protocol; budget | Eq. 1 | Eq. 7, ζ by selection images | Eq. 7, test-oracle ζ † | "+
		"min-norm, checkpoint selection | min-norm, final-model selection | replicates |\n|---|---|---|---|---|---|---|---|\n", first)
	for i := range cells.Rows {
		name := pairName(cells.String(i, "model"), cells.String(i, "dataset"))
		if first == "run" {
			name = fmt.Sprintf("%s: %s, ζ %s", cells.String(i, "run"), name, cells.String(i, "zetas"))
		}
		if !measured(cells, i) {
			fmt.Fprintf(b, "| %s | | %s | | | | | |\n", name, cells.String(i, "status"))
			continue
		}
		reps := fmt.Sprintf("%d of %d (run %s)", cells.Int(i, "replicates"), cells.Int(i, "replicates_planned"), cells.String(i, "run"))
		if strings.HasPrefix(cells.String(i, "status"), "grid search") {
			reps = fmt.Sprintf("%d (runs %s, every ζ)", cells.Int(i, "replicates"), cells.String(i, "run"))
		}
		budget := budgetText(cells, i)
		if first == "pair" { // the Others table names the grid with the run
			budget += "; ζ grid " + cells.String(i, "zetas")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s (%s) | %s (%s) | %s (hyper-steps %s) | %s (replicate %d) | %s |\n", name,
			budget, cellText(cells, i, "eq1"), cellText(cells, i, "eq7"), zetaText(cells, i, "eq7_zetas"), cellText(cells, i, "oracle"),
			zetaText(cells, i, "oracle_zetas"), cellText(cells, i, "minnorm_ckpt"), cells.String(i, "minnorm_ckpt_steps"),
			cellText(cells, i, "minnorm_final"), cells.Int(i, "minnorm_final_replicate"), reps)
	}
}

// Others is Cells' row for every stored run with a complete replicate that its pair does not
// report (another ζ grid, a smaller budget).
func (t *TableC1) Others() experiments.Table {
	out := experiments.Table{Name: "tablec1_others", Columns: cellColumns}
	for _, sp := range t.otherRuns() {
		out.Rows = append(out.Rows, sp.cells())
	}
	return out
}

// otherRuns are the runs of Others, in run order.
func (t *TableC1) otherRuns() []*storedPair {
	var out []*storedPair
	for _, sp := range t.candidates {
		if len(sp.p.reps) > 0 && t.chosen[sp.key()] != sp {
			out = append(out, sp)
		}
	}
	return out
}

// writeOthers lists the runs Others holds, if any.
func (t *TableC1) writeOthers(b *strings.Builder) {
	others := t.Others()
	if len(others.Rows) == 0 {
		return
	}
	b.WriteString("\n## Other stored runs\n\nRuns with a complete replicate that Table C.1 does not report (see Definitions for " +
		"which run a pair reports), with the same columns: another ζ grid or a smaller budget (Budgets and runs).\n")
	writeAccuracyRows(b, others, "run")
	fmt.Fprintf(b, "\n![Figure 4.2, other runs](%s)\n\n![Figure 4.3, other runs](%s)\n", Figure42Others, Figure43Others)
}

func writeFigureTable(b *strings.Builder, cells experiments.Table) {
	b.WriteString("\n## Figures 4.2 and 4.3\n\n| pair | final validation accuracy, Eq. 1 / Eq. 7 (paper: ≥ 0.98) | " +
		"Eq. 1 test accuracy: best hyper-step → final | fall from best to final, Eq. 1 / Eq. 7 | " +
		"Spearman ρ, regularizer vs gap, all runs (points) | ρ at the largest ζ |\n|---|---|---|---|---|---|\n")
	for i := range cells.Rows {
		if !measured(cells, i) {
			continue
		}
		fmt.Fprintf(b, "| %s | %.3f / %.3f | %.3f (hyper-step %d) → %.3f | %.3f / %.3f | %.2f (p = %.2g, %d) | %.2f (ζ = %s) |\n",
			pairName(cells.String(i, "model"), cells.String(i, "dataset")), cells.Float(i, "eq1_val_acc"), cells.Float(i, "eq7_val_acc"),
			cells.Float(i, "eq1_peak_test_acc"), cells.Int(i, "eq1_peak_step"), cells.Float(i, "eq1"), cells.Float(i, "eq1_drop"),
			cells.Float(i, "eq7_drop"), cells.Float(i, "spearman_rho"), cells.Float(i, "spearman_p"), cells.Int(i, "spearman_points"),
			cells.Float(i, "spearman_rho_top_zeta"), zetaString(cells.Float(i, "top_zeta")))
	}
	fmt.Fprintf(b, "\nThe best hyper-step is that of the Eq. 1 test accuracy averaged over replicates; the fall is each replicate's "+
		"best test accuracy minus its final one, averaged (Eq. 7: the run at the ζ chosen on the selection images). "+
		"Spearman's ρ is between the regularizer √Σ_t‖a_t‖² and the generalization gap (validation − test accuracy) at every "+
		"hyper-step of every run (Figure 4.3's points; the figure draws the regularizer on a log scale). Figure 4.2 draws Eq. 1 "+
		"dashed and Eq. 7 solid, as the paper does, the test accuracy averaged over replicates.\n\n"+
		"![Figure 4.2: test accuracy per hyper-step](%s)\n\n![Figure 4.3: regularizer against the generalization gap](%s)\n", Figure42, Figure43)
}

// paperBudget tells whether a row ran at the paper preset's scale (storedPair.paperScale).
func paperBudget(cells experiments.Table, i int) bool { return cells.Float(i, "paper_scale") == 1 }

// writeRuns lists every stored run read, with its budget and cost.
func (t *TableC1) writeRuns(b *strings.Builder, cells experiments.Table) {
	b.WriteString("\n## Budgets and runs\n\n| run | pair | preset | variant | width | Adam steps × hyper-steps | η | ζ grid | replicates complete / planned | " +
		"cells done / planned | test images | wall time | cell time | s per Adam step | reported |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var cellSecs float64
	for _, sp := range t.runs {
		cfg := sp.cfg
		width := fmt.Sprintf("%g", cfg.Width)
		if !cfg.resnet() {
			width = "–"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d × %d | %g | %s | %d / %d | %d / %d | %d | %s | %s | %s | %s |\n", sp.label(),
			pairName(cfg.Model, cfg.Dataset), sp.opt.Preset, cfg.variant(), width, cfg.InnerSteps, cfg.OuterSteps, cfg.LR, joinZetas(cfg.Zetas),
			len(sp.p.reps), cfg.Repeats, len(sp.run.Outputs), sp.run.Cells, cfg.testRows(), seconds(sp.run.Wall.Seconds()),
			seconds(sp.run.CellSeconds), secondsPerStep(sp), map[bool]string{true: "yes"}[t.reports(sp)])
		cellSecs += sp.run.CellSeconds
	}
	fmt.Fprintf(b, "\nTotal: %s of cell time (the runs ran side by side). Seconds per Adam step are a done fit's "+
		"seconds over its Adam steps, so they include its hyper-steps' evaluations and setup; measured on this project's machine "+
		"(2 shared vCPUs, other jobs running), pure Go. A run of one hyper-step measures cost only (Paper scale) and reports no row.\n",
		seconds(cellSecs))
}

// reports tells whether the run's pair reports it, alone or merged.
func (t *TableC1) reports(sp *storedPair) bool {
	c, ok := t.chosen[sp.key()]
	return ok && slices.Contains(c.names, sp.label())
}

// perStep is the mean seconds per Adam step of the run's done fits (NaN for none).
func (sp *storedPair) perStep() float64 {
	var secs []float64
	for _, f := range sp.done {
		secs = append(secs, f.seconds)
	}
	return stats.Mean(secs) / float64(sp.steps())
}

func secondsPerStep(sp *storedPair) string {
	if v := sp.perStep(); !math.IsNaN(v) {
		return fmt.Sprintf("%.3g", v)
	}
	return "–"
}

// seconds formats a duration to the second, in days beyond two.
func seconds(s float64) string {
	if s > 2*86400 {
		return fmt.Sprintf("%.0f days", s/86400)
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// writePaperScale gives each pair's paper-scale command and, from the stored run at the
// paper's width of the most Adam steps per fit, its measured cost and the projected time.
func (t *TableC1) writePaperScale(b *strings.Builder) error {
	paper, err := DefaultConfig(experiments.PaperScale)
	if err != nil {
		return err
	}
	cellsPerRun := paper.Repeats * (1 + len(paper.Zetas))
	steps := paper.InnerSteps * paper.OuterSteps
	fmt.Fprintf(b, "\n## Paper scale\n\nThe paper preset is `weight_decay.py`'s budget: %d replicates × %d ζ values (%s and Eq. 1) = %d fits "+
		"of %d Adam steps × %d hyper-steps at η = %g, torchvision's widths, the whole test set at every hyper-step.\n\n"+
		"| pair | command | s per Adam step at width 1 (run) | one fit | the run, 1 worker |\n|---|---|---|---|---|\n",
		paper.Repeats, 1+len(paper.Zetas), joinZetas(paper.Zetas), cellsPerRun, paper.InnerSteps, paper.OuterSteps, paper.LR)
	for _, k := range Pairs {
		cmd := fmt.Sprintf("`hyperflat run weightdecay --preset paper --protocol authors --model %s --dataset %s --store tablec1.db --resume`", k[0], k[1])
		var best *storedPair
		for _, sp := range t.runs {
			if sp.key() == k && len(sp.done) > 0 && (!sp.cfg.resnet() || sp.cfg.Width == 1) && (best == nil || sp.steps() >= best.steps()) {
				best = sp
			}
		}
		if best == nil {
			fmt.Fprintf(b, "| %s | %s | not measured | | |\n", pairName(k[0], k[1]), cmd)
			continue
		}
		per := best.perStep()
		fmt.Fprintf(b, "| %s | %s | %.3g (run %s, %d steps a fit) | %s | %s |\n", pairName(k[0], k[1]), cmd, per, best.label(), best.steps(),
			seconds(per*float64(steps)), seconds(per*float64(steps*cellsPerRun)))
	}
	b.WriteString("\nProjections scale the measured cost per Adam step linearly; a short measuring run's setup and evaluation make it an " +
		"overestimate of the step itself. Cells are independent: `--workers N` or `hyperflat worker` on more machines divides the run's time.\n")
	return nil
}

// definitions explains the columns, the readings and the choices the generator makes.
const definitions = `
## Definitions

- **Eq. 1** is the ζ = 0 run: weight decays tuned on the validation risk alone (T1–T2 hypergradient, RMSprop; at the current iterate
  under the authors' protocol, one step ahead under clean), as in
  ` + "`weight_decay.py`" + `. **Eq. 7** adds the PAC-Bayes regularizer (ζη²/2)·√Σ_t‖a_t‖² (Algorithm 1, K = 0, offline).
- **ζ by selection images**: per replicate, the ζ of the grid whose final model is most accurate on 50 further images of
  the training split, disjoint from the training and validation images; the test set plays no part.
  **Test-oracle ζ †**: the ζ of the best final test accuracy, the paper's choice (Section 4.2), optimistic by construction.
- **The min-norm heuristic** (Section 4.2): "we select the classifier with smallest weight-norm that also achieves the
  maximum top-1 validation accuracy", compared on "final test accuracy". The text does not say among which classifiers,
  so the table gives both readings, each on the Eq. 1 runs (the heuristic is offered "for preventing overfitting when
  optimizing Eq. 1"):
  - **checkpoint selection**: within each replicate's Eq. 1 run, among its hyper-step checkpoints (` + "`weight_decay.py`" + `
    logs the weight norm and validation accuracy at each), the smallest-norm one of those at the run's maximal validation
    accuracy; averaged over replicates. It can stop the run early, before validation overfitting sets in.
  - **final-model selection**: among the final models of the pair's Eq. 1 runs (one per replicate, differing in their
    initialization), the smallest-norm one of those at maximal validation accuracy: one classifier, reported as its test
    accuracy. Every classifier it chooses among has run the whole optimization, as Eq. 7's have.
- **Headline**: the mean over the pairs of Eq. 7 − heuristic (points) and of (Eq. 7 − heuristic) / heuristic (percent) in
  final test accuracy, the paper's "improves final test accuracy by 12%" (over 6 pairs, ζ chosen on test error; the text does
  not say whether 12% is relative or in points, nor which reading of the heuristic); separately over the pairs at the paper's
  budget (1000 Adam steps × 100 hyper-steps at η = 10⁻⁴, full width, the whole test set the files here hold: 10000 MNIST
  images, 1000 of CIFAR-10) and over every measured pair.
- **Replicates**: a replicate counts once all its ζ values are done, so that a run still in progress reports its
  complete replicates. A run of one hyper-step only measures cost (Paper scale).
- **Grid search over runs**: runs of a pair that differ only in their ζ grid and number of replicates (same seed, budget
  and settings) draw the same images and, replicate by replicate, the same initial weights, so their Eq. 1 fits are one
  computation (the generator checks that they agree, else it does not merge them). Merged, they are one grid search over
  the union of their grids, as the paper's "grid search to select the ζ" over every penalty tried; a replicate counts
  once it holds every ζ of the union. The paper preset's grid, ζ = 1…5, is a guess (` + "`weight_decay.py`" + ` takes
  ` + "`np.linspace(zeta_min, zeta_max, num_zeta)`" + `, default 0 to 5 with one value; the manuscript's grid is not
  published), and at η = 10⁻⁴ its penalties are too weak to change much, so wider grids were run besides.
- **Which row**: each pair reports, of its runs and merges with a complete replicate, one of the authors' protocol before
  a clean one, an offline one before an online one, then the one of the most Adam steps per fit, then of the widest ζ grid, then of the
  most complete replicates, then the latest; the others are listed under Other stored runs.
- **CSV**: ` + "`tablec1.csv`" + ` has every column above, one row per pair (NaN where not measured);
  ` + "`tablec1_history.csv`" + ` has Figure 4.2's data, every hyper-step of every reported pair and ζ, averaged over
  replicates; ` + "`tablec1_others.csv`" + ` the columns of the other stored runs.
`
