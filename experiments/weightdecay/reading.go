package weightdecay

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// This file holds tablec1.md's Reading section and the ζ-grid bracketing the table, the
// reading and the verdict state.

// writeReading states what the numbers say, counted over the measured pairs, so that the
// reading stays true when the table is regenerated.
func writeReading(b *strings.Builder, cells experiments.Table) {
	var n, e7e1, e7ck, e7fin, orck, orfin, val1, val7, fell, steadier, rho, rhoTop, paper, early int
	var reduced, edge, limit []string
	for i := range cells.Rows {
		if !measured(cells, i) {
			continue
		}
		n++
		f := func(c string) float64 { return cells.Float(i, c) }
		count := func(c *int, ok bool) {
			if ok {
				*c++
			}
		}
		count(&e7e1, f("eq7") > f("eq1"))
		count(&e7ck, f("eq7") > f("minnorm_ckpt"))
		count(&e7fin, f("eq7") > f("minnorm_final"))
		count(&orck, f("oracle") > f("minnorm_ckpt"))
		count(&orfin, f("oracle") > f("minnorm_final"))
		count(&val1, f("eq1_val_acc") >= 0.98)
		count(&val7, f("eq7_val_acc") >= 0.98)
		count(&fell, f("eq1_drop") >= 0.01)
		count(&steadier, f("eq7_drop") < f("eq1_drop"))
		count(&rho, f("spearman_rho") > 0)
		count(&rhoTop, f("spearman_rho_top_zeta") > 0)
		edge, limit = classifyBracket(cells, i, edge, limit)
		count(&early, f("minnorm_ckpt_mean_step") < float64(cells.Int(i, "outer_steps")))
		if paperBudget(cells, i) {
			paper++
		} else {
			reduced = append(reduced, pairName(cells.String(i, "model"), cells.String(i, "dataset")))
		}
	}
	b.WriteString("\n## Reading\n\nCounted over the measured pairs by the generator, so that it stays true when the table is regenerated.\n\n")
	if n == 0 {
		b.WriteString("No pair has a complete replicate yet.\n")
		return
	}
	fmt.Fprintf(b, "- Eq. 7 (ζ by selection images) ends above Eq. 1 on %d of %d pairs (the paper: Eq. 7's models \"exhibit superior test set accuracy\").\n", e7e1, n)
	fmt.Fprintf(b, "- Against the min-norm heuristic, Eq. 7 (ζ by selection images) ends above it on %d of %d pairs read as checkpoint selection "+
		"and on %d of %d read as final-model selection; with the test-oracle ζ, on %d and %d. Which reading the paper used decides the "+
		"comparison where the two differ: checkpoint selection may stop Eq. 1 at its early best, the final-model reading cannot.\n", e7ck, n, e7fin, n, orck, orfin)
	fmt.Fprintf(b, "- The checkpoint reading selects, on average over replicates, a hyper-step before the last on %d of %d pairs: "+
		"it stops Eq. 1 early (the hyper-steps are in the table).\n", early, n)
	fmt.Fprintf(b, "- %s\n", bracketText(edge, limit, n))
	fmt.Fprintf(b, "- Eq. 1 reaches validation accuracy ≥ 0.98 on %d of %d pairs, Eq. 7 on %d (the paper: all optimized models reach \"at least 98%% "+
		"top-1 validation accuracy\").\n", val1, n, val7)
	fmt.Fprintf(b, "- Figure 4.2: Eq. 1's test accuracy ends at least 1 point below its best hyper-step on %d of %d pairs; Eq. 7's falls less "+
		"than Eq. 1's on %d (the paper: Eq. 1 degrades, Eq. 7 \"remains stable\").\n", fell, n, steadier)
	fmt.Fprintf(b, "- Figure 4.3: Spearman's ρ between the regularizer and the generalization gap is positive on %d of %d pairs over all runs, "+
		"and on %d at the largest ζ alone (the paper: \"a strong positive correlation\", which \"remains positive even for the largest values of ζ\").\n", rho, n, rhoTop)
	fmt.Fprintf(b, "- %d of %d measured pairs ran at the paper preset's budget.", paper, n)
	if len(reduced) > 0 {
		fmt.Fprintf(b, " %s ran at a reduced budget (see Budgets): their numbers test the mechanism at a small scale, not the paper's.", strings.Join(reduced, ", "))
	}
	b.WriteString("\n")
}

// negligiblePenalty is the value of Eq. 7's penalty term, ζη²/2·√Σ_t‖a_t‖² (ζη²·Σ‖a_t‖
// online), below which Eq. 7's objective is Eq. 1's up to rounding: a millionth of a
// cross-entropy of order one, within a few float32 ulps of it. A choice at the grid's
// smallest ζ where the term stays below it is closed from below by ζ → 0, which is Eq. 1
// itself: a still smaller ζ changes the fit by rounding only.
const negligiblePenalty = 1e-6

// edgeNote says whether a ζ grid (comma-separated, Cells' "zetas") brackets the ζ each
// replicate chose (space-separated, "eq7_zetas" or "oracle_zetas"): "" when every choice is
// interior, else how many replicates chose an end of the grid, which a wider grid might beat.
// The choice is among the grid's ζ > 0 (pickZetas), so the smallest counts as an end too: a ζ
// between 0 and it was not tried — unless the penalty term at the smallest ζ (smallest, Cells'
// "smallest_zeta_penalty": its largest value over the fits and hyper-steps at that ζ) is below
// negligiblePenalty, where ζ → 0, the Eq. 1 column, brackets it; bracketed says whether the
// grid brackets every choice, in that sense too.
func edgeNote(grid, chosen string, smallest float64) (note string, bracketed bool) {
	var zs []float64
	for _, s := range strings.Split(grid, ",") {
		if z, err := strconv.ParseFloat(s, 64); err == nil {
			zs = append(zs, z)
		}
	}
	picks := strings.Fields(chosen)
	if len(zs) == 0 || len(picks) == 0 {
		return "", true
	}
	if len(zs) == 1 {
		return "the grid's only ζ: not bracketed", false
	}
	lo, hi := slices.Min(zs), slices.Max(zs)
	var nLo, nHi int
	for _, s := range picks {
		switch z, _ := strconv.ParseFloat(s, 64); z {
		case lo:
			nLo++
		case hi:
			nHi++
		}
	}
	if nLo > 0 && nHi == 0 && smallest < negligiblePenalty {
		return fmt.Sprintf("the grid's smallest in %d of %d, where the penalty term is at most %.2g: Eq. 1 up to rounding, "+
			"bracketed by ζ → 0 (the Eq. 1 column)", nLo, len(picks), smallest), true
	}
	var parts []string
	if nLo > 0 {
		parts = append(parts, fmt.Sprintf("the grid's smallest in %d", nLo))
	}
	if nHi > 0 {
		parts = append(parts, fmt.Sprintf("its largest in %d", nHi))
		if nLo == 0 {
			parts[len(parts)-1] = fmt.Sprintf("the grid's largest in %d", nHi)
		}
	}
	if len(parts) == 0 {
		return "", true
	}
	return fmt.Sprintf("%s of %d: not bracketed", strings.Join(parts, ", "), len(picks)), false
}

// oracleBracket is edgeNote of row i's test-oracle ζ, with whether only the ζ → 0 limit
// brackets it.
func oracleBracket(cells experiments.Table, i int) (note string, bracketed, byLimit bool) {
	note, bracketed = edgeNote(cells.String(i, "zetas"), cells.String(i, "oracle_zetas"), cells.Float(i, "smallest_zeta_penalty"))
	return note, bracketed, bracketed && note != ""
}

// zetaText is a ζ cell's parenthesis: each replicate's choice and, where the grid does not
// bracket it, edgeNote.
func zetaText(cells experiments.Table, i int, col string) string {
	s := "ζ " + cells.String(i, col)
	if n, _ := edgeNote(cells.String(i, "zetas"), cells.String(i, col), cells.Float(i, "smallest_zeta_penalty")); n != "" {
		s += "; " + n
	}
	return s
}

// classifyBracket appends row i's pair to edge when the ζ grid does not bracket its
// test-oracle choices, or its limitText to limit when only ζ → 0 does.
func classifyBracket(cells experiments.Table, i int, edge, limit []string) ([]string, []string) {
	switch _, ok, byLimit := oracleBracket(cells, i); {
	case !ok:
		edge = append(edge, pairName(cells.String(i, "model"), cells.String(i, "dataset")))
	case byLimit:
		limit = append(limit, limitText(cells, i))
	}
	return edge, limit
}

// bracketText says on how many of n pairs the ζ grid brackets every replicate's test-oracle ζ
// and names those where it does not (edgeNote), whose grid is to be extended, and those that
// only ζ → 0 brackets (limit, limitText).
func bracketText(edge, limit []string, n int) string {
	s := fmt.Sprintf("The ζ grid brackets the test-oracle ζ (every replicate's choice interior to the grid) on %d of %d pairs", n-len(edge)-len(limit), n)
	if len(limit) > 0 {
		s += fmt.Sprintf("; on %s a replicate chose the grid's smallest ζ, where Eq. 7's penalty term stays below %.0e: Eq. 7 there is "+
			"Eq. 1 up to rounding, so ζ → 0, the Eq. 1 column, closes the grid from below, and the test accuracies of such ζ differ by the "+
			"training's sensitivity to rounding, not by the penalty (a smaller ζ would draw from the same spread)", strings.Join(limit, "; "), negligiblePenalty)
	}
	if len(edge) == 0 {
		return s + "."
	}
	return s + fmt.Sprintf("; not on %s, where a replicate chose an end of the grid (the ζ cells say which): there a ζ beyond the grid "+
		"was not tried and may do better, so the grid is to be extended before the row is read as the optimum.", strings.Join(edge, ", "))
}

// limitText names a pair that only ζ → 0 brackets, with the penalty term at its smallest ζ
// and the test accuracy of Eq. 1 and of Eq. 7 at its three smallest ζ (replicates' mean), the
// spread the test oracle chooses from.
func limitText(cells experiments.Table, i int) string {
	smallest := math.Inf(1)
	for _, f := range strings.Split(cells.String(i, "zetas"), ",") {
		if z, err := strconv.ParseFloat(f, 64); err == nil {
			smallest = math.Min(smallest, z)
		}
	}
	return fmt.Sprintf("%s (penalty term at most %.2g at ζ %s; final test accuracy %s)", pairName(cells.String(i, "model"), cells.String(i, "dataset")),
		cells.Float(i, "smallest_zeta_penalty"), zetaString(smallest), cells.String(i, "small_zeta_test_accs"))
}
