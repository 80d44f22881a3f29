package ahsc

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
	"github.com/hyperflat/hyperflat/store"
)

// StoredRun is one stored ahsc run as the published Table 1 reads it: its assembled result
// (experiments.Report) and its timing in the store.
type StoredRun struct {
	ID     int64
	Result *experiments.Result
	// Wall is the run's wall time (its first claim to its last completion), CellSeconds the
	// sum of its cells' seconds (CellSeconds).
	Wall        time.Duration
	CellSeconds float64
	// Spans are its done cells' spans (store.CellSpans): their union is the time the run was
	// being computed, which Wall overstates for a run resumed across sessions.
	Spans []store.Span
	// Builds are the code versions (experiments.CodeVersion: revision and BLAS) that computed
	// the run's cells; CellBuilds each done cell's (cell key → code version).
	Builds     []string
	CellBuilds map[string]string
}

// adamOf is a result's --adam (runs stored before the flag existed are torch).
func adamOf(r *experiments.Result) string {
	if r.Params["adam"] == adamHat {
		return adamHat
	}
	return adamTorch
}

// protocolOf is a result's --protocol (runs stored before the flag existed are clean).
func protocolOf(r *experiments.Result) string {
	if p := r.Params["protocol"]; p != "" {
		return p
	}
	return protocolClean
}

// whiteboxRun tells whether a run recorded white-box signals (--whitebox): such runs are the
// study of beyond.md, not Table 1's.
func whiteboxRun(r *experiments.Result) bool {
	ev := r.Table("evaluations")
	return ev != nil && ev.Column("whitebox_eq7") >= 0
}

// Table1Cells is every dataset × protocol × method cell of the stored runs, each from the
// latest run (highest ID) holding that dataset under that protocol, of the runs that ran AHSC
// itself (a run of its variants alone is a study of them, not a Table 1): our mean and median over
// the repeats (the mean is what Bayesmark and the paper's Bayesmark cells report), the
// paper's value, whether the cell is statistically best among its dataset's methods (the
// summary's stats.Compare: pairwise Mann–Whitney U, two-stage Benjamini–Hochberg at 5%), n,
// Bayesmark's generalization score and the mean seconds of a search.
func Table1Cells(runs ...StoredRun) (experiments.Table, error) {
	t := experiments.Table{Name: "table1_cells", Columns: []string{"dataset", "protocol", "method", "metric", "mean", "median", "paper", "best", "n",
		"generalization_mean", "generalization_median", "mean_seconds", "preset", "run",
		"mean_ci_low", "mean_ci_high", "median_ci_low", "median_ci_high", "generalization_mean_ci_low", "generalization_mean_ci_high",
		"generalization_median_ci_low", "generalization_median_ci_high", "evaluations_min", "evaluations_max",
		"mean_seconds_ci_low", "mean_seconds_ci_high"}}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b StoredRun) int { return int(b.ID - a.ID) })
	seen := map[[2]string]bool{}
	var rows [][]any
	for _, sr := range sorted {
		if sr.Result == nil || sr.Result.Experiment != "ahsc" {
			return t, fmt.Errorf("ahsc: run %d is not an ahsc result", sr.ID)
		}
		s := sr.Result.Table("summary")
		if s == nil {
			return t, fmt.Errorf("ahsc: run %d has no summary table", sr.ID)
		}
		if !hasMethod(s, "ahsc") {
			continue // a study of AHSC's variants (variantRuns): the Runs section lists it, Table 1 does not
		}
		if whiteboxRun(sr.Result) {
			continue // the beyond study's (beyond.md), of two methods: it would hide a dataset's six-method row
		}
		proto := protocolOf(sr.Result)
		claimed := map[string]bool{}
		searches := map[string][]run{}
		for i := range s.Rows {
			d, m := s.String(i, "dataset"), s.String(i, "method")
			if seen[[2]string{d, proto}] {
				continue // a later run holds this dataset
			}
			claimed[d] = true
			if _, ok := searches[d]; !ok {
				searches[d] = storedSearches(sr.Result, d)
			}
			values, gen, secs := repeatValues(sr.Result, d, m)
			secCI := ciOf(secs, stats.Mean)
			mean, median := ciOf(values, stats.Mean), ciOf(values, stats.Median)
			gMean, gMedian := ciOf(gen, stats.Mean), ciOf(gen, stats.Median)
			lo, hi := callRange(searches[d], m)
			rows = append(rows, []any{d, proto, m, s.String(i, "metric"), s.Float(i, "mean"), s.Float(i, "median"),
				s.Float(i, "paper"), isTrue(s.Value(i, "best")), s.Int(i, "n"), s.Float(i, "generalization_mean"),
				s.Float(i, "generalization_median"), s.Float(i, "seconds"), sr.Result.Preset, sr.ID,
				mean.Low, mean.High, median.Low, median.High, gMean.Low, gMean.High, gMedian.Low, gMedian.High, lo, hi, secCI.Low, secCI.High})
		}
		for d := range claimed {
			seen[[2]string{d, proto}] = true
		}
	}
	order := allSets()
	rank := func(d string) int {
		if i := slices.Index(order, d); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		if c := strings.Compare(a[1].(string), b[1].(string)); c != 0 {
			return c // authors before clean
		}
		return rank(a[0].(string)) - rank(b[0].(string))
	})
	t.Rows = rows
	return t, nil
}

// runVariant is what sets a run apart beyond protocol, preset and Adam: the Bayesmark sets'
// model (--bayesmark-model), methods other than the default ones, ahsc-bbo's screening.
func runVariant(r *experiments.Result, datasets []string) string {
	var parts []string
	if slices.ContainsFunc(datasets, func(d string) bool { return groupOf(d) == bayesmark }) {
		parts = append(parts, "model "+modelOf(r))
	}
	if m := r.Params["methods"]; m != "" && m != strings.Join(DefaultMethods, ",") {
		parts = append(parts, "methods "+m)
	}
	if sc := r.Params["bbo-screen"]; sc != "" {
		parts = append(parts, "screening "+sc)
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, "; ")
}

// hasMethod reports whether a summary table has rows of method m.
func hasMethod(s *experiments.Table, m string) bool {
	for i := range s.Rows {
		if s.String(i, "method") == m {
			return true
		}
	}
	return false
}

func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true"
	}
	return false
}

// WriteTable1CSV writes the cells as CSV (NaN for a missing value).
func WriteTable1CSV(w io.Writer, t experiments.Table) error {
	c := csv.NewWriter(w)
	if err := c.Write(t.Columns); err != nil {
		return err
	}
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for k, v := range row {
			if f, ok := v.(float64); ok {
				cells[k] = strconv.FormatFloat(f, 'g', -1, 64)
			} else {
				cells[k] = fmt.Sprint(v)
			}
		}
		if err := c.Write(cells); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// Table1Markdown renders the stored runs as the published Table 1: per protocol, a row per
// dataset and a column per method, each cell our value (the mean for Bayesmark scores, as
// the paper's are; the median otherwise), ** when statistically best, the paper's value and
// n; then the runs with their wall times, and every cell's detail. ao, the authors' stored
// Bayesmark outputs re-scored (nil: none), adds their section beside our authors' pooling.
func Table1Markdown(command string, inProgress []RunProgress, ao *AuthorsOutputs, runs ...StoredRun) ([]byte, error) {
	t, err := Table1Cells(runs...)
	if err != nil {
		return nil, err
	}
	eqCells, au, err := budgetTables(t, runs)
	if err != nil {
		return nil, err
	}
	eq := eqCells.table()
	var b bytes.Buffer
	b.WriteString("# AHSC Table 1, reproduced\n\n")
	if v := table1Verdict(t, eq, au, ao, runs); v != "" {
		b.WriteString(v + "\n")
	}
	fmt.Fprintf(&b, "Generated by `%s`; do not edit by hand. %s "+
		"Cells: our value (mean over repeats for Bayesmark scores, as the paper's Bayesmark cells are; median otherwise), "+
		"its bootstrap 95%% interval over the repeats in brackets (percentile method, %d resamples, seed %d; stats.Bootstrap), "+
		"**bold** when no other method is significantly better (pairwise Mann–Whitney U, two-stage Benjamini–Hochberg at 5%%, "+
		"as the paper), the paper's value in parentheses, n the repeats with a result, and the calls of the objective each search made "+
		"(full-fidelity evaluations: BOHB's lower rungs and AHSC's one-epoch screenings are not counted). The methods' budgets differ, "+
		"as in the authors' code (on the Bayesmark sets under the authors' protocol AHSC makes 15 calls and the black-box methods a budget "+
		"of 45, BOHB's spent partly on lower rungs): [Equal budgets](#equal-budgets-every-method-at-ahscs-count-of-calls) scores "+
		"every method at AHSC's count, and the Reading is counted from it. The protocols are described in [ahsc-protocol.md](ahsc-protocol.md). The stored runs themselves, every evaluation of every cell, are kept beside this page in "+
		"[runs/](runs/), one gzip-compressed JSON-lines file per run written by `hyperflat export --dir`; the import in the command "+
		"above rebuilds a store from them, which `hyperflat run ... --resume` continues. The CSV beside this page, table1.csv, has "+
		"every cell with the intervals of its mean and median (`mean_ci_low`, `mean_ci_high`, ...) and its calls.\n", command,
		experiments.RegenerationData(true), bootResamples, bootSeed)
	for _, proto := range []string{protocolAuthors, protocolClean} {
		writeProtocolTable(&b, t, proto, inProgress)
	}
	writeImageSection(&b, t, runs, inProgress)
	writeBudgetSections(&b, t, eq, au, runs)
	writeAuthorsOutputs(&b, ao, au)
	writeBudgetReading(&b, t, eq)
	writeAuthorsBOHB(&b, runs)
	writeAuthorsParser(&b, runs)
	writeFigure2Section(&b, t, runs)
	b.WriteString("\n## Runs\n\n| run | protocol | preset | datasets | Adam's ε | variant | computing | wall time | cell time | builds |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var wall time.Duration
	var cells float64
	var spans []store.Span
	for _, sr := range runs {
		var ds []string
		if s := sr.Result.Table("summary"); s != nil {
			for i := range s.Rows {
				if d := s.String(i, "dataset"); !slices.Contains(ds, d) {
					ds = append(ds, d)
				}
			}
		}
		builds := "–"
		if len(sr.Builds) > 0 {
			builds = "`" + strings.Join(sr.Builds, "`, `") + "`"
		}
		computing := "–"
		if len(sr.Spans) > 0 {
			computing = store.Covered(sr.Spans...).Round(time.Second).String()
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sr.ID, protocolOf(sr.Result), sr.Result.Preset, strings.Join(ds, ", "),
			adamOf(sr.Result), runVariant(sr.Result, ds), computing, sr.Wall.Round(time.Second), seconds(sr.CellSeconds), builds)
		wall += sr.Wall
		cells += sr.CellSeconds
		spans = append(spans, sr.Spans...)
	}
	fmt.Fprintf(&b, "\nTotal: these runs were computed in %s of wall time (computing: the time during which at least one of their cells was "+
		"being computed, the union of every finished cell's span from its last claim to its completion, so the hours between sessions "+
		"do not count; two runs computed side by side each count the hours they shared, so the column sums to more), %s of cell time (the sum of the cells' own "+
		"seconds across their attempts, about the core time; a cell resumed by a build that stored its last attempt's seconds only "+
		"counts its search's seconds, its replayed evaluations at their first cost; a call answered from the record, a repeat of "+
		"an earlier one, costs nothing here, though the search's own seconds, as Figure 2 shows them, count it) and %s summed over the runs from first claim to last completion (wall time; a run resumed across "+
		"sessions counts the hours between them). Adam's ε: where every model's Adam adds it (`--adam`): "+
		"hat, to the uncorrected √v as Keras and scikit-learn do (the authors' libraries), or torch, to the bias-corrected √v̂ as "+
		"PyTorch does (the runs stored before the flag; see ahsc-protocol.md, row 25). Builds: the code versions that computed a run's cells "+
		"(revision, then the BLAS: the pure-Go and OpenBLAS builds sum products in different orders). Variant: the model the Bayesmark "+
		"sets train (`--bayesmark-model`: sklearn, scikit-learn's MLPClassifier, or hyperflat, this project's MLP: the runs before the "+
		"flag and the clean protocol's), methods other than the six, and ahsc-bbo's screening (`--bbo-screen`); Table 1 shows, per dataset "+
		"and protocol, the latest run that ran AHSC, and the other runs stay here and in runs/ for comparison.\n",
		store.Covered(spans...).Round(time.Second), seconds(cells), wall.Round(time.Second))
	if dirty := dirtyCells(runs); len(dirty) > 0 {
		fmt.Fprintf(&b, "\nCells computed by a build that names no exact revision (`+dirty`: a tree with uncommitted changes, its code "+
			"not exactly the revision it names; `devel`: a binary without VCS information; the store records each cell's build): %s.\n", strings.Join(dirty, "; "))
	}
	b.WriteString("\n## Every cell\n\nMeans and medians over the repeats with their bootstrap 95% intervals (as above); the mean seconds " +
		"are the searches' wall times on a shared machine.\n\n| dataset | protocol | method | metric | mean | median | paper | best | n | " +
		"generalization mean | mean seconds | calls | run |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i := range t.Rows {
		iv := func(col string) string {
			return ivText(stats.Interval{Low: t.Float(i, col+"_ci_low"), High: t.Float(i, col+"_ci_high")}, 4)
		}
		calls := strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(callsText(t.Int(i, "evaluations_min"), t.Int(i, "evaluations_max")), " calls"), " call"), ", ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %v | %d | %s | %s | %s | %d |\n", t.String(i, "dataset"), t.String(i, "protocol"),
			t.String(i, "method"), t.String(i, "metric"), num(t.Float(i, "mean"), 4)+iv("mean"), num(t.Float(i, "median"), 4)+iv("median"),
			num(t.Float(i, "paper"), 4), isTrue(t.Value(i, "best")), t.Int(i, "n"), num(t.Float(i, "generalization_mean"), 4)+iv("generalization_mean"),
			num(t.Float(i, "mean_seconds"), 3)+ivText(stats.Interval{Low: t.Float(i, "mean_seconds_ci_low"), High: t.Float(i, "mean_seconds_ci_high")}, 3),
			calls, t.Int(i, "run"))
	}
	return b.Bytes(), nil
}

// writeProtocolTable writes one protocol's Table 1 layout of the tabular datasets, if it has
// cells (the images have their own section: their runs here use reduced protocols).
func writeProtocolTable(b *bytes.Buffer, t experiments.Table, proto string, inProgress []RunProgress) {
	datasets := layoutRows(b, t, proto, "## Protocol "+proto, func(d string) bool { return groupOf(d) != image }, nil)
	if len(datasets) == 0 {
		fmt.Fprintf(b, "\n## Protocol %s\n\nNo finished run.\n", proto)
	}
	writeProgress(b, append(slices.Clone(bayesmarkSets), openMLSets...), []string{proto},
		func(d, _ string) bool { return slices.Contains(datasets, d) }, inProgress,
		func(ds []string) string {
			return fmt.Sprintf("Not yet run under this protocol (of the 12 tabular datasets): %s.", strings.Join(ds, ", "))
		})
}

// writeProgress lists which datasets of want have no finished run under protos: those being
// computed (each run of inProgress under one of protos, named with its protocol when there are
// several), those whose run has no finished cell yet (submitted, or just started), and then,
// in the line missing writes, those with no run at all.
func writeProgress(b *bytes.Buffer, want, protos []string, finished func(dataset, proto string) bool, inProgress []RunProgress, missing func([]string) string) {
	var running, queued, none []string
	for _, d := range want {
		var on, waiting []string
		done := false
		for _, proto := range protos {
			if finished(d, proto) {
				done = true
				continue
			}
			// Only the newest run counts: Table1Cells shows the latest run of a dataset, so
			// an older unfinished one (e.g. one computed before a protocol fix) will never be
			// shown and is named only as superseded.
			var newest *RunProgress
			var older []string
			for i := range inProgress {
				p := &inProgress[i]
				if p.Dataset != d || p.Protocol != proto {
					continue
				}
				if newest == nil || p.ID > newest.ID {
					if newest != nil {
						older = append(older, strconv.FormatInt(newest.ID, 10))
					}
					newest = p
				} else {
					older = append(older, strconv.FormatInt(p.ID, 10))
				}
			}
			if newest == nil {
				continue
			}
			desc := newest.describe()
			if len(older) > 0 {
				slices.Sort(older)
				desc += ", superseding run " + strings.Join(older, ", ")
			}
			if len(protos) > 1 {
				desc = proto + ": " + desc
			}
			if newest.Done == 0 {
				waiting = append(waiting, desc)
			} else {
				on = append(on, desc)
			}
		}
		if len(on) > 0 {
			running = append(running, fmt.Sprintf("%s (%s)", d, strings.Join(on, "; ")))
		}
		if len(waiting) > 0 {
			queued = append(queued, fmt.Sprintf("%s (%s)", d, strings.Join(waiting, "; ")))
		}
		if len(on)+len(waiting) == 0 && !done {
			none = append(none, d)
		}
	}
	if len(running) > 0 {
		fmt.Fprintf(b, "\nIn progress, not in the table until finished (time left on one core: each unfinished cell at "+
			"the mean of its method's cells, the finished ones and those under way at the time their records have "+
			"reached, or at least at the mean of all finished cells while its method has none; a cell under way, at "+
			"what is left of that mean; the finished cells, those of the build that finished the latest one, where "+
			"it finished cells of the method): %s.\n", strings.Join(running, ", "))
	}
	if len(queued) > 0 {
		fmt.Fprintf(b, "\nSubmitted to the store, no cell finished yet: %s.\n", strings.Join(queued, ", "))
	}
	if len(none) > 0 {
		fmt.Fprintf(b, "\n%s\n", missing(none))
	}
}

// layoutRows writes, under heading, the Table 1 layout of proto's cells of the datasets keep
// accepts (nothing when there are none) and returns those datasets.
func layoutRows(b *bytes.Buffer, t experiments.Table, proto, heading string, keep func(string) bool, label func(string) string) []string {
	var datasets, methods []string
	for i := range t.Rows {
		if t.String(i, "protocol") != proto || !keep(t.String(i, "dataset")) {
			continue
		}
		if d := t.String(i, "dataset"); !slices.Contains(datasets, d) {
			datasets = append(datasets, d)
		}
		if m := t.String(i, "method"); !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	if len(datasets) == 0 {
		return nil
	}
	fmt.Fprintf(b, "\n%s\n\n| dataset | metric | %s |\n|---|---|%s\n", heading, strings.Join(methods, " | "), strings.Repeat("---|", len(methods)))
	var lookalikes []string
	for _, d := range datasets {
		cells := make([]string, len(methods))
		metric := ""
		var rows []int
		for i := range t.Rows {
			if t.String(i, "protocol") != proto || t.String(i, "dataset") != d {
				continue
			}
			metric = t.String(i, "metric")
			k := slices.Index(methods, t.String(i, "method"))
			cells[k] = markdownCell(t, i)
			rows = append(rows, i)
		}
		name := d
		if label != nil {
			name = label(d)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, metric, strings.Join(cells, " | "))
		lookalikes = append(lookalikes, lookalikeCells(t, d, rows)...)
	}
	if len(lookalikes) > 0 {
		fmt.Fprintf(b, "\nNot bold though printed like a bold cell of its row (the test compares every repeat's value, "+
			"not the rounded ones; the means to one more place): %s.\n", strings.Join(lookalikes, "; "))
	}
	return datasets
}

// lookalikeCells names the cells among dataset d's rows that are not bold yet print the same
// value as a bold cell of the row, e.g. a median ROC-AUC of 0.99999 beside 1.00000, both
// 1.000, where the Mann–Whitney test still tells them apart over the repeats. Such a cell
// reads as a tie that the table's bold says is not one, so the table says why.
func lookalikeCells(t experiments.Table, d string, rows []int) []string {
	if len(rows) == 0 {
		return nil
	}
	_, prec := cellValue(t.String(rows[0], "metric"), 0, 0)
	shown := func(i int) string {
		if t.Int(i, "n") == 0 {
			return ""
		}
		return num(shownValue(t, i), prec)
	}
	var out []string
	for _, i := range rows {
		if isTrue(t.Value(i, "best")) || shown(i) == "" {
			continue
		}
		var like []string
		for _, j := range rows {
			if isTrue(t.Value(j, "best")) && shown(j) == shown(i) {
				like = append(like, fmt.Sprintf("%s %s", t.String(j, "method"), num(t.Float(j, "mean"), prec+1)))
			}
		}
		if len(like) > 0 {
			out = append(out, fmt.Sprintf("%s, %s %s (mean %s; bold: %s)", d, t.String(i, "method"), shown(i),
				num(t.Float(i, "mean"), prec+1), strings.Join(like, ", ")))
		}
	}
	return out
}

// writeImageSection is Table 1's MNIST and SVHN rows, per protocol, each with the settings of
// the run it comes from: at the paper's sizes (all 60,000 MNIST images, 50-epoch baselines,
// 20 repeats) the grid is far beyond a few cores (ahsc-protocol.md gives its measured cost and
// the command that runs it on a cluster), so the runs here may be reduced.
func writeImageSection(b *bytes.Buffer, t experiments.Table, runs []StoredRun, inProgress []RunProgress) {
	b.WriteString("\n## Images\n\nThe paper's protocol: all training and test images, 50-epoch baselines, 20 repeats " +
		"(AHSC's finalists 100 epochs in the authors' code). Each row's own settings are listed under its table; " +
		"[ahsc-protocol.md](ahsc-protocol.md) has the measured cost of the paper's sizes and the command that runs them.\n")
	finished := map[string][]string{} // protocol → datasets
	for _, proto := range []string{protocolAuthors, protocolClean} {
		ds := layoutRows(b, t, proto, "### Images, protocol "+proto, func(d string) bool { return groupOf(d) == image },
			func(d string) string { return reducedLabel(t, runs, d, proto) })
		if len(ds) > 0 {
			b.WriteString("\n")
		}
		for _, d := range ds {
			fmt.Fprintf(b, "- %s: %s.\n", d, imageSettings(t, runs, d, proto))
		}
		finished[proto] = ds
	}
	writeProgress(b, imageSets, []string{protocolAuthors, protocolClean},
		func(d, proto string) bool { return slices.Contains(finished[proto], d) }, inProgress,
		func(ds []string) string {
			return fmt.Sprintf("Not yet run: %s (for SVHN, the data and the message a run without it prints: ahsc-protocol.md).", strings.Join(ds, ", "))
		})
}

// reducedLabel names a dataset in its table row, an image dataset with how its run is
// reduced from the paper's protocol (all training images, 50-epoch trainings, 20 repeats) when it is.
func reducedLabel(t experiments.Table, runs []StoredRun, dataset, proto string) string {
	p := runParams(t, runs, dataset, proto)
	if p == nil || groupOf(dataset) != image {
		return dataset
	}
	var parts []string
	if v := p["image-train"]; v != "" && v != "0" {
		parts = append(parts, v+" training images")
	}
	if e, err := strconv.Atoi(p["image-epochs"]); err == nil && e > 0 && e < 50 {
		parts = append(parts, fmt.Sprintf("≤ %d epochs", e))
	}
	if r, err := strconv.Atoi(p["repeats"]); err == nil && r > 0 && r < 20 {
		parts = append(parts, fmt.Sprintf("%d repeats", r))
	}
	if len(parts) == 0 {
		return dataset
	}
	return fmt.Sprintf("%s (**reduced**: %s)", dataset, strings.Join(parts, ", "))
}

// runParams are the parameters of the run Table 1's cells of dataset under proto come from.
func runParams(t experiments.Table, runs []StoredRun, dataset, proto string) map[string]string {
	for i := range t.Rows {
		if t.String(i, "dataset") != dataset || t.String(i, "protocol") != proto {
			continue
		}
		for _, sr := range runs {
			if sr.ID == int64(t.Int(i, "run")) {
				return sr.Result.Params
			}
		}
	}
	return nil
}

// imageSettings describes the sizes of the run Table 1's cells of dataset under proto come
// from.
func imageSettings(t experiments.Table, runs []StoredRun, dataset, proto string) string {
	var id int64
	for i := range t.Rows {
		if t.String(i, "dataset") == dataset && t.String(i, "protocol") == proto {
			id = int64(t.Int(i, "run"))
		}
	}
	for _, sr := range runs {
		if sr.ID != id {
			continue
		}
		p := sr.Result.Params
		kept := func(flag string) string {
			if v := p[flag]; v != "" && v != "0" {
				return v
			}
			return "all"
		}
		return fmt.Sprintf("run %d, preset %s: training images %s (--image-train), test images %s (--image-test), epochs per full training ≤ %s "+
			"(--image-epochs), %s evaluations per black-box method, AHSC N1 = %s, N2 = %s, %s repeats",
			sr.ID, sr.Result.Preset, kept("image-train"), kept("image-test"), p["image-epochs"], p["budget"], p["n1"], p["n2"], p["repeats"])
	}
	return "settings unknown"
}

// shownValue is the value a Table 1 cell shows: the mean for Bayesmark scores (as the
// paper's are), the median otherwise.
func shownValue(t experiments.Table, i int) float64 {
	v, _ := cellValue(t.String(i, "metric"), t.Float(i, "mean"), t.Float(i, "median"))
	return v
}

func markdownCell(t experiments.Table, i int) string {
	if t.Int(i, "n") == 0 {
		return "failed"
	}
	metric := t.String(i, "metric")
	v, prec := cellValue(metric, t.Float(i, "mean"), t.Float(i, "median"))
	iv := stats.Interval{Low: t.Float(i, "median_ci_low"), High: t.Float(i, "median_ci_high")}
	if metric == "score" {
		iv = stats.Interval{Low: t.Float(i, "mean_ci_low"), High: t.Float(i, "mean_ci_high")}
	}
	cell := num(v, prec)
	if isTrue(t.Value(i, "best")) {
		cell = "**" + cell + "**"
	}
	cell += ivText(iv, prec)
	if paper := t.Float(i, "paper"); !math.IsNaN(paper) {
		cell += " (" + num(paper, prec) + ")"
	}
	return cell + fmt.Sprintf(" n=%d", t.Int(i, "n")) + callsText(t.Int(i, "evaluations_min"), t.Int(i, "evaluations_max"))
}

// ivText prints an interval after its value, " [low, high]"; nothing when it is unknown.
func ivText(iv stats.Interval, prec int) string {
	if math.IsNaN(iv.Low) || math.IsNaN(iv.High) {
		return ""
	}
	return " [" + num(iv.Low, prec) + ", " + num(iv.High, prec) + "]"
}

// callsText prints a cell's full-fidelity calls per search, ", 45 calls" (a range when the
// searches differ); nothing when unknown.
func callsText(lo, hi int) string {
	switch {
	case hi == 0:
		return ""
	case lo == 1 && hi == 1:
		return ", 1 call"
	case lo == hi:
		return fmt.Sprintf(", %d calls", hi)
	}
	return fmt.Sprintf(", %d–%d calls", lo, hi)
}

// cellValue is the value a Table 1 cell shows and its decimals: the mean for Bayesmark scores
// (as the paper's Bayesmark cells are), the median otherwise.
func cellValue(metric string, mean, median float64) (v float64, prec int) {
	switch {
	case metric == "score":
		return mean, 2
	case strings.HasSuffix(metric, "%"): // the images' accuracy in %, as the paper prints it
		return median, 2
	}
	return median, 3
}

func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}
