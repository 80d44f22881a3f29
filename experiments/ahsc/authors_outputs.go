package ahsc

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/stats"
)

// The authors' stored Bayesmark outputs, re-scored: docs/reproduction/authors_bayesmark.csv
// is written by AuthorsBayesmarkCommand from a fetched copy of yrahul3910/flatness-guided-hpo
// (their files are not in this repository: it has no licence), and AuthorsOutputsSection
// renders it as a section of table1.md.

// AuthorsBayesmarkCommand recomputes docs/reproduction/authors_bayesmark.csv; MIRROR is a
// git directory of yrahul3910/flatness-guided-hpo (a clone, or the bare mirror the fetch
// tool makes). 33a136d holds the 15-call runs of AHSC (stcvx) and random, deleted by 71d8272;
// 2f2815c the 45-call runs (strongcvx) that bbo_challenge/stats/*.py read.
const AuthorsBayesmarkCommand = "hyperflat bayesmark score --git-dir MIRROR --format csv --out docs/reproduction/authors_bayesmark.csv " +
	"'33a136d:bbo_challenge/results/*_stcvx_min' '2f2815c:bbo_challenge/results/*_stcvx'"

// authorsCell is one row of the CSV.
type authorsCell struct {
	source, dataset, method, commit, evalPath, basePath string
	baseline                                            string // stored or recomputed
	studies, calls                                      int
	mean, lo, hi, baseDiff                              float64
	resamples, seed                                     string
	cvAcc                                               float64 // cv_accuracy_median (NaN: an older CSV without it)
}

// authorsSeries is one commit's runs at one number of calls.
type authorsSeries struct {
	commit string
	calls  int
	ahsc   map[string]authorsCell // by dataset
	random map[string]authorsCell
}

// readAuthorsCSV reads `bayesmark score --format csv` output.
func readAuthorsCSV(r io.Reader) ([]authorsCell, error) {
	recs, err := csv.NewReader(io.LimitReader(r, 16<<20)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("authors' Bayesmark CSV: %w", err)
	}
	if len(recs) < 2 {
		return nil, errors.New("authors' Bayesmark CSV: no rows")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, need := range []string{"source", "dataset", "method", "studies", "calls_min", "calls_max", "mean", "ci_low", "ci_high",
		"source_commit", "eval_path", "baseline_path", "baseline", "baseline_diff", "resamples", "seed"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("authors' Bayesmark CSV: no column %q (write it with %s)", need, AuthorsBayesmarkCommand)
		}
	}
	var out []authorsCell
	for n, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			return nil, fmt.Errorf("authors' Bayesmark CSV: row %d has %d fields, want %d", n+2, len(rec), len(recs[0]))
		}
		num := func(c string) (float64, error) {
			v, err := strconv.ParseFloat(rec[col[c]], 64)
			if err != nil {
				return 0, fmt.Errorf("authors' Bayesmark CSV: row %d, %s: %w", n+2, c, err)
			}
			return v, nil
		}
		c := authorsCell{source: rec[col["source"]], dataset: rec[col["dataset"]], method: rec[col["method"]],
			commit: rec[col["source_commit"]], evalPath: rec[col["eval_path"]], basePath: rec[col["baseline_path"]],
			baseline: rec[col["baseline"]], resamples: rec[col["resamples"]], seed: rec[col["seed"]]}
		var vals [7]float64
		for i, name := range []string{"studies", "calls_min", "calls_max", "mean", "ci_low", "ci_high", "baseline_diff"} {
			if vals[i], err = num(name); err != nil {
				return nil, err
			}
		}
		if vals[1] != vals[2] {
			return nil, fmt.Errorf("authors' Bayesmark CSV: row %d: studies of %v to %v calls", n+2, vals[1], vals[2])
		}
		c.studies, c.calls, c.mean, c.lo, c.hi, c.baseDiff = int(vals[0]), int(vals[1]), vals[3], vals[4], vals[5], vals[6]
		c.cvAcc = math.NaN()
		if _, ok := col["cv_accuracy_median"]; ok {
			if c.cvAcc, err = num("cv_accuracy_median"); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// authorsSeriesOf groups the cells by commit and calls, in the CSV's order; each source holds
// random and one other optimizer, the authors' AHSC.
func authorsSeriesOf(cells []authorsCell) ([]*authorsSeries, error) {
	var series []*authorsSeries
	for _, c := range cells {
		if !slices.Contains(bayesmarkSets, c.dataset) {
			continue // diabetes: a regression set, not in Table 1
		}
		var s *authorsSeries
		for _, x := range series {
			if x.commit == c.commit && x.calls == c.calls {
				s = x
			}
		}
		if s == nil {
			s = &authorsSeries{commit: c.commit, calls: c.calls, ahsc: map[string]authorsCell{}, random: map[string]authorsCell{}}
			series = append(series, s)
		}
		m := s.ahsc
		if slices.Contains(DefaultRandomNames, c.method) {
			m = s.random
		}
		if prev, dup := m[c.dataset]; dup {
			return nil, fmt.Errorf("authors' Bayesmark CSV: commit %.7s, %d calls, %s: two optimizers (%s, %s) where one AHSC and random are expected",
				c.commit, c.calls, c.dataset, prev.method, c.method)
		}
		m[c.dataset] = c
	}
	if len(series) == 0 {
		return nil, errors.New("authors' Bayesmark CSV: none of breast, digits, iris, wine")
	}
	return series, nil
}

// AuthorsOutputs is the authors' stored Bayesmark outputs re-scored, as
// docs/reproduction/authors_bayesmark.csv (the output of AuthorsBayesmarkCommand) holds them.
type AuthorsOutputs struct {
	cells  []authorsCell
	series []*authorsSeries // the first is the 15-call runs the paper's AHSC column comes from
}

// ReadAuthorsOutputs reads authors_bayesmark.csv; it must hold AHSC and random of at least one
// of breast, digits, iris, wine.
func ReadAuthorsOutputs(r io.Reader) (*AuthorsOutputs, error) {
	if r == nil {
		return nil, errors.New("authors' Bayesmark CSV: no reader")
	}
	cells, err := readAuthorsCSV(r)
	if err != nil {
		return nil, err
	}
	series, err := authorsSeriesOf(cells)
	if err != nil {
		return nil, err
	}
	return &AuthorsOutputs{cells: cells, series: series}, nil
}

// randomCVAccuracy is the median cross-validated accuracy of the authors' stored random
// search on dataset in their first series (the 15-call runs), and its commit and calls.
func (a *AuthorsOutputs) randomCVAccuracy(dataset string) (acc float64, commit string, calls int, ok bool) {
	if a == nil {
		return math.NaN(), "", 0, false
	}
	c, ok := a.series[0].random[dataset]
	if !ok || math.IsNaN(c.cvAcc) {
		return math.NaN(), "", 0, false
	}
	return c.cvAcc, c.commit, c.calls, true
}

// aboveRandom counts the datasets of the first series where the authors' stored AHSC scores
// above their random search, among those of sets, and names them.
func (a *AuthorsOutputs) aboveRandom(sets []string) (above, n int) {
	if a == nil {
		return 0, 0
	}
	for _, d := range sets {
		x, okA := a.series[0].ahsc[d]
		r, okR := a.series[0].random[d]
		if okA && okR {
			n++
			above += b2i(x.mean > r.mean)
		}
	}
	return above, n
}

// section renders the outputs as table1.md's section "The authors' stored outputs,
// re-scored": a verdict, then per dataset (breast, digits, iris, wine) the paper's AHSC value,
// the authors' stored AHSC and random of the first series (commit and number of calls: the
// 15-call runs), each with its bootstrap 95% interval, and ours[dataset] (our AHSC and random
// cells, under the header oursLabel; absent: –); the other series (the 45-call runs) in a
// second table; and the commit and path of every file the figures come from.
func (ao *AuthorsOutputs) section(ours map[string][2]string, oursLabel string) string {
	cells, series := ao.cells, ao.series
	cell := func(c authorsCell, ok bool) string {
		if !ok {
			return "–"
		}
		return fmt.Sprintf("%.2f [%.2f, %.2f]", c.mean, c.lo, c.hi)
	}
	num := func(v float64, ok bool) string {
		if !ok || math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.2f", v)
	}
	oursCell := func(d string, k int) string {
		if o, ok := ours[d]; ok && o[k] != "" {
			return o[k]
		}
		return "–"
	}
	var b strings.Builder
	b.WriteString("## The authors' stored outputs, re-scored\n\n")
	main := series[0]
	var ahscVals, rndVals, gaps []string
	maxGap, above := 0.0, 0
	for _, d := range bayesmarkSets {
		a, okA := main.ahsc[d]
		r, okR := main.random[d]
		if okA {
			ahscVals = append(ahscVals, fmt.Sprintf("%s %.2f", d, a.mean))
			if p, ok := paperTable1[d]["ahsc"]; ok {
				maxGap = math.Max(maxGap, math.Abs(a.mean-p))
				gaps = append(gaps, fmt.Sprintf("%s %+.3f", d, a.mean-p))
			}
		}
		if okR {
			rndVals = append(rndVals, fmt.Sprintf("%s %.2f", d, r.mean))
		}
		if okA && okR && a.mean > r.mean {
			above++
		}
	}
	fmt.Fprintf(&b, "Re-scored by this project's Bayesmark scorer (`hyperflat bayesmark score`, the one that scores our runs), the authors' own "+
		"stored runs at commit %.7s (%d calls × 1 suggestion, %d studies, AHSC and random only, pooled together) give AHSC %s: the paper's AHSC column "+
		"within %.3f (stored minus paper: %s). Random search in the same runs scores %s, so AHSC is above random on %d of %d datasets of the authors' own pool.\n\n",
		main.commit, main.calls, anyStudies(main), strings.Join(ahscVals, ", "), maxGap, strings.Join(gaps, ", "), strings.Join(rndVals, ", "),
		above, len(main.ahsc))
	fmt.Fprintf(&b, "| dataset | paper's AHSC | authors' stored AHSC (%d calls) | authors' stored random (%d calls) | ours: AHSC, %s | ours: random, %s |\n"+
		"|---|---|---|---|---|---|\n", main.calls, main.calls, oursLabel, oursLabel)
	for _, d := range bayesmarkSets {
		a, okA := main.ahsc[d]
		r, okR := main.random[d]
		p, okP := paperTable1[d]["ahsc"]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", d, num(p, okP), cell(a, okA), cell(r, okR), oursCell(d, 0), oursCell(d, 1))
	}
	b.WriteString("\n" + authorsNote(cells) + "\n")
	for _, s := range series[1:] {
		fmt.Fprintf(&b, "\nThe authors' stored runs at commit %.7s, %d calls (their optimizer strongcvx, pooled with random only):\n\n"+
			"| dataset | authors' stored AHSC (%d calls) | authors' stored random (%d calls) |\n|---|---|---|\n", s.commit, s.calls, s.calls, s.calls)
		for _, d := range bayesmarkSets {
			a, okA := s.ahsc[d]
			r, okR := s.random[d]
			fmt.Fprintf(&b, "| %s | %s | %s |\n", d, cell(a, okA), cell(r, okR))
		}
	}
	b.WriteString("\nSources (yrahul3910/flatness-guided-hpo; not copied here: the repository has no licence). " +
		"Every figure is recomputed from a fetched copy by\n\n    " + AuthorsBayesmarkCommand + "\n\n")
	for _, s := range series {
		for _, d := range bayesmarkSets {
			a, ok := s.ahsc[d]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "- %s, %d calls: commit %s, `%s`", d, s.calls, s.commit, a.evalPath)
			if a.basePath != "" {
				fmt.Fprintf(&b, " and `%s`", a.basePath)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// writeAuthorsOutputs writes ao's section (nil: none) beside our AHSC and random search of
// the authors' pooling au under the authors' protocol.
func writeAuthorsOutputs(b *bytes.Buffer, ao *AuthorsOutputs, au budgetTable) {
	if ao == nil {
		return
	}
	ours := map[string][2]string{}
	for _, d := range bayesmarkSets {
		var o [2]string
		for k, m := range []string{"ahsc", "random"} {
			if c, ok := au.cell(d, protocolAuthors, m); ok {
				o[k] = num(c.shown(), 2) + ivText(ciOf(c.values, stats.Mean), 2)
			}
		}
		ours[d] = o
	}
	b.WriteString("\n" + ao.section(ours, "authors' protocol and pooling"))
}

// anyStudies is the studies of a series' AHSC cells (the first one's: Bayesmark requires
// equal counts within a folder).
func anyStudies(s *authorsSeries) int {
	for _, d := range bayesmarkSets {
		if c, ok := s.ahsc[d]; ok {
			return c.studies
		}
	}
	return 0
}

// authorsNote says how the cells were scored, from the CSV's own columns.
func authorsNote(cells []authorsCell) string {
	stored, diff := 0, 0.0
	for _, c := range cells {
		if c.baseline == BaselineStored {
			stored++
			diff = math.Max(diff, c.baseDiff)
		}
	}
	s := "Means over the studies of Bayesmark's visible score, 100·(1 − mean normalized loss of acc and nll)"
	switch {
	case stored == len(cells) && diff == 0:
		s += ", opt and clip from each folder's stored derived/baseline.json (as Bayesmark's analysis does), identical to the ones recomputed from the same studies"
	case stored == len(cells):
		s += fmt.Sprintf(", opt and clip from each folder's stored derived/baseline.json (as Bayesmark's analysis does), within %.1e of clip − opt of the ones recomputed from the same studies", diff)
	case stored == 0:
		s += ", opt and clip recomputed from the studies read (experiment_baseline.py)"
	default:
		s += fmt.Sprintf(", opt and clip from the stored derived/baseline.json for %d of %d rows, recomputed for the others", stored, len(cells))
	}
	return s + fmt.Sprintf("; in brackets the percentile-bootstrap 95%% interval over the studies (%s resamples, seed %s).", cells[0].resamples, cells[0].seed)
}
