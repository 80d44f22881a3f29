package skmlp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/internal/nprand"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// ErrNonFinite is wrapped by the error Fit returns when the trained weights are not all
// finite (scikit-learn's "Solver produced non-finite parameter weights").
var ErrNonFinite = errors.New("skmlp: solver produced non-finite parameter weights")

// Result is a fitted classifier and what its training did.
type Result struct {
	Net *Net
	// LossCurve is loss_curve_: every epoch's mean training loss (the batches' penalized
	// losses weighted by their rows).
	LossCurve []float64
	// ValidationScores is validation_scores_: every epoch's held-out accuracy (early
	// stopping only).
	ValidationScores []float64
	// NIter is n_iter_, the epochs trained.
	NIter int
	// Converged: training stopped by its rule before MaxIter.
	Converged bool
	// TrainRows and ValRows are the rows of the training and held-out parts.
	TrainRows, ValRows int
}

// Fit is MLPClassifier(random_state=seed, **p).fit(x, y) for x of rows × d (row-major) and
// labels y in 0..classes−1, every class present (scikit-learn's LabelBinarizer would drop
// an absent one). ctx is checked between batches.
func Fit(ctx context.Context, p Params, seed uint32, x []float64, rows, d int, y []int, classes int) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if rows <= 0 || d <= 0 || len(x) != rows*d || len(y) != rows {
		return nil, fmt.Errorf("skmlp: %d values, %d labels for %d rows of %d features", len(x), len(y), rows, d)
	}
	if classes < 2 {
		return nil, fmt.Errorf("skmlp: %d classes: want at least 2", classes)
	}
	seen := make([]bool, classes)
	for _, c := range y {
		if c < 0 || c >= classes {
			return nil, fmt.Errorf("skmlp: label %d outside 0..%d", c, classes-1)
		}
		seen[c] = true
	}
	if i := slices.Index(seen, false); i >= 0 {
		return nil, fmt.Errorf("skmlp: class %d has no row (scikit-learn would fit %d classes)", i, classes-1)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("skmlp: a non-finite value at row %d, column %d", i/d, i%d)
		}
	}
	rng := nprand.New(seed)
	net := Init(rng, d, p.Hidden, classes)
	res := &Result{}
	trX, trY := x, y
	var valX []float64
	var valY []int
	if p.EarlyStopping {
		var strat []int
		if classes == 2 { // should_stratify: one output column
			strat = y
		}
		tr, te, err := trainTestSplit(rng, rows, p.ValidationFraction, strat)
		if err != nil {
			return nil, err
		}
		trX, trY = take(x, d, tr), takeInts(y, tr)
		valX, valY = take(x, d, te), takeInts(y, te)
	}
	n := len(trY)
	res.TrainRows, res.ValRows = n, len(valY)
	bs := min(200, n)
	if p.BatchSize > 0 {
		bs = min(p.BatchSize, n)
	}
	f := newFitter(net, p, bs)
	var valActs [][]float64
	if p.EarlyStopping {
		valActs = net.buffers(len(valY))
		copy(valActs[0], valX)
	}
	sample := make([]int, n)
	for i := range sample {
		sample[i] = i
	}
	every, steps := max(p.StepEvery, 1), 0
	bestLoss, bestScore, noChange := math.Inf(1), math.Inf(-1), 0
	var best *Net
	for it := 0; it < p.MaxIter; it++ {
		if p.Shuffle {
			perm := rng.Permutation(n) // utils.shuffle: arange(n) shuffled, then indexed
			next := make([]int, n)
			for i, j := range perm {
				next[i] = sample[j]
			}
			sample = next
		}
		acc := 0.0
		for start := 0; start < n; start += bs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			end := min(start+bs, n)
			if p.BeforeStep != nil && steps%every == 0 {
				if err := p.BeforeStep(ctx, steps, net); err != nil {
					return nil, err
				}
			}
			steps++
			loss := f.step(trX, trY, d, sample[start:end])
			acc += loss * float64(end-start)
		}
		res.NIter++
		loss := acc / float64(n)
		res.LossCurve = append(res.LossCurve, loss)
		if p.EarlyStopping {
			net.forward(valActs, len(valY))
			score := accuracy(predict(valActs[len(valActs)-1], net.Units[len(net.Units)-1], len(valY)), valY)
			res.ValidationScores = append(res.ValidationScores, score)
			if score < bestScore+p.Tol {
				noChange++
			} else {
				noChange = 0
			}
			if score > bestScore {
				bestScore, best = score, net.clone()
			}
		} else {
			if loss > bestLoss-p.Tol {
				noChange++
			} else {
				noChange = 0
			}
			if loss < bestLoss {
				bestLoss = loss
			}
			if math.IsNaN(loss) {
				// NaN weights stay NaN and the loss never improves on +Inf: scikit-learn would
				// train to max_iter and then refuse the weights.
				return nil, fmt.Errorf("%w (the training loss is NaN at epoch %d)", ErrNonFinite, it+1)
			}
		}
		if noChange > p.NIterNoChange {
			res.Converged = true
			break
		}
	}
	if p.EarlyStopping && best != nil {
		net = best
	}
	if !net.finite() {
		return nil, ErrNonFinite
	}
	res.Net = net
	return res, nil
}

func accuracy(pred, y []int) float64 {
	c := 0
	for i, v := range pred {
		if v == y[i] {
			c++
		}
	}
	return float64(c) / float64(len(y))
}

func take(x []float64, d int, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*d)
	for _, i := range idx {
		out = append(out, x[i*d:(i+1)*d]...)
	}
	return out
}

func takeInts(y, idx []int) []int {
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = y[i]
	}
	return out
}

// fitter holds the buffers and Adam state of one fit.
type fitter struct {
	net          *Net
	p            Params
	acts, deltas [][]float64
	grads        [][]float64 // coefs' then intercepts' gradients, as scikit-learn orders params
	ms, vs       [][]float64
	t            int
}

func newFitter(net *Net, p Params, bs int) *fitter {
	f := &fitter{net: net, p: p, acts: net.buffers(bs)}
	L := len(net.Coefs)
	f.deltas = make([][]float64, L)
	for i := range L {
		f.deltas[i] = make([]float64, bs*net.Units[i+1])
	}
	for _, group := range [][][]float64{net.Coefs, net.Intercepts} {
		for _, w := range group {
			f.grads = append(f.grads, make([]float64, len(w)))
			f.ms = append(f.ms, make([]float64, len(w)))
			f.vs = append(f.vs, make([]float64, len(w)))
		}
	}
	return f
}

// step is one batch of _fit_stochastic: _backprop on the rows idx, then the Adam update;
// it returns the batch's loss, penalty included.
func (f *fitter) step(x []float64, y []int, d int, idx []int) float64 {
	loss := f.backprop(x, y, d, idx)
	f.adam()
	return loss
}

// backprop is _backprop on the rows idx of x: the batch's log loss plus
// ½·alpha·Σ‖W‖²/|B| (the kernels only), its gradients left in f.grads.
func (f *fitter) backprop(x []float64, y []int, d int, idx []int) float64 {
	net, m := f.net, len(idx)
	in := f.acts[0][:m*d]
	for r, i := range idx {
		copy(in[r*d:(r+1)*d], x[i*d:(i+1)*d])
	}
	net.forward(f.acts, m)
	L := len(net.Coefs)
	out := net.Units[L]
	yb := make([]int, m)
	for r, i := range idx {
		yb[r] = y[i]
	}
	loss := logLoss(f.acts[L][:m*out], out, yb)
	values := 0.0
	for _, w := range net.Coefs {
		values += blas64.Dot(blas64.Vector{N: len(w), Inc: 1, Data: w}, blas64.Vector{N: len(w), Inc: 1, Data: w})
	}
	loss += (0.5 * f.p.Alpha) * values / float64(m)
	// deltas[last] = activations[-1] − y (y one-hot, or the 0/1 column)
	dl := f.deltas[L-1][:m*out]
	copy(dl, f.acts[L][:m*out])
	for r, c := range yb {
		if out == 1 {
			dl[r] -= float64(c)
		} else {
			dl[r*out+c]--
		}
	}
	for i := L - 1; i >= 0; i-- {
		fin, fout := net.Units[i], net.Units[i+1]
		delta := f.deltas[i][:m*fout]
		// coef_grads = (activations[i]ᵀ·deltas[i] + alpha·coefs_[i]) / n
		g := f.grads[i]
		copy(g, net.Coefs[i])
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: m, Cols: fin, Stride: fin, Data: f.acts[i][:m*fin]},
			blas64.General{Rows: m, Cols: fout, Stride: fout, Data: delta}, f.p.Alpha,
			blas64.General{Rows: fin, Cols: fout, Stride: fout, Data: g})
		for j := range g {
			g[j] /= float64(m)
		}
		// intercept_grads = mean(deltas[i], axis 0)
		gb := f.grads[L+i]
		clear(gb)
		for r := range m {
			for j, v := range delta[r*fout : (r+1)*fout] {
				gb[j] += v
			}
		}
		for j := range gb {
			gb[j] /= float64(m)
		}
		if i == 0 {
			break
		}
		// deltas[i−1] = deltas[i]·coefs_[i]ᵀ, zero where the ReLU output is 0
		prev := f.deltas[i-1][:m*fin]
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: m, Cols: fout, Stride: fout, Data: delta},
			blas64.General{Rows: fin, Cols: fout, Stride: fout, Data: net.Coefs[i]}, 0,
			blas64.General{Rows: m, Cols: fin, Stride: fin, Data: prev})
		for j, a := range f.acts[i][:m*fin] {
			if a == 0 {
				prev[j] = 0
			}
		}
	}
	return loss
}

// adam is AdamOptimizer.update_params: the moments, the bias-corrected step size
// lr·√(1−β2ᵗ)/(1−β1ᵗ), and θ += −step·m/(√v + ε).
func (f *fitter) adam() {
	p := f.p
	f.t++
	lr := p.LearningRateInit * math.Sqrt(1-math.Pow(p.Beta2, float64(f.t))) / (1 - math.Pow(p.Beta1, float64(f.t)))
	params := append(append([][]float64{}, f.net.Coefs...), f.net.Intercepts...)
	for k, w := range params {
		g, m, v := f.grads[k], f.ms[k], f.vs[k]
		for j := range w {
			m[j] = p.Beta1*m[j] + (1-p.Beta1)*g[j]
			v[j] = p.Beta2*v[j] + (1-p.Beta2)*(g[j]*g[j])
			w[j] += -lr * m[j] / (math.Sqrt(v[j]) + p.Epsilon)
		}
	}
}

// trainTestSplit is train_test_split(test_size=frac, random_state=rng, stratify=strat) on
// rows indices: ShuffleSplit without strat, StratifiedShuffleSplit with it. It returns the
// training and test indices in scikit-learn's order.
func trainTestSplit(rng *nprand.RandomState, rows int, frac float64, strat []int) (train, test []int, err error) {
	nTest := int(math.Ceil(frac * float64(rows)))
	nTrain := rows - nTest
	if nTrain <= 0 || nTest <= 0 {
		return nil, nil, fmt.Errorf("skmlp: validation_fraction %v of %d rows leaves %d training and %d validation rows", frac, rows, nTrain, nTest)
	}
	if strat == nil {
		perm := rng.Permutation(rows)
		return perm[nTest:], perm[:nTest], nil
	}
	// classes in sorted order (np.unique), each one's rows in increasing order (a stable
	// argsort of the class codes)
	k := 0
	for _, c := range strat {
		k = max(k, c+1)
	}
	counts := make([]int, k)
	for _, c := range strat {
		counts[c]++
	}
	var classIdx [][]int
	var classCounts []int
	for c := range k {
		if counts[c] == 0 {
			continue
		}
		var idx []int
		for i, v := range strat {
			if v == c {
				idx = append(idx, i)
			}
		}
		classIdx = append(classIdx, idx)
		classCounts = append(classCounts, counts[c])
	}
	if slices.Min(classCounts) < 2 {
		return nil, nil, fmt.Errorf("skmlp: the least populated class has only 1 row, too few for a stratified validation split")
	}
	if nTrain < len(classCounts) || nTest < len(classCounts) {
		return nil, nil, fmt.Errorf("skmlp: a stratified split of %d training and %d validation rows cannot hold %d classes", nTrain, nTest, len(classCounts))
	}
	nI := approximateMode(classCounts, nTrain, rng)
	rest := make([]int, len(classCounts))
	for i := range rest {
		rest[i] = classCounts[i] - nI[i]
	}
	tI := approximateMode(rest, nTest, rng)
	for i, idx := range classIdx {
		perm := rng.Permutation(classCounts[i])
		for j, q := range perm {
			switch {
			case j < nI[i]:
				train = append(train, idx[q])
			case j < nI[i]+tI[i]:
				test = append(test, idx[q])
			}
		}
	}
	rng.ShuffleInts(train)
	rng.ShuffleInts(test)
	return train, test, nil
}

// approximateMode is utils._approximate_mode: each class's share of draws floored, the
// draws left given to the classes of largest remainder, ties among them broken by
// rng.choice (a permutation's first entries).
func approximateMode(counts []int, draws int, rng *nprand.RandomState) []int {
	total := 0
	for _, c := range counts {
		total += c
	}
	cont := make([]float64, len(counts))
	floored := make([]float64, len(counts))
	sum := 0.0
	for i, c := range counts {
		cont[i] = float64(c) / float64(total) * float64(draws)
		floored[i] = math.Floor(cont[i])
		sum += floored[i]
	}
	need := int(float64(draws) - sum)
	if need > 0 {
		rem := make([]float64, len(counts))
		for i := range rem {
			rem[i] = cont[i] - floored[i]
		}
		values := slices.Clone(rem)
		slices.Sort(values)
		values = slices.Compact(values)
		slices.Reverse(values)
		for _, v := range values {
			var inds []int
			for i, r := range rem {
				if r == v {
					inds = append(inds, i)
				}
			}
			add := min(len(inds), need)
			for _, j := range rng.Permutation(len(inds))[:add] {
				floored[inds[j]]++
			}
			need -= add
			if need == 0 {
				break
			}
		}
	}
	out := make([]int, len(counts))
	for i, v := range floored {
		out[i] = int(v)
	}
	return out
}
