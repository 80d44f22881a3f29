package convexity

import (
	"github.com/hyperflat/hyperflat/losses"
)

// microAUC is the AUCMicro metric of scores (logits: one per example for a binary model, K
// otherwise) against labels: the ROC-AUC of every (example, class) pair's softmax
// probability against whether the example is of that class, as Keras's AUC() sees a
// softmax output and one-hot labels (hpobench/util/model.py compiles metrics=[AUC()]).
func microAUC(s losses.Scores, labels []int) (float64, error) {
	if s.K == 1 {
		return losses.ROCAUC(s.Values, labels)
	}
	probs := losses.Softmax(s).Values
	hit := make([]int, len(s.Values))
	for i := range s.N {
		if i < len(labels) && labels[i] >= 0 && labels[i] < s.K {
			hit[i*s.K+labels[i]] = 1
		}
	}
	return losses.ROCAUC(probs, hit)
}
