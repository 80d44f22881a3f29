package weightdecay

import (
	"fmt"
	"math"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// comparison is one line of the paper's headline: Eq. 7, with ζ chosen one way (eq7 or
// oracle), over a baseline (the heuristic in either reading, or Eq. 1).
type comparison struct {
	a, b          string // methods: eq7, oracle; minnorm_ckpt, minnorm_final, eq1
	label, versus string
}

// comparisons are the headline's lines, in the table's order.
var comparisons = []comparison{
	{"eq7", "minnorm_ckpt", "Eq. 7, ζ by selection images", "min-norm, checkpoint selection"},
	{"eq7", "minnorm_final", "Eq. 7, ζ by selection images", "min-norm, final-model selection"},
	{"eq7", "eq1", "Eq. 7, ζ by selection images", "Eq. 1"},
	{"oracle", "minnorm_ckpt", "Eq. 7, test-oracle ζ †", "min-norm, checkpoint selection"},
	{"oracle", "minnorm_final", "Eq. 7, test-oracle ζ †", "min-norm, final-model selection"},
	{"oracle", "eq1", "Eq. 7, test-oracle ζ †", "Eq. 1"},
}

// scoped is a comparison over a set of pairs: the mean over the pairs of the difference in
// final test accuracy, in points (×100) and relative to the baseline (percent), each with its
// bootstrap interval; n pairs.
type scoped struct {
	n           int
	points, pct interval
}

// headlineLine is one comparison over the paper-scale pairs and over every measured pair.
type headlineLine struct {
	comparison
	paper, all scoped
}

// methodAcc is the final test accuracy of method on pair p over the replicates idx (indices
// into p.reps, with repeats: a bootstrap resample), as Table C.1's cell computes it: a mean
// over replicates, or, for the final-model reading of the heuristic, the one Eq. 1 model
// selected among those replicates' final models.
func methodAcc(p *pair, method string, idx []int) float64 {
	if method == "minnorm_final" {
		finals := make([]checkpoint, len(idx))
		for i, r := range idx {
			finals[i] = p.reps[r].base.final()
		}
		return finals[minNormIndex(finals)].testAcc
	}
	s := 0.0
	for _, r := range idx {
		rep := p.reps[r]
		var c checkpoint
		switch method {
		case "eq1":
			c = rep.base.final()
		case "eq7", "oracle":
			f := rep.bySel
			if method == "oracle" {
				f = rep.byTst
			}
			if f == nil {
				return math.NaN()
			}
			c = f.final()
		case "minnorm_ckpt":
			c = rep.ckpt
		default:
			return math.NaN()
		}
		s += c.testAcc
	}
	return s / float64(len(idx))
}

// paperScale tells whether the pair ran at weight_decay.py's budget: 1000 Adam steps × 100
// hyper-steps at η = 1e-4, torchvision's width, the whole test set the files here hold (all
// 10000 MNIST test images; the 1000 of CIFAR-10's that are here).
func (sp *storedPair) paperScale() bool {
	c := sp.cfg
	return c.InnerSteps >= 1000 && c.OuterSteps >= 100 && c.LR == 1e-4 && (!c.resnet() || c.Width == 1) && c.testRows() == c.available()
}

// headline is the paper's headline over the reported pairs, at paper scale and over all,
// each interval a stratified bootstrap over the pairs' replicates (bootstrap).
func (t *TableC1) headline() ([]headlineLine, error) {
	var all, paper []*pair
	for _, k := range Pairs {
		if sp, ok := t.chosen[k]; ok {
			all = append(all, sp.p)
			if sp.paperScale() {
				paper = append(paper, sp.p)
			}
		}
	}
	out := make([]headlineLine, len(comparisons))
	for i, c := range comparisons {
		out[i].comparison = c
		var err error
		if out[i].paper, err = scope(paper, c, uint64(2*i)); err != nil {
			return nil, err
		}
		if out[i].all, err = scope(all, c, uint64(2*i+1)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scope is comparison c over pairs, its intervals drawn from seed.
func scope(pairs []*pair, c comparison, seed uint64) (scoped, error) {
	s := scoped{n: len(pairs)}
	nan := interval{math.NaN(), math.NaN(), math.NaN()}
	if len(pairs) == 0 {
		s.points, s.pct = nan, nan
		return s, nil
	}
	sizes := make([]int, len(pairs))
	for i, p := range pairs {
		sizes[i] = len(p.reps)
	}
	mean := func(relative bool) func([][]int) float64 {
		return func(idx [][]int) float64 {
			sum := 0.0
			for i, p := range pairs {
				a, b := methodAcc(p, c.a, idx[i]), methodAcc(p, c.b, idx[i])
				d := a - b
				if relative {
					if !(b > 0) {
						return math.NaN()
					}
					d /= b
				}
				sum += 100 * d
			}
			return sum / float64(len(pairs))
		}
	}
	var err error
	if s.points, err = bootstrap(sizes, mean(false), bootResamples, 0.95, 4900+seed); err != nil {
		return s, err
	}
	s.pct, err = bootstrap(sizes, mean(true), bootResamples, 0.95, 4950+seed)
	return s, err
}

// signed formats x with its sign to one decimal, "–" for NaN.
func signed(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%+.1f", x)
}

// ciText is "+2.5 [−1.0, +6.1]" (unit appended to each), or "–".
func ciText(v interval, unit string) string {
	if math.IsNaN(v.est) {
		return "–"
	}
	if math.IsNaN(v.lo) {
		return signed(v.est) + unit
	}
	return fmt.Sprintf("%s%s [%s, %s]", signed(v.est), unit, signed(v.lo), signed(v.hi))
}

// writeHeadline writes the paper's headline statistic, separately over the paper-scale pairs
// and over every measured pair, in points and in percent, with bootstrap intervals.
func writeHeadline(b *strings.Builder, lines []headlineLine, cells experiments.Table) {
	np, na := 0, 0
	if len(lines) > 0 {
		np, na = lines[0].paper.n, lines[0].all.n
	}
	var paperPairs []string
	for i := range cells.Rows {
		if measured(cells, i) && paperBudget(cells, i) {
			paperPairs = append(paperPairs, pairName(cells.String(i, "model"), cells.String(i, "dataset")))
		}
	}
	fmt.Fprintf(b, "\n## The paper's headline: Eq. 7 over the min-norm heuristic\n\n\"Averaging across all 6 classifier-dataset pairs "+
		"that we evaluate, we show in Table C.1 that the optimization of Eq. 7 improves final test accuracy by 12%% when compared to "+
		"this heuristic\" (Section 4.2; ζ chosen by test error, the heuristic's reading and whether 12%% is relative not stated). "+
		"Ours: the mean over the pairs of the difference in final test accuracy, in points and relative to the baseline, over the "+
		"pairs at the paper's budget (%d: %s) and over all %d measured pairs. In brackets, 95%% stratified bootstrap intervals "+
		"(%d resamples of the replicates within each pair; a pair of one replicate adds no width, and the pairs themselves are not "+
		"resampled).\n\n| Eq. 7 | over | paper-scale pairs, points | paper-scale pairs, percent | all pairs, points | all pairs, percent |\n"+
		"|---|---|---|---|---|---|\n", np, orNone(strings.Join(paperPairs, ", ")), na, bootResamples)
	for _, l := range lines {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", l.label, l.versus, ciText(l.paper.points, ""), ciText(l.paper.pct, "%"),
			ciText(l.all.points, ""), ciText(l.all.pct, "%"))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
