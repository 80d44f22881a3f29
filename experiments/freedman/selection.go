package freedman

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/experiments"
)

// selectionPath is a forward-selection run: the features in the order they were added, and
// the objective of every prefix (objectives[k] for the first k features; [0] is the empty
// model).
type selectionPath struct {
	features   []int
	objectives []float64
}

// best is the length of the prefix with the smallest objective (the first, on ties). A NaN
// objective is not a candidate: with --data authors the empty model's is NaN, since the
// authors' scripts never score it.
func (p selectionPath) best() int {
	b := -1
	for k, v := range p.objectives {
		if !math.IsNaN(v) && (b < 0 || v < p.objectives[b]) {
			b = k
		}
	}
	return max(b, 0)
}

// forwardSelect runs greedy forward selection over p features for the given number of steps:
// at each step every remaining feature j (ascending) is scored as selected ∪ {j}, and the
// first minimizer (strict <) is added, as in the authors' forward_selection. Candidates are
// scored concurrently on workers goroutines; each score depends only on its feature set, so
// the path does not depend on the number of workers. A NaN score never wins; a step where
// every score is NaN is an error. Without scoreEmpty the empty model is not scored (its
// objective is NaN), as in the authors' scripts, which start from one feature.
func forwardSelect(ctx context.Context, p, steps, workers int, scoreEmpty bool, objective func(set []int) (float64, error), onStep func(step, feature int, objective float64)) (selectionPath, error) {
	var path selectionPath
	v0 := math.NaN()
	if scoreEmpty {
		var err error
		if v0, err = objective(nil); err != nil {
			return path, err
		}
	}
	path.objectives = append(path.objectives, v0)
	used := make([]bool, p)
	for step := 1; step <= min(steps, p); step++ {
		var cands []int
		for j := range p {
			if !used[j] {
				cands = append(cands, j)
			}
		}
		vals := make([]float64, len(cands))
		err := experiments.Parallel(ctx, workers, len(cands), func(i int) error {
			set := append(slices.Clip(path.features), cands[i]) // a fresh slice per candidate
			var err error
			vals[i], err = objective(set)
			return err
		})
		if err != nil {
			return path, err
		}
		bestI := -1
		for i, v := range vals {
			if math.IsNaN(v) {
				continue
			}
			if bestI < 0 || v < vals[bestI] {
				bestI = i
			}
		}
		if bestI < 0 {
			return path, fmt.Errorf("step %d: no candidate has a finite objective", step)
		}
		used[cands[bestI]] = true
		path.features = append(path.features, cands[bestI])
		path.objectives = append(path.objectives, vals[bestI])
		if onStep != nil {
			onStep(step, cands[bestI], vals[bestI])
		}
	}
	return path, nil
}
