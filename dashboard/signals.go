package dashboard

import (
	"slices"

	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/stats"
)

// signalsTarget is what the signals are drawn against.
const signalsTarget = "test_metric"

// signalsView holds, per white-box signal, every recorded trial of the group as a point
// (signal, test metric, method index), with Spearman's ρ over them.
type signalsView struct {
	Group   string         `json:"group"`
	Target  string         `json:"target"`
	Methods []string       `json:"methods"`
	Signals []signalSeries `json:"signals"`
}

type signalSeries struct {
	Field   string   `json:"field"`
	Label   string   `json:"label"`
	Rho     *float64 `json:"rho"`
	N       int      `json:"n"`
	Points  [][]any  `json:"points"`
	Sampled *sampled `json:"sampled,omitempty"`
}

// hasSignals tells whether the run's trials carry white-box records.
func (a *analysis) hasSignals() bool { return a.valueIndex(ahsc.WhiteboxSignals[0].Column) >= 0 }

func (a *analysis) signals(q query) *signalsView {
	v := &signalsView{Group: q.group, Target: signalsTarget, Methods: []string{}, Signals: []signalSeries{}}
	y := a.valueIndex(signalsTarget)
	if y < 0 {
		return v
	}
	ms := a.methods(q.group)
	for _, m := range ms {
		v.Methods = append(v.Methods, methodName(m))
	}
	for _, sig := range ahsc.WhiteboxSignals {
		x := a.valueIndex(sig.Column)
		if x < 0 {
			continue
		}
		var ts []*trial
		var xs, ys []float64
		for _, c := range a.cells {
			if c.group != q.group {
				continue
			}
			for i := range c.trials {
				t := &c.trials[i]
				if !a.counted(t, q) || !finite(t.value(x)) || !finite(t.value(y)) {
					continue
				}
				ts = append(ts, t)
				xs, ys = append(xs, t.value(x)), append(ys, t.value(y))
			}
		}
		s := signalSeries{Field: sig.Column, Label: sig.Label, N: len(ts), Points: [][]any{}}
		if r, err := stats.Spearman(xs, ys); err == nil && finite(r.Rho) {
			s.Rho = &r.Rho
		}
		k := stride(len(ts), maxPoints)
		for i := 0; i < len(ts); i += k {
			s.Points = append(s.Points, []any{xs[i], ys[i], slices.Index(ms, a.cellOf(ts[i]).method)})
		}
		if k > 1 {
			s.Sampled = &sampled{Total: len(ts), Shown: len(s.Points), Stride: k}
		}
		v.Signals = append(v.Signals, s)
	}
	return v
}
