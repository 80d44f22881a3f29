package losses

import (
	"fmt"
	"math"
	"sort"
)

// Scores are a model's outputs for n examples: n rows of k class scores (logits or
// probabilities), row-major. For a binary model with one output per example, k is 1 and the
// score is for the positive class.
type Scores struct {
	Values []float64
	N, K   int
}

func (s Scores) check(labels []int) error {
	if s.N*s.K != len(s.Values) || s.K < 1 {
		return fmt.Errorf("losses: %d scores for %d×%d", len(s.Values), s.N, s.K)
	}
	if len(labels) != s.N {
		return fmt.Errorf("losses: %d labels for %d examples", len(labels), s.N)
	}
	classes := max(s.K, 2)
	for i, y := range labels {
		if y < 0 || y >= classes {
			return fmt.Errorf("losses: label %d of example %d outside [0, %d)", y, i, classes)
		}
	}
	return nil
}

// Predict returns each row's predicted class: the argmax, or for k = 1 whether the score
// exceeds threshold (0 for logits, 0.5 for probabilities).
func (s Scores) Predict(threshold float64) []int {
	out := make([]int, s.N)
	for i := 0; i < s.N; i++ {
		row := s.Values[i*s.K : (i+1)*s.K]
		if s.K == 1 {
			if row[0] > threshold {
				out[i] = 1
			}
			continue
		}
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// Accuracy is the fraction of examples whose predicted class (see Predict) is the label.
func Accuracy(s Scores, labels []int, threshold float64) (float64, error) {
	if err := s.check(labels); err != nil {
		return 0, err
	}
	if s.N == 0 {
		return 0, fmt.Errorf("losses: accuracy of no examples")
	}
	if math.IsNaN(threshold) {
		return 0, fmt.Errorf("losses: accuracy at a NaN threshold") // every comparison false: all class 0
	}
	hits := 0
	for i, p := range s.Predict(threshold) {
		if p == labels[i] {
			hits++
		}
	}
	return float64(hits) / float64(s.N), nil
}

// Softmax turns rows of logits into rows of probabilities (stably).
func Softmax(s Scores) Scores {
	out := make([]float64, len(s.Values))
	for i := 0; i < s.N; i++ {
		row := s.Values[i*s.K : (i+1)*s.K]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		total := 0.0
		for j, v := range row {
			out[i*s.K+j] = math.Exp(v - m)
			total += out[i*s.K+j]
		}
		for j := range row {
			out[i*s.K+j] /= total
		}
	}
	return Scores{Values: out, N: s.N, K: s.K}
}

// Sigmoid turns logits into probabilities elementwise.
func Sigmoid(s Scores) Scores {
	out := make([]float64, len(s.Values))
	for i, v := range s.Values {
		if v >= 0 {
			out[i] = 1 / (1 + math.Exp(-v))
		} else {
			e := math.Exp(v)
			out[i] = e / (1 + e)
		}
	}
	return Scores{Values: out, N: s.N, K: s.K}
}

// ROCAUC is the area under the ROC curve of scores for binary labels (1 positive), i.e. the
// Mann–Whitney probability that a random positive outscores a random negative, ties counted
// one half (average ranks), as scikit-learn's roc_auc_score.
func ROCAUC(scores []float64, labels []int) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("losses: %d scores for %d labels", len(scores), len(labels))
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
		if math.IsNaN(scores[i]) {
			return 0, fmt.Errorf("losses: score %d is NaN", i)
		}
		if labels[i] != 0 && labels[i] != 1 {
			return 0, fmt.Errorf("losses: label %d of example %d is not 0 or 1", labels[i], i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var rankSum float64
	pos := 0
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1 … j, averaged
		for _, k := range idx[i:j] {
			if labels[k] == 1 {
				rankSum += avg
				pos++
			}
		}
		i = j
	}
	neg := len(idx) - pos
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("losses: ROC-AUC needs both classes; got %d positives and %d negatives", pos, neg)
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg)), nil
}

// ROCAUCOvR is the one-vs-rest macro ROC-AUC for k ≥ 2 classes: the mean over classes of the
// AUC of that class's score against all others (scikit-learn's multi_class="ovr",
// average="macro"). For k = 1 (one binary score per example) it is ROCAUC.
func ROCAUCOvR(s Scores, labels []int) (float64, error) {
	if err := s.check(labels); err != nil {
		return 0, err
	}
	if s.K == 1 {
		return ROCAUC(s.Values, labels)
	}
	if s.K == 2 {
		col := make([]float64, s.N)
		for i := range col {
			col[i] = s.Values[i*2+1] - s.Values[i*2]
		}
		return ROCAUC(col, labels)
	}
	total := 0.0
	col := make([]float64, s.N)
	bin := make([]int, s.N)
	for c := 0; c < s.K; c++ {
		for i := 0; i < s.N; i++ {
			col[i] = s.Values[i*s.K+c]
			bin[i] = b2i(labels[i] == c)
		}
		auc, err := ROCAUC(col, bin)
		if err != nil {
			return 0, fmt.Errorf("losses: class %d: %w", c, err)
		}
		total += auc
	}
	return total / float64(s.K), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// LogLoss is the mean negative log-likelihood of the labels under probability rows (k ≥ 2)
// or positive-class probabilities (k = 1), with probabilities clipped to [eps, 1−eps] and
// rows renormalized, as scikit-learn's log_loss (eps 1e-15 when zero).
func LogLoss(probs Scores, labels []int, eps float64) (float64, error) {
	if err := probs.check(labels); err != nil {
		return 0, err
	}
	if eps == 0 {
		eps = 1e-15
	}
	if !(eps > 0 && eps < 0.5) { // NaN too: every clipped probability NaN
		return 0, fmt.Errorf("losses: log loss with ε = %v; want 0 < ε < 0.5 (0: 1e-15)", eps)
	}
	clip := func(p float64) float64 { return math.Min(math.Max(p, eps), 1-eps) }
	total := 0.0
	for i := 0; i < probs.N; i++ {
		row := probs.Values[i*probs.K : (i+1)*probs.K]
		if probs.K == 1 {
			p := clip(row[0])
			if labels[i] == 0 {
				p = 1 - p
			}
			total -= math.Log(p)
			continue
		}
		sum := 0.0
		for _, p := range row {
			sum += clip(p)
		}
		total -= math.Log(clip(row[labels[i]]) / sum)
	}
	return total / float64(probs.N), nil
}
