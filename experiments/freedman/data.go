package freedman

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hyperflat/hyperflat/internal/nprand"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// gram holds the sufficient statistics of least squares on a block of n rows with p features:
// XᵀX (p×p, row-major), Xᵀy and yᵀy. Every objective of the experiment is a function of them.
type gram struct {
	n, p int
	xx   []float64
	xy   []float64
	yy   float64
}

// newGram computes the statistics of the n×p row-major design x and labels y.
func newGram(x []float64, y []float64, p int) gram {
	n := len(y)
	xm := mat.NewDense(n, p, x)
	var xx mat.Dense
	xx.Mul(xm.T(), xm)
	xy := mat.NewVecDense(p, nil)
	xy.MulVec(xm.T(), mat.NewVecDense(n, y))
	return gram{n: n, p: p, xx: xx.RawMatrix().Data, xy: xy.RawVector().Data, yy: mat.Dot(mat.NewVecDense(n, y), mat.NewVecDense(n, y))}
}

// combine returns the statistics of the rows of g plus (sign 1) or minus (sign −1) those of h.
func (g gram) combine(h gram, sign float64) gram {
	out := gram{n: g.n + int(sign)*h.n, p: g.p, xx: make([]float64, len(g.xx)), xy: make([]float64, len(g.xy)), yy: g.yy + sign*h.yy}
	for i := range g.xx {
		out.xx[i] = g.xx[i] + sign*h.xx[i]
	}
	for i := range g.xy {
		out.xy[i] = g.xy[i] + sign*h.xy[i]
	}
	return out
}

// slice returns XᵀX and Xᵀy restricted to the features in set (in that order), each divided
// by scale.
func (g gram) slice(set []int, scale float64) (xx, xy []float64) {
	k := len(set)
	xx, xy = make([]float64, k*k), make([]float64, k)
	for a, i := range set {
		row := g.xx[i*g.p:]
		for b, j := range set {
			xx[a*k+b] = row[j] / scale
		}
		xy[a] = g.xy[i] / scale
	}
	return xx, xy
}

// ols returns the least-squares coefficients on the features in set, by the Cholesky
// factorization of the normal equations (the presets' designs are far from collinear: at
// least 250 Gaussian rows, at most 40 columns). LAPACK's potrf/potrs directly rather than mat.Cholesky, which
// also estimates the condition number: that estimate was half of the cost of cv10.
func (g gram) ols(set []int) ([]float64, error) {
	k := len(set)
	if k == 0 {
		return nil, nil
	}
	xx, xy := g.slice(set, 1)
	t, ok := lapack64.Potrf(blas64.Symmetric{N: k, Stride: k, Data: xx, Uplo: blas.Upper})
	if !ok {
		return nil, fmt.Errorf("XᵀX on features %v is not positive definite", set)
	}
	lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: xy})
	return xy, nil
}

// sse is the residual sum of squares ‖X_set θ − y‖² = θᵀXᵀXθ − 2θᵀXᵀy + yᵀy on these rows.
func (g gram) sse(set []int, theta []float64) float64 {
	s := g.yy
	for a, i := range set {
		row := g.xx[i*g.p:]
		q := 0.0
		for b, j := range set {
			q += row[j] * theta[b]
		}
		s += theta[a]*q - 2*theta[a]*g.xy[i]
	}
	return s
}

// aic and bic score the OLS fit on these rows: n·log(RSS/n) + 2k and n·log(RSS/n) + k·log n.
func (g gram) aic(set []int) (float64, error) { return g.informationCriterion(set, 2) }
func (g gram) bic(set []int) (float64, error) {
	return g.informationCriterion(set, math.Log(float64(g.n)))
}

func (g gram) informationCriterion(set []int, perParam float64) (float64, error) {
	theta, err := g.ols(set)
	if err != nil {
		return 0, err
	}
	n := float64(g.n)
	return n*math.Log(g.sse(set, theta)/n) + perParam*float64(len(set)), nil
}

// dataset is one draw of Appendix C.1's data, reduced to the Gram statistics of its blocks.
type dataset struct {
	train, val, all, test gram
	// CV (cv10 only): the rows of each fold, and the other rows (all − fold), precomputed
	// because a candidate's fit only slices them.
	folds, rest []gram
}

// newDataset draws the data of Appendix C.1 from the repeat's data stream, in the order of
// the authors' create_dataset: the training and validation design row by row, then their
// labels (signal: the noise e_i of y_i = (x_i0 + x_i1 + e_i)/√6, e ~ N(0, 2²); null:
// y_i ~ N(0, 1)), then the test design and its labels. The null variant's test labels are
// N(0, 1) too, not create_dataset's signal-variant test labels: a null model must not be
// scored on a signal. With folds, the training and validation rows are dealt into cfg.Folds
// folds by a permutation from the folds stream.
func newDataset(cfg *Config, s streams, folds bool) *dataset {
	p, null := cfg.Features, cfg.Variant == "null"
	rng := rand.New(rand.NewPCG(s.data, 0))
	draw := func(rows int) (x, y []float64) {
		x = make([]float64, rows*p)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		y = make([]float64, rows)
		for i := range y {
			if null {
				y[i] = rng.NormFloat64()
			} else {
				y[i] = (x[i*p] + x[i*p+1] + 2*rng.NormFloat64()) / math.Sqrt(6)
			}
		}
		return x, y
	}
	x, y := draw(cfg.TrainRows + cfg.ValidationRows)
	tx, ty := draw(cfg.TestRows)
	return blocks(cfg, x, y, tx, ty, s, folds)
}

// newAuthorsDataset draws the data exactly as the authors' create_dataset does (freedman.py),
// from NumPy's RandomState(seed) with seed = the repeat (their script is repeat 0):
// data = normal(0, 1, (rows, p)) in row-major order; labels = normal(0, 1, rows) (null) or
// (x0 + x1 + normal(0, 2, rows))/√6 (signal); test_data = normal(0, 1, (test rows, p)); and
// test labels by the signal formula in both variants. That last draw is a quirk of their code
// (the --null flag changes only the training and validation labels), reproduced so that the
// test MSEs are theirs: in the null variant the test rows carry a signal the training rows do
// not, so a selection that picks x0 or x1 by chance gets a lower test MSE. The folds of cv10,
// which they do not have, come from the project's folds stream.
func newAuthorsDataset(cfg *Config, seed uint32, s streams, folds bool) *dataset {
	p := cfg.Features
	rs := nprand.New(seed)
	sqrt6 := math.Sqrt(6)
	rows := cfg.TrainRows + cfg.ValidationRows
	x := make([]float64, rows*p)
	rs.NormalFill(x, 0, 1)
	y := make([]float64, rows)
	if cfg.Variant == "null" {
		rs.NormalFill(y, 0, 1)
	} else {
		for i := range y {
			y[i] = (x[i*p] + x[i*p+1] + rs.Normal(0, 2)) / sqrt6
		}
	}
	tx := make([]float64, cfg.TestRows*p)
	rs.NormalFill(tx, 0, 1)
	ty := make([]float64, cfg.TestRows)
	for i := range ty {
		ty[i] = (tx[i*p] + tx[i*p+1] + rs.Normal(0, 2)) / sqrt6
	}
	return blocks(cfg, x, y, tx, ty, s, folds)
}

// blocks reduces a draw to the Gram statistics of its blocks: the first cfg.TrainRows rows of
// x, y train, the rest validate, tx, ty test. With folds, the training and validation rows are
// dealt into cfg.Folds folds by a permutation from the folds stream.
func blocks(cfg *Config, x, y, tx, ty []float64, s streams, folds bool) *dataset {
	p := cfg.Features
	rows, nT := cfg.TrainRows+cfg.ValidationRows, cfg.TrainRows
	d := &dataset{
		train: newGram(x[:nT*p], y[:nT], p),
		val:   newGram(x[nT*p:], y[nT:], p),
		test:  newGram(tx, ty, p),
	}
	d.all = d.train.combine(d.val, 1)
	if folds {
		perm := rand.New(rand.NewPCG(s.folds, 0)).Perm(rows)
		for f := range cfg.Folds {
			var fx, fy []float64
			for i := f; i < rows; i += cfg.Folds {
				row := perm[i]
				fx = append(fx, x[row*p:(row+1)*p]...)
				fy = append(fy, y[row])
			}
			fold := newGram(fx, fy, p)
			d.folds = append(d.folds, fold)
			d.rest = append(d.rest, d.all.combine(fold, -1))
		}
	}
	return d
}

// validationMSE is Eq. 1: the validation MSE of the OLS fit on the training rows.
func (d *dataset) validationMSE(set []int) (float64, error) {
	theta, err := d.train.ols(set)
	if err != nil {
		return 0, err
	}
	return d.val.sse(set, theta) / float64(d.val.n), nil
}

// cvMSE is the k-fold cross-validation MSE of OLS on the train+validation rows: the SSE of
// each fold under the fit on the other folds, summed and divided by the number of rows.
func (d *dataset) cvMSE(set []int) (float64, error) {
	if len(d.folds) == 0 {
		return 0, errors.New("data drawn without CV folds")
	}
	var sse float64
	for f, fold := range d.folds {
		theta, err := d.rest[f].ols(set)
		if err != nil {
			return 0, err
		}
		sse += fold.sse(set, theta)
	}
	return sse / float64(d.all.n), nil
}

// testMSEs returns, for every prefix of features (the empty model first), the test MSE of the
// OLS fit on the training rows.
func (d *dataset) testMSEs(features []int) []float64 {
	out := make([]float64, len(features)+1)
	for k := range out {
		set := features[:k]
		theta, err := d.train.ols(set)
		if err != nil {
			out[k] = math.NaN()
			continue
		}
		out[k] = d.test.sse(set, theta) / float64(d.test.n)
	}
	return out
}
