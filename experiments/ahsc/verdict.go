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

// openMLTolerance is how near the paper's ROC-AUC a cell counts as reproducing it in the
// verdict: about the spread of the paper's own values across methods on one dataset.
const openMLTolerance = 0.02

// writeBudgetReading is the reading of Table 1 counted from the equal-budget cells eq (every
// method at AHSC's count of calls), then what changes from the full budgets t, and the
// per-dataset deviation from the paper under both.
func writeBudgetReading(b *bytes.Buffer, t, eq experiments.Table) {
	lines, eqCounts := readingLines(eq)
	if len(lines) == 0 {
		writeReading(b, t)
		return
	}
	_, fullCounts := readingLines(t)
	b.WriteString("\n## Reading\n\nCounted by the generator from the equal-budget tables (every method at AHSC's count of calls), so that it stays " +
		"true when the pages are regenerated. \"Highest value\" compares the cells' values (means of Bayesmark scores, medians " +
		"otherwise), not the significance test; intervals are bootstrap 95% intervals over the datasets.\n\n")
	if l := protocolGapLine(readingCellsOf(t, protocolAuthors), readingCellsOf(t, protocolClean)); l != "" {
		lines = append(lines, l+" Each protocol at its own budgets (the tables at the top).")
	}
	b.WriteString(strings.Join(lines, "\n") + "\n")
	b.WriteString("\nWhat changes between the full budgets (the tables at the top) and equal budgets:\n\n")
	for _, proto := range []string{protocolAuthors, protocolClean} {
		f, okF := fullCounts[proto]
		e, okE := eqCounts[proto]
		if !okF || !okE {
			continue
		}
		fmt.Fprintf(b, "- **Protocol %s**: AHSC statistically best on %d of %d at the full budgets, %d of %d at equal budgets; "+
			"above random search on %d of %d, then %d of %d. %s\n", proto, f.bold, f.n, e.bold, e.n,
			f.oursOverRandom, f.withRandom, e.oursOverRandom, e.withRandom, budgetShift(t, eq, proto))
	}
	writeDeviations(b, t, eq)
}

// budgetShift says how the values move from the full budgets t to the equal ones eq under
// proto: per metric, the mean over the datasets of (equal − full) per method.
func budgetShift(t, eq experiments.Table, proto string) string {
	full, cut := readingCellsOf(t, proto), readingCellsOf(eq, proto)
	var parts []string
	for _, metric := range []string{"score", "roc-auc"} {
		what, prec := metricUnits(metric)
		var ms []string
		for _, m := range full.methods {
			var d []float64
			for _, ds := range full.datasets {
				a, okA := full.byDS[ds][m]
				c, okC := cut.byDS[ds][m]
				if okA && okC && full.metricOf[ds] == metric && !math.IsNaN(a.ours) && !math.IsNaN(c.ours) {
					d = append(d, c.ours-a.ours)
				}
			}
			if len(d) > 0 {
				ms = append(ms, fmt.Sprintf("%s %+.*f", m, prec, stats.Mean(d)))
			}
		}
		if len(ms) > 0 {
			parts = append(parts, fmt.Sprintf("in %s, %s", what, strings.Join(ms, ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Equal minus full value, mean over the datasets: " + strings.Join(parts, "; ") + " (the other methods lose the calls " +
		"beyond AHSC's; on the Bayesmark sets every score, AHSC's included, also moves with the pool's opt and clip)."
}

// writeDeviations is the per-dataset deviation from the paper: ours minus the paper's value
// for every cell, at the full budgets and, in parentheses, at equal budgets.
func writeDeviations(b *bytes.Buffer, t, eq experiments.Table) {
	for _, proto := range []string{protocolAuthors, protocolClean} {
		full, cut := readingCellsOf(t, proto), readingCellsOf(eq, proto)
		if len(full.datasets) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n### Ours minus the paper's, per dataset, protocol %s\n\nAt the full budgets (at equal budgets in parentheses); "+
			"Bayesmark score points, or ROC-AUC.\n\n| dataset | %s |\n|---|%s\n", proto, strings.Join(full.methods, " | "), strings.Repeat("---|", len(full.methods)))
		for _, d := range full.datasets {
			_, prec := metricUnits(full.metricOf[d])
			cells := make([]string, len(full.methods))
			for k, m := range full.methods {
				c, ok := full.byDS[d][m]
				if !ok || math.IsNaN(c.paper) {
					cells[k] = "–"
					continue
				}
				cells[k] = fmt.Sprintf("%+.*f", prec, c.ours-c.paper)
				if e, ok := cut.byDS[d][m]; ok && !math.IsNaN(e.ours) {
					cells[k] += fmt.Sprintf(" (%+.*f)", prec, e.ours-e.paper)
				}
			}
			fmt.Fprintf(b, "| %s | %s |\n", d, strings.Join(cells, " | "))
		}
	}
}

// untraceable reports whether a code version names no exact revision: a build of a tree with
// uncommitted changes ("+dirty") or one without VCS information ("devel", as go build
// -buildvcs=false or a build outside a repository stamps it).
func untraceable(build string) bool {
	return strings.Contains(build, "+dirty") || strings.HasPrefix(build, "devel")
}

// dirtyCells lists, per run, the cells computed by an untraceable build: such a cell's code
// is not known to be a revision of the repository.
func dirtyCells(runs []StoredRun) []string {
	var out []string
	for _, sr := range runs {
		byBuild := map[string][]string{}
		for key, build := range sr.CellBuilds {
			if untraceable(build) {
				byBuild[build] = append(byBuild[build], key)
			}
		}
		builds := make([]string, 0, len(byBuild))
		for bld := range byBuild {
			builds = append(builds, bld)
		}
		slices.Sort(builds)
		for _, bld := range builds {
			keys := byBuild[bld]
			slices.Sort(keys)
			out = append(out, fmt.Sprintf("run %d, `%s`: %s (%s)", sr.ID, bld, plural(len(keys), "cell"), strings.Join(keys, ", ")))
		}
	}
	return out
}

// table1Verdict is table1.md's opening: what reproduces and what does not, with the
// numbers, counted from the cells t, the equal-budget cells eq and the authors' pooling au.
func table1Verdict(t, eq experiments.Table, au budgetTable, ao *AuthorsOutputs, runs []StoredRun) string {
	proto := protocolAuthors
	if len(readingCellsOf(t, proto).datasets) == 0 {
		proto = protocolClean
	}
	full := readingCellsOf(t, proto)
	f, ok := countReading(full)
	if !ok {
		return ""
	}
	var s []string
	if e, ok := countReading(readingCellsOf(eq, proto)); ok {
		s = append(s, fmt.Sprintf("Under %s protocol, with every method scored at AHSC's count of calls, AHSC is statistically best on %d of %d "+
			"tabular datasets and its value is above random search's on %d of %d, where the paper has it above random search on %d of %d; "+
			"at the unequal budgets of the first tables (AHSC makes fewer calls than each baseline on the Bayesmark sets) it is above random "+
			"search on %d of %d.", protocolName(proto), e.bold, e.n, e.oursOverRandom, e.withRandom, f.paperOverRandom, f.withRandom, f.oursOverRandom, f.withRandom))
	} else {
		s = append(s, fmt.Sprintf("Under %s protocol AHSC is statistically best on %d of %d tabular datasets and its value is above random "+
			"search's on %d of %d, where the paper has it above random search on %d of %d.", protocolName(proto), f.bold, f.n, f.oursOverRandom, f.withRandom,
			f.paperOverRandom, f.withRandom))
	}
	pooled, paper, left := pooledSentence(au, proto, ao)
	for _, x := range []string{pooled, paper} {
		if x != "" {
			s = append(s, x)
		}
	}
	var near, far []string
	worst, worstGap := "", 0.0
	for _, d := range full.datasets {
		c, ok := full.byDS[d]["ahsc"]
		if full.metricOf[d] != "roc-auc" || !ok || math.IsNaN(c.paper) {
			continue
		}
		g := c.ours - c.paper
		if math.Abs(g) <= openMLTolerance {
			near = append(near, d)
		} else {
			far = append(far, fmt.Sprintf("%s (%.3f vs %.3f)", d, c.ours, c.paper))
		}
		if math.Abs(g) > math.Abs(worstGap) {
			worst, worstGap = d, g
		}
	}
	if n := len(near) + len(far); n > 0 {
		line := fmt.Sprintf("On the OpenML sets AHSC's median test ROC-AUC is within %.2f of the paper's on %d of %d", openMLTolerance, len(near), n)
		if len(far) > 0 {
			line += fmt.Sprintf(", not on %s", strings.Join(far, ", "))
		}
		if worst != "" && math.Abs(worstGap) > 0.1 {
			line += fmt.Sprintf("; on %s every method is as far from the paper (ours %s, the paper's %s)", worst,
				rangeText(valueRange(full.byDS[worst], false, 3)), rangeText(valueRange(full.byDS[worst], true, 3)))
		}
		s = append(s, line+".")
	}
	if rc, ok := countReading(readingCellsOf(t, protocolClean)); ok && proto != protocolClean {
		cl := fmt.Sprintf("Under the clean protocol (selection on validation data only) AHSC is statistically best on %d of %d and above random "+
			"search on %d of %d", rc.bold, rc.n, rc.oursOverRandom, rc.withRandom)
		if e, ok := countReading(readingCellsOf(eq, protocolClean)); ok {
			cl += fmt.Sprintf(" (at equal budgets %d and %d)", e.bold, e.oursOverRandom)
		}
		s = append(s, cl+".")
	}
	if len(far) > 0 {
		left = append(left, strings.Join(far, ", "))
	}
	if len(left) > 0 {
		s = append(s, fmt.Sprintf("What is left (%s) is neither the budget nor the pooling, both matched here: [ahsc-protocol.md](ahsc-protocol.md) "+
			"gives the known causes row by row (%s).", strings.Join(left, "; "), strings.Join(knownCauses(t, runs, proto, len(far) > 0), "; ")))
	}
	return "**Verdict.** " + strings.Join(s, " ") + "\n"
}

// pooledSentence is the verdict's sentence on the authors' pooling (AHSC and random search
// alone at AHSC's calls) under proto, compared with the paper's AHSC column and, where ao has
// them, with the authors' own stored runs pooled the same way; left names the Bayesmark sets
// whose AHSC level is not the paper's (the paper's value outside our 95% interval).
func pooledSentence(au budgetTable, proto string, ao *AuthorsOutputs) (pooled, paper string, left []string) {
	var pairs, within, outside []string
	above, sets, compared := 0, 0, 0
	for _, d := range bayesmarkSets {
		a, okA := au.cell(d, proto, "ahsc")
		r, okR := au.cell(d, proto, "random")
		if !okA || !okR {
			continue
		}
		sets++
		above += b2i(a.shown() > r.shown())
		pairs = append(pairs, fmt.Sprintf("%s %.2f vs %.2f", d, a.shown(), r.shown()))
		if math.IsNaN(a.paper) {
			continue
		}
		compared++
		iv := ciOf(a.values, stats.Mean)
		g := fmt.Sprintf("%s %.2f%s vs %.2f", d, a.shown(), ivText(iv, 2), a.paper)
		if iv.Low <= a.paper && a.paper <= iv.High {
			within = append(within, g)
		} else {
			outside = append(outside, g)
			left = append(left, "AHSC's Bayesmark level on "+d)
		}
	}
	if sets == 0 {
		return "", "", nil
	}
	s := fmt.Sprintf("Pooled as the authors pooled their Bayesmark runs (AHSC and random search alone, AHSC's %d calls each), AHSC's mean "+
		"score is above random search's on %d of %d sets (%s)", au.k[[2]string{bayesmarkSets[0], proto}], above, sets, strings.Join(pairs, ", "))
	if aa, an := ao.aboveRandom(bayesmarkSets); an > 0 {
		s += fmt.Sprintf("; in the authors' own stored runs, pooled the same way, it is above on %d of %d", aa, an)
	}
	s += "."
	if compared > 0 {
		paper = fmt.Sprintf("The paper's AHSC column lies inside our 95%% interval on %d of %d sets", len(within), compared)
		if len(within) > 0 {
			paper += " (" + strings.Join(within, ", ") + ")"
		}
		if len(outside) > 0 {
			paper += ", outside on " + strings.Join(outside, ", ")
		}
		paper += "."
	}
	return s, paper, left
}

// andList joins items as prose: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// knownCauses names the rows of ahsc-protocol.md that explain what is left: the authors'
// AHSC screening always (our AHSC is Algorithm 1, theirs optimizer.py), their Bayesmark model
// only while a Bayesmark cell of Table 1 under proto comes from a run of our own model, and
// the OpenML rows when an OpenML set is far from the paper.
func knownCauses(t experiments.Table, runs []StoredRun, proto string, openMLFar bool) []string {
	causes := []string{"the authors' AHSC screening, row 4"}
	byID := map[int64]StoredRun{}
	for _, sr := range runs {
		byID[sr.ID] = sr
	}
	var ours []string
	for i := range t.Rows {
		d := t.String(i, "dataset")
		if t.String(i, "protocol") != proto || groupOf(d) != bayesmark || slices.Contains(ours, d) {
			continue
		}
		if sr, ok := byID[int64(t.Int(i, "run"))]; ok && (proto != protocolAuthors || modelOf(sr.Result) == bayesmarkHyperflat) {
			ours = append(ours, d)
		}
	}
	if len(ours) > 0 {
		causes = append(causes, fmt.Sprintf("the Bayesmark model, rows 11–12, where %s still train this project's MLP", strings.Join(ours, ", ")))
	}
	if openMLFar {
		causes = append(causes, "the OpenML splits, encoding and selection, rows 13–16")
	}
	return causes
}

// protocolName is how the verdict names a protocol.
func protocolName(proto string) string {
	if proto == protocolAuthors {
		return "the authors'"
	}
	return "the " + proto
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ProtocolVerdict is the generated opening of ahsc-protocol.md (a hand-written page: the
// report rewrites only its marked verdict block), counted from the stored runs as table1.md
// is: the authors' protocol against the clean one over the grid, what matched budgets and the
// authors' pooling change, and which cells come from uncommitted builds.
func ProtocolVerdict(ao *AuthorsOutputs, runs ...StoredRun) (string, error) {
	t, err := Table1Cells(runs...)
	if err != nil {
		return "", err
	}
	_, au, err := budgetTables(t, runs)
	if err != nil {
		return "", err
	}
	authors, clean := readingCellsOf(t, protocolAuthors), readingCellsOf(t, protocolClean)
	var s, gaps []string
	for _, metric := range []string{"score", "roc-auc"} {
		what, prec := metricUnits(metric)
		lo, hi, loD, hiD := math.Inf(1), math.Inf(-1), "", ""
		n := 0
		for _, d := range authors.datasets {
			if authors.metricOf[d] != metric || clean.metricOf[d] != metric {
				continue
			}
			var diffs []float64
			for _, m := range authors.methods {
				a, okA := authors.byDS[d][m]
				c, okC := clean.byDS[d][m]
				if okA && okC && !math.IsNaN(a.ours) && !math.IsNaN(c.ours) {
					diffs = append(diffs, a.ours-c.ours)
				}
			}
			if len(diffs) == 0 {
				continue
			}
			n++
			v := stats.Mean(diffs)
			if v < lo {
				lo, loD = v, d
			}
			if v > hi {
				hi, hiD = v, d
			}
		}
		if n > 0 {
			gaps = append(gaps, fmt.Sprintf("from %+.*f (%s) to %+.*f (%s) %s over the %d %s sets", prec, lo, loD, prec, hi, hiD, what, n,
				map[string]string{"score": "Bayesmark", "roc-auc": "OpenML"}[metric]))
		}
	}
	if len(gaps) > 0 {
		s = append(s, fmt.Sprintf("Against the clean protocol (mean over the methods, each protocol at its own budgets) the authors' protocol scores %s both ran.",
			andList(gaps)))
	}
	if pooled, paper, left := pooledSentence(au, protocolAuthors, ao); pooled != "" {
		s = append(s, pooled)
		if len(left) > 0 && paper != "" {
			paper = strings.TrimSuffix(paper, ".") + fmt.Sprintf("; what is left there is not a matter of budgets or pooling, the known causes being %s.",
				andList(knownCauses(t, runs, protocolAuthors, false)))
		}
		if paper != "" {
			s = append(s, paper)
		}
	}
	modelTable, modelSentence := modelEffect(runs, ao)
	if modelSentence != "" {
		s = append(s, modelSentence)
	}
	screenTable, screenSentence := screeningEffect(runs)
	if screenSentence != "" {
		s = append(s, screenSentence)
	}
	if dirty := dirtyCells(runs); len(dirty) > 0 {
		n := 0
		var ids []string
		for _, sr := range runs {
			k := 0
			for _, b := range sr.CellBuilds {
				k += b2i(untraceable(b))
			}
			if k > 0 {
				n += k
				ids = append(ids, fmt.Sprint(sr.ID))
			}
		}
		runWord := "run"
		if len(ids) > 1 {
			runWord = "runs"
		}
		s = append(s, fmt.Sprintf("%s of %s %s were computed by builds that name no exact revision (a tree with uncommitted changes, `+dirty`, "+
			"or no VCS stamp, `devel`), listed in table1.md's Runs section.", plural(n, "cell"), runWord, andList(ids)))
	}
	if len(s) == 0 {
		return "", nil
	}
	out := "**Verdict** (generated by `hyperflat report --markdown` from the stored runs, with [table1.md](table1.md); the rest of this " +
		"page is written by hand). " + strings.Join(s, " ") + "\n"
	for _, tbl := range []string{modelTable, screenTable} {
		if tbl != "" {
			out += "\n" + tbl
		}
	}
	return out, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
