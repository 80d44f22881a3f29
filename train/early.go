package train

import (
	"math"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
)

// bestIndex is the epoch that last improved the monitored loss by more than minDelta.
func bestIndex(h *History, monitor string, minDelta float64) int {
	best, at := math.Inf(1), 0
	for i, e := range h.Epochs {
		v := e.Loss
		if monitor == "val_loss" {
			v = e.ValLoss
		}
		if v < best-minDelta {
			best, at = v, i
		}
	}
	return at
}

func snapshot(ps []*layers.Param) [][]float64 {
	out := make([][]float64, len(ps))
	for i, p := range ps {
		out[i], _ = graph.ToFloat64s(p.Value)
	}
	return out
}

func restore(ps []*layers.Param, w [][]float64) {
	for i, p := range ps {
		switch d := p.Value.Data().(type) {
		case []float64:
			copy(d, w[i])
		case []float32:
			for j := range d {
				d[j] = float32(w[i][j])
			}
		}
	}
}
