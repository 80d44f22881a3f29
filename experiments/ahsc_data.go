package experiments

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// Data, search spaces and models of the AHSC experiment (SPEC B.6, Table 2).

// ahscGroup is the family a dataset belongs to, which fixes its space, preprocessing and
// metric.
type ahscGroup int

const (
	ahscBayesmark ahscGroup = iota // sklearn MLP-adam space, Bayesmark normalized score
	ahscOpenML                     // the HPOBench MLP space, ROC-AUC
	ahscImage                      // Table 2's ConvNet spaces, accuracy in %
	ahscUser                       // a user's table: the OpenML space, AUC or accuracy
)

// The paper's 14 datasets in the order of its Table 1.
var (
	ahscImageSets     = []string{"mnist", "svhn"}
	ahscBayesmarkSets = []string{"breast", "digits", "iris", "wine"}
	ahscOpenMLSets    = []string{"vehicle", "blood-transfusion", "australian", "car", "phoneme", "segment", "credit-g", "kc1"}
)

func ahscAllSets() []string {
	return append(append(append([]string{}, ahscImageSets...), ahscBayesmarkSets...), ahscOpenMLSets...)
}

func ahscGroupOf(name string) ahscGroup {
	switch {
	case contains(ahscImageSets, name):
		return ahscImage
	case contains(ahscBayesmarkSets, name):
		return ahscBayesmark
	case contains(ahscOpenMLSets, name):
		return ahscOpenML
	}
	return ahscUser
}

// ahscSplit is one repeat's data: the model is fitted on train, selected on val, and test is
// only reported. With folds (Bayesmark), the objective is the cross-validation loss over the
// folds instead, and train and val are the final refit's training data and early-stopping
// split.
type ahscSplit struct {
	train, val, test *datasets.Dataset
	folds            []ahscFold
}

// ahscFold is one cross-validation fold: fit on train with early stopping on early, score on
// val.
type ahscFold struct {
	train, early, val *datasets.Dataset
}

// ahscProblem is one dataset made ready for the comparison.
type ahscProblem struct {
	name   string
	group  ahscGroup
	metric convexity.Metric // of validation selection and test reporting
	label  string           // what the summary's values are: "score", "roc-auc", "accuracy%", "accuracy"
	loss   losses.Kind
	space  search.Space
	epochs int
	budget int
	// split returns the data of a repeat; image datasets use one split for every repeat.
	split func(repeat int) (*ahscSplit, error)
	build func(train *datasets.Dataset) func(cfg search.Config, seed uint64) (*convexity.Candidate, error)
	// estimate is what a configuration's training on train holds, in bytes, without building it.
	estimate func(train *datasets.Dataset) func(cfg search.Config) (int64, error)
	// evalBatch is the batch size for evaluation (0: all rows at once).
	evalBatch int
	// describe says how the data were split and encoded.
	describe string
}

// ahscSeed derives the seed of one repeat of one dataset.
func ahscSeed(base uint64, dataset string, repeat int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "ahsc|%d|%s|%d", base, dataset, repeat)
	return h.Sum64()
}

// ahscLoadProblem loads and prepares a registry dataset (or the user's file when path is set).
func ahscLoadProblem(ctx context.Context, opt Options, s ahscSettings, name, path string) (*ahscProblem, error) {
	if path != "" {
		return ahscUserProblem(ctx, opt, s, path)
	}
	switch ahscGroupOf(name) {
	case ahscBayesmark:
		full, _, err := datasets.Load(ctx, name, opt.DataDir)
		if err != nil {
			return nil, err
		}
		return ahscTabular(opt, s, name, full, ahscBayesmark, 0.8, 0, 0.2), nil
	case ahscOpenML:
		full, _, err := datasets.Load(ctx, name, opt.DataDir)
		if err != nil {
			return nil, err
		}
		return ahscTabular(opt, s, name, full, ahscOpenML, 0.6, 0.2, 0.2), nil
	case ahscImage:
		return ahscImageProblem(ctx, opt, s, name)
	}
	return nil, fmt.Errorf("ahsc: unknown dataset %q", name)
}

// ahscUserProblem reads a user's CSV, TSV or ARFF file (optionally gzip-compressed) with the
// class in the target column and treats it like an OpenML set.
func ahscUserProblem(ctx context.Context, opt Options, s ahscSettings, path string) (*ahscProblem, error) {
	target := opt.Params["target"]
	base := strings.ToLower(filepath.Base(path))
	base = strings.TrimSuffix(base, ".gz")
	var ds *datasets.Dataset
	var err error
	switch {
	case strings.HasSuffix(base, ".arff"):
		ds, err = datasets.LoadARFF(ctx, path, target)
	case strings.HasSuffix(base, ".tsv") || strings.HasSuffix(base, ".tab"):
		ds, err = datasets.LoadTable(ctx, path, datasets.TableOptions{Comma: '\t', Header: true, Target: target})
	default:
		ds, err = datasets.LoadTable(ctx, path, datasets.TableOptions{Header: true, Target: target})
	}
	if err != nil {
		return nil, err
	}
	if ds.Y == nil {
		return nil, fmt.Errorf("ahsc: %s: the target is not a class label (regression is not supported)", path)
	}
	if len(ds.Classes) < 2 {
		return nil, fmt.Errorf("ahsc: %s: the target has fewer than two classes", path)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".gz")
	name = strings.TrimSuffix(name, filepath.Ext(name))
	p := ahscTabular(opt, s, name, ds, ahscUser, 0.6, 0.2, 0.2)
	switch opt.Params["metric"] {
	case "auc":
		p.metric, p.label = convexity.AUC, "roc-auc"
	case "accuracy":
		p.metric, p.label = convexity.Accuracy, "accuracy"
	}
	return p, nil
}

// ahscTabular prepares a table: stratified train/validation/test splits drawn per repeat,
// preprocessing fitted on the training part only.
func ahscTabular(opt Options, s ahscSettings, name string, full *datasets.Dataset, g ahscGroup, fTrain, fVal, fTest float64) *ahscProblem {
	binary := len(full.Classes) == 2
	p := &ahscProblem{name: name, group: g, epochs: s.tabEpochs, budget: s.budget, loss: losses.Multiclass}
	if binary {
		p.loss = losses.Binary
	}
	switch g {
	case ahscBayesmark:
		p.metric, p.label, p.space, p.budget = convexity.Accuracy, "score", ahscBayesmarkSpace(), s.bayesBudget
		p.build = ahscBayesmarkBuild(len(full.Classes))
		p.estimate = ahscMLPEstimate(len(full.Classes), func(cfg search.Config) ([]int, int) {
			return []int{cfg.Int("hidden_layer_sizes")}, cfg.Int("batch_size")
		})
		p.describe = fmt.Sprintf("stratified 80/20 train/test per repeat (Bayesmark's); the objective is %d-fold stratified CV on the 80%%, "+
			"each fit early-stopped on 10%% of its training part (scikit-learn's validation_fraction), the selected configuration refitted on the 80%% "+
			"(90/10 for early stopping) and scored on the 20%%; standardized with the 80%%'s statistics", s.folds)
	default:
		p.metric, p.label = convexity.AUC, "roc-auc"
		if g == ahscUser && !binary {
			p.metric, p.label = convexity.Accuracy, "accuracy"
		}
		p.space = ahscOpenMLSpace(s.maxLog2Width)
		p.build = ahscOpenMLBuild(len(full.Classes))
		p.estimate = ahscMLPEstimate(len(full.Classes), func(cfg search.Config) ([]int, int) {
			hidden := make([]int, cfg.Int("depth"))
			for i := range hidden {
				hidden[i] = 1 << cfg.Int("log2_width")
			}
			return hidden, 1 << cfg.Int("log2_batch_size")
		})
		p.describe = fmt.Sprintf("stratified %.0f/%.0f/%.0f train/validation/test per repeat; nominal columns one-hot, numeric ones standardized with training statistics (missing → 0), rows scaled to unit L2 norm", 100*fTrain, 100*fVal, 100*fTest)
	}
	if s.tabRows > 0 && full.N > s.tabRows {
		p.describe += fmt.Sprintf("; a stratified subsample of %d of the %d rows per repeat", s.tabRows, full.N)
	}
	p.split = func(repeat int) (*ahscSplit, error) {
		rng := rand.New(rand.NewPCG(ahscSeed(opt.Seed, name, repeat), 0x5b1))
		data := full
		if s.tabRows > 0 && full.N > s.tabRows {
			f := float64(s.tabRows) / float64(full.N)
			sub, err := datasets.Split(full, rng, f, 1-f)
			if err != nil {
				return nil, fmt.Errorf("ahsc: subsampling %s: %w", name, err)
			}
			data = sub[0]
		}
		if g == ahscBayesmark {
			return ahscCVSplit(data, rng, s.folds)
		}
		parts, err := datasets.Split(data, rng, fTrain, fVal, fTest)
		if err != nil {
			return nil, fmt.Errorf("ahsc: splitting %s: %w", name, err)
		}
		pp, err := ahscPreprocess(true, parts...)
		if err != nil {
			return nil, err
		}
		return &ahscSplit{train: pp[0], val: pp[1], test: pp[2]}, nil
	}
	return p
}

// ahscCVSplit draws Bayesmark's protocol: a stratified 80/20 train/test split, k stratified
// folds of the 80%, and 10% of every fit's training data held out for early stopping.
func ahscCVSplit(data *datasets.Dataset, rng *rand.Rand, k int) (*ahscSplit, error) {
	parts, err := datasets.Split(data, rng, 0.8, 0.2)
	if err != nil {
		return nil, fmt.Errorf("ahsc: splitting %s: %w", data.Name, err)
	}
	pp, err := ahscPreprocess(false, parts...)
	if err != nil {
		return nil, err
	}
	all, test := pp[0], pp[1]
	holdout := func(d *datasets.Dataset) (*datasets.Dataset, *datasets.Dataset, error) {
		h, err := datasets.Split(d, rng, 0.9, 0.1)
		if err != nil {
			return nil, nil, fmt.Errorf("ahsc: early-stopping split of %s: %w", data.Name, err)
		}
		return h[0], h[1], nil
	}
	sp := &ahscSplit{test: test}
	if sp.train, sp.val, err = holdout(all); err != nil {
		return nil, err
	}
	fr := make([]float64, k)
	for i := range fr {
		fr[i] = 1 / float64(k)
	}
	idx, err := datasets.StratifiedIndices(all.Y, rng, fr...)
	if err != nil {
		return nil, fmt.Errorf("ahsc: %d folds of %s: %w", k, data.Name, err)
	}
	for i := range idx {
		var rest []int
		for j := range idx {
			if j != i {
				rest = append(rest, idx[j]...)
			}
		}
		f := ahscFold{val: all.Subset(idx[i])}
		if f.train, f.early, err = holdout(all.Subset(rest)); err != nil {
			return nil, err
		}
		sp.folds = append(sp.folds, f)
	}
	return sp, nil
}

// ahscPreprocess one-hot encodes nominal columns (by their declared categories), standardizes
// the numeric ones with the training split's statistics, replaces missing values by 0 (the
// training mean) and, when normalize is set, scales every row to unit L2 norm as the paper's
// OpenML code does.
func ahscPreprocess(normalize bool, ds ...*datasets.Dataset) ([]*datasets.Dataset, error) {
	train := ds[0]
	var numeric []bool
	if train.Features != nil {
		for _, f := range train.Features {
			if f.Kind == datasets.Nominal {
				for range f.Categories {
					numeric = append(numeric, false)
				}
			} else {
				numeric = append(numeric, true)
			}
		}
	}
	out := make([]*datasets.Dataset, len(ds))
	for i, d := range ds {
		e, err := datasets.EncodeNominal(d)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	st, err := datasets.FitStandardizer(out[0])
	if err != nil {
		return nil, err
	}
	for j := range st.Mean {
		if numeric != nil && j < len(numeric) && !numeric[j] {
			st.Mean[j], st.Scale[j] = 0, 1
		}
	}
	for i := range out {
		d, err := st.Transform(out[i])
		if err != nil {
			return nil, err
		}
		for k, v := range d.X {
			if math.IsNaN(v) {
				d.X[k] = 0
			}
		}
		if normalize {
			if d, err = datasets.NormalizeRows(d); err != nil {
				return nil, err
			}
		}
		out[i] = d
	}
	return out, nil
}

// ahscImageProblem loads MNIST or SVHN. Every repeat uses the same data (the paper's repeats
// vary the search, not the split): 10% of the training images are held out for validation
// (SPEC B.8 item 7); the quick preset keeps a stratified subset of the training and test
// images.
func ahscImageProblem(ctx context.Context, opt Options, s ahscSettings, name string) (*ahscProblem, error) {
	full, test, err := datasets.Load(ctx, name, opt.DataDir)
	if err != nil {
		return nil, err
	}
	if test == nil {
		return nil, fmt.Errorf("ahsc: %s has no test split", name)
	}
	rng := rand.New(rand.NewPCG(ahscSeed(opt.Seed, name, -1), 0x1a9e))
	if s.imgTrain > 0 && s.imgTrain < full.N {
		parts, err := datasets.Split(full, rng, float64(s.imgTrain)/float64(full.N), 1-float64(s.imgTrain)/float64(full.N))
		if err != nil {
			return nil, err
		}
		full = parts[0]
	}
	if s.imgTest > 0 && s.imgTest < test.N {
		parts, err := datasets.Split(test, rng, float64(s.imgTest)/float64(test.N), 1-float64(s.imgTest)/float64(test.N))
		if err != nil {
			return nil, err
		}
		test = parts[0]
	}
	parts, err := datasets.Split(full, rng, 0.9, 0.1)
	if err != nil {
		return nil, err
	}
	split := &ahscSplit{train: parts[0], val: parts[1], test: test}
	p := &ahscProblem{name: name, group: ahscImage, metric: convexity.Accuracy, label: "accuracy%",
		loss: losses.Multiclass, epochs: s.imgEpochs, budget: s.budget, evalBatch: 500,
		split: func(int) (*ahscSplit, error) { return split, nil },
		describe: fmt.Sprintf("%d training images (90%%) / %d validation (10%% of the training split) / %d test, the same for every repeat",
			split.train.N, split.val.N, split.test.N),
	}
	shape := full.Shape
	if name == "svhn" {
		p.space = ahscSVHNSpace()
	} else {
		p.space = ahscMNISTSpace()
	}
	convNet := func(cfg search.Config) layers.ConvNetConfig {
		cc := layers.ConvNetConfig{Filters: cfg.Int("filters"), Kernel: cfg.Int("kernel"),
			Padding: layers.Padding(cfg.Choice("padding")), Blocks: cfg.Int("blocks"),
			InChannels: shape[0], Height: shape[1], Width: shape[2], Classes: len(full.Classes)}
		if name == "svhn" {
			cc.Dropout, cc.FinalDropout, cc.Units = cfg.Float("dropout"), cfg.Float("final_dropout"), 1<<cfg.Int("log2_units")
		}
		return cc
	}
	p.estimate = func(*datasets.Dataset) func(search.Config) (int64, error) {
		return func(cfg search.Config) (int64, error) {
			return layers.EstimateConvNetBytes(convNet(cfg), name == "svhn", 64, tensor.Float32), nil
		}
	}
	p.build = func(*datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(tensor.Float32, seed)
			if err != nil {
				return nil, err
			}
			cc := convNet(cfg)
			var m *layers.Classifier
			if name == "svhn" {
				m, err = layers.NewSVHNConvNet(net, cc)
			} else {
				m, err = layers.NewMNISTConvNet(net, cc)
			}
			if err != nil {
				return nil, err
			}
			return &convexity.Candidate{Model: m, Optimizer: ahscKerasAdam(1e-3), BatchSize: 64}, nil
		}
	}
	return p, nil
}

// ahscMLPEstimate estimates an MLP configuration's training memory from its hidden widths and
// batch size (clipped to the training set, as the builders do).
func ahscMLPEstimate(classes int, arch func(search.Config) ([]int, int)) func(*datasets.Dataset) func(search.Config) (int64, error) {
	return func(train *datasets.Dataset) func(search.Config) (int64, error) {
		out := classes
		if classes == 2 {
			out = 1
		}
		return func(cfg search.Config) (int64, error) {
			hidden, batch := arch(cfg)
			return layers.EstimateMLPBytes(train.D, hidden, out, min(batch, train.N), tensor.Float64), nil
		}
	}
}

// ahscKerasAdam is Keras's default Adam (ε = 1e-7).
func ahscKerasAdam(lr float64) *samplers.Adam {
	a := samplers.NewAdam(lr)
	a.Eps = 1e-7
	return a
}

// ahscOpenMLSpace is Table 2's OpenML MLP space with the code's discretization: depth 1..4,
// width 2^4..2^maxLog2Width (2^10 in the paper), batch size 2^2..2^8 and learning rate
// 10^-5..10^0, the powers sampled uniformly as the code's choice lists are. The code's alpha
// is sampled but unused by its Keras model, so it is left out.
func ahscOpenMLSpace(maxLog2Width int) search.Space {
	return search.Space{
		search.IntParam("depth", 1, 4, false),
		search.IntParam("log2_width", 4, maxLog2Width, false),
		search.IntParam("log2_batch_size", 2, 8, false),
		search.IntParam("log10_learning_rate", -5, 0, false),
	}
}

func ahscOpenMLBuild(classes int) func(*datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
	return func(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		in, out := train.D, classes
		if classes == 2 {
			out = 1 // sigmoid output and binary cross-entropy, as the code
		}
		return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(tensor.Float64, seed)
			if err != nil {
				return nil, err
			}
			hidden := make([]int, cfg.Int("depth"))
			for i := range hidden {
				hidden[i] = 1 << cfg.Int("log2_width")
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: in, Hidden: hidden, Out: out})
			if err != nil {
				return nil, err
			}
			batch := min(1<<cfg.Int("log2_batch_size"), train.N)
			return &convexity.Candidate{Model: m, Optimizer: ahscKerasAdam(math.Pow(10, float64(cfg.Int("log10_learning_rate")))), BatchSize: batch}, nil
		}
	}
}

// ahscBayesmarkSpace is Bayesmark's MLP-adam space restricted to what has a meaning for our
// MLP: hidden_layer_sizes (one ReLU layer), alpha (L2), batch_size, learning_rate_init and
// Adam's β1, β2 and ε. β1 and β2 (logit-scaled in Bayesmark) are searched as 1−β on a log
// scale over the same ranges. tol and validation_fraction are dropped: they configure
// scikit-learn's internal early stopping, which here is the experiment's fixed early stopping
// on the validation split.
func ahscBayesmarkSpace() search.Space {
	return search.Space{
		search.IntParam("hidden_layer_sizes", 50, 200, false),
		search.FloatParam("alpha", 1e-5, 1e1, true),
		search.IntParam("batch_size", 10, 250, false),
		search.FloatParam("learning_rate_init", 1e-5, 1e-1, true),
		search.FloatParam("one_minus_beta_1", 0.01, 0.5, true),
		search.FloatParam("one_minus_beta_2", 1e-6, 0.1, true),
		search.FloatParam("epsilon", 1e-9, 1e-6, true),
	}
}

func ahscBayesmarkBuild(classes int) func(*datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
	return func(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		in, out := train.D, classes
		if classes == 2 {
			out = 1 // scikit-learn's logistic output for two classes
		}
		return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(tensor.Float64, seed)
			if err != nil {
				return nil, err
			}
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: in, Hidden: []int{cfg.Int("hidden_layer_sizes")}, Out: out})
			if err != nil {
				return nil, err
			}
			// scikit-learn clips the batch size to the training set.
			batch := min(cfg.Int("batch_size"), train.N)
			a := samplers.NewAdam(cfg.Float("learning_rate_init"))
			a.Beta1, a.Beta2, a.Eps = 1-cfg.Float("one_minus_beta_1"), 1-cfg.Float("one_minus_beta_2"), cfg.Float("epsilon")
			// scikit-learn adds alpha/2·‖W‖²/|B| to the mean batch loss: a coupled L2 gradient
			// (alpha/|B|)·W (here on the biases too).
			a.WeightDecay = cfg.Float("alpha") / float64(batch)
			return &convexity.Candidate{Model: m, Optimizer: a, BatchSize: batch}, nil
		}
	}
}

// ahscMNISTSpace is Table 2's ConvNet space.
func ahscMNISTSpace() search.Space {
	return search.Space{
		search.IntParam("filters", 2, 6, false),
		search.IntParam("kernel", 2, 6, false),
		search.CategoricalParam("padding", string(layers.Valid), string(layers.Same)),
		search.IntParam("blocks", 1, 3, false),
	}
}

// ahscSVHNSpace adds SVHN's dropout rates and dense width (32..512 by powers of two).
func ahscSVHNSpace() search.Space {
	return append(ahscMNISTSpace(),
		search.FloatParam("dropout", 0.2, 0.5, false),
		search.FloatParam("final_dropout", 0.2, 0.5, false),
		search.IntParam("log2_units", 5, 9, false),
	)
}
