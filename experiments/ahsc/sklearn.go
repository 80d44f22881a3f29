package ahsc

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/internal/nprand"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/skmlp"
	"gorgonia.org/tensor"
)

// The Bayesmark model of --protocol authors (Config.BayesmarkModel).
const (
	// bayesmarkSklearn is scikit-learn's MLPClassifier as Bayesmark's MLP-adam problem
	// configures it (SklearnBayesmarkBuild), the default under --protocol authors.
	bayesmarkSklearn = "sklearn"
	// bayesmarkHyperflat is this package's MLP trained by package train
	// (AuthorsBayesmarkBuild under authors, BayesmarkBuild under clean), stored as "" so that
	// the runs made before the flag keep their identity.
	bayesmarkHyperflat = "hyperflat"
	// bayesmarkAuto is the flag's default: sklearn under authors, hyperflat under clean.
	bayesmarkAuto = "auto"
)

// sklearnParams are MLPClassifier's arguments for a configuration of AuthorsBayesmarkSpace:
// the nine searched ones (the logit-scaled ones mapped back), Bayesmark's fixed
// solver="adam" and early_stopping=True, and scikit-learn's defaults for the rest (ReLU,
// max_iter 200 — here the experiment's epochs —, shuffle, n_iter_no_change 10).
func sklearnParams(cfg search.Config) skmlp.Params {
	p := skmlp.Defaults()
	p.Hidden = []int{cfg.Int("hidden_layer_sizes")}
	p.Alpha = cfg.Float("alpha")
	p.BatchSize = cfg.Int("batch_size")
	p.LearningRateInit = cfg.Float("learning_rate_init")
	p.Tol = cfg.Float("tol")
	p.EarlyStopping = true
	p.ValidationFraction = expit(cfg.Float("logit_validation_fraction"))
	p.Beta1, p.Beta2 = expit(cfg.Float("logit_beta_1")), expit(cfg.Float("logit_beta_2"))
	p.Epsilon = cfg.Float("epsilon")
	p.NIterNoChange = sklearnNoChange
	return p
}

// SklearnBayesmarkBuild builds scikit-learn's MLPClassifier(solver="adam",
// early_stopping=True) for AuthorsBayesmarkSpace, as Bayesmark's MLP-adam problem fits it
// (uber/bayesmark bayesmark/sklearn_funcs.py): package skmlp trains it — _init_coef's
// Glorot-uniform weights and intercepts, the log loss plus ½·alpha·Σ‖W‖²/|B| on the kernels
// only, scikit-learn's Adam, a validation_fraction held out (stratified for two classes),
// training stopped after n_iter_no_change = 10 epochs without a tol improvement of the
// held-out accuracy and the best weights restored, at most the task's epochs (max_iter),
// batch_size clipped to the rows, a reshuffle every epoch — in float64, and the trained
// weights are written into an MLP of float type dt, which the task scores and AHSC screens.
//
// Every fit of a configuration on one data set draws from RandomState(s), s derived from
// the task's seed for the configuration and from the data (so that the folds of a
// cross-validation draw apart, as Bayesmark's unseeded fits do): initial weights, split and
// shuffles are then those of MLPClassifier(random_state=s).fit on those rows.
func SklearnBayesmarkBuild(classes int, dt tensor.Dtype) Builder {
	return func(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		salt := dataHash(train)
		out := classes
		if classes == 2 {
			out = 1
		}
		return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			p := sklearnParams(cfg)
			if err := p.Validate(); err != nil {
				return nil, err
			}
			h := seed ^ salt
			rs := uint32(h) ^ uint32(h>>32)
			net, err := layers.NewNet(dt, seed)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: train.D, Hidden: p.Hidden, Out: out})
			if err != nil {
				return nil, err
			}
			// Before Fit the model holds the weights MLPClassifier starts from.
			if err := setSklearnWeights(m, skmlp.Init(nprand.New(rs), train.D, p.Hidden, classes)); err != nil {
				return nil, err
			}
			c := &convexity.Candidate{Model: m, BatchSize: min(p.BatchSize, train.N)}
			c.Fit = func(ctx context.Context, data *datasets.Dataset, epochs int) error {
				if data.D != train.D {
					return fmt.Errorf("ahsc: fitting %d features with a model built for %d", data.D, train.D)
				}
				q := p
				q.MaxIter = epochs
				if tj := c.Trajectory; tj != nil { // the white-box record follows the iterates in m
					q.StepEvery = tj.Every
					q.BeforeStep = func(ctx context.Context, t int, n *skmlp.Net) error {
						if err := setSklearnWeights(m, n); err != nil {
							return err
						}
						return tj.Before(ctx, t)
					}
				}
				res, err := skmlp.Fit(ctx, q, rs, data.X, data.N, data.D, data.Y, classes)
				if err != nil {
					return err
				}
				return setSklearnWeights(m, res.Net)
			}
			return c, nil
		}
	}
}

// dataHash identifies a data set's rows: its shape, features and labels.
func dataHash(d *datasets.Dataset) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(d.N))
	put(uint64(d.D))
	for _, v := range d.X {
		put(math.Float64bits(v))
	}
	for _, y := range d.Y {
		put(uint64(y))
	}
	return h.Sum64()
}

// setSklearnWeights writes n's kernels and intercepts (scikit-learn's in×out layout, which
// is layers.Linear's) into m's parameters, layer by layer.
func setSklearnWeights(m *layers.MLP, n *skmlp.Net) error {
	ps := m.Net().Params()
	if len(ps) != 2*len(n.Coefs) {
		return fmt.Errorf("ahsc: %d parameters for %d scikit-learn layers", len(ps), len(n.Coefs))
	}
	for l := range n.Coefs {
		for k, src := range [][]float64{n.Coefs[l], n.Intercepts[l]} {
			q := ps[2*l+k]
			switch d := q.Value.Data().(type) {
			case []float64:
				if len(d) != len(src) {
					return fmt.Errorf("ahsc: parameter %s holds %d values, scikit-learn's %d", q.Name, len(d), len(src))
				}
				copy(d, src)
			case []float32:
				if len(d) != len(src) {
					return fmt.Errorf("ahsc: parameter %s holds %d values, scikit-learn's %d", q.Name, len(d), len(src))
				}
				for i, v := range src {
					d[i] = float32(v)
				}
			default:
				return fmt.Errorf("ahsc: parameter %s of type %T", q.Name, d)
			}
		}
	}
	return nil
}
