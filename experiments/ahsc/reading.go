package ahsc

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// The reading of Table 1: what its cells say, counted by the generator so that the text stays
// true when the tables are regenerated.

// readingCell is one method's value on one dataset: ours as the table shows it, the paper's.
type readingCell struct{ ours, paper float64 }

// protocolCells are one protocol's tabular cells with a result, as the reading counts them.
type protocolCells struct {
	byDS              map[string]map[string]readingCell // dataset → method → cell
	metricOf          map[string]string
	bold              map[string]bool // AHSC statistically best
	datasets, methods []string        // in table order
}

func readingCellsOf(t experiments.Table, proto string) protocolCells {
	c := protocolCells{byDS: map[string]map[string]readingCell{}, metricOf: map[string]string{}, bold: map[string]bool{}}
	for i := range t.Rows {
		d, m := t.String(i, "dataset"), t.String(i, "method")
		if t.String(i, "protocol") != proto || groupOf(d) == image || t.Int(i, "n") == 0 {
			continue
		}
		if c.byDS[d] == nil {
			c.byDS[d] = map[string]readingCell{}
			c.datasets = append(c.datasets, d)
		}
		if !slices.Contains(c.methods, m) {
			c.methods = append(c.methods, m)
		}
		c.byDS[d][m] = readingCell{shownValue(t, i), t.Float(i, "paper")}
		c.metricOf[d] = t.String(i, "metric")
		if m == "ahsc" && isTrue(t.Value(i, "best")) {
			c.bold[d] = true
		}
	}
	return c
}

// metricUnits names a Table 1 metric's differences, and the decimals they are printed with.
func metricUnits(metric string) (what string, prec int) {
	if metric == "roc-auc" {
		return "ROC-AUC", 3
	}
	return "Bayesmark score points", 1
}

// gapLines is the reading's gap to the paper per method, one line per metric: the mean over
// the datasets, and where there are several, the median and the dataset farthest from the
// paper (a single dataset, such as phoneme's near-chance values in the paper, can carry the
// mean).
func gapLines(c protocolCells, datasets []string) []string {
	var lines []string
	for _, metric := range []string{"score", "roc-auc"} {
		what, prec := metricUnits(metric)
		var means, medians []string
		far, farGap := "", 0.0
		for _, d := range datasets {
			if c.metricOf[d] != metric {
				continue
			}
			var sum float64
			var k int
			for _, cell := range c.byDS[d] {
				if !math.IsNaN(cell.paper) && !math.IsNaN(cell.ours) {
					sum += math.Abs(cell.ours - cell.paper)
					k++
				}
			}
			if k > 0 && sum/float64(k) > farGap {
				far, farGap = d, sum/float64(k)
			}
		}
		var nDS int
		for _, m := range c.methods {
			var gaps []float64
			for _, d := range datasets {
				if cell, ok := c.byDS[d][m]; ok && c.metricOf[d] == metric && !math.IsNaN(cell.paper) && !math.IsNaN(cell.ours) {
					gaps = append(gaps, cell.ours-cell.paper)
				}
			}
			if len(gaps) == 0 {
				continue
			}
			mean, median := fmt.Sprintf("%s %+.*f", m, prec, stats.Mean(gaps)), fmt.Sprintf("%s %+.*f", m, prec, stats.Median(gaps))
			if len(gaps) > 1 { // over one dataset the interval is the value
				mean += ivText(ciOf(gaps, stats.Mean), prec)
				median += ivText(ciOf(gaps, stats.Median), prec)
			}
			means = append(means, mean)
			medians = append(medians, median)
			nDS = max(nDS, len(gaps))
		}
		if len(means) == 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("  Ours minus the paper's, mean over the datasets, in %s: %s.", what, strings.Join(means, ", ")))
		if nDS > 2 {
			lo, hi := valueRange(c.byDS[far], false, prec)
			plo, phi := valueRange(c.byDS[far], true, prec)
			lines = append(lines, fmt.Sprintf("  The median over the datasets: %s; the farthest from the paper, %s: ours %s, the paper's %s.",
				strings.Join(medians, ", "), far, rangeText(lo, hi), rangeText(plo, phi)))
		}
	}
	return lines
}

// valueRange is the least and greatest of a dataset's values (ours, or the paper's), printed.
func valueRange(cells map[string]readingCell, paper bool, prec int) (lo, hi string) {
	l, h := math.Inf(1), math.Inf(-1)
	for _, c := range cells {
		v := c.ours
		if paper {
			v = c.paper
		}
		if !math.IsNaN(v) && !math.IsNaN(c.paper) {
			l, h = math.Min(l, v), math.Max(h, v)
		}
	}
	return num(l, prec), num(h, prec)
}

func rangeText(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// protocolGapLine compares the two protocols where both measured a dataset: per dataset, the
// authors' value minus the clean one, the mean over the methods both ran — the measured effect
// of the authors' code choices together (ahsc-protocol.md's rows 7–16).
func protocolGapLine(authors, clean protocolCells) string {
	var parts []string
	var n int
	for _, metric := range []string{"score", "roc-auc"} {
		what, prec := metricUnits(metric)
		var ds []string
		for _, d := range authors.datasets {
			if authors.metricOf[d] != metric || clean.metricOf[d] != metric {
				continue
			}
			var sum float64
			var k int
			for _, m := range authors.methods {
				a, okA := authors.byDS[d][m]
				c, okC := clean.byDS[d][m]
				if okA && okC && !math.IsNaN(a.ours) && !math.IsNaN(c.ours) {
					sum += a.ours - c.ours
					k++
				}
			}
			if k > 0 {
				ds = append(ds, fmt.Sprintf("%s %+.*f", d, prec, sum/float64(k)))
			}
		}
		if len(ds) > 0 {
			n += len(ds)
			parts = append(parts, fmt.Sprintf("in %s, %s", what, strings.Join(ds, ", ")))
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("- **The authors' protocol against clean** (tabular datasets measured under both: %d): the authors' value minus the clean one, "+
		"mean over the methods both ran, %s.", n, strings.Join(parts, "; "))
}

// readingCount is what the reading counts of one protocol's tabular cells.
type readingCount struct {
	n, bold, paperTopAHSC, oursOverRandom, paperOverRandom, withRandom, sameTop, tops int
	withAHSC                                                                          []string
}

// countReading counts one protocol's cells: where AHSC is statistically best, where its value
// is above random search's (ours and the paper's), whether the method of highest value is the
// paper's; ok is false without an AHSC cell.
func countReading(c protocolCells) (rc readingCount, ok bool) {
	byDS, methods := c.byDS, c.methods
	for _, d := range c.datasets {
		if _, ok := byDS[d]["ahsc"]; ok {
			rc.withAHSC = append(rc.withAHSC, d)
		}
	}
	if len(rc.withAHSC) == 0 {
		return rc, false
	}
	rc.n = len(rc.withAHSC)
	// argmax by ours or by the paper's value (higher is better for every metric of Table 1)
	// over the methods of the dataset that have both (a method the paper did not run,
	// such as ahsc-bbo, is left out); "" when the paper has none of them
	top := func(d string, paper bool) string {
		best, bv := "", math.Inf(-1)
		for _, m := range methods {
			c, ok := byDS[d][m]
			if !ok || math.IsNaN(c.paper) || math.IsNaN(c.ours) {
				continue
			}
			v := c.ours
			if paper {
				v = c.paper
			}
			if v > bv {
				best, bv = m, v
			}
		}
		return best
	}
	for _, d := range rc.withAHSC {
		if c.bold[d] {
			rc.bold++
		}
		if top(d, true) == "ahsc" {
			rc.paperTopAHSC++
		}
		if r, ok := byDS[d]["random"]; ok {
			rc.withRandom++
			a := byDS[d]["ahsc"]
			if a.ours > r.ours {
				rc.oursOverRandom++
			}
			if a.paper > r.paper {
				rc.paperOverRandom++
			}
		}
		if o, p := top(d, false), top(d, true); o != "" && p != "" {
			rc.tops++
			if o == p {
				rc.sameTop++
			}
		}
	}
	return rc, true
}

// writeReading counts, per protocol, what of Table 1 reproduces over the datasets measured,
// so that the text stays true when the table is regenerated: where AHSC is statistically best,
// where it beats random search (ours against the paper's), whether the best method by value is
// the paper's, the gap to the paper per method and metric; then the protocols against each
// other.
func writeReading(b *bytes.Buffer, t experiments.Table) {
	lines, _ := readingLines(t)
	if len(lines) == 0 {
		return
	}
	if l := protocolGapLine(readingCellsOf(t, protocolAuthors), readingCellsOf(t, protocolClean)); l != "" {
		lines = append(lines, l)
	}
	b.WriteString("\n## Reading\n\nCounted from the cells above by the generator, so that it stays true when the table is regenerated. " +
		"\"Highest value\" compares the cells' values (means of Bayesmark scores, medians otherwise), not the significance test.\n\n")
	b.WriteString(strings.Join(lines, "\n") + "\n")
}

// readingLines are the reading's lines of each protocol's cells t, and its counts per
// protocol.
func readingLines(t experiments.Table) ([]string, map[string]readingCount) {
	var lines []string
	counts := map[string]readingCount{}
	for _, proto := range []string{protocolAuthors, protocolClean} {
		c := readingCellsOf(t, proto)
		rc, ok := countReading(c)
		if !ok {
			continue
		}
		counts[proto] = rc
		n := rc.n
		lines = append(lines, fmt.Sprintf("- **Protocol %s** (tabular datasets measured: %d): AHSC is statistically best (bold) on %d of %d; "+
			"in the paper's Table 1 it has the highest value of the methods on %d of these %d.", proto, n, rc.bold, n, rc.paperTopAHSC, n))
		if rc.withRandom > 0 {
			lines = append(lines, fmt.Sprintf("  AHSC's value is above random search's on %d of %d (the paper's values: %d of %d).",
				rc.oursOverRandom, rc.withRandom, rc.paperOverRandom, rc.withRandom))
		}
		if rc.tops > 0 {
			lines = append(lines, fmt.Sprintf("  The method with our highest value is the paper's highest on %d of %d.", rc.sameTop, rc.tops))
		}
		lines = append(lines, gapLines(c, rc.withAHSC)...)
	}
	return lines, counts
}
