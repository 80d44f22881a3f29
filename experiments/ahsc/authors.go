package ahsc

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/internal/nprand"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
	"gorgonia.org/tensor"
)

// The authors' protocol (--protocol authors): the choices of yrahul3910/flatness-guided-hpo
// and of the Bayesmark code it runs, reproduced as far as the data here allow.
// docs/reproduction/ahsc-protocol.md lists every difference from the paper and the code.

// Protocols.
const (
	protocolClean   = "clean"
	protocolAuthors = "authors"
)

const (
	// authorsBayesmarkCalls are the calls of the authors' AHSC runs on Bayesmark, whose means
	// are the paper's AHSC values: AHSC trains this many screened configurations fully.
	authorsBayesmarkCalls = 15
	// authorsImageFinalFactor scales Config.ImageEpochs for AHSC's finalists on images:
	// image/stcvx.py trains them run_experiment's default 100 epochs, twice the baselines' 50.
	authorsImageFinalFactor = 2
	// authorsOpenMLFolds are the folds of the OpenML tasks (10-fold CV), whose test fold the
	// authors' code selects on (hpobench/util/experiment.py).
	authorsOpenMLFolds = 10
	// sklearnNoChange is MLPClassifier's n_iter_no_change (scikit-learn 1.2).
	sklearnNoChange = 10
)

// npPermutation is numpy.random.RandomState(seed).permutation(n): arange(n) shuffled by the
// legacy Fisher–Yates of RandomState.shuffle, j = random_interval(i) for i = n−1 … 1
// (numpy/random/mtrand.pyx _shuffle_raw; random_interval in distributions.c draws masked
// 32-bit words, rejecting those above i).
func npPermutation(seed uint32, n int) []int { return nprand.New(seed).Permutation(n) }

// sklearnTrainTest is sklearn.model_selection.train_test_split(test_size=0.2,
// random_state=seed, shuffle=True) without stratification, as bayesmark/sklearn_funcs.py
// calls it (shuffle_seed=0): ShuffleSplit's ⌈0.2·n⌉ test rows are the permutation's first,
// the training rows the rest, in the permutation's order.
func sklearnTrainTest(n int, seed uint32) (trainIdx, testIdx []int) {
	p := npPermutation(seed, n)
	nTest := int(math.Ceil(0.2 * float64(n)))
	return p[nTest:], p[:nTest]
}

// sklearnStratifiedFolds is StratifiedKFold(k, shuffle=False)'s test folds of labels y
// (scikit-learn 1.2 _make_test_folds): classes numbered by first appearance, the sorted
// encoded labels dealt round-robin to the folds to set each fold's share of each class, and
// each class's rows, in order, given to the folds 0, 1, … by those shares.
func sklearnStratifiedFolds(y []int, k int) [][]int {
	code := map[int]int{}
	enc := make([]int, len(y))
	for i, v := range y {
		c, ok := code[v]
		if !ok {
			c = len(code)
			code[v] = c
		}
		enc[i] = c
	}
	order := slices.Clone(enc)
	slices.Sort(order)
	alloc := make([][]int, k) // alloc[fold][class]
	for f := range alloc {
		alloc[f] = make([]int, len(code))
		for i := f; i < len(order); i += k {
			alloc[f][order[i]]++
		}
	}
	folds := make([][]int, k)
	next := make([]int, len(code)) // the fold the class's next row goes to
	used := make([]int, len(code))
	for i, c := range enc {
		for used[c] >= alloc[next[c]][c] {
			next[c]++
			used[c] = 0
		}
		folds[next[c]] = append(folds[next[c]], i)
		used[c]++
	}
	return folds
}

// authorsBayesmarkSplit is Bayesmark's problem as the authors ran it: the same
// train_test_split(random_state=0) for every trial, raw features, and cross_val_score's
// cv=5 folds (StratifiedKFold without shuffling) of the training part. Each fit's early
// stopping holds out its own validation_fraction (the task's Holdout).
func authorsBayesmarkSplit(data *datasets.Dataset, k int) (*split, error) {
	tr, te := sklearnTrainTest(data.N, 0)
	all, test := data.Subset(tr), data.Subset(te)
	for _, d := range []*datasets.Dataset{all, test} {
		for i, v := range d.X {
			if math.IsNaN(v) {
				d.X[i] = 0
			}
		}
	}
	sp := &split{train: all, val: all, test: test}
	folds := sklearnStratifiedFolds(all.Y, k)
	for i := range folds {
		var rest []int
		for j := range folds {
			if j != i {
				rest = append(rest, folds[j]...)
			}
		}
		slices.Sort(rest)
		sp.folds = append(sp.folds, fold{train: all.Subset(rest), val: all.Subset(folds[i])})
	}
	return sp, nil
}

// logit is the logit scale of Bayesmark's space.py.
func logit(p float64) float64 { return math.Log(p / (1 - p)) }
func expit(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// AuthorsBayesmarkSpace is Bayesmark's MLP-adam space in full (bayesmark/sklearn_funcs.py
// mlp_adam_cfg): tol and validation_fraction configure scikit-learn's early stopping, and
// the "logit"-warped parameters are searched uniformly on the logit scale, as
// logit_validation_fraction, logit_beta_1 and logit_beta_2.
func AuthorsBayesmarkSpace() search.Space {
	return search.Space{
		search.IntParam("hidden_layer_sizes", 50, 200, false),
		search.FloatParam("alpha", 1e-5, 1e1, true),
		search.IntParam("batch_size", 10, 250, false),
		search.FloatParam("learning_rate_init", 1e-5, 1e-1, true),
		search.FloatParam("tol", 1e-5, 1e-1, true),
		search.FloatParam("logit_validation_fraction", logit(0.1), logit(0.9), false),
		search.FloatParam("logit_beta_1", logit(0.5), logit(0.99), false),
		search.FloatParam("logit_beta_2", logit(0.9), logit(1-1e-6), false),
		search.FloatParam("epsilon", 1e-9, 1e-6, true),
	}
}

// AuthorsBayesmarkBuild builds this package's MLP for AuthorsBayesmarkSpace
// (--bayesmark-model hyperflat): BayesmarkBuild's model, trained by package train, its
// early stopping the task's Holdout (sklearnHoldout). SklearnBayesmarkBuild is
// scikit-learn's MLPClassifier itself, the authors' protocol's default.
func AuthorsBayesmarkBuild(classes int, dt tensor.Dtype) Builder {
	return mlpBuild(classes, dt, bayesmarkArch, func(cfg search.Config, batch int) samplers.Optimizer {
		a := samplers.NewAdam(cfg.Float("learning_rate_init"))
		a.Beta1, a.Beta2, a.Eps = expit(cfg.Float("logit_beta_1")), expit(cfg.Float("logit_beta_2")), cfg.Float("epsilon")
		a.WeightDecay = cfg.Float("alpha") / float64(batch) // as BayesmarkBuild
		a.EpsHat = true                                     // as BayesmarkBuild
		return a
	})
}

// sklearnHoldout is MLPClassifier(early_stopping=True)'s inner split and rule: a stratified
// validation_fraction of the fit's data held out (train_test_split(stratify=y), drawn here
// from the configuration and the repeat's weight seed), training stopped after
// n_iter_no_change = 10 epochs without an improvement of tol, the best epoch's weights
// restored. scikit-learn watches the held-out accuracy; this watches its log loss.
func sklearnHoldout(seed uint64) func(cfg search.Config, d *datasets.Dataset) (*datasets.Dataset, *datasets.Dataset, *train.EarlyStopping, error) {
	return func(cfg search.Config, d *datasets.Dataset) (*datasets.Dataset, *datasets.Dataset, *train.EarlyStopping, error) {
		vf := expit(cfg.Float("logit_validation_fraction"))
		h := fnv.New64a()
		fmt.Fprintf(h, "%d|%s|%d", seed, cfg.String(), d.N)
		parts, err := datasets.Split(d, rand.New(rand.NewPCG(h.Sum64(), 0x5c1)), 1-vf, vf)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("ahsc: validation_fraction %.3g of %d rows: %w", vf, d.N, err)
		}
		es := &train.EarlyStopping{Monitor: "val_loss", Patience: sklearnNoChange, MinDelta: cfg.Float("tol"), RestoreBest: true}
		return parts[0], parts[1], es, nil
	}
}

// oneHotAll is the authors' OpenML preprocessing (hpobench/util/experiment.py):
// OneHotEncoder(handle_unknown="ignore") on every column, numeric ones included, with the
// categories of the training part (NaN is a category of its own; a value the training part
// lacks encodes as zeros), then Normalizer() scaling every row to unit L2 norm.
func oneHotAll(ds ...*datasets.Dataset) ([]*datasets.Dataset, error) {
	tr := ds[0]
	cats := make([][]float64, tr.D)
	for j := range cats {
		seen := map[string]bool{}
		for i := range tr.N {
			v := tr.X[i*tr.D+j]
			if k := catKey(v); !seen[k] {
				seen[k] = true
				cats[j] = append(cats[j], v)
			}
		}
		slices.SortFunc(cats[j], func(a, b float64) int { return cmpNaNLast(a, b) })
	}
	width := 0
	index := make([]map[string]int, len(cats)) // column j's category → its column in the encoding
	for j, c := range cats {
		index[j] = make(map[string]int, len(c))
		for k, v := range c {
			index[j][catKey(v)] = width + k
		}
		width += len(c)
	}
	out := make([]*datasets.Dataset, len(ds))
	for n, d := range ds {
		x := make([]float64, d.N*width)
		for i := range d.N {
			for j := range cats {
				if k, ok := index[j][catKey(d.X[i*d.D+j])]; ok {
					x[i*width+k] = 1
				}
			}
		}
		e := &datasets.Dataset{Name: d.Name, X: x, N: d.N, D: width, Shape: []int{width}, Y: slices.Clone(d.Y), Classes: slices.Clone(d.Classes)}
		for j := range cats {
			for _, c := range cats[j] {
				e.Features = append(e.Features, datasets.Feature{Name: fmt.Sprintf("x%d=%s", j, catKey(c)), Kind: datasets.Numeric})
			}
		}
		nd, err := datasets.NormalizeRows(e)
		if err != nil {
			return nil, err
		}
		out[n] = nd
	}
	return out, nil
}

func catKey(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func cmpNaNLast(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// authorsOpenMLSplit is one repeat of the authors' OpenML protocol: the task's 10-fold
// cross-validation, here a stratified 10-fold partition drawn once per dataset (the data
// files here lack the OpenML tasks' split files), repeat r training on the other nine folds
// and selecting (and reporting) on fold r mod 10, as hpobench/util/eval.py scores every
// candidate on the test fold.
func authorsOpenMLSplit(data *datasets.Dataset, rng *rand.Rand, repeat int) (*split, error) {
	fr := make([]float64, authorsOpenMLFolds)
	for i := range fr {
		fr[i] = 1 / float64(authorsOpenMLFolds)
	}
	idx, err := datasets.StratifiedIndices(data.Y, rng, fr...)
	if err != nil {
		return nil, fmt.Errorf("ahsc: %d folds of %s: %w", authorsOpenMLFolds, data.Name, err)
	}
	f := repeat % authorsOpenMLFolds
	var rest []int
	for j := range idx {
		if j != f {
			rest = append(rest, idx[j]...)
		}
	}
	pp, err := oneHotAll(data.Subset(rest), data.Subset(idx[f]))
	if err != nil {
		return nil, err
	}
	return &split{train: pp[0], val: pp[1], test: pp[1]}, nil
}

// authorsTask adapts a repeat's task to the authors' protocol for a method: Bayesmark fits
// hold out their own validation_fraction; OpenML trainings stop on the training loss
// (hpobench/util/eval.py: EarlyStopping(monitor="loss", patience=5, min_delta=1e-3)) and
// score Keras's micro-averaged ROC-AUC; AHSC's image finalists train twice the epochs (100 at
// the paper's 50).
func authorsTask(task *convexity.Task, p *problem, method string, weights uint64) {
	switch p.group {
	case bayesmark:
		if p.sklearn {
			break // the model holds out its own validation_fraction
		}
		task.Holdout = sklearnHoldout(weights)
		for _, f := range task.Folds {
			f.Holdout = task.Holdout
		}
	case openML:
		e := *task.Early
		e.Monitor = "loss"
		task.Early = &e
		task.EarlyAtEveryFidelity = true // the authors' BOHB fits every budget with it
	case image:
		if isAHSC(method) {
			task.Epochs *= authorsImageFinalFactor
		}
	}
}

func isAHSC(method string) bool {
	return method == "ahsc" || method == "ahsc-valloss" || method == "ahsc-hessian"
}

// authorsProblem sets a registry table's space, splits and description to the authors'
// protocol (--tab-rows does not apply: the split is fixed, or the task's folds).
func authorsProblem(opt experiments.Options, cfg *Config, p *problem, full *datasets.Dataset) {
	if p.group == bayesmark {
		p.space, p.build = AuthorsBayesmarkSpace(), AuthorsBayesmarkBuild(len(full.Classes), p.dtype)
		model := "this package's MLP early-stopped on the held-out log loss"
		if cfg.BayesmarkModel == bayesmarkSklearn {
			p.build, p.sklearn = SklearnBayesmarkBuild(len(full.Classes), p.dtype), true
			model = "scikit-learn's MLPClassifier(solver=adam, early_stopping=True) (package skmlp)"
		}
		p.describe = fmt.Sprintf("authors: train_test_split(test_size=0.2, random_state=0) for every repeat (Bayesmark's), raw features; "+
			"the objective is cross_val_score's %d stratified folds (unshuffled) of the 80%%, each fit of %s early-stopped on its own "+
			"validation_fraction (searched, with tol); the selected configuration refitted on the 80%% and scored on the 20%%", cfg.Folds, model)
		// Drawn once, on the first call: cells call split concurrently (--workers).
		var (
			mu   sync.Mutex
			once *split
		)
		p.split = func(int) (*split, error) {
			mu.Lock()
			defer mu.Unlock()
			if once == nil {
				var err error
				if once, err = authorsBayesmarkSplit(full, cfg.Folds); err != nil {
					return nil, err
				}
			}
			return once, nil
		}
		return
	}
	p.metric = convexity.AUCMicro
	p.describe = fmt.Sprintf("authors: a stratified %d-fold partition drawn once (no OpenML task split files here), repeat r trains on "+
		"nine folds and selects and reports on fold r mod %d; every column one-hot (training categories), rows scaled to unit L2 norm; "+
		"micro-averaged ROC-AUC; early stopping on the training loss", authorsOpenMLFolds, authorsOpenMLFolds)
	seed := experiments.DeriveSeed(opt.Seed, "ahsc", p.name, "folds")
	p.split = func(repeat int) (*split, error) {
		return authorsOpenMLSplit(full, rand.New(rand.NewPCG(seed, 0)), repeat)
	}
}
