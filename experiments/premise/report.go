package premise

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
	"github.com/hyperflat/hyperflat/store"
)

// StoredRun is one stored premise run as the published document reads it: its result
// (storedResult) and its progress and timing in the store.
type StoredRun struct {
	ID     int64
	Result *experiments.Result
	// Done and Cells count its measured configurations and all of them.
	Done, Cells int
	// Wall is the run's wall time (its first claim to its latest completion), CellSeconds the
	// sum of its cells' seconds.
	Wall        time.Duration
	CellSeconds float64
}

// WriteMarkdown is `hyperflat report --markdown DIR` for this experiment: DIR/premise.md
// and the Figure 1 it shows (DIR/premise_figure1_DATASET.png) from every premise run of the
// store (or from run alone when it is not 0), finished or not (a run in progress gives the
// configurations measured so far). It returns the document's path, or "" when the store
// holds no such run.
func WriteMarkdown(ctx context.Context, st *store.Store, run int64, dataDir, dir, command string) (string, error) {
	infos, err := st.Runs(ctx)
	if err != nil {
		return "", err
	}
	var runs []StoredRun
	for _, info := range infos {
		if info.Experiment != "premise" || (run != 0 && info.ID != run) || info.Done == 0 {
			continue
		}
		res, err := storedResult(ctx, st, info, dataDir)
		if err != nil {
			return "", fmt.Errorf("run %d: %w", info.ID, err)
		}
		sr := StoredRun{ID: info.ID, Result: res, Done: info.Done, Cells: info.Cells, CellSeconds: info.CellSeconds}
		if !info.Started.IsZero() && info.Finished.After(info.Started) {
			sr.Wall = info.Finished.Sub(info.Started)
		}
		runs = append(runs, sr)
	}
	if len(runs) == 0 {
		return "", nil
	}
	md, err := Markdown(command, runs...)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, fig := latestFigure(runs); fig != nil {
		if _, err := figurePNG(fig, dir); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "premise.md")
	return path, experiments.WriteArtifact(path, func(w io.Writer) error { _, err := w.Write(md); return err })
}

// latestFigure is the latest run with Figure 1's two configurations, and its result.
func latestFigure(runs []StoredRun) (int64, *experiments.Result) {
	var id int64
	var res *experiments.Result
	for _, sr := range runs {
		if f := sr.Result.Table("figure1"); f != nil && len(f.Rows) == 2 && sr.ID >= id {
			id, res = sr.ID, sr.Result
		}
	}
	return id, res
}

// storedResult builds a stored run's tables from its done cells, with its options decoded as
// a worker decodes them and its datasets loaded for the settings table (nothing is trained).
func storedResult(ctx context.Context, st *store.Store, info store.Run, dataDir string) (*experiments.Result, error) {
	opt, err := experiments.DecodeOptions(Experiment(), info.Options)
	if err != nil {
		return nil, err
	}
	opt.DataDir = dataDir
	cfg := opt.Config.(*Config)
	tasks, err := loadTasks(ctx, opt, cfg)
	if err != nil {
		return nil, err
	}
	cells, err := st.Cells(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	var recs []record
	for _, c := range cells {
		if c.Status != store.Done {
			continue
		}
		var r record
		if err := json.Unmarshal(c.Outcome.Output, &r); err != nil {
			return nil, fmt.Errorf("premise: cell %s: %w", c.Key, err)
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b record) int {
		if c := slices.Index(cfg.Datasets, a.Dataset) - slices.Index(cfg.Datasets, b.Dataset); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	res := result(opt, cfg, tasks, recs)
	res.Params = experiments.FlagValues(cfg)
	return res, nil
}

// datasetRows are one dataset's summary rows, from the latest run holding it.
type datasetRows struct {
	dataset string
	run     StoredRun
	rows    []int // indices into the run's summary
}

// latestPerDataset takes each dataset's summary from the latest run (highest ID) holding
// it, so that a grid run dataset by dataset, or a dataset run again, reads as one table.
func latestPerDataset(runs []StoredRun) ([]datasetRows, error) {
	latest := map[string]int64{}
	for _, sr := range runs {
		if sr.Result == nil || sr.Result.Experiment != "premise" || sr.Result.Table("summary") == nil {
			return nil, fmt.Errorf("premise: run %d is not a premise result with a summary", sr.ID)
		}
		s := sr.Result.Table("summary")
		for i := range s.Rows {
			if id, ok := latest[s.String(i, "dataset")]; !ok || sr.ID > id {
				latest[s.String(i, "dataset")] = sr.ID
			}
		}
	}
	var out []datasetRows
	for _, d := range Datasets {
		for _, sr := range runs {
			if id, ok := latest[d]; !ok || id != sr.ID {
				continue
			}
			ds := datasetRows{dataset: d, run: sr}
			s := sr.Result.Table("summary")
			for i := range s.Rows {
				if s.String(i, "dataset") == d {
					ds.rows = append(ds.rows, i)
				}
			}
			if len(ds.rows) > 0 {
				out = append(out, ds)
			}
		}
	}
	return out, nil
}

// Markdown renders stored premise runs as docs/reproduction/premise.md: the correlations of
// every dataset (from the latest run holding it), a reading of their signs and significance
// computed from them, Figure 1's two configurations, the settings, the runs' wall times and
// the command that regenerates the document.
func Markdown(command string, runs ...StoredRun) ([]byte, error) {
	sets, err := latestPerDataset(runs)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Does low strong convexity predict generalization? (AHSC's premise)\n\n")
	if v := verdict(sets, runs); v != "" {
		b.WriteString(v + "\n")
	}
	fmt.Fprintf(&b, "Generated from the stored runs by `%s`; do not edit by hand. %s The experiment is `hyperflat run premise` "+
		"(experiments/premise; its package documentation gives the protocol).\n\n", command, experiments.RegenerationData(true))
	b.WriteString("Yedida & Saha (2024) motivate AHSC by Figure 1: on Australian, a configuration of low one-epoch strong convexity μ " +
		"generalizes better than one of high μ, and Section 3.2 bounds Keskar et al.'s sharpness by ‖∇²E‖_F, which μ stands for. " +
		"Here many configurations, sampled from the ahsc experiment's space (Table 2) and trained as it trains them, are measured after " +
		"one epoch — μ exactly as AHSC screens by it, and the trace, Frobenius norm and top eigenvalue of the training loss's Hessian at " +
		"the same weights — then trained fully. Each row is Spearman's ρ of the measure with the final test metric and with the " +
		"generalization gap (training − test metric), each with its " + ciWords + ", their two-sided p-values and ρ with μ. " +
		"**The premise predicts ρ_test < 0 and ρ_gap > 0.**\n\n")
	b.WriteString("| dataset | metric | measure | n | ρ test [95% CI] | p | ρ gap [95% CI] | p | ρ with μ |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range sets {
		s := ds.run.Result.Table("summary")
		for _, i := range ds.rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", ds.dataset, s.String(i, "metric"), s.String(i, "measure"),
				s.Int(i, "n"), withCI(s, i, "rho_test"), pval(s.Float(i, "p_test")), withCI(s, i, "rho_gap"), pval(s.Float(i, "p_gap")),
				num(s.Float(i, "rho_mu")))
		}
	}
	b.WriteString("\n" + reading(sets))
	writeFigure1(&b, runs)
	writeSettings(&b, sets)
	writeRuns(&b, sets)
	return b.Bytes(), nil
}

// withCI is the summary's ρ in column col of row i with its interval (columns col_low and
// col_high), "-0.35 [-0.55, -0.11]"; ρ alone where the interval is missing.
func withCI(s *experiments.Table, i int, col string) string {
	lo, hi := s.Float(i, col+"_low"), s.Float(i, col+"_high")
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return num(s.Float(i, col))
	}
	return experiments.Interval(s.Float(i, col), &stats.Interval{Low: lo, High: hi}, num)
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}

func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// reading counts, per measure, the datasets where its correlations have the sign the premise
// predicts, and where that sign is significant at 5%.
func reading(sets []datasetRows) string {
	var b strings.Builder
	b.WriteString("Reading (counted from the table, two-sided 5% level, not corrected for the multiple tests):\n\n")
	for _, m := range measures {
		var testNeg, testSig, gapPos, gapSig, n int
		for _, ds := range sets {
			s := ds.run.Result.Table("summary")
			for _, i := range ds.rows {
				if s.String(i, "measure") != m.name || math.IsNaN(s.Float(i, "rho_test")) {
					continue
				}
				n++
				rt, pt, rg, pg := s.Float(i, "rho_test"), s.Float(i, "p_test"), s.Float(i, "rho_gap"), s.Float(i, "p_gap")
				testNeg, testSig = testNeg+b2i(rt < 0), testSig+b2i(rt < 0 && pt < 0.05)
				gapPos, gapSig = gapPos+b2i(rg > 0), gapSig+b2i(rg > 0 && pg < 0.05)
			}
		}
		fmt.Fprintf(&b, "- %s: lower predicts a better test metric on %d of %d datasets (significantly on %d), a smaller gap on %d (significantly on %d).\n",
			m.name, testNeg, n, testSig, gapPos, gapSig)
	}
	return b.String() + "\n"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeFigure1 describes Figure 1's two configurations, from the latest run that has them.
func writeFigure1(b *bytes.Buffer, runs []StoredRun) {
	id, res := latestFigure(runs)
	if res == nil {
		return
	}
	fig, confs := res.Table("figure1"), res.Table("configurations")
	d := fig.String(0, "dataset")
	high := "the configuration of greatest μ"
	if fig.String(1, "chosen_by") != "" { // stored before the rule: the greatest μ
		high = fmt.Sprintf("the high-μ one chosen by a stated rule, %s (%d configurations qualified)", fig.String(1, "chosen_by"), fig.Int(1, "candidates"))
	}
	fmt.Fprintf(b, "## Figure 1 (%s)\n\nTwo of the measured %s configurations of run %d: the one of least μ and %s; "+
		"each trained again epoch by epoch from its screening point and scored after every epoch: training (solid) and test (dashed) %s, "+
		"then loss. The rule picks an illustration of the paper's claim where one exists; whether low μ predicts generalization is "+
		"the correlations' question above.\n\n![Figure 1](%s)\n\n", d, d, id, high, fig.String(0, "metric"), figureName(d))
	b.WriteString("| μ | configuration | μ value | ‖H‖_F | final training | final test | gap | epochs |\n|---|---|---|---|---|---|---|---|\n")
	for i := range fig.Rows {
		config := ""
		for j := range confs.Rows {
			if confs.String(j, "dataset") == d && confs.Int(j, "index") == fig.Int(i, "index") {
				config = confs.String(j, "config")
			}
		}
		fmt.Fprintf(b, "| %s | `%s` | %.4g | %.4g | %.4f | %.4f | %.4f | %d |\n", fig.String(i, "strong_convexity"), config, fig.Float(i, "mu"),
			fig.Float(i, "hessian_frobenius"), fig.Float(i, "train_metric"), fig.Float(i, "test_metric"), fig.Float(i, "gap"), fig.Int(i, "epochs"))
	}
	b.WriteString("\n")
}

// writeSettings lists each dataset's data sizes, space and what was left out.
func writeSettings(b *bytes.Buffer, sets []datasetRows) {
	b.WriteString("## Settings\n\n| dataset | run | preset | measured | train / val / test rows | space | epochs | Hessian rows | float |\n" +
		"|---|---|---|---|---|---|---|---|---|\n")
	for _, ds := range sets {
		st, confs := ds.run.Result.Table("settings"), ds.run.Result.Table("configurations")
		measured := 0
		for j := range confs.Rows {
			measured += b2i(confs.String(j, "dataset") == ds.dataset)
		}
		for i := range st.Rows {
			if st.String(i, "dataset") == ds.dataset {
				fmt.Fprintf(b, "| %s | %d | %s | %d of %d | %d / %d / %d | %s | %d | %d | %s |\n", ds.dataset, ds.run.ID, ds.run.Result.Preset, measured,
					st.Int(i, "configs"), st.Int(i, "train"), st.Int(i, "val"), st.Int(i, "test"), st.String(i, "space"), st.Int(i, "epochs"),
					st.Int(i, "hessian_rows"), st.String(i, "dtype"))
			}
		}
	}
	var notes []string
	for _, ds := range sets {
		if nt := ds.run.Result.Table(experiments.NotesTable); nt != nil {
			for i := range nt.Rows {
				if nt.String(i, "dataset") == ds.dataset {
					notes = append(notes, fmt.Sprintf("- %s: %s", ds.dataset, nt.String(i, "note")))
				}
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nLeft out:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	b.WriteString("\n")
}

// writeRuns gives each run's flags and times.
func writeRuns(b *bytes.Buffer, sets []datasetRows) {
	b.WriteString("## Runs\n\n")
	seen := map[int64][]string{}
	var order []StoredRun
	for _, ds := range sets {
		if _, ok := seen[ds.run.ID]; !ok {
			order = append(order, ds.run)
		}
		seen[ds.run.ID] = append(seen[ds.run.ID], ds.dataset)
	}
	var total time.Duration
	for _, sr := range order {
		if st := sr.Result.Table("settings"); st != nil && sr.Done < sr.Cells {
			var pending []string
			for i := range st.Rows {
				if d := st.String(i, "dataset"); !slices.Contains(seen[sr.ID], d) {
					pending = append(pending, d)
				}
			}
			fmt.Fprintf(b, "Run %d is incomplete (%d of %d configurations measured; not reached yet: %s); `--resume` continues it.\n\n",
				sr.ID, sr.Done, sr.Cells, strings.Join(pending, ", "))
		}
	}
	b.WriteString("| run | datasets | configurations measured | wall time | cell seconds | flags |\n|---|---|---|---|---|---|\n")
	for _, sr := range order {
		var flags []string
		for k, v := range sr.Result.Params {
			flags = append(flags, "--"+k+" "+v)
		}
		slices.Sort(flags)
		fmt.Fprintf(b, "| %d | %s | %d of %d | %s | %.0f | `--preset %s --seed %d %s` |\n", sr.ID, strings.Join(seen[sr.ID], ", "), sr.Done, sr.Cells,
			sr.Wall.Round(time.Second), sr.CellSeconds, sr.Result.Preset, sr.Result.Seed, strings.Join(flags, " "))
		total += sr.Wall
	}
	fmt.Fprintf(b, "\nTotal wall time: %s, on the machine that ran the cells (shared with other work, so an upper bound of the cost).\n", total.Round(time.Second))
}

// verdict is premise.md's opening, counted from the correlations and Figure 1 so that it stays
// true when the page is regenerated: whether μ's correlations have the premise's signs and
// are significant, whether the Hessian measures do better or contradict it, and what Figure 1
// shows.
func verdict(sets []datasetRows, runs []StoredRun) string {
	type row struct {
		dataset            string
		n                  int
		rhoT, pT, rhoG, pG float64
		ciT, ciG           string // ρ with its interval, as the table writes it
	}
	by := map[string][]row{}
	nLo, nHi := math.MaxInt, 0
	for _, ds := range sets {
		s := ds.run.Result.Table("summary")
		for _, i := range ds.rows {
			if math.IsNaN(s.Float(i, "rho_test")) {
				continue
			}
			r := row{ds.dataset, s.Int(i, "n"), s.Float(i, "rho_test"), s.Float(i, "p_test"), s.Float(i, "rho_gap"), s.Float(i, "p_gap"),
				withCI(s, i, "rho_test"), withCI(s, i, "rho_gap")}
			by[s.String(i, "measure")] = append(by[s.String(i, "measure")], r)
			nLo, nHi = min(nLo, r.n), max(nHi, r.n)
		}
	}
	mu := by["mu"]
	if len(mu) == 0 {
		return ""
	}
	var testNeg, gapPos int
	var testSig, gapSig []string
	for _, r := range mu {
		testNeg += b2i(r.rhoT < 0)
		gapPos += b2i(r.rhoG > 0)
		if r.rhoT < 0 && r.pT < 0.05 {
			testSig = append(testSig, fmt.Sprintf("%s ρ = %s, p = %s", r.dataset, r.ciT, pval(r.pT)))
		}
		if r.rhoG > 0 && r.pG < 0.05 {
			gapSig = append(gapSig, fmt.Sprintf("%s ρ = %s, p = %s", r.dataset, r.ciG, pval(r.pG)))
		}
	}
	support := "is not supported"
	switch {
	case len(testSig) > len(mu)/2:
		support = "is supported"
	case len(testSig)+len(gapSig) > 0:
		support = "is at best weakly supported"
	}
	listed := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return " (" + strings.Join(xs, "; ") + ")"
	}
	s := []string{fmt.Sprintf("AHSC's premise, that a low one-epoch strong convexity μ predicts better generalization, %s here: over %d datasets "+
		"(%s configurations each, one split), μ's Spearman correlation with the final test metric has the predicted negative sign on %d "+
		"and is significant (5%%, uncorrected) on %d%s; with the generalization gap it has the predicted positive sign on %d and is "+
		"significant on %d%s.", support, len(mu), rangeInts(nLo, nHi), testNeg, len(testSig), listed(testSig), gapPos, len(gapSig), listed(gapSig))}
	var against []string
	var hessSig int
	for _, m := range measures[1:] {
		for _, r := range by[m.name] {
			if r.pT < 0.05 && r.rhoT < 0 || r.pG < 0.05 && r.rhoG > 0 {
				hessSig++
			}
			if r.pT < 0.05 && r.rhoT > 0 {
				against = append(against, fmt.Sprintf("%s on %s, ρ_test = %s", m.name, r.dataset, r.ciT))
			}
			if r.pG < 0.05 && r.rhoG < 0 {
				against = append(against, fmt.Sprintf("%s on %s, ρ_gap = %s", m.name, r.dataset, r.ciG))
			}
		}
	}
	line := fmt.Sprintf("The Hessian measures μ stands for (Section 3.2's sharpness bound) have a significant correlation of the predicted sign "+
		"in %d of %d dataset–measure pairs", hessSig, 3*len(mu))
	if len(against) > 0 {
		line += fmt.Sprintf(" and %d of the opposite sign (%s), where sharper minima generalized better", len(against), strings.Join(against, "; "))
	}
	s = append(s, line+".")
	if id, res := latestFigure(runs); res != nil {
		fig := res.Table("figure1")
		s = append(s, fmt.Sprintf("Figure 1 (%s, run %d) pairs the least-μ configuration (final training %s %.3f, test %.3f) with a high-μ one "+
			"(μ %.3g against %.3g; training %.3f, test %.3f) chosen by the rule stated below, so it illustrates the paper's picture; it is "+
			"one pair, and the correlations are the test of the premise.", fig.String(0, "dataset"), id, fig.String(0, "metric"),
			fig.Float(0, "train_metric"), fig.Float(0, "test_metric"), fig.Float(1, "mu"), fig.Float(0, "mu"),
			fig.Float(1, "train_metric"), fig.Float(1, "test_metric")))
	}
	tests := 0
	for _, rs := range by {
		tests += 2 * len(rs)
	}
	s = append(s, fmt.Sprintf("The p-values are not corrected for the %d tests; with one split and a few dozen configurations per dataset, "+
		"a weak effect could be missed, but not a strong one.", tests))
	return "**Verdict.** " + strings.Join(s, " ") + "\n"
}

func rangeInts(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}
