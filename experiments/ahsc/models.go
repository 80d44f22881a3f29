package ahsc

import (
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// Search spaces (Table 2) and the models they configure.

// recordRows gives the rows the white-box record of a training in batches of the given size
// computes on (convexity.Task.RecordRows); nil for a task that records nothing.
type recordRows func(batch int) (layers.RecordRows, error)

// mlpEstimate estimates an MLP configuration's training memory in float type dt from its
// hidden widths and batch size (clipped to the training set, as the builders do), with its
// white-box record's when record is set.
func mlpEstimate(classes int, dt tensor.Dtype, arch func(search.Config) ([]int, int)) func(*datasets.Dataset, recordRows) func(search.Config) (int64, error) {
	return func(train *datasets.Dataset, record recordRows) func(search.Config) (int64, error) {
		out := classes
		if classes == 2 {
			out = 1
		}
		return func(cfg search.Config) (int64, error) {
			hidden, batch := arch(cfg)
			batch = min(batch, train.N)
			n := layers.EstimateMLPBytes(train.D, hidden, out, batch, dt)
			if record == nil {
				return n, nil
			}
			rows, err := record(batch)
			if err != nil {
				return 0, err
			}
			return n + layers.EstimateMLPRecordBytes(train.D, hidden, out, rows, dt), nil
		}
	}
}

// kerasAdam is Keras's default Adam (ε̂ = 1e-7), the optimizer of the authors' Keras models.
func kerasAdam(lr float64) *samplers.Adam { return samplers.NewKerasAdam(lr) }

// OpenMLSpace is Table 2's OpenML MLP space with the authors' discretization
// (hpobench/util/config.py): depth 1..4, width 2^4..2^maxLog2Width (2^10 in the paper), batch
// size 2^2..2^8 and learning rate 10^-5..10^0, the powers sampled uniformly as the code's
// choice lists are. The code's alpha is sampled but unused by its Keras model, so it is left
// out.
func OpenMLSpace(maxLog2Width int) search.Space {
	return search.Space{
		search.IntParam("depth", 1, 4, false),
		search.IntParam("log2_width", 4, maxLog2Width, false),
		search.IntParam("log2_batch_size", 2, 8, false),
		search.IntParam("log10_learning_rate", -5, 0, false),
	}
}

// openMLArch is an OpenML configuration's hidden widths and batch size.
func openMLArch(cfg search.Config) ([]int, int) {
	hidden := make([]int, hpInt(cfg, "depth"))
	for i := range hidden {
		hidden[i] = int(math.Round(hpScaled(cfg, "width", "log2_width", 2)))
	}
	return hidden, int(math.Round(hpScaled(cfg, "batch_size", "log2_batch_size", 2)))
}

// OpenMLBuild builds the OpenML MLP of the authors' hpobench/util/model.py for a table with
// the given number of classes: depth × Dense(width, ReLU), then a sigmoid output with binary
// cross-entropy for two classes or a softmax for more, computing in dt (the experiment's
// default is Keras's float32: see Config.Dtype); Keras's default Adam at the configuration's
// learning rate, with its batch size clipped to the training rows. It is the builder every
// method of the experiment trains through, and the one the bench times.
func OpenMLBuild(classes int, dt tensor.Dtype) Builder {
	return mlpBuild(classes, dt, openMLArch, func(cfg search.Config, _ int) samplers.Optimizer {
		return kerasAdam(hpScaled(cfg, "learning_rate", "log10_learning_rate", 10))
	})
}

// mlpBuild builds ReLU MLPs computing in dt of the widths arch gives, with a single
// (logistic) output for two classes and a softmax for more, and the batch size arch gives
// clipped to the training rows (as scikit-learn and Keras do), trained by the optimizer made
// for that batch size.
func mlpBuild(classes int, dt tensor.Dtype, arch func(search.Config) ([]int, int), optimizer func(cfg search.Config, batch int) samplers.Optimizer) Builder {
	return func(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		in, out := train.D, classes
		if classes == 2 {
			out = 1
		}
		return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
			net, err := layers.NewNet(dt, seed)
			if err != nil {
				return nil, err
			}
			hidden, batch := arch(cfg)
			m, err := layers.NewMLP(net, "mlp", layers.MLPConfig{In: in, Hidden: hidden, Out: out})
			if err != nil {
				return nil, err
			}
			batch = min(batch, train.N)
			return &convexity.Candidate{Model: m, Optimizer: optimizer(cfg, batch), BatchSize: batch}, nil
		}
	}
}

// BayesmarkSpace is Bayesmark's MLP-adam space restricted to what has a meaning for our
// MLP: hidden_layer_sizes (one ReLU layer), alpha (L2), batch_size, learning_rate_init and
// Adam's β1, β2 and ε. β1 and β2 (logit-scaled in Bayesmark) are searched as 1−β on a log
// scale over the same ranges. tol and validation_fraction are dropped: they configure
// scikit-learn's internal early stopping, which here is the experiment's fixed early stopping
// on the validation split.
func BayesmarkSpace() search.Space {
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

// bayesmarkArch is a Bayesmark configuration's hidden width and batch size.
func bayesmarkArch(cfg search.Config) ([]int, int) {
	return []int{hpInt(cfg, "hidden_layer_sizes")}, hpInt(cfg, "batch_size")
}

// BayesmarkBuild builds scikit-learn's MLPClassifier(solver="adam") as Bayesmark's MLP-adam
// model configures it, for a table with the given number of classes: one ReLU layer, a
// logistic output for two classes or a softmax for more, computing in dt (the experiment's
// default is scikit-learn's float64: see Config.Dtype).
func BayesmarkBuild(classes int, dt tensor.Dtype) Builder {
	return mlpBuild(classes, dt, bayesmarkArch, func(cfg search.Config, batch int) samplers.Optimizer {
		a := samplers.NewAdam(hpFloat(cfg, "learning_rate_init"))
		a.Beta1, a.Beta2, a.Eps = 1-hpFloat(cfg, "one_minus_beta_1"), 1-hpFloat(cfg, "one_minus_beta_2"), hpFloat(cfg, "epsilon")
		a.EpsHat = true // sklearn/neural_network/_stochastic_optimizers.py: ε added to √v
		// scikit-learn adds alpha/2·‖W‖²/|B| to the mean batch loss: a coupled L2 gradient
		// (alpha/|B|)·W (here on the biases too).
		a.WeightDecay = hpFloat(cfg, "alpha") / float64(batch)
		return a
	})
}

// MNISTSpace is Table 2's ConvNet space.
func MNISTSpace() search.Space {
	return search.Space{
		search.IntParam("filters", 2, 6, false),
		search.IntParam("kernel", 2, 6, false),
		search.CategoricalParam("padding", string(layers.Valid), string(layers.Same)),
		search.IntParam("blocks", 1, 3, false),
	}
}

// SVHNSpace adds SVHN's dropout rates and dense width (32..512 by powers of two).
func SVHNSpace() search.Space {
	return append(MNISTSpace(),
		search.FloatParam("dropout", 0.2, 0.5, false),
		search.FloatParam("final_dropout", 0.2, 0.5, false),
		search.IntParam("log2_units", 5, 9, false),
	)
}

// convNet is the ConvNet a configuration describes, for images of shape (channels, height,
// width).
func convNet(dataset string, shape []int, classes int, cfg search.Config) layers.ConvNetConfig {
	cc := layers.ConvNetConfig{Filters: hpInt(cfg, "filters"), Kernel: hpInt(cfg, "kernel"),
		Padding: layers.Padding(cfg.Choice("padding")), Blocks: hpInt(cfg, "blocks"),
		InChannels: shape[0], Height: shape[1], Width: shape[2], Classes: classes}
	if dataset == "svhn" {
		cc.Dropout, cc.FinalDropout, cc.Units = hpFloat(cfg, "dropout"), hpFloat(cfg, "final_dropout"), 1<<hpInt(cfg, "log2_units")
	}
	return cc
}

// imageBatch is the authors' batch size for the image models (image/src/util.py).
const imageBatch = 64

// convNetBytes estimates a ConvNet configuration's training memory, with its white-box
// record's when record is set.
func convNetBytes(dataset string, shape []int, classes int, dt tensor.Dtype, cfg search.Config, record recordRows) (int64, error) {
	cc := convNet(dataset, shape, classes, cfg)
	n := layers.EstimateConvNetBytes(cc, dataset == "svhn", imageBatch, dt)
	if record == nil {
		return n, nil
	}
	rows, err := record(imageBatch)
	if err != nil {
		return 0, err
	}
	return n + layers.EstimateConvNetRecordBytes(cc, dataset == "svhn", rows, dt), nil
}

// ConvNetBuild builds Table 2's ConvNet of dataset "mnist" (Conv–MaxPool blocks, then two
// dense layers) or "svhn" (Conv–BatchNorm–Conv–MaxPool–Dropout blocks, a dense layer,
// dropout and the output) for images of shape (channels, height, width) and the given number
// of classes, as the authors' image/src code does: Keras's default Adam, batch 64, computing
// in dt (the experiment's default is Keras's float32). It is the builder every method of the
// experiment trains through, and the one the bench times.
func ConvNetBuild(dataset string, shape []int, classes int, dt tensor.Dtype) func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
	return func(cfg search.Config, seed uint64) (*convexity.Candidate, error) {
		net, err := layers.NewNet(dt, seed)
		if err != nil {
			return nil, err
		}
		cc := convNet(dataset, shape, classes, cfg)
		var m *layers.Classifier
		if dataset == "svhn" {
			m, err = layers.NewSVHNConvNet(net, cc)
		} else {
			m, err = layers.NewMNISTConvNet(net, cc)
		}
		if err != nil {
			return nil, err
		}
		return &convexity.Candidate{Model: m, Optimizer: kerasAdam(1e-3), BatchSize: imageBatch}, nil
	}
}
