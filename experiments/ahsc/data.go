package ahsc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// group is the family a dataset belongs to, which fixes its space, preprocessing and metric.
type group int

const (
	bayesmark group = iota // sklearn MLP-adam space, Bayesmark normalized score
	openML                 // the HPOBench MLP space, ROC-AUC
	image                  // Table 2's ConvNet spaces, accuracy in %
	user                   // a user's table: the OpenML space, AUC or accuracy
)

// The paper's 14 datasets in the order of its Table 1.
var (
	imageSets     = []string{"mnist", "svhn"}
	bayesmarkSets = []string{"breast", "digits", "iris", "wine"}
	openMLSets    = []string{"vehicle", "blood-transfusion", "australian", "car", "phoneme", "segment", "credit-g", "kc1"}
)

func allSets() []string { return slices.Concat(imageSets, bayesmarkSets, openMLSets) }

func groupOf(name string) group {
	switch {
	case slices.Contains(imageSets, name):
		return image
	case slices.Contains(bayesmarkSets, name):
		return bayesmark
	case slices.Contains(openMLSets, name):
		return openML
	}
	return user
}

// split is one repeat's data: the model is fitted on train, selected on val, and test is
// only reported. With folds (Bayesmark), the objective is the cross-validation loss over the
// folds instead, and train and val are the final refit's training data and early-stopping
// split.
type split struct {
	train, val, test *datasets.Dataset
	folds            []fold
}

// splitSizes is what the settings table says of a split: its parts' rows and folds.
type splitSizes struct{ train, val, test, folds int }

func (s *split) sizes() splitSizes {
	return splitSizes{train: s.train.N, val: s.val.N, test: s.test.N, folds: len(s.folds)}
}

// fold is one cross-validation fold: fit on train with early stopping on early, score on val.
type fold struct {
	train, early, val *datasets.Dataset
}

// Builder makes a model builder for a training set: the builder's models take its width and
// clip their batch size to its rows, and the returned function builds configuration cfg with
// initial weights from seed (a convexity.Task's Build).
type Builder func(train *datasets.Dataset) func(cfg search.Config, seed uint64) (*convexity.Candidate, error)

// problem is one dataset made ready for the comparison.
type problem struct {
	name   string
	group  group
	metric convexity.Metric // of validation selection and test reporting
	label  string           // what the summary's values are: "score", "roc-auc", "accuracy%", "accuracy"
	loss   losses.Kind
	space  search.Space
	epochs int
	budget int
	// split returns the data of a repeat; image datasets use one split for every repeat.
	split func(repeat int) (*split, error)
	build Builder
	// dtype is what the models compute in (Config.Dtype).
	dtype tensor.Dtype
	// estimate is what a configuration's training on train holds, in bytes, without building
	// it, its white-box record included when record is set.
	estimate func(train *datasets.Dataset, record recordRows) func(cfg search.Config) (int64, error)
	// evalBatch is the batch size for evaluation (0: all rows at once).
	evalBatch int
	// describe says how the data were split and encoded.
	describe string
	// sha256 is the hash of a user's file ("" for a registry dataset).
	sha256 string
	// sklearn: the Bayesmark model is scikit-learn's MLPClassifier (SklearnBayesmarkBuild),
	// which holds out its own early-stopping data.
	sklearn bool
}

// The float types of Config.Dtype.
const (
	dtypeFloat32 = "float32"
	dtypeFloat64 = "float64"
)

// dtype is the float type of a suite's models: the one asked for, else the suite's own —
// scikit-learn's float64 on Bayesmark's sets, Keras's float32 elsewhere.
func (c *Config) dtype(g group) tensor.Dtype {
	switch {
	case c.Dtype == dtypeFloat32:
		return tensor.Float32
	case c.Dtype == dtypeFloat64 || g == bayesmark:
		return tensor.Float64
	}
	return tensor.Float32
}

// dataSeed is the seed of a dataset's split in one repeat (repeat −1: the split every repeat
// of an image set shares).
func dataSeed(root uint64, dataset string, repeat int) uint64 {
	if repeat < 0 {
		return experiments.DeriveSeed(root, "ahsc", dataset, "data")
	}
	return experiments.DeriveSeed(repeatSeed(root, dataset, repeat), "data")
}

// loadProblem loads and prepares a registry dataset, or the user's file cfg.Data.
func loadProblem(ctx context.Context, opt experiments.Options, cfg *Config, name string) (*problem, error) {
	p, err := readProblem(ctx, opt, cfg, name)
	if err != nil {
		return nil, err
	}
	p.build = cfg.adamForm(p.build)
	if sf := cfg.userSpace; sf != nil {
		// Finish checked it against this model (modelHypers): the builder and the memory
		// estimate read it as they read the built-in space.
		p.space = sf.Space
		p.describe += "; the space of " + filepath.Base(sf.File) + ": " + sf.Space.Describe()
	}
	return p, nil
}

// adamForm makes build's Adam add ε where --adam says: build's own (ε̂, the libraries'),
// or PyTorch's place.
func (c *Config) adamForm(build Builder) Builder {
	if c.Adam == adamHat {
		return build
	}
	return torchAdam(build)
}

// torchAdam makes every Adam that build's models train with add ε as PyTorch does (--adam
// torch, the runs stored before the flag).
func torchAdam(build Builder) Builder {
	return func(train *datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) {
		b := build(train)
		return func(hp search.Config, seed uint64) (*convexity.Candidate, error) {
			c, err := b(hp, seed)
			if a, ok := candidateAdam(c); ok {
				a.EpsHat = false
			}
			return c, err
		}
	}
}

func candidateAdam(c *convexity.Candidate) (*samplers.Adam, bool) {
	if c == nil {
		return nil, false
	}
	a, ok := c.Optimizer.(*samplers.Adam)
	return a, ok
}

// readProblem is loadProblem before --adam applies.
func readProblem(ctx context.Context, opt experiments.Options, cfg *Config, name string) (*problem, error) {
	if cfg.Data != "" {
		return userProblem(ctx, opt, cfg)
	}
	switch groupOf(name) {
	case bayesmark:
		full, err := loadTable(ctx, name, opt.DataDir)
		if err != nil {
			return nil, err
		}
		return tabular(opt, cfg, name, full, bayesmark, 0.8, 0, 0.2), nil
	case openML:
		full, err := loadTable(ctx, name, opt.DataDir)
		if err != nil {
			return nil, err
		}
		return tabular(opt, cfg, name, full, openML, 0.6, 0.2, 0.2), nil
	case image:
		return imageProblem(ctx, opt, cfg, name)
	}
	return nil, fmt.Errorf("ahsc: unknown dataset %q", name)
}

// loadTable loads a registry table, refusing one that cannot make a classification problem
// (a data directory's file replaced by another) before any training.
func loadTable(ctx context.Context, name, dir string) (*datasets.Dataset, error) {
	full, _, err := datasets.Load(ctx, name, dir)
	if err != nil {
		return nil, err
	}
	if err := datasets.CheckClassification(full); err != nil {
		return nil, err
	}
	return full, nil
}

// userProblem reads a user's CSV, TSV or ARFF file (optionally gzip-compressed) with the
// class in the target column and treats it like an OpenML set. The file's hash goes into
// every cell's configuration, so that a resumed run or a worker that reads another version
// of the file refuses to mix their results.
func userProblem(ctx context.Context, opt experiments.Options, cfg *Config) (*problem, error) {
	path, target := cfg.Data, cfg.Target
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	// A run reads its file again when it resumes and in every worker, and compares the hash:
	// a pipe or a device would give other bytes (or none, or hang), so only a regular file will
	// do. The check does not open the file (opening a FIFO blocks until a writer comes).
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ahsc: --data %s is not a regular file (%s): a run reads its data file again to resume and in every worker, so it must be a file on disk; save the data to a file and pass its path",
			path, fileKind(fi.Mode()))
	}
	read := func(r io.Reader, name string) (*datasets.Dataset, error) {
		return datasets.ReadTable(r, name, datasets.TableOptions{Header: true, Target: target, Text: true})
	}
	switch {
	case strings.HasSuffix(base, ".arff"):
		read = func(r io.Reader, name string) (*datasets.Dataset, error) { return datasets.ReadARFF(r, name, target) }
	case strings.HasSuffix(base, ".tsv") || strings.HasSuffix(base, ".tab"):
		read = func(r io.Reader, name string) (*datasets.Dataset, error) {
			return datasets.ReadTable(r, name, datasets.TableOptions{Comma: '\t', Header: true, Target: target, Text: true})
		}
	}
	// The hash is of the very bytes parsed, read once: hashing the file in a second read
	// would store another file's hash when the file is replaced in between.
	ds, digest, err := datasets.LoadHashed(ctx, path, read)
	if errors.Is(err, fs.ErrNotExist) && strings.ContainsRune(path, utf8.RuneError) {
		return nil, fmt.Errorf("%w (a stored run keeps --data as UTF-8 text, so a worker cannot open a file whose name is not UTF-8: rename the file)", err)
	}
	if err != nil {
		return nil, err
	}
	if err := datasets.CheckClassification(ds); err != nil {
		return nil, targetError(err, target)
	}
	sum := digest.SHA256
	// The name is a table's and a cell key's text: JSON and PostgreSQL keep only valid UTF-8.
	name := strings.TrimSuffix(filepath.Base(path), ".gz")
	name = strings.ToValidUTF8(strings.TrimSuffix(name, filepath.Ext(name)), "\uFFFD")
	p := tabular(opt, cfg, name, ds, user, 0.6, 0.2, 0.2)
	p.sha256 = sum
	p.describe += "; classes (sorted): " + strings.Join(ds.Classes, ", ")
	var text []string
	for _, f := range ds.Features {
		if f.Kind == datasets.Nominal {
			text = append(text, fmt.Sprintf("%s (%d categories)", f.Name, len(f.Categories)))
		}
	}
	if len(text) > 0 {
		p.describe += "; text columns one-hot encoded: " + strings.Join(text, ", ")
	}
	switch cfg.Metric {
	case "auc":
		p.metric, p.label = convexity.AUC, "roc-auc"
	case "accuracy":
		p.metric, p.label = convexity.Accuracy, "accuracy"
	}
	return p, nil
}

// fileKind names what a file that is not a regular one is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO or pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.Type().String()
}

// targetError names the target column in a refusal of the dataset, whose message names only
// the file.
func targetError(err error, target string) error {
	if target == "" {
		target = "the last column"
	} else {
		target = strconv.Quote(target)
	}
	return fmt.Errorf("ahsc: --target %s: %w", target, err)
}

// tabular prepares a table: stratified train/validation/test splits drawn per repeat,
// preprocessing fitted on the training part only.
func tabular(opt experiments.Options, cfg *Config, name string, full *datasets.Dataset, g group, fTrain, fVal, fTest float64) *problem {
	binary := len(full.Classes) == 2
	p := &problem{name: name, group: g, epochs: cfg.Epochs, budget: cfg.Budget, loss: losses.Multiclass, dtype: cfg.dtype(g)}
	if binary {
		p.loss = losses.Binary
	}
	if g == bayesmark {
		p.metric, p.label, p.space, p.budget = convexity.Accuracy, "score", BayesmarkSpace(), cfg.BayesmarkBudget
		p.build = BayesmarkBuild(len(full.Classes), p.dtype)
		p.estimate = mlpEstimate(len(full.Classes), p.dtype, bayesmarkArch)
		p.describe = fmt.Sprintf("stratified 80/20 train/test per repeat (Bayesmark's); the objective is %d-fold stratified CV on the 80%%, "+
			"each fit early-stopped on 10%% of its training part (scikit-learn's validation_fraction), the selected configuration refitted on the 80%% "+
			"(90/10 for early stopping) and scored on the 20%%; standardized with the 80%%'s statistics", cfg.Folds)
	} else {
		p.metric, p.label = convexity.AUC, "roc-auc"
		if g == user && !binary {
			p.metric, p.label = convexity.Accuracy, "accuracy"
		}
		p.space = OpenMLSpace(cfg.MaxLog2Width)
		p.build = OpenMLBuild(len(full.Classes), p.dtype)
		p.estimate = mlpEstimate(len(full.Classes), p.dtype, openMLArch)
		p.describe = fmt.Sprintf("stratified %.0f/%.0f/%.0f train/validation/test per repeat; nominal columns one-hot, numeric ones standardized with training statistics (missing → 0), rows scaled to unit L2 norm", 100*fTrain, 100*fVal, 100*fTest)
	}
	if cfg.Protocol == protocolAuthors && g != user {
		authorsProblem(opt, cfg, p, full)
		return p
	}
	sub := cfg.TabRows > 0 && full.N > cfg.TabRows
	if sub {
		p.describe += fmt.Sprintf("; a stratified subsample of %d of the %d rows per repeat", cfg.TabRows, full.N)
	}
	p.split = func(repeat int) (*split, error) {
		rng := rand.New(rand.NewPCG(dataSeed(opt.Seed, name, repeat), 0))
		data := full
		if sub {
			f := float64(cfg.TabRows) / float64(full.N)
			parts, err := datasets.Split(full, rng, f, 1-f)
			if err != nil {
				return nil, fmt.Errorf("ahsc: subsampling %s: %w", name, err)
			}
			data = parts[0]
		}
		if g == bayesmark {
			return cvSplit(data, rng, cfg.Folds)
		}
		parts, err := datasets.Split(data, rng, fTrain, fVal, fTest)
		if err != nil {
			return nil, fmt.Errorf("ahsc: splitting %s: %w", name, err)
		}
		pp, err := preprocess(true, parts...)
		if err != nil {
			return nil, err
		}
		return &split{train: pp[0], val: pp[1], test: pp[2]}, nil
	}
	return p
}

// cvSplit draws Bayesmark's protocol: a stratified 80/20 train/test split, k stratified
// folds of the 80%, and 10% of every fit's training data held out for early stopping.
func cvSplit(data *datasets.Dataset, rng *rand.Rand, k int) (*split, error) {
	parts, err := datasets.Split(data, rng, 0.8, 0.2)
	if err != nil {
		return nil, fmt.Errorf("ahsc: splitting %s: %w", data.Name, err)
	}
	pp, err := preprocess(false, parts...)
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
	sp := &split{test: test}
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
		f := fold{val: all.Subset(idx[i])}
		if f.train, f.early, err = holdout(all.Subset(rest)); err != nil {
			return nil, err
		}
		sp.folds = append(sp.folds, f)
	}
	return sp, nil
}

// preprocess one-hot encodes nominal columns (by their declared categories), standardizes
// the numeric ones with the training split's statistics, replaces missing values by 0 (the
// training mean) and, when normalize is set, scales every row to unit L2 norm as the authors'
// OpenML code (hpobench/util/experiment.py) does. Unlike that code, numeric columns are not
// one-hot encoded: there, every distinct value of a numeric column became a column.
func preprocess(normalize bool, ds ...*datasets.Dataset) ([]*datasets.Dataset, error) {
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

// imageProblem loads MNIST or SVHN. Every repeat uses the same data (the paper's repeats
// vary the search, not the split): 10% of the training images are held out for validation,
// which the authors' image code lacks (it selects on the test images); the quick preset
// keeps a stratified subset of the training and test images.
func imageProblem(ctx context.Context, opt experiments.Options, cfg *Config, name string) (*problem, error) {
	full, test, err := datasets.Load(ctx, name, opt.DataDir)
	if err != nil {
		return nil, err
	}
	if test == nil {
		return nil, fmt.Errorf("ahsc: %s has no test split", name)
	}
	rng := rand.New(rand.NewPCG(dataSeed(opt.Seed, name, -1), 0))
	subset := func(d *datasets.Dataset, n int) (*datasets.Dataset, error) {
		if n <= 0 || n >= d.N {
			return d, nil
		}
		f := float64(n) / float64(d.N)
		parts, err := datasets.Split(d, rng, f, 1-f)
		if err != nil {
			return nil, err
		}
		return parts[0], nil
	}
	if full, err = subset(full, cfg.ImageTrain); err != nil {
		return nil, err
	}
	if test, err = subset(test, cfg.ImageTest); err != nil {
		return nil, err
	}
	parts, err := datasets.Split(full, rng, 0.9, 0.1)
	if err != nil {
		return nil, err
	}
	sp := &split{train: parts[0], val: parts[1], test: test}
	if cfg.Protocol == protocolAuthors {
		// image/src/util.py trains on every training image and scores every candidate on
		// the test images.
		sp = &split{train: full, val: test, test: test}
	}
	p := &problem{name: name, group: image, metric: convexity.Accuracy, label: "accuracy%",
		loss: losses.Multiclass, epochs: cfg.ImageEpochs, budget: cfg.Budget, evalBatch: 500,
		split: func(int) (*split, error) { return sp, nil },
		describe: fmt.Sprintf("%d training images (90%%) / %d validation (10%% of the training split) / %d test, the same for every repeat",
			sp.train.N, sp.val.N, sp.test.N),
		space: MNISTSpace(),
	}
	if cfg.Protocol == protocolAuthors {
		p.describe = fmt.Sprintf("authors: %d training images, every candidate selected on the %d test images (image/src/util.py), "+
			"the same for every repeat; AHSC's finalists train twice --image-epochs", sp.train.N, sp.test.N)
	}
	if name == "svhn" {
		p.space = SVHNSpace()
	}
	p.dtype = cfg.dtype(image)
	build := ConvNetBuild(name, full.Shape, len(full.Classes), p.dtype)
	p.build = func(*datasets.Dataset) func(search.Config, uint64) (*convexity.Candidate, error) { return build }
	p.estimate = func(_ *datasets.Dataset, record recordRows) func(search.Config) (int64, error) {
		return func(hp search.Config) (int64, error) {
			return convNetBytes(name, full.Shape, len(full.Classes), p.dtype, hp, record)
		}
	}
	return p, nil
}
