package convexity

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/samplers"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/train"
)

// Metric scores a trained model on labelled data; higher is better.
type Metric string

// Metrics.
const (
	Accuracy Metric = "accuracy"
	AUC      Metric = "roc-auc" // binary, or one-vs-rest macro
	// AUCMicro is Keras's tf.keras.metrics.AUC as the authors' OpenML models compile it: the
	// ROC-AUC of the flattened one-hot labels against the flattened class probabilities
	// (micro-averaged); binary for one output. Computed exactly here, where Keras
	// interpolates over 200 thresholds.
	AUCMicro Metric = "roc-auc-micro"
)

// Candidate is a configuration made concrete: a fresh model and how to train it.
type Candidate struct {
	Model     layers.FeatureModel
	Optimizer samplers.Optimizer
	BatchSize int
	// Fit, when set, trains Model itself in place of the task's training loop (package
	// train, with Optimizer): on data, for at most epochs epochs, by its own rules — its
	// own stopping rule and held-out data, as scikit-learn's MLPClassifier has them — so the
	// task's Early, EarlyStop and Holdout do not apply. It leaves the trained weights in
	// Model, which the task then scores and AHSC screens.
	Fit func(ctx context.Context, data *datasets.Dataset, epochs int) error
	// Trajectory is set by the task, before it calls Fit, when it records the training
	// (Task.Whitebox): a Fit of its own should call Trajectory.Before before every
	// Trajectory.Every-th optimizer step, with Model holding that iterate's weights. A Fit
	// that does not leaves the record without the Eq. 7 regularizer (NaN, no iterates).
	Trajectory *Trajectory
}

// Trajectory is how a Candidate's own Fit lets the task follow its iterates.
type Trajectory struct {
	Every  int
	Before func(ctx context.Context, t int) error
}

// ErrTooBig is wrapped by the error Fit returns for a configuration whose estimated memory
// exceeds Task.MaxBytes; the configuration is refused before it is built.
var ErrTooBig = errors.New("convexity: configuration too big")

// ErrTrialTimeout is wrapped (together with context.DeadlineExceeded) by the error a trial
// returns when it runs past Task.TrialTimeout.
var ErrTrialTimeout = errors.New("trial timed out")

// Task is a supervised problem whose configurations a white-box search can build, train and
// look inside. Black-box methods see it through Objective, AHSC through Fit as well; both
// train through Fit, so that every method of a comparison trains a configuration the same way
// and from the same initial weights.
//
// Fit enforces the task's resource limits: a configuration whose Estimate exceeds MaxBytes is
// refused before Build with an error wrapping ErrTooBig that gives both sizes, and a trial
// running longer than TrialTimeout is stopped with an error wrapping ErrTrialTimeout. Both are
// ordinary trial failures — the search records them (search.Failed, Screened.Reason) and goes
// on — whereas cancelling the context passed to the search stops the whole search, which then
// returns ctx.Err().
type Task struct {
	Space search.Space
	// Build makes a fresh model for cfg with weights initialized from seed.
	Build func(cfg search.Config, seed uint64) (*Candidate, error)
	// Train fits the models, Val selects among them, Test (optional) is only reported.
	Train, Val, Test *datasets.Dataset
	// EarlyStop is the data a full training's early stopping watches; nil: Val. Keeping it
	// apart from Val lets a protocol select on data the stopping rule never saw, as
	// scikit-learn's validation_fraction does inside a cross-validation fold.
	EarlyStop *datasets.Dataset
	// Holdout, when set, makes every full training split its data itself: fit on the first
	// part, early-stopped by the returned rule on the second (scikit-learn's MLP
	// early_stopping, whose validation_fraction and tol are hyperparameters). It replaces
	// EarlyStop and Early for full trainings.
	Holdout func(cfg search.Config, train *datasets.Dataset) (fit, early *datasets.Dataset, rule *train.EarlyStopping, err error)
	// Folds, when set, make the objective k-fold cross-validation (Bayesmark's protocol): the
	// validation metric and loss are the means over the folds, each a task of its own that is
	// trained on its Train (early-stopped on its EarlyStop) and scored on its Val. At full
	// fidelity this task is then trained once more on its own Train for the test results; its
	// Val is that training's early-stopping data.
	Folds  []*Task
	Loss   losses.Kind
	Metric Metric
	// ByLoss makes the objective the validation loss instead of minus the validation metric
	// (Bayesmark optimizes the cross-validated log loss).
	ByLoss bool
	Epochs int                  // epochs of a full training
	Early  *train.EarlyStopping // optional, for full trainings
	// EarlyAtEveryFidelity applies Early to evaluations below full fidelity too (by default
	// they train their ⌈fidelity·Epochs⌉ epochs to the end, as BOHB's rungs do): the AHSC
	// authors' BOHB trains every budget through Keras's fit with its EarlyStopping callback.
	EarlyAtEveryFidelity bool
	// Seed derives every configuration's initial weights and batch order (see Fit).
	Seed uint64
	// EvalBatch is the number of rows scored per pass when a model is evaluated; 0 scores
	// each data set in one pass. Results do not depend on it beyond rounding.
	EvalBatch int
	// Data, when set, is shared by the Trainers of every training and scoring of the task:
	// each of its datasets is prepared once (a one-hot table compressed by rows; see
	// train.DataCache) rather than at every fit. Results do not depend on it. Set it on Folds
	// too (the same cache serves them all).
	Data *train.DataCache

	// MaxBytes is the memory budget of one trial in bytes (the --max-mem flag); 0 means no
	// limit. It is enforced only when Estimate is set.
	MaxBytes int64
	// Estimate returns the bytes cfg's training would hold (layers.EstimateMLPBytes and
	// layers.EstimateConvNetBytes compute it for the package's models without building them).
	// With Whitebox set it must count the record too, which a full training holds beside
	// its own (layers.EstimateMLPRecordBytes and EstimateConvNetRecordBytes, of the rows
	// RecordRows gives; for a one-hot table's MLP several times the training's): the limit
	// then refuses a configuration whose recorded full training would not fit before any of
	// its trainings, and CheckMemory's refusal says the record was counted.
	Estimate func(cfg search.Config) (int64, error)
	// TrialTimeout bounds one trial — an Objective evaluation (every training and scoring it
	// does, folds included), or an AHSC screening (one-epoch training and its score); 0 means
	// no limit.
	TrialTimeout time.Duration

	// Observe, when set, receives the record of every Objective evaluation, failed ones
	// included, after it finished and before Objective returns. It is how a caller keeps what
	// the search itself does not (test results, failures and their reasons, the number of
	// calls). A search calls it from its own goroutine; a task shared by concurrent searches
	// needs an Observe that is safe for concurrent use.
	Observe func(Evaluation)

	// Whitebox, when set, makes every full-fidelity evaluation record what the trained
	// model looks like from inside (Evaluation.Whitebox): μ, the Hessian's trace and top
	// eigenvalue, the Eq. 7 regularizer along training and the generalization gaps. With
	// Folds it is the final training on Train, the one Test scores, that is recorded. The
	// record's programs hold memory of their own during the training (see Estimate, which
	// must count it).
	Whitebox *WhiteboxOptions
}

// Evaluation is the record of one evaluation of a Task's objective.
type Evaluation struct {
	Config   search.Config
	Fidelity float64
	Epochs   int // ⌈Fidelity·Epochs⌉, at least 1
	// Value is what the objective returned: minus ValMetric, or ValLoss with ByLoss; NaN
	// when Err is set.
	Value float64
	// ValMetric and ValLoss score the trained model on Val (with Folds, their means over the
	// folds); NaN when Err is set.
	ValMetric, ValLoss float64
	// TestMetric, TestAccuracy and TestLoss score it on Test at full fidelity (NaN otherwise,
	// without Test data, or when Err is set). TestAccuracy equals TestMetric when the metric
	// is Accuracy.
	TestMetric, TestAccuracy, TestLoss float64
	// Err is why the evaluation failed (nil when it did not); the search records its text.
	Err error
	// Whitebox is the white-box record of a full-fidelity evaluation of a task with
	// Task.Whitebox set (nil otherwise, and when Err is set).
	Whitebox *Whitebox
}

// seedFor derives the initialization seed of a configuration, so that every method trains the
// same configuration from the same weights.
func (t *Task) seedFor(cfg search.Config) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%v", t.Seed, cfg.Values)
	return h.Sum64()
}

// score evaluates a trained model on ds: the task's metric, the accuracy and the mean loss.
func (t *Task) score(ctx context.Context, tr *train.Trainer, ds *datasets.Dataset) (metric, acc, loss float64, err error) {
	res, err := tr.Evaluate(ctx, ds, t.EvalBatch)
	if err != nil {
		return 0, 0, 0, err
	}
	metric = res.Accuracy
	switch t.Metric {
	case AUC:
		if metric, err = res.AUC(ds.Y); err != nil {
			return 0, 0, 0, err
		}
	case AUCMicro:
		if metric, err = microAUC(res.Scores, ds.Y); err != nil {
			return 0, 0, 0, err
		}
	}
	return metric, res.Accuracy, res.Loss, nil
}

// errNilTask is what a Task's methods return for a nil Task or one without a Build.
var errNilTask = errors.New("convexity: a nil Task, or one without a Build function")

// CheckMemory refuses cfg, with an error wrapping ErrTooBig that gives the estimate and the
// limit, when MaxBytes and Estimate are set and the estimate exceeds MaxBytes; with Whitebox
// set the error says that the estimate counts the white-box record (see Estimate), which a
// user can drop instead of raising the limit.
func (t *Task) CheckMemory(cfg search.Config) error {
	if t == nil {
		return errNilTask
	}
	if t.MaxBytes <= 0 || t.Estimate == nil {
		return nil
	}
	need, err := t.Estimate(cfg)
	if err != nil {
		return fmt.Errorf("convexity: estimating the memory of %v: %w", cfg, err)
	}
	if need > t.MaxBytes {
		record, hint := "", ""
		if t.Whitebox != nil {
			record, hint = " with its white-box record (--whitebox)", ": drop the record or raise the limit"
		}
		return fmt.Errorf("%w: %v needs about %s%s, over the %s limit (--max-mem)%s", ErrTooBig, cfg, FormatBytes(need), record, FormatBytes(t.MaxBytes), hint)
	}
	return nil
}

// FormatBytes writes n in binary units with one decimal ("1.2 GiB", "512.0 MiB", "900 B").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for math.Abs(v) >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}

// trial runs f under the task's TrialTimeout. If f fails after the timeout expired (and ctx
// itself is still live), the error is replaced by one wrapping ErrTrialTimeout and
// context.DeadlineExceeded; if ctx was cancelled, it is ctx's error, so that the search stops.
func (t *Task) trial(ctx context.Context, f func(ctx context.Context) error) error {
	tctx := ctx
	if t.TrialTimeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, t.TrialTimeout)
		defer cancel()
	}
	err := f(tctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case tctx.Err() != nil:
		return fmt.Errorf("convexity: %w after %v (%w)", ErrTrialTimeout, t.TrialTimeout, context.DeadlineExceeded)
	}
	return err
}

// Fit builds cfg and trains it for the given number of epochs (with the task's early stopping
// when full is set; a Candidate with its own Fit trains by its own rules, full or not),
// returning the trained candidate and its trainer. It is where every trial
// trains, and enforces the task's limits: a configuration over MaxBytes (by Estimate) is
// refused before it is built (ErrTooBig), and training longer than TrialTimeout is stopped
// (ErrTrialTimeout). When ctx is cancelled, the error is ctx.Err().
func (t *Task) Fit(ctx context.Context, cfg search.Config, epochs int, full bool) (*Candidate, *train.Trainer, error) {
	if t == nil || t.Build == nil {
		return nil, nil, errNilTask
	}
	if err := t.CheckMemory(cfg); err != nil {
		return nil, nil, err
	}
	var c *Candidate
	var tr *train.Trainer
	err := t.trial(ctx, func(ctx context.Context) error {
		var err error
		c, tr, _, err = t.fit(ctx, cfg, epochs, full, nil)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return c, tr, nil
}

// build calls the user's Build. A Build that reads cfg wrongly (search.Config's accessors
// panic on a dimension of another kind, say cfg.Int on a float dimension) fails that trial
// with the accessor's message, an error a search records, instead of crashing the search.
func (t *Task) build(cfg search.Config) (c *Candidate, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("convexity: building %s: %v", cfg, p)
		}
	}()
	return t.Build(cfg, t.seedFor(cfg))
}

// fit is Fit without the limits; with wb set, it also returns the recorder of the training's
// white-box record, which has followed the training's iterates.
func (t *Task) fit(ctx context.Context, cfg search.Config, epochs int, full bool, wb *WhiteboxOptions) (*Candidate, *train.Trainer, *recorder, error) {
	c, err := t.build(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	tr, err := train.NewTrainer(c.Model, t.Loss, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	tr.ShareData(t.Data)
	var rec *recorder
	if wb != nil {
		if rec, err = newRecorder(t, c.Model, *wb, t.seedFor(cfg)); err != nil {
			return nil, nil, nil, err
		}
	}
	if c.Fit != nil {
		if rec.follows() {
			c.Trajectory = &Trajectory{Every: rec.strideFor(c.BatchSize), Before: rec.beforeStep}
		}
		if err := c.Fit(ctx, t.Train, epochs); err != nil {
			return nil, nil, nil, err
		}
		return c, tr, rec, nil
	}
	tc := train.Config{Epochs: epochs, BatchSize: c.BatchSize, Seed: t.seedFor(cfg) ^ 0x7a11}
	if rec.follows() {
		tc.BeforeStep, tc.StepEvery = rec.beforeStep, rec.strideFor(c.BatchSize)
	}
	if full && t.Early != nil {
		e := *t.Early
		tc.Early = &e
	}
	val := t.EarlyStop
	if val == nil {
		val = t.Val
	}
	if tc.Early != nil && tc.Early.Monitor == "loss" {
		val = nil
	}
	data := t.Train
	if full && t.Holdout != nil {
		var rule *train.EarlyStopping
		if data, val, rule, err = t.Holdout(cfg, t.Train); err != nil {
			return nil, nil, nil, err
		}
		tc.Early = rule
	}
	if _, err := tr.Fit(ctx, c.Optimizer, data, val, tc); err != nil {
		return nil, nil, nil, err
	}
	return c, tr, rec, nil
}

// Objective is the task as a black-box objective: Evaluate, reported to Observe. It trains
// for ⌈fidelity·Epochs⌉ epochs and returns minus the validation metric (the validation loss
// with ByLoss); see Evaluate for when an evaluation fails.
func (t *Task) Objective() search.Objective {
	return func(ctx context.Context, cfg search.Config, fidelity float64) (float64, error) {
		e := t.Evaluate(ctx, cfg, fidelity)
		if t.Observe != nil {
			t.Observe(e)
		}
		return e.Value, e.Err
	}
}

// Evaluate trains cfg at the fidelity and scores it: on Val (or on every fold), and at full
// fidelity (1) also on Test. Full fidelity trains with the task's early stopping; lower ones
// train ⌈fidelity·Epochs⌉ epochs without it (BOHB's rungs), unless EarlyAtEveryFidelity.
//
// The evaluation fails (Err is set, the values are NaN) when training diverges
// (train.ErrDiverged: a NaN or infinite loss, gradient or parameter, or a NaN or infinite
// validation loss or objective after training), when the configuration is over the memory
// budget (ErrTooBig) or when it runs past TrialTimeout (ErrTrialTimeout); the whole
// evaluation, scoring and folds included, runs under the timeout.
func (t *Task) Evaluate(ctx context.Context, cfg search.Config, fidelity float64) Evaluation {
	nan := math.NaN()
	e := Evaluation{Config: cfg, Fidelity: fidelity, Epochs: 1,
		Value: nan, ValMetric: nan, ValLoss: nan, TestMetric: nan, TestAccuracy: nan, TestLoss: nan}
	if t == nil || t.Build == nil {
		e.Err = errNilTask
		return e
	}
	e.Epochs = max(1, int(math.Ceil(fidelity*float64(t.Epochs)-1e-9)))
	r := e
	err := t.trial(ctx, func(ctx context.Context) error { return t.evaluate(ctx, &r) })
	if err != nil {
		e.Err = err
		return e
	}
	return r
}

// evaluate fills e's scores: the folds' means or Val's, then Test's at full fidelity.
func (t *Task) evaluate(ctx context.Context, e *Evaluation) error {
	full := e.Fidelity >= 1
	final := len(t.Folds) == 0 || full // a training of t itself, after any folds
	if final {
		// before the folds are trained: a final training (its record) over the budget
		// refuses the configuration without the folds' work
		if err := t.CheckMemory(e.Config); err != nil {
			return err
		}
	}
	if len(t.Folds) > 0 {
		e.ValMetric, e.ValLoss = 0, 0
		for _, f := range t.Folds {
			_, tr, err := f.Fit(ctx, e.Config, e.Epochs, full || t.EarlyAtEveryFidelity)
			if err != nil {
				return err
			}
			m, _, l, err := f.score(ctx, tr, f.Val)
			if err != nil {
				return err
			}
			e.ValMetric += m / float64(len(t.Folds))
			e.ValLoss += l / float64(len(t.Folds))
		}
	}
	var tr *train.Trainer
	var c *Candidate
	var rec *recorder
	if final {
		var wb *WhiteboxOptions
		if full && t.Whitebox != nil {
			o, err := t.Whitebox.Resolved()
			if err != nil {
				return err
			}
			wb = &o
		}
		var err error
		if c, tr, rec, err = t.fit(ctx, e.Config, e.Epochs, full || t.EarlyAtEveryFidelity, wb); err != nil {
			return err
		}
	}
	if len(t.Folds) == 0 {
		var err error
		if e.ValMetric, _, e.ValLoss, err = t.score(ctx, tr, t.Val); err != nil {
			return err
		}
	}
	if math.IsNaN(e.ValLoss) || math.IsInf(e.ValLoss, 0) {
		return fmt.Errorf("convexity: %w: the validation loss is %v after %d epochs", train.ErrDiverged, e.ValLoss, e.Epochs)
	}
	if full && t.Test != nil {
		var err error
		if e.TestMetric, e.TestAccuracy, e.TestLoss, err = t.score(ctx, tr, t.Test); err != nil {
			return err
		}
	}
	e.Value = -e.ValMetric
	if t.ByLoss {
		e.Value = e.ValLoss
	}
	if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
		return fmt.Errorf("convexity: the validation objective is %v", e.Value)
	}
	if rec != nil {
		return t.record(ctx, e, c, rec)
	}
	return nil
}

// record completes e's white-box record from the training rec followed.
func (t *Task) record(ctx context.Context, e *Evaluation, c *Candidate, rec *recorder) error {
	w, err := rec.finish(ctx, c.BatchSize)
	if err != nil {
		return fmt.Errorf("convexity: white-box record: %w", err)
	}
	w.LossGap = e.ValLoss - w.TrainLoss
	w.MetricGap = e.ValMetric - e.TestMetric
	e.Whitebox = w
	return nil
}
