package ahsc

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/stats"
)

// rungCheck is one repeat of the authors' BOHB read back from its stored evaluations: the
// rung fit it reported (the first of the best selection metric over every rung, as
// authorsBOHBSearch picks it) and the full training of that configuration it reported.
type rungCheck struct {
	epochs         float64 // the best rung's epochs
	rungAUC, refit float64 // the selection metric at that rung; the full training's test metric
	sameAsReported bool    // the full training is of the best rung's configuration
}

// authorsBOHBChecks reads, from the evaluations table of each dataset's latest finished run
// under the authors' protocol, every repeat of the authors' BOHB (the OpenML sets) whose cell
// stored its lower rungs (builds from 4669912 on).
func authorsBOHBChecks(runs []StoredRun) map[string][]rungCheck {
	out := map[string][]rungCheck{}
	for d, sr := range latestAuthorsOpenML(runs) {
		epochs, err := strconv.ParseFloat(sr.Result.Params["epochs"], 64)
		if err != nil || epochs <= 0 {
			continue
		}
		ev := sr.Result.Table("evaluations")
		byRepeat := map[int][]int{}
		var repeats []int
		for i := range ev.Rows {
			if ev.String(i, "dataset") != d || ev.String(i, "method") != "bohb" || isTrue(ev.Value(i, "hidden")) {
				continue
			}
			r := ev.Int(i, "repeat")
			if byRepeat[r] == nil {
				repeats = append(repeats, r)
			}
			byRepeat[r] = append(byRepeat[r], i)
		}
		slices.Sort(repeats)
		for _, r := range repeats {
			best, full := -1, -1
			for _, i := range byRepeat[r] {
				switch {
				case ev.Float(i, "fidelity") >= 1:
					full = i
				case !isTrue(ev.Value(i, "failed")) && (best < 0 || ev.Float(i, "val_metric") > ev.Float(best, "val_metric")):
					best = i
				}
			}
			if best < 0 || full < 0 {
				continue // stored before its rungs were, or every rung failed
			}
			out[d] = append(out[d], rungCheck{epochs: math.Round(ev.Float(best, "fidelity") * epochs),
				rungAUC: ev.Float(best, "val_metric"), refit: ev.Float(full, "test_metric"),
				sameAsReported: ev.String(best, "config") == ev.String(full, "config")})
		}
	}
	return out
}

// latestAuthorsOpenML is, per OpenML dataset, the latest of the runs under the authors'
// protocol whose evaluations table has rows of it.
func latestAuthorsOpenML(runs []StoredRun) map[string]StoredRun {
	latest := map[string]StoredRun{}
	for _, sr := range runs {
		if protocolOf(sr.Result) != protocolAuthors {
			continue
		}
		ev := sr.Result.Table("evaluations")
		if ev == nil {
			continue
		}
		for i := range ev.Rows {
			if d := ev.String(i, "dataset"); groupOf(d) == openML && (latest[d].Result == nil || sr.ID > latest[d].ID) {
				latest[d] = sr
			}
		}
	}
	return latest
}

// writeAuthorsBOHB writes, for the datasets whose authors' BOHB cells stored their rungs,
// where the configuration it reported was found and what its full training scored: the
// mechanism behind that column (ahsc-protocol.md, row 24).
func writeAuthorsBOHB(b *bytes.Buffer, runs []StoredRun) {
	checks := authorsBOHBChecks(runs)
	if len(checks) == 0 {
		return
	}
	datasets := slices.Sorted(maps.Keys(checks))
	var parts []string
	for _, d := range datasets {
		cs := checks[d]
		var short, below, mismatch int
		var rung, refit []float64
		for _, c := range cs {
			if !c.sameAsReported {
				mismatch++ // the full training is of another configuration: nothing to compare
				continue
			}
			if c.epochs <= 3 {
				short++
			}
			if c.refit < c.rungAUC {
				below++
			}
			rung, refit = append(rung, c.rungAUC), append(refit, c.refit)
		}
		n := len(cs) - mismatch
		repeats := "repeats"
		if n == 1 {
			repeats = "repeat"
		}
		s := fmt.Sprintf("%s, %d %s: found by a fit of at most 3 epochs in %d; that fit's selection ROC-AUC median %.3f%s, "+
			"the full training's test ROC-AUC median %.3f%s, lower in %d", d, n, repeats, short, stats.Median(rung), ivText(ciOf(rung, stats.Median), 3),
			stats.Median(refit), ivText(ciOf(refit, stats.Median), 3), below)
		if mismatch > 0 {
			s += fmt.Sprintf(" (%d more left out: their full training is not of the best rung's configuration, "+
				"which the authors' BOHB would not do)", mismatch)
		}
		parts = append(parts, s)
	}
	fmt.Fprintf(b, "\nThe authors' BOHB (authors' protocol, OpenML sets; [ahsc-protocol.md](ahsc-protocol.md), row 24) reports the "+
		"configuration of the best fit at any budget, 1 to 30 epochs scored on the selection fold, trained again for the full "+
		"epochs. Read from the rungs its cells store (builds from 4669912 on; the selection fold is the test fold under this "+
		"protocol): %s.\n", strings.Join(parts, "; "))
}
