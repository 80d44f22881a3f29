package weightdecay

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// writeVerdict opens tablec1.md: what reproduces, what does not and why, in a few sentences
// generated from the numbers below it, so that it stays true when the table is regenerated.
func writeVerdict(b *strings.Builder, cells experiments.Table, lines []headlineLine, bn []bnRow) {
	b.WriteString("\n## Verdict\n\n")
	b.WriteString(verdict(cells, lines, bn))
	b.WriteString("\n")
}

// verdict is the verdict's text (3–7 sentences).
func verdict(cells experiments.Table, lines []headlineLine, bn []bnRow) string {
	var paper, reduced, edge, limit []string
	var n, e7e1, fell, val1 int
	lo, hi := math.Inf(1), math.Inf(-1)
	maxSteps := 0
	for i := range cells.Rows {
		if !measured(cells, i) {
			continue
		}
		n++
		name := pairName(cells.String(i, "model"), cells.String(i, "dataset"))
		if paperBudget(cells, i) {
			paper = append(paper, fmt.Sprintf("%s (%s, %s)", name, replicatesText(cells, i), cells.String(i, "variant")))
		} else {
			reduced = append(reduced, name)
			lo, hi = math.Min(lo, cells.Float(i, "eq1")), math.Max(hi, cells.Float(i, "eq1"))
			maxSteps = max(maxSteps, cells.Int(i, "inner_steps")*cells.Int(i, "outer_steps"))
		}
		edge, limit = classifyBracket(cells, i, edge, limit)
		if cells.Float(i, "eq7") > cells.Float(i, "eq1") {
			e7e1++
		}
		if cells.Float(i, "eq1_drop") >= 0.01 {
			fell++
		}
		if cells.Float(i, "eq1_val_acc") >= 0.98 {
			val1++
		}
	}
	if n == 0 {
		return "No pair has a complete replicate yet: nothing is tested."
	}
	var s []string
	scope := fmt.Sprintf("Table C.1 has %d of 6 pairs: %d at the paper's budget", n, len(paper))
	if len(paper) > 0 {
		scope += " (" + strings.Join(paper, "; ") + ")"
	}
	if len(reduced) > 0 {
		scope += fmt.Sprintf(", %s at a reduced budget stated in their rows", strings.Join(reduced, ", "))
	}
	s = append(s, scope+".")
	line := func(a, b string) headlineLine {
		for _, l := range lines {
			if l.a == a && l.b == b {
				return l
			}
		}
		return headlineLine{}
	}
	sc, sf := line("eq7", "minnorm_ckpt"), line("eq7", "minnorm_final")
	oc, of := line("oracle", "minnorm_ckpt"), line("oracle", "minnorm_final")
	if len(paper) > 0 {
		s = append(s, fmt.Sprintf("At paper scale, Eq. 7 with ζ chosen on the selection images ends %s points (%s) from the min-norm "+
			"heuristic read as checkpoint selection and %s points (%s) from its final-model reading; with the paper's test-oracle ζ, "+
			"%s points (%s) and %s points (%s); the paper reports +12%% over 6 pairs.",
			ciText(sc.paper.points, ""), ciText(sc.paper.pct, "%"), ciText(sf.paper.points, ""), ciText(sf.paper.pct, "%"),
			ciText(oc.paper.points, ""), ciText(oc.paper.pct, "%"), ciText(of.paper.points, ""), ciText(of.paper.pct, "%")))
		groups := map[string][]string{}
		for _, l := range []headlineLine{oc, of} {
			reading := strings.TrimPrefix(l.versus, "min-norm, ")
			groups[direction(l.paper.points)] = append(groups[direction(l.paper.points)], reading)
		}
		var parts []string
		for _, d := range []string{"reproduces", "is not distinguishable from zero", "is reversed"} {
			if g := groups[d]; len(g) > 0 {
				parts = append(parts, fmt.Sprintf("%s against %s", d, strings.Join(g, " and ")))
			}
		}
		s = append(s, fmt.Sprintf("With the paper's own choice of ζ, the headline's sign %s (95%% bootstrap intervals over replicates, in points).",
			strings.Join(parts, "; it ")))
	} else {
		s = append(s, "No pair has run at the paper's budget yet, so the paper's headline is not tested at its scale.")
	}
	s = append(s, fmt.Sprintf("Eq. 7 ends above Eq. 1 on %d of %d pairs and Eq. 1 falls at least 1 point from its best hyper-step on %d "+
		"(Figure 4.2's shape); Eq. 1 reaches the paper's ≥ 0.98 validation accuracy on %d of %d pairs (the paper: all).", e7e1, n, fell, val1, n))
	s = append(s, bracketText(edge, limit, n))
	if len(reduced) > 0 {
		s = append(s, fmt.Sprintf("Over all %d pairs the headline (test-oracle ζ over checkpoint selection) is %s points (%s), "+
			"but the reduced-budget pairs train at most %d Adam steps a fit and their Eq. 1 ends at %s test accuracy (chance: 0.10), "+
			"so they test the mechanism at a small scale and their relative percentages are not evidence for or against the paper.",
			n, ciText(oc.all.points, ""), ciText(oc.all.pct, "%"), maxSteps, span(lo, hi)))
	}
	// The verdict speaks of the rows the table reports; the BatchNorm section lists every run.
	if rep := slices.DeleteFunc(slices.Clone(bn), func(r bnRow) bool { return !r.reported }); len(rep) > 0 {
		bn = rep
	}
	if len(bn) > 0 {
		var test, val []string
		for _, r := range bn {
			test = append(test, fmt.Sprintf("%s points on %s (run %s)", signed(100*(r.eq1Test[1]-r.eq1Test[0])), r.pair, r.label))
			val = append(val, signed(100*(r.eq1Val[1]-r.eq1Val[0])))
		}
		s = append(s, fmt.Sprintf("Scoring the same weights with eval-mode BatchNorm instead of the authors' training mode changes Eq. 1's "+
			"final test accuracy by %s, and its final validation accuracy by %s points respectively.", strings.Join(test, ", "), strings.Join(val, ", ")))
	}
	return strings.Join(s, " ")
}

// direction reads an interval of a difference: above zero, below, or straddling it.
func direction(v interval) string {
	switch {
	case v.lo > 0:
		return "reproduces"
	case v.hi < 0:
		return "is reversed"
	}
	return "is not distinguishable from zero"
}

// span is "0.12–0.35", or "0.12" when both ends agree to two digits.
func span(lo, hi float64) string {
	a, b := fmt.Sprintf("%.2f", lo), fmt.Sprintf("%.2f", hi)
	if a == b {
		return a
	}
	return a + "–" + b
}

// replicatesText is a row's complete replicates, "5 replicates", or "1 of 5 replicates" for a
// run still in progress, whose headline rests on fewer fits than planned.
func replicatesText(cells experiments.Table, i int) string {
	n, planned := cells.Int(i, "replicates"), cells.Int(i, "replicates_planned")
	s := fmt.Sprintf("%d replicates", n)
	if n == 1 {
		s = "1 replicate"
	}
	if n < planned && !strings.HasPrefix(cells.String(i, "status"), "grid search") {
		s = fmt.Sprintf("%d of %d replicates", n, planned)
	}
	return s
}
